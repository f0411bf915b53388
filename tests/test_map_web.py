"""The knowledge map's pages, exports and API through Flask's test client (the browser test drives the same)."""

from __future__ import annotations

import json
import re

import pytest

from historian_blueprint import get_store
from tests.conftest import make_plain_app
from tests.test_index import run_reindex
from tests.test_map import map_docs

TOPIC = "the Johnstown Flood"


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    path = tmp_path_factory.mktemp("mapweb")
    app = make_plain_app(path, map_docs(), WTF_CSRF_ENABLED=False)
    assert run_reindex(app)["state"] == "succeeded"
    return path


@pytest.fixture
def client(home):
    return make_plain_app(home, WTF_CSRF_ENABLED=False).test_client()


def test_api_map_answers_the_contract_and_every_span_is_exact(client):
    response = client.post("/historian/api/map", json={"topic": TOPIC})
    assert response.status_code == 200, response.data[:300]
    out = response.get_json()
    assert {"topic", "entities", "relations", "conflicts", "consensus", "counter_queries", "sources", "report",
            "metadata"} <= set(out)
    content = {d["_id"]: d["content"] for d in map_docs()}
    for side in (s for c in out["conflicts"] for s in c["sides"]):
        for cit in side["citations"]:
            assert content[cit["source_id"]][cit["start"]:cit["end"]] == cit["text"]
    again = client.get(f"/historian/api/maps/{out['metadata']['run_id']}").get_json()
    assert again["output"]["topic"] == TOPIC


@pytest.mark.parametrize("body", [{"topic": ""}, {"topic": 5}, {"topic": ["x"]}, {"topic": "x" * 301}, {}, [1], "x"])
def test_a_bad_topic_is_a_clear_400(client, body):
    response = client.post("/historian/api/map", json=body)
    assert response.status_code == 400 and "error" in response.get_json()


def test_map_page_streams_progress_then_the_permalink_draws_the_map(client):
    page = client.get(f"/historian/map?topic={TOPIC}").get_data(as_text=True)
    assert 'id="h-map"' in page and f'value="{TOPIC}"' in page
    response = client.post("/historian/map/stream", data={"topic": TOPIC})
    events = re.findall(r"event: (\w+)\ndata: (.*)\n\n", response.get_data(as_text=True))
    names = [n for n, _ in events]
    assert names[-1] == "done" and names[:3] == ["node", "node", "node"]
    url = json.loads(events[-1][1])["url"]
    html = client.get(url).get_data(as_text=True)
    assert 'data-testid="map-graph"' in html and html.count('data-testid="conflict"') >= 2
    assert 'data-testid="consensus"' in html and "cytoscape-3.34.4.min.js" in html
    side = re.search(r'data-testid="conflict-side">.*?<a class="h-cite" data-testid="map-citation" href="([^"]+)"',
                     html, re.S)
    source = client.get(side.group(1).replace("&amp;", "&")).get_data(as_text=True)
    assert 'id="h-mark-first"' in source  # the cited span, highlighted
    graph = client.get(url.replace(url, url + "/export.json?graph=1")).get_json()
    assert graph["nodes"] and graph["edges"] and all(e["href"].startswith("/historian/sources/")
                                                     for e in graph["edges"])
    assert any(n["type"] == "conflict" for n in graph["nodes"])


def test_exports_history_delete_and_owner_only(client, home):
    run_id = client.post("/historian/map", data={"topic": TOPIC}).headers["Location"].rsplit("/", 1)[1]
    md = client.get(f"/historian/maps/{run_id}/export.md")
    assert (md.mimetype == "text/markdown"
            and md.get_data(as_text=True).startswith("# Knowledge map: the Johnstown Flood"))
    assert client.get(f"/historian/maps/{run_id}/export.json").get_json()["topic"] == TOPIC
    assert client.get(f"/historian/maps/{run_id}/export.pdf").status_code == 404
    assert run_id in client.get("/historian/maps").get_data(as_text=True)
    app = make_plain_app(home, WTF_CSRF_ENABLED=False)
    with app.app_context():  # another user's map is not found (ids do not leak)
        get_store().runs.update_one({"_id": run_id}, {"$set": {"user_id": "someone-else"}})
    assert client.get(f"/historian/maps/{run_id}").status_code == 404
    assert client.get(f"/historian/maps/{run_id}/export.md").status_code == 404
    with app.app_context():
        get_store().runs.update_one({"_id": run_id}, {"$set": {"user_id": "anonymous"}})
    assert client.post(f"/historian/maps/{run_id}/delete").status_code == 303
    assert client.get(f"/historian/maps/{run_id}").status_code == 404


def test_an_answer_page_links_to_a_map_of_its_question(client):
    run = client.post("/historian/ask", data={"question": "How many people died in the Johnstown flood?"})
    page = client.get(run.headers["Location"]).get_data(as_text=True)
    link = re.search(r'data-testid="map-topic" href="([^"]+)"', page).group(1)
    assert "/historian/map?topic=" in link


def test_sources_set_aside_are_shown_with_why_and_can_be_included(client):
    """The map names every source it read but left out, with why; the asker ticks one and maps again: it is mapped
    with the others (a source row with its credibility), and the page says it was included at the asker's request."""
    out = client.post("/historian/api/map", json={"topic": TOPIC}).get_json()
    aside = out["metadata"]["set_aside_why"]
    assert {a["source_id"] for a in aside} <= set(out["metadata"]["set_aside"])  # the ids stay as they were
    assert aside and all(a["why"] and a["title"] for a in aside)
    assert "## Sources set aside" in out["report"]
    page = client.get(f"/historian/maps/{out['metadata']['run_id']}").get_data(as_text=True)
    first = aside[0]
    assert 'data-testid="set-aside"' in page and first["why"].replace("'", "&#39;") in page
    assert f'name="include" value="{first["source_id"]}"' in page
    response = client.post("/historian/map", data={"topic": TOPIC, "include": [first["source_id"]]})
    assert response.status_code == 303
    run_id = response.headers["Location"].rstrip("/").split("/")[-1]
    again = client.get(f"/historian/api/maps/{run_id}").get_json()["output"]
    assert again["metadata"]["included"] == [first["source_id"]]
    assert first["source_id"] in {s["source_id"] for s in again["sources"]}
    assert first["source_id"] not in set(again["metadata"]["set_aside"])
    assert 'data-testid="included"' in client.get(f"/historian/maps/{run_id}").get_data(as_text=True)


@pytest.mark.parametrize("include", ["x", [1], ["x" * 600], ["s"] * 101])
def test_a_bad_include_list_is_a_clear_400(client, include):
    response = client.post("/historian/api/map", json={"topic": TOPIC, "include": include})
    assert response.status_code == 400 and "include" in response.get_json()["error"]["message"]
