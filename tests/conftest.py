"""Shared fixtures: a demo host on tmp storage, logged-in clients, a CLI runner."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"  # only the check that the shipped copies match reads it
EVAL = Path(__file__).parent / "data" / "eval"  # the labeled items the suite reads (tests/data/eval/README.md)


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


def form_token(client, path="/login"):
    """The CSRF token a page's form carries (the demo's login and logout forms need it)."""
    import re

    return re.search(r'name="csrf_token" value="([^"]+)"', client.get(path).get_data(as_text=True)).group(1)


def login(client, name="alice", password="alice-pw"):
    """Log a test client in through the demo's login form."""
    response = client.post("/login", data={"username": name, "password": password, "csrf_token": form_token(client)})
    assert response.status_code == 302, response.data
    return client


@pytest.fixture
def researcher(client):
    return login(client)


@pytest.fixture
def admin(app):
    return login(app.test_client(), "root", "root-pw")


def small_docs(per_file: int = 4, chars: int = 1500) -> list[dict]:
    """Real documents from the sample corpus, shortened so that indexing them takes seconds."""
    import json

    docs = []
    for path in sorted((REPO / "historian_blueprint" / "demo" / "corpus").glob("*.jsonl")):
        with open(path, encoding="utf-8") as fh:
            for line in list(fh)[:per_file]:
                doc = json.loads(line)
                doc["content"] = doc["content"][:chars]
                docs.append(doc)
    return docs


def make_plain_app(tmp_path, docs=None, **config):
    """A bare host app (no login) with Historian on a litemongo store in tmp_path."""
    from flask import Flask

    from historian_blueprint import Historian, get_store

    app = Flask("host", instance_path=str(tmp_path / "instance"))
    app.config.update(SECRET_KEY="t", HISTORIAN_AUTO_MIGRATE=True, HISTORIAN_LOGIN_REQUIRED=False, **config)
    Historian(app)
    if docs:
        with app.app_context():
            get_store().documents.insert_many([dict(d) for d in docs])
    return app
