"""The LLM engine over HTTP against a local OpenAI-compatible server: ``historian ask`` end to end, ``doctor``."""

from __future__ import annotations

import json

import pytest

from historian_blueprint import get_store
from historian_lab.bench.fake_llm_server import OpenAICompatibleServer, faithful_responder
from tests.conftest import make_plain_app
from tests.test_graph import corpus_docs
from tests.test_index import run_reindex


@pytest.fixture(scope="module")
def server():
    with OpenAICompatibleServer(faithful_responder, models=("test-model",), api_key="sk-test") as s:
        yield s


def llm_app(tmp_path, server, monkeypatch, **env):
    settings = {"HISTORIAN_ENGINE": "llm", "HISTORIAN_LLM_BASE_URL": server.url, "HISTORIAN_LLM_MODEL": "test-model",
                "HISTORIAN_LLM_API_KEY": "sk-test", **env}
    for key, value in settings.items():
        if value is None:
            monkeypatch.delenv(key, raising=False)
        else:
            monkeypatch.setenv(key, value)
    return make_plain_app(tmp_path, corpus_docs())


def test_historian_ask_end_to_end_over_http(tmp_path, server, monkeypatch):
    app = llm_app(tmp_path, server, monkeypatch)
    run_reindex(app)
    result = app.test_cli_runner().invoke(args=["historian", "ask", "List three causes of the depression",
                                                "--output", "json", "--quiet"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["status"] == "verified" and len(out["citations"]) == 3
    roles_called = {json.loads(json.dumps(r))["model"] for r in server.requests}
    assert roles_called == {"test-model"}
    assert all(r.get("response_format") == {"type": "json_object"} for r in server.requests)  # JSON mode
    with app.app_context():
        run = get_store().runs.find_one({"_id": out["metadata"]["run_id"]})
    per_role = run["output"]["metadata"]["tokens"]["per_role"]
    assert {"planner", "composer", "challenger", "interrogator", "counter_arguer", "judge"} <= set(per_role)
    assert all(r["prompt_tokens"] > 0 and r["completion_tokens"] > 0 for r in per_role.values())
    assert run["output"]["metadata"]["models"]["composer"] == "test-model"


@pytest.mark.parametrize("mode", ["json_schema", "prompt"])
def test_other_structured_output_modes_work_over_http(tmp_path, server, monkeypatch, mode):
    app = llm_app(tmp_path, server, monkeypatch, HISTORIAN_LLM_STRUCTURED_OUTPUT=mode)
    run_reindex(app)
    before = len(server.requests)
    result = app.test_cli_runner().invoke(args=["historian", "ask", "List three causes of the depression",
                                                "--output", "json", "--quiet"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["status"] == "verified"
    formats = [r.get("response_format") for r in server.requests[before:]]
    if mode == "prompt":
        assert formats == [None] * len(formats)
    else:
        assert all(f and f["type"] == "json_schema" for f in formats)


def test_the_test_server_streams_with_usage(server):
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(model="test-model", base_url=server.url, api_key="sk-test", stream_usage=True, max_retries=0)
    chunks = list(model.stream("Question: anything"))
    text = "".join(c.content for c in chunks)
    assert json.loads(text) == {"ok": True}
    assert sum((c.usage_metadata or {}).get("output_tokens", 0) for c in chunks) > 0


@pytest.mark.parametrize(
    "env,expect",
    [
        ({"HISTORIAN_LLM_BASE_URL": None, "HISTORIAN_LLM_API_KEY": None}, "no API key for OpenAI"),
        ({"HISTORIAN_LLM_API_KEY": "sk-wrong"}, "refused the API key (401)"),
        ({"HISTORIAN_LLM_MODEL": "llama3:70b"}, "model(s) not served here: llama3:70b"),
        ("no-v1", "probably the wrong base URL"),
        ("no-json", "set HISTORIAN_LLM_STRUCTURED_OUTPUT=prompt"),
        ({"HISTORIAN_LLM_BASE_URL": "http://127.0.0.1:9/v1"}, "cannot reach http://127.0.0.1:9/v1"),
    ],
)
def test_doctor_explains_misconfigurations(tmp_path, server, monkeypatch, env, expect):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    if env == "no-v1":
        env = {"HISTORIAN_LLM_BASE_URL": server.url.removesuffix("/v1")}
    with OpenAICompatibleServer(faithful_responder, models=("test-model",), json_mode=False) as plain:
        if env == "no-json":
            env = {"HISTORIAN_LLM_BASE_URL": plain.url}
        app = llm_app(tmp_path, server, monkeypatch, **env)
        result = app.test_cli_runner().invoke(args=["historian", "doctor"])
    assert result.exit_code == 1, result.output
    assert expect in result.output, result.output
    assert "fix:" in result.output


def test_doctor_passes_on_a_good_endpoint(tmp_path, server, monkeypatch):
    app = llm_app(tmp_path, server, monkeypatch)
    result = app.test_cli_runner().invoke(args=["historian", "doctor"])
    assert result.exit_code == 0, result.output
    assert "a tiny structured call (json_mode) answered valid JSON" in result.output
