"""A damaged index generation is named, never served: each file's size and checksum in the manifest, checked when a
generation is loaded and looked at again while it serves; the last good generation serves meanwhile, or the site
starts, logs users in and says which file is damaged and how to rebuild. A failing store makes health 503."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import form_token, login, small_docs

USERS = "alice:alice-pw:researcher,root:root-pw:admin"


def _app(home: Path):
    from historian_blueprint.demo import create_app

    return create_app({"TESTING": True, "DEMO_HOME": str(home), "DEMO_LOAD_CORPUS": False})


def _build(app) -> dict:
    from historian_blueprint.services import get_store
    from historian_blueprint.index import service

    with app.app_context():
        job_id = service.start_reindex(background=False, full=False)
        service.run_claimed(job_id)
        return get_store().jobs.find_one({"_id": job_id})


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A demo home with two good generations of a small collection (the second after one document changed)."""
    from historian_blueprint.services import get_store

    os.environ["HISTORIAN_DEMO_USERS"] = USERS
    try:
        home = tmp_path_factory.mktemp("built") / "home"
        app = _app(home)
        docs = small_docs(per_file=2, chars=1200)
        with app.app_context():
            get_store().documents.insert_many([dict(d) for d in docs])
        assert _build(app)["state"] == "succeeded"
        with app.app_context():
            get_store().documents.update_one({"_id": docs[0]["_id"]},
                                             {"$set": {"content": docs[0]["content"] + " Amended."}})
        assert _build(app)["state"] == "succeeded"
        with app.app_context():
            get_state_close(app)
    finally:
        os.environ.pop("HISTORIAN_DEMO_USERS", None)
    return home


def get_state_close(app) -> None:
    from historian_blueprint.services import get_services

    get_services(app).stores.close()


def _numbers(home: Path) -> list[int]:
    """The generations on disk, newest first (a first build serves by words, then by meaning: two generations)."""
    return sorted((int(p.name[4:]) for p in (home / "index").glob("gen-*")), reverse=True)


def _generation(home: Path, number: int) -> Path:
    return home / "index" / f"gen-{number:06d}"


def truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def noise_in_place(path: Path) -> None:
    """4 KB of noise written over the middle of the file: its size stays the same."""
    with open(path, "r+b") as fh:
        fh.seek(max(0, path.stat().st_size // 2 - 2048))
        fh.write(np.random.default_rng(7).bytes(4096))


def shuffle_texts(path: Path) -> None:
    """Chunk texts moved between rows in place (narrative text under another document's offsets), same size: the
    bytes of ``texts.bin`` turned by one row's text."""
    blob = path.read_bytes()
    first = int(np.load(path.with_name("rows.npy"))[0, 4])
    path.write_bytes(blob[first:] + blob[:first])


def garbage(path: Path) -> None:
    path.write_bytes(b"\x00\xff garbage {{{")


DAMAGE = {
    "texts.bin truncated": ("texts.bin", truncate),
    "rows.npy truncated": ("rows.npy", truncate),
    "vectors.npy truncated": ("vectors.npy", truncate),
    "bm25_postings.npz truncated": ("bm25_postings.npz", truncate),
    "manifest.json garbage": ("manifest.json", garbage),
    "documents.json deleted": ("documents.json", Path.unlink),
    "faiss.index noise": ("faiss.index", noise_in_place),
    "chunk texts shuffled": ("texts.bin", shuffle_texts),
}


@pytest.fixture
def home(built, tmp_path, monkeypatch):
    monkeypatch.setenv("HISTORIAN_DEMO_USERS", USERS)
    copy = tmp_path / "home"
    shutil.copytree(built, copy)
    return copy


def _drop(home: Path, number: int) -> None:
    shutil.rmtree(_generation(home, number))


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_a_damaged_only_generation_is_named_and_the_site_still_starts(home, case):
    name, damage = DAMAGE[case]
    newest, previous = _numbers(home)
    _drop(home, previous)  # only the newest generation is on disk
    damage(_generation(home, newest) / name)
    app = _app(home)  # starts: nothing is read from the index at start-up
    from historian_blueprint.index import service

    assert service.preload(app)["generation"] is None  # a pre-forking server's master starts too
    client = app.test_client()
    login(client, "alice", "alice-pw")  # login keeps working
    health = client.get("/historian/api/health")
    assert health.status_code == 503 and health.json["status"] == "index_damaged"
    assert name in health.json["reason"] and "flask historian reindex --full" in health.json["reason"]
    assert "nothing is searched" in health.json["reason"]
    searched = client.get("/historian/api/retrieve?q=the+president")
    assert searched.status_code == 503 and name in searched.json["error"]["message"]
    asked = client.post("/historian/api/ask", json={"question": "What did the president say about the tariff?"},
                        headers={"X-CSRFToken": form_token(client, "/historian/ask")})
    assert asked.status_code == 503 and name in asked.json["error"]["message"]
    admin = login(app.test_client(), "root", "root-pw")
    page = admin.get("/historian/admin/reindex").get_data(as_text=True)
    assert 'data-testid="index-damaged"' in page and name in page and "nothing is searched" in page


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_the_last_good_generation_serves_while_the_newest_is_damaged(home, case):
    name, damage = DAMAGE[case]
    newest, previous = _numbers(home)
    damage(_generation(home, newest) / name)
    app = _app(home)
    client = login(app.test_client(), "alice", "alice-pw")
    searched = client.get("/historian/api/retrieve?q=the+president")
    assert searched.status_code == 200 and searched.json["generation"] == previous and searched.json["hits"]
    health = client.get("/historian/api/health")
    assert health.status_code == 503 and health.json["status"] == "index_damaged"
    assert f"generation {previous} serves meanwhile" in health.json["reason"] and name in health.json["reason"]


def test_damage_made_while_serving_is_noticed_and_a_rebuild_mends_it(home):
    app = _app(home)
    from historian_blueprint.index import service

    newest, previous = _numbers(home)
    client = login(app.test_client(), "alice", "alice-pw")
    assert client.get("/historian/api/retrieve?q=the+president").json["generation"] == newest
    with app.app_context():
        service.holder().check_every_s = 0.0  # the next request looks (a serving worker looks every second)
    shuffle_texts(_generation(home, newest) / "texts.bin")
    assert client.get("/historian/api/retrieve?q=the+president").json["generation"] == previous
    assert client.get("/historian/api/health").status_code == 503
    job = _build(app)  # an incremental build takes nothing over from the damaged generation
    assert job["state"] == "succeeded" and job["counts"]["unchanged"] == 0
    assert client.get("/historian/api/retrieve?q=the+president").json["generation"] == newest + 1
    health = client.get("/historian/api/health")
    assert health.status_code == 200 and health.json["status"] == "ok", health.json


def test_every_file_of_a_generation_is_recorded_with_its_size_and_checksum(home):
    from historian_blueprint.index import generation as gen

    directory = _generation(home, _numbers(home)[0])
    manifest = gen.read_manifest(directory)
    on_disk = {p.name for p in directory.iterdir()} - {"manifest.json"}
    assert set(manifest["files"]) == on_disk and set(gen.required_files(manifest)) <= on_disk
    assert all(manifest["files"][n]["sha256"] == gen.digest(directory / n) for n in on_disk)
    assert gen.check(directory, full=True) == []
    noise_in_place(directory / "vectors.npy")
    assert gen.check(directory, full=False) == []  # the same size: only the whole check sees it
    assert [d.file for d in gen.check(directory, full=True)] == ["vectors.npy"]


class FullDisk:
    """A collection on a full disk: reads work, every write fails as SQLite's does."""

    WRITES = ("insert_one", "insert_many", "replace_one", "update_one", "update_many", "delete_one", "delete_many",
              "find_one_and_update", "find_one_and_replace", "find_one_and_delete")

    def __init__(self, collection) -> None:
        self.collection = collection

    def __getattr__(self, attr):
        if attr in self.WRITES:
            def fail(*args, **kwargs):
                raise sqlite3.OperationalError("database or disk is full")
            return fail
        return getattr(self.collection, attr)


def test_a_full_disk_is_said_by_health_the_pages_and_the_stream(home, monkeypatch):
    from historian_blueprint import store
    from historian_blueprint.store import Store

    monkeypatch.setattr(store, "PROBE_WRITE_EVERY_S", 0.0)  # every check writes (a serving process: every 10 s)

    app = _app(home)
    client = login(app.test_client(), "alice", "alice-pw")
    assert client.get("/historian/api/health").status_code == 200
    token = form_token(client, "/historian/ask")
    original = Store.collection
    monkeypatch.setattr(Store, "collection", lambda self, name: FullDisk(original(self, name)))
    health = client.get("/historian/api/health")
    assert health.status_code == 503 and health.json["status"] == "store_failing"
    assert "the database cannot be written (disk full?)" in health.json["reason"]
    question = {"question": "What did the president say about the tariff?", "csrf_token": token}
    page = client.post("/historian/ask", data=question)
    assert page.status_code == 503 and "the database cannot be written (disk full?)" in page.get_data(as_text=True)
    stream = client.post("/historian/ask/stream", data=question, headers={"Accept": "text/event-stream"})
    body = stream.get_data(as_text=True)
    assert stream.mimetype == "text/event-stream" and body.startswith("event: error\n")
    assert "the database cannot be written (disk full?)" in body
    api = client.post("/historian/api/ask", json={"question": question["question"]}, headers={"X-CSRFToken": token})
    assert api.status_code == 503 and api.json["error"]["code"] == "store_failing"


def test_a_damaged_store_collection_makes_health_unhealthy(home):
    app = _app(home)
    client = app.test_client()
    assert client.get("/historian/api/health").status_code == 200
    from historian_blueprint.services import get_services

    get_services(app).stores.close()
    runs = [p for p in (home / "store").rglob("*") if p.is_file() and "runs" in p.name]
    assert runs, sorted(p.name for p in (home / "store").rglob("*"))
    for path in runs:
        path.write_bytes(b"not a database" * 100)
    health = app.test_client().get("/historian/api/health")
    assert health.status_code == 503 and health.json["status"] == "store_failing", health.json


@pytest.mark.parametrize("case", ["manifest.json garbage", "documents.json deleted"])
def test_a_full_rebuild_and_a_retry_of_failed_documents_mend_a_damaged_generation(home, case):
    """The remedy the damage names works on every damage, and a retry of some documents never publishes only them."""
    from historian_blueprint.services import get_settings, get_store
    from historian_blueprint.index import service
    from historian_blueprint.index.builder import reindex
    from historian_blueprint.settings import IndexSettings, read

    name, damage = DAMAGE[case]
    newest, _ = _numbers(home)
    damage(_generation(home, newest) / name)
    app = _app(home)
    with app.app_context():
        documents = get_store().count_documents()
        job_id = service.start_reindex(background=False, full=True)
        service.run_claimed(job_id)
        assert get_store().jobs.find_one({"_id": job_id})["state"] == "succeeded"
        damage(_generation(home, newest + 1) / name)
        one = get_store().documents.find_one({})["_id"]
        result = reindex(get_store(), service.index_dir(), read(IndexSettings, get_settings()),
                         embedder=service.embedder(), only={one})  # a retry of one failed document
        assert result.counts["documents"] == documents
        assert service.get_index().extent["documents"] == documents  # every document, not the retried one alone


def test_a_build_keeps_the_last_good_generation_until_the_new_one_serves(home, monkeypatch):
    from historian_blueprint.index import builder, service

    newest, previous = _numbers(home)
    shuffle_texts(_generation(home, newest) / "texts.bin")
    app = _app(home)
    client = login(app.test_client(), "alice", "alice-pw")
    seen = []
    writing = builder.gen.write_generation

    def watched(*args, **kwargs):  # while the new generation is written, the fallback still serves
        seen.append(client.get("/historian/api/retrieve?q=the+president").json.get("generation"))
        return writing(*args, **kwargs)

    monkeypatch.setattr(builder.gen, "write_generation", watched)
    with app.app_context():
        service.holder().check_every_s = 0.0
        job_id = service.start_reindex(background=False)
        service.run_claimed(job_id)
    assert seen == [previous]


def test_an_unreadable_file_or_an_odd_manifest_is_damage_not_a_failure(home, monkeypatch):
    from historian_blueprint.index import generation as gen

    directory = _generation(home, _numbers(home)[0])
    manifest = gen.read_manifest(directory)
    original = gen.digest

    def failing(path):
        if path.name == "vectors.npy":
            raise OSError(5, "Input/output error")
        return original(path)

    monkeypatch.setattr(gen, "digest", failing)
    assert ([(d.file, d.problem) for d in gen.check(directory, full=True)]
            == [("vectors.npy", "cannot be read (OSError)")])
    monkeypatch.setattr(gen, "digest", original)
    (directory / "manifest.json").write_text(json.dumps({**manifest,
                                                         "files": {**manifest["files"], "texts.bin": 123}}))
    assert [d.file for d in gen.check(directory, full=True)] == ["manifest.json"]
    app = _app(home)
    client = login(app.test_client(), "alice", "alice-pw")
    assert client.get("/historian/api/retrieve?q=the+president").json["generation"] == _numbers(home)[1]
    assert client.get("/historian/api/health").json["status"] == "index_damaged"


def test_another_format_asks_for_a_rebuild_without_hashing_each_request(home, monkeypatch):
    from historian_blueprint.index import generation as gen

    directory = _generation(home, _numbers(home)[0])
    manifest = gen.read_manifest(directory)
    (directory / "manifest.json").write_text(json.dumps({**manifest, "format": gen.FORMAT + 1}))
    hashed = []
    original = gen.digest
    monkeypatch.setattr(gen, "digest", lambda path: hashed.append(path) or original(path))
    app = _app(home)
    client = login(app.test_client(), "alice", "alice-pw")
    for _ in range(3):
        assert client.get("/historian/api/retrieve?q=the+president").status_code == 409
    health = client.get("/historian/api/health")
    assert health.status_code == 503 and health.json["status"] == "index_mismatch"
    assert not hashed
