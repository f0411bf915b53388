"""The knowledge map with the LLM engine's mapper role: scripted models, and over HTTP against the local
OpenAI-compatible test server. Invented quotes are dropped; a reply that is not JSON fails safe, recorded."""

from __future__ import annotations

import json
import re

import pytest

from historian_blueprint import get_settings
from historian_lab.bench.fake_llm_server import OpenAICompatibleServer, role_of
from historian_blueprint.llm.client import LLMClient
from historian_blueprint.mapping.run import make_map_context, map_topic
from historian_blueprint.settings import LLMSettings
from tests import llm_fakes as fx
from tests.conftest import make_plain_app
from tests.test_index import run_reindex
from tests.test_map import map_docs

TOPIC = "the Johnstown Flood"
INVENTED = "The club paid every family of Johnstown ten thousand dollars in gold."


def passage_of(prompt: str) -> str:
    return prompt.split("\n", 1)[1]


def mapper_reply(prompt: str) -> str:
    """A model that names what the passage names, states one relation per sentence it quotes exactly, and
    invents one quote and one name the passage does not hold."""
    text = passage_of(prompt)
    names = list(dict.fromkeys(re.findall(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)+", text)))[:6]
    sentences = [s for s in re.split(r"(?<=\.)\s+", text) if len(s) > 30][:2]
    relations = [{"subject": s.split()[1], "relation": "states", "object": s.split()[-1].rstrip("."), "quote": s}
                 for s in sentences]
    relations.append({"subject": "club", "relation": "paid", "object": "families", "quote": INVENTED})
    entities = [{"name": n, "type": "person"} for n in names] + [{"name": "Atlantis Harbour", "type": "place"}]
    return json.dumps({"entities": entities, "relations": relations})


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    app = make_plain_app(tmp_path_factory.mktemp("mapllm"), map_docs(), HISTORIAN_LLM_BASE_URL="http://127.0.0.1:9/v1")
    assert run_reindex(app)["state"] == "succeeded"
    return app


def scripted_map(app, script):
    models = fx.scripted_roles(mapper=script)
    with app.app_context():
        client = LLMClient(LLMSettings.of(get_settings(app)).with_(backoff=0.0), factory=fx.factory(models),
                           sleep=lambda s: None)
        return map_topic(TOPIC, context=make_map_context(client)), models["mapper"]


def _exact_everywhere(out):
    content = {d["_id"]: d["content"] for d in map_docs()}
    spans = [m for e in out["entities"] for m in e["mentions"]] + [r["citation"] for r in out["relations"]]
    assert spans
    for s in spans:
        assert content[s["source_id"]][s["start"]:s["end"]] == s["text"]


def test_the_mapper_role_reads_each_source_and_invented_quotes_are_dropped(app):
    out, model = scripted_map(app, [lambda messages: mapper_reply(messages[-1].content)])
    assert model.calls  # the role was asked
    assert out["metadata"]["engine"] == "llm" and out["metadata"]["dropped_quotes"] >= 2 * len(model.calls)
    assert not out["metadata"]["failures"]
    assert all(INVENTED not in r["citation"]["text"] for r in out["relations"])
    assert all(e["name"] != "Atlantis Harbour" for e in out["entities"])
    assert any(r["relation"] == "states" for r in out["relations"])  # the model's own relations are in the map
    _exact_everywhere(out)
    assert out["conflicts"]  # the comparison still runs on the sources' own statements


def test_a_reply_that_is_not_json_fails_safe_and_is_recorded(app):
    out, model = scripted_map(app, ["I am sorry, I cannot produce JSON today."])
    assert model.calls and out["metadata"]["failures"]
    assert all("mapper on" in f for f in out["metadata"]["failures"])
    _exact_everywhere(out)  # the offline reading stood in for every source
    assert out["entities"] and out["conflicts"]


def test_the_mapper_over_http_against_the_local_test_server(tmp_path, monkeypatch):
    def responder(role, messages):
        return mapper_reply(str(messages[-1]["content"])) if role == "mapper" else "{}"

    with OpenAICompatibleServer(responder, models=("test-model",), api_key="sk-test") as server:
        for key, value in {"HISTORIAN_ENGINE": "llm", "HISTORIAN_LLM_BASE_URL": server.url,
                           "HISTORIAN_LLM_MODEL": "test-model", "HISTORIAN_LLM_API_KEY": "sk-test",
                           "HISTORIAN_LLM_MAX_RETRIES": "0"}.items():
            monkeypatch.setenv(key, value)
        app = make_plain_app(tmp_path, map_docs())
        run_reindex(app)
        result = app.test_cli_runner().invoke(args=["historian", "map", TOPIC, "--output", "json", "--quiet"])
        assert result.exit_code == 0, result.output
        out = json.loads(result.output)
        assert out["metadata"]["engine"] == "llm" and out["metadata"]["dropped_quotes"] > 0
        assert any(r["relation"] == "states" for r in out["relations"])
        assert sum(role_of(r["messages"]) == "mapper" for r in server.requests) >= 4  # each source of the topic asked
        _exact_everywhere(out)
