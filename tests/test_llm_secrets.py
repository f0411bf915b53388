"""Issue 38 (5): an endpoint that refuses the key and echoes it in its 401 ("Incorrect API key provided: Bearer
sk-...") does not put the key before anyone: a failure's text is redacted (the configured keys by value, any other
credential by its shape) before it is stored, shown, exported or logged."""

from __future__ import annotations

import json
import logging
import secrets

import pytest

from historian_blueprint import get_store
from historian_lab.bench.fake_llm_server import OpenAICompatibleServer, faithful_responder
from tests.conftest import make_plain_app, small_docs
from tests.test_index import run_reindex

KEYS = {"openai-style": "sk-proj-" + secrets.token_urlsafe(30),
        "random-looking": secrets.token_urlsafe(30)}  # no prefix to know it by: only its value gives it away


@pytest.fixture(scope="module")
def refusing():
    """An endpoint that wants another key and names the one it was given in its 401."""
    with OpenAICompatibleServer(faithful_responder, models=("test-model",), api_key="the-right-key-0000",
                                echo_key=True) as server:
        yield server


@pytest.fixture(scope="module", params=sorted(KEYS))
def keyed(request, tmp_path_factory, refusing):
    key = KEYS[request.param]
    app = make_plain_app(
        tmp_path_factory.mktemp("secrets"), small_docs(per_file=2), WTF_CSRF_ENABLED=False, HISTORIAN_ENGINE="llm",
        HISTORIAN_LLM_BASE_URL=refusing.url, HISTORIAN_LLM_MODEL="test-model", HISTORIAN_LLM_API_KEY=key,
        HISTORIAN_LLM_TIMEOUT_S=5, HISTORIAN_LLM_MAX_RETRIES=0, HISTORIAN_LLM_CACHE_TTL_S=0,
    )
    assert run_reindex(app)["state"] == "succeeded"
    return app, key


def leaks(text: str, key: str) -> list[str]:
    """The parts of ``key`` found in ``text``: the whole, or a long piece of it (a cut echo)."""
    return [part for part in (key, key[:16], key[-16:]) if part in text]


def test_a_key_an_endpoint_echoes_is_nowhere_a_reader_or_the_log_sees_it(keyed, caplog):
    app, key = keyed
    caplog.set_level(logging.DEBUG)
    client = app.test_client()
    response = client.post("/historian/api/ask", json={"question": "What happened to the banks?"})
    assert response.status_code == 200
    out = response.get_json()
    run_id = out["metadata"]["run_id"]
    failures = out["verification"]["model_failures"]
    assert out["status"] != "verified"
    echoed = "Incorrect API key provided: Bearer ***"
    assert any("AuthenticationError 401" in f and echoed in f for f in failures), failures
    with app.app_context():
        stored = json.dumps(get_store().runs.find_one({"_id": run_id}), default=str)
    seen = {
        "stored run": stored,
        "answer page": client.get(f"/historian/runs/{run_id}").get_data(as_text=True),
        "/api/runs": client.get(f"/historian/api/runs/{run_id}").get_data(as_text=True),
        "export.md": client.get(f"/historian/runs/{run_id}/export.md").get_data(as_text=True),
        "export.json": client.get(f"/historian/runs/{run_id}/export.json").get_data(as_text=True),
        "ask reply": response.get_data(as_text=True),
        "log": caplog.text,
    }
    assert "Incorrect API key provided" in seen["answer page"]  # the failure is shown, without its key
    assert {where: leaks(text, key) for where, text in seen.items() if leaks(text, key)} == {}


def test_a_map_whose_mapper_is_refused_records_the_failure_without_the_key(keyed, caplog):
    app, key = keyed
    caplog.set_level(logging.DEBUG)
    client = app.test_client()
    response = client.post("/historian/api/map", json={"topic": "the banks"})
    assert response.status_code == 200, response.data
    out = response.get_json()
    run_id = out["metadata"]["run_id"]
    assert any("Incorrect API key provided" in f for f in out["metadata"]["failures"]), out["metadata"]["failures"]
    with app.app_context():
        stored = json.dumps(get_store().runs.find_one({"_id": run_id}), default=str)
    seen = {"stored map": stored, "map reply": response.get_data(as_text=True),
            "/api/maps": client.get(f"/historian/api/maps/{run_id}").get_data(as_text=True),
            "map page": client.get(f"/historian/maps/{run_id}").get_data(as_text=True), "log": caplog.text}
    assert {where: leaks(text, key) for where, text in seen.items() if leaks(text, key)} == {}
