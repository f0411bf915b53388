"""Shared fixtures: a demo host on tmp storage, logged-in clients, a CLI runner."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture(autouse=True)
def _clean_historian_env(monkeypatch):
    """Keep the developer's HISTORIAN_* variables out of every test."""
    for name in list(os.environ):
        if name.startswith("HISTORIAN_") and not name.startswith("HISTORIAN_TEST_"):
            monkeypatch.delenv(name)


@pytest.fixture
def demo_users(monkeypatch):
    monkeypatch.setenv("HISTORIAN_DEMO_USERS", "alice:alice-pw:researcher,root:root-pw:admin")


@pytest.fixture
def app(tmp_path, demo_users):
    from historian_blueprint.demo import create_app

    app = create_app({"TESTING": True, "DEMO_HOME": str(tmp_path / "home")})
    yield app


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


def login(client, name="alice", password="alice-pw"):
    """Log a test client in through the demo's login form."""
    response = client.post("/login", data={"username": name, "password": password})
    assert response.status_code == 302, response.data
    return client


@pytest.fixture
def researcher(client):
    return login(client)


@pytest.fixture
def admin(app):
    return login(app.test_client(), "root", "root-pw")
