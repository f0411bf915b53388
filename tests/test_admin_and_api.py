"""Admin reindex page and retrieve API: access rules, CSRF, a progress bar that advances, JSON shapes."""

from __future__ import annotations

import re
import time

import pytest

from historian_blueprint import get_store
from historian_blueprint.demo import create_app
from tests.conftest import login, small_docs


TOKENS = {"tok-admin": {"user": "ops", "role": "admin"}, "tok-r": {"user": "r"}}


@pytest.fixture
def small_demo(tmp_path, demo_users):
    app = create_app({"TESTING": True, "DEMO_HOME": str(tmp_path / "home"), "DEMO_LOAD_CORPUS": False,
                      "HISTORIAN_INDEX_BATCH_SIZE": 1, "HISTORIAN_API_TOKENS": TOKENS})
    with app.app_context():
        get_store().documents.insert_many(small_docs())
    return app


def wait_for(client, job_id, timeout=180):
    seen = []
    deadline = time.time() + timeout
    while time.time() < deadline:
        job = client.get(f"/historian/api/jobs/{job_id}").json
        seen.append(job["percent"])
        if job["state"] not in ("queued", "running"):
            return job, seen
        time.sleep(0.05)
    raise AssertionError(f"job did not finish: {seen[-5:]}")


def test_admin_page_access_rules(small_demo):
    anonymous = small_demo.test_client()
    response = anonymous.get("/historian/admin/reindex")
    assert response.status_code == 302 and response.headers["Location"].startswith("/login")
    researcher = login(small_demo.test_client())
    assert researcher.get("/historian/admin/reindex").status_code == 403
    assert researcher.post("/historian/admin/reindex").status_code == 403
    assert researcher.post("/historian/api/reindex", json={}).status_code == 403
    admin = login(small_demo.test_client(), "root", "root-pw")
    page = admin.get("/historian/admin/reindex")
    assert page.status_code == 200 and b"no index yet" in page.data


def test_start_without_csrf_token_is_400(small_demo):
    admin = login(small_demo.test_client(), "root", "root-pw")
    assert admin.post("/historian/admin/reindex", data={}).status_code == 400
    assert admin.post("/historian/api/reindex", json={}).status_code == 400
    with small_demo.app_context():
        assert get_store().jobs.count_documents({}) == 0


def test_reindex_from_the_admin_page_with_advancing_progress(small_demo):
    admin = login(small_demo.test_client(), "root", "root-pw")
    page = admin.get("/historian/admin/reindex").data.decode()
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    response = admin.post("/historian/admin/reindex", data={"csrf_token": token})
    assert response.status_code == 302
    running = admin.get("/historian/admin/reindex").data.decode()
    job_id = re.search(r'/historian/api/jobs/([0-9a-f]+)', running).group(1)
    # a second start while one runs is refused with a message, not a second job
    admin.post("/historian/admin/reindex", data={"csrf_token": token})
    job, seen = wait_for(admin, job_id)
    assert job["state"] == "succeeded", job
    distinct = sorted(set(seen))
    assert len(distinct) >= 3, seen          # the bar moved through intermediate values
    assert seen == sorted(seen)              # and never went backwards
    assert seen[-1] == 100
    done = admin.get("/historian/admin/reindex").data.decode()
    assert "generation 2" in done and "succeeded" in done  # words only (1), then whole (2)
    assert re.search(r"built \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC", done)  # a time to the minute, not raw ISO
    assert not re.search(r"\d{2}:\d{2}:\d{2}\.\d+", done)  # no microseconds anywhere on the page
    with small_demo.app_context():
        assert get_store().jobs.count_documents({}) == 1


def test_api_reindex_with_token_and_busy_conflict(small_demo):
    api = small_demo.test_client()
    headers = {"Authorization": "Bearer tok-admin"}
    assert api.post("/historian/api/reindex", json={}, headers={"Authorization": "Bearer tok-r"}).status_code == 403
    first = api.post("/historian/api/reindex", json={}, headers=headers)
    assert first.status_code == 202
    second = api.post("/historian/api/reindex", json={}, headers=headers)
    assert second.status_code == 409 and second.json["error"]["job_id"] == first.json["job_id"]
    job, _ = wait_for(_TokenClient(api, headers), first.json["job_id"])
    assert job["state"] == "succeeded"
    listed = api.get("/historian/api/jobs", headers=headers)  # an operator reads the builds without the page
    assert listed.status_code == 200 and listed.json["jobs"][0] == api.get(
        f"/historian/api/jobs/{job['id']}", headers=headers).json
    built = listed.json["jobs"][0]
    assert built["counts"]["embedded_chunks"] > 0 and built["chunks_per_s"] > 0 and built["timings"]["encode_s"] > 0
    assert api.get("/historian/api/jobs", headers={"Authorization": "Bearer tok-r"}).status_code == 403
    assert api.get("/historian/api/jobs?limit=lots", headers=headers).status_code == 400
    assert len(api.get("/historian/api/jobs?limit=1", headers=headers).json["jobs"]) == 1


class _TokenClient:
    def __init__(self, client, headers):
        self.client, self.headers = client, headers

    def get(self, path):
        return self.client.get(path, headers=self.headers)


def test_retrieve_api(small_demo):
    researcher = login(small_demo.test_client())
    assert researcher.get("/historian/api/retrieve?q=war").status_code == 503
    admin = login(small_demo.test_client(), "root", "root-pw")
    admin.post("/historian/api/reindex", json={}, headers={"X-CSRFToken": _token(admin)})
    with small_demo.app_context():
        job_id = get_store().jobs.find_one({})["_id"]
    wait_for(admin, job_id)
    response = researcher.get("/historian/api/retrieve?q=cotton+plantation&top_k=5")
    assert response.status_code == 200
    body = response.json
    assert body["generation"] == 2 and len(body["hits"]) == 5  # words only (1), then whole (2)
    with small_demo.app_context():
        store = get_store()
        for hit in body["hits"]:
            assert store.get_document(hit["source_id"]).text[hit["start"]:hit["end"]] == hit["text"]
            assert {"score", "dense", "bm25", "locator", "title"} <= set(hit)
    assert [h["score"] for h in body["hits"]] == sorted((h["score"] for h in body["hits"]), reverse=True)
    filtered = researcher.get("/historian/api/retrieve?q=war&collection=State+of+the+Union+Addresses").json
    assert {h["collection"] for h in filtered["hits"]} == {"State of the Union Addresses"}
    assert researcher.get("/historian/api/retrieve").status_code == 400
    bad = researcher.get("/historian/api/retrieve?q=war&top_k=lots")
    assert bad.status_code == 400 and "top_k" in bad.json["error"]["message"]
    assert small_demo.test_client().get("/historian/api/retrieve?q=war").status_code == 401


def test_a_search_takes_one_of_the_users_running_slots(small_demo):
    from historian_blueprint.limits import Slots

    researcher = login(small_demo.test_client())
    with small_demo.app_context():
        slots = Slots(get_store(), 2, 60)
        held = [slots.take("alice", "ask"), slots.take("alice", "map")]  # two runs going: the limit
    busy = researcher.get("/historian/api/retrieve?q=war")
    assert busy.status_code == 429 and int(busy.headers["Retry-After"]) >= 1
    assert busy.json["error"]["code"] == "too_many_requests"
    with small_demo.app_context():
        slots.give_back(held[0])
    assert researcher.get("/historian/api/retrieve?q=war").status_code == 503  # searched (no index yet), not refused
    with small_demo.app_context():
        assert get_store().collection("active").count_documents({}) == 1  # the search gave its slot back


def _token(client):
    page = client.get("/historian/admin/reindex").data.decode()
    return re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
