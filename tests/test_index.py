"""The index: incremental reindex, generations, reload, filters, per-document errors, one job at a time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from historian_blueprint import get_settings, get_services, get_store
from historian_blueprint.index import generation as gen
from historian_blueprint.index import jobs, service
from historian_blueprint.index.builder import reindex
from historian_blueprint.settings import IndexSettings
from historian_blueprint.index.retriever import Filters, IndexHolder, IndexNotBuilt
from tests.conftest import make_plain_app, small_docs


def run_reindex(app, **kwargs):
    with app.app_context():
        job_id = service.start_reindex(background=False, **kwargs)
        service.run_claimed(job_id)
        return get_store().jobs.find_one({"_id": job_id})


@pytest.fixture
def indexed(tmp_path):
    app = make_plain_app(tmp_path, small_docs())
    job = run_reindex(app)
    assert job["state"] == "succeeded", job
    return app


def test_full_build_then_noop_then_one_change(indexed):
    app = indexed
    with app.app_context():
        first = gen.current_generation(get_store())  # a first build: words only (1), then whole (2)
        assert first["generation"] == 2 and first["dense"] and first["documents"] == 12
    noop = run_reindex(app)
    assert noop["noop"] is True and noop["counts"]["unchanged"] == 12
    with app.app_context():
        assert gen.current_generation(get_store())["generation"] == 2
        store = get_store()
        doc = store.documents.find_one({"_id": "sotu-1860-james-buchanan"})
        store.documents.update_one({"_id": doc["_id"]},
                                   {"$set": {"content": doc["content"] + " The Pacific railroad bill passed."}})
        chunks_of_doc = len([h for h in service.get_index().rows.source_ids if h == doc["_id"]])
    changed = run_reindex(app)
    assert changed["counts"]["changed"] == 1 and changed["counts"]["unchanged"] == 11
    assert changed["counts"]["embedded_chunks"] <= chunks_of_doc + 1  # only that document was embedded again
    with app.app_context():
        hits = service.retrieve("Pacific railroad bill passed", top_k=3)
        assert hits[0].source_id == "sotu-1860-james-buchanan"
        assert service.holder().loaded_generation == 3


def test_deleted_documents_leave_the_index(indexed):
    with indexed.app_context():
        get_store().documents.delete_one({"_id": "sotu-1860-james-buchanan"})
    job = run_reindex(indexed)
    assert job["counts"]["deleted"] == 1
    with indexed.app_context():
        assert "sotu-1860-james-buchanan" not in service.get_index().documents


def test_hits_point_at_the_exact_text_of_the_document(indexed):
    with indexed.app_context():
        store = get_store()
        hits = service.retrieve("slavery plantation master", top_k=8)
        assert len(hits) == 8
        for hit in hits:
            content = store.get_document(hit.source_id).text
            assert content[hit.start:hit.end] == hit.text
            assert hit.locator


def test_filters_on_collection_and_years(indexed):
    with indexed.app_context():
        hits = service.retrieve("the war and the government", top_k=20,
                                filters=Filters(collection="State of the Union Addresses"))
        assert hits and {h.collection for h in hits} == {"State of the Union Addresses"}
        hits = service.retrieve("the war and the government", top_k=20, filters=Filters(year_from=1900, year_to=1920))
        assert hits and all(1900 <= h.year <= 1920 for h in hits)
        assert service.retrieve("war", filters=Filters(year_from=3000)) == []


def test_other_processes_notice_a_new_generation(indexed):
    with indexed.app_context():
        other = IndexHolder(service.index_dir(), check_every_s=0)  # as another worker process would
        assert other.get(get_store()).number == 2
        get_store().documents.insert_one({"_id": "new-doc", "title": "Wire dispatch",
                                          "content": "A new dispatch about the canal."})
    run_reindex(indexed)
    with indexed.app_context():
        assert other.get(get_store()).number == 3
        assert "new-doc" in other.get(get_store()).documents
        # the old generation is kept for readers still using it; older ones are pruned
        names = sorted(p.name for p in service.index_dir().iterdir())
        assert names == ["gen-000002", "gen-000003"]


def test_a_model_mismatch_asks_for_a_reindex(indexed):
    with indexed.app_context():
        manifest_path = gen.generation_dir(service.index_dir(),
                                           gen.current_generation(get_store())["generation"]) / "manifest.json"
        manifest = json.loads(manifest_path.read_text())
        manifest["model"] = {"name": "other-model", "dimension": 768}
        manifest_path.write_text(json.dumps(manifest))
        service.holder()._loaded = None
        with pytest.raises(gen.IndexMismatch, match="reindex --full"):
            service.get_index()
        response = indexed.test_client().get("/historian/api/retrieve?q=war")
        assert response.status_code == 409 and response.json["error"]["code"] == "index_mismatch"


def test_bad_documents_are_reported_and_can_be_retried(tmp_path):
    docs = small_docs(per_file=2)
    docs.append({"_id": "bad-1", "title": "Broken scan", "content": ["not", "text"]})
    app = make_plain_app(tmp_path, docs)
    job = run_reindex(app)
    assert job["state"] == "succeeded_with_errors"
    assert [e["source_id"] for e in job["errors"]] == ["bad-1"]
    assert job["counts"]["new"] == 6
    with app.app_context():
        assert jobs.failed_documents(get_store()) == ["bad-1"]
        get_store().documents.update_one({"_id": "bad-1"}, {"$set": {"content": "The scan was fixed by hand."}})
    retry = run_reindex(app, retry_failed=True)
    assert retry["only"] == ["bad-1"]
    assert retry["counts"]["new"] == 1 and retry["counts"]["unchanged"] == 6
    assert retry["state"] == "succeeded"


def test_only_one_reindex_at_a_time_and_dead_claims_are_taken_over(tmp_path):
    app = make_plain_app(tmp_path, small_docs(per_file=1))
    with app.app_context():
        store = get_store()
        first = jobs.claim(store, user="a")
        with pytest.raises(jobs.ReindexBusy):
            jobs.claim(store, user="b")
        # the holder died (a pid that cannot exist on this host)
        store.meta.update_one({"_id": jobs.LOCK_ID}, {"$set": {"pid": 2**22 + 12345}})
        second = jobs.claim(store, user="c")
        assert store.jobs.find_one({"_id": first})["state"] == "crashed"
        assert store.meta.find_one({"_id": jobs.LOCK_ID})["job_id"] == second
        # a claim whose heartbeat went stale is simply taken; its job is marked crashed all the same
        store.jobs.update_one({"_id": second}, {"$set": {"state": "running"}})
        store.meta.update_one({"_id": jobs.LOCK_ID}, {"$set": {"heartbeat_at": 0}})
        third = jobs.claim(store, user="d")
        assert store.jobs.find_one({"_id": second})["state"] == "crashed"
        assert store.jobs.find_one({"_id": third})["state"] == "queued"


def test_no_index_yet_is_a_clear_error(tmp_path):
    app = make_plain_app(tmp_path, small_docs(per_file=1))
    with app.app_context():
        with pytest.raises(IndexNotBuilt, match="reindex"):
            service.retrieve("war")
    response = app.test_client().get("/historian/api/retrieve?q=war")
    assert response.status_code == 503 and response.json["error"]["code"] == "index_not_built"


KILLER = """
import sys, time
from tests.conftest import make_plain_app
from pathlib import Path
from historian_blueprint.index import service

real = service.embedder


class Slow:
    # a build slow enough to be caught mid-embedding, however fast the encoder is on this machine
    def __init__(self, inner):
        self.inner, self.name, self.dimension, self.path = inner, inner.name, inner.dimension, inner.path

    def encode(self, texts, batch_size=32):
        time.sleep(0.3)
        return self.inner.encode(texts, batch_size=batch_size)


service.embedder = lambda app=None: Slow(real(app))
app = make_plain_app(Path(sys.argv[1]), HISTORIAN_INDEX_BATCH_SIZE=1)
with app.app_context():
    job_id = service.start_reindex(background=False, full=True)
    print(job_id, flush=True)
    service.run_claimed(job_id)
"""


def test_killed_reindex_leaves_the_old_generation_serving(tmp_path):
    app = make_plain_app(tmp_path, small_docs())
    run_reindex(app)
    with app.app_context():
        before = [h.source_id for h in service.retrieve("cotton plantation", top_k=5)]
    env = dict(os.environ, PYTHONPATH=str(os.getcwd()))
    proc = subprocess.Popen([sys.executable, "-c", KILLER, str(tmp_path)], stdout=subprocess.PIPE, text=True, env=env)
    job_id = proc.stdout.readline().strip()
    with app.app_context():
        store = get_store()
        deadline = time.time() + 120
        while True:  # killed once at least two blocks are embedded (and checkpointed)
            job = store.jobs.find_one({"_id": job_id})
            if job["phase"] == "embed" and job["progress"]["done"] >= 32:
                break
            assert time.time() < deadline and proc.poll() is None
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        # queries are still answered, from generation 1
        assert gen.current_generation(store)["generation"] == 2
        assert [h.source_id for h in service.retrieve("cotton plantation", top_k=5)] == before
        assert store.jobs.find_one({"_id": job_id})["state"] == "running"  # the dead job, as it was left
    after = run_reindex(app, full=True)
    assert after["state"] == "succeeded" and after["generation"] == 3
    assert after["counts"]["resumed_chunks"] >= 32  # what the killed build embedded is not encoded again
    with app.app_context():
        store = get_store()
        assert store.jobs.find_one({"_id": job_id})["state"] == "crashed"
        assert not any(".building" in p.name for p in service.index_dir().iterdir())
        assert [h.source_id for h in service.retrieve("cotton plantation", top_k=5)] == before


def test_builder_records_encode_time_and_counts(tmp_path):
    app = make_plain_app(tmp_path, small_docs(per_file=1))
    with app.app_context():
        result = reindex(get_store(), service.index_dir(), IndexSettings.of(get_settings(app)),
                         embedder=service.embedder())
    assert result.counts["chunks"] == result.counts["embedded_chunks"] > 0
    assert 0 < result.timings["encode_s"] <= result.timings["total_s"]
    assert get_services(app).data_dir.joinpath("index", f"gen-{result.generation:06d}", "faiss.index").exists()


@pytest.mark.parametrize("mode", ["bm25", "dense"])
def test_context_header_lets_a_question_name_the_author_and_year(tmp_path, mode):
    """Chunks rarely say who wrote them or when; the header (title, author, date) is indexed with each."""
    text = "The silver question has occupied the attention of Congress. The purchases of bullion should cease."
    docs = [
        {"_id": f"msg-{year}", "title": "Annual Message", "author": author, "date": f"{year}-12-04", "content": text}
        for year, author in ((1890, "Benjamin Harrison"), (1893, "Grover Cleveland"), (1897, "William McKinley"))
    ]
    app = make_plain_app(tmp_path / "on", docs)
    assert run_reindex(app)["state"] == "succeeded"
    with app.app_context():
        for year, author in ((1893, "Grover Cleveland"), (1890, "Benjamin Harrison")):
            hits = service.retrieve(f"What did {author} say in {year} about the silver question?", top_k=3, mode=mode)
            assert hits[0].source_id == f"msg-{year}"
            assert hits[0].text == text[hits[0].start:hits[0].end]  # offsets still point at the text alone
    off = make_plain_app(tmp_path / "off", docs, HISTORIAN_INDEX_CONTEXT_HEADER=False)
    assert run_reindex(off)["state"] == "succeeded"
    with off.app_context():
        hits = service.retrieve("What did Grover Cleveland say in 1893 about the silver question?", top_k=3, mode=mode)
        assert len({round(h.score, 5) for h in hits}) <= 1  # without the header the three chunks are indistinguishable


class Dies(BaseException):
    """Stands for a killed process: nothing in the builder catches it."""


class Fragile:
    """The real encoder, dying after ``blocks`` calls when asked to; counts the texts it encoded."""

    def __init__(self, inner, blocks=None):
        self.inner, self.name, self.dimension, self.blocks = inner, inner.name, inner.dimension, blocks
        self.path = getattr(inner, "path", None)  # the same model folder: the same fingerprint
        self.calls = self.texts = 0

    def encode(self, texts, batch_size=32):
        if self.blocks is not None and self.calls >= self.blocks:
            raise Dies()
        self.calls += 1
        self.texts += len(texts)
        return self.inner.encode(texts, batch_size=batch_size)


def test_an_interrupted_build_resumes_from_its_checkpoint(tmp_path):
    app = make_plain_app(tmp_path, small_docs(), HISTORIAN_INDEX_BATCH_SIZE=1)  # blocks of 16 chunks
    with app.app_context():
        store, settings, inner, where = (get_store(), IndexSettings.of(get_settings(app)), service.embedder(),
                                         service.index_dir())
        dying = Fragile(inner, blocks=2)
        with pytest.raises(Dies):
            reindex(store, where, settings, embedder=dying)
        # words only serve, no half vectors
        assert gen.current_generation(store)["dense"] is False and dying.texts == 32
        again = Fragile(inner)
        resumed = reindex(store, where, settings, embedder=again)
        assert resumed.counts["resumed_chunks"] == 32
        assert again.texts == resumed.counts["embedded_chunks"] == resumed.counts["chunks"] - 32 > 0
        assert not (where / "checkpoint").exists()  # cleared once the generation is written
        clean = reindex(store, where, settings, embedder=Fragile(inner), full=True)
        assert clean.counts["resumed_chunks"] == 0 and clean.counts["embedded_chunks"] == clean.counts["chunks"]
        a = gen.read_vectors(gen.generation_dir(where, resumed.generation))
        b = gen.read_vectors(gen.generation_dir(where, clean.generation))
        assert a.shape == b.shape and float(abs(a - b).max()) < 1e-4  # the same index as an uninterrupted build
        rows_a = gen.read_rows(gen.generation_dir(where, resumed.generation))
        rows_b = gen.read_rows(gen.generation_dir(where, clean.generation))
        assert rows_a.texts == rows_b.texts and rows_a.starts == rows_b.starts


def test_a_checkpoint_is_never_used_by_another_model(tmp_path):
    """Two models in folders of the same name: the second may not resume from the first one's vectors."""
    app = make_plain_app(tmp_path, small_docs(), HISTORIAN_INDEX_BATCH_SIZE=1)
    with app.app_context():
        store, settings, inner, where = (get_store(), IndexSettings.of(get_settings(app)), service.embedder(),
                                         service.index_dir())
        first, second = tmp_path / "a" / "model", tmp_path / "b" / "model"
        for folder, weights in ((first, b"one"), (second, b"two, longer")):
            folder.mkdir(parents=True)
            (folder / "weights.bin").write_bytes(weights)
        dying = Fragile(inner, blocks=2)
        dying.path = str(first)
        with pytest.raises(Dies):
            reindex(store, where, settings, embedder=dying, full=True)
        other = Fragile(inner)
        other.path = str(second)
        result = reindex(store, where, settings, embedder=other, full=True)
        assert result.counts["resumed_chunks"] == 0 and other.texts == result.counts["chunks"]


def test_a_first_build_serves_by_words_while_its_vectors_are_made(tmp_path):
    """No one waits for the vectors: a first build publishes a words-only (BM25) generation as soon as its chunks
    are made, answers from it, and switches to the whole generation when the vectors are done; the words-only
    generation never lends its missing vectors to a later build."""
    import threading

    app = make_plain_app(tmp_path, small_docs())
    release = threading.Event()
    with app.app_context():
        real = service.embedder()

        class Held:  # an encoder that waits until the test has seen the words-only generation
            name, dimension, path = real.name, real.dimension, getattr(real, "path", None)

            def encode(self, texts, batch_size=32):
                assert release.wait(60)
                return real.encode(texts, batch_size=batch_size)

        settings, store, where = IndexSettings.of(get_settings(app)), get_store(), service.index_dir()
        result: dict = {}
        worker = threading.Thread(target=lambda: result.update(r=reindex(store, where, settings, embedder=Held())))
        worker.start()
        deadline = time.time() + 60
        while gen.current_generation(store) is None:
            assert time.time() < deadline and worker.is_alive()
            time.sleep(0.05)
        record = gen.current_generation(store)
        assert record["dense"] is False
        loaded = service.get_index()
        assert not loaded.dense and loaded.vectors is None
        words = [h.source_id for h in service.retrieve("cotton plantation", top_k=5)]
        assert words and all(h.dense == 0 for h in service.retrieve("cotton plantation", top_k=5))
        assert service.search_status() == {"dense": False, "model": real.name, "vectors_built": None}
        release.set()
        worker.join(120)
        assert result["r"].generation == record["generation"] + 1
        assert gen.current_generation(store)["dense"] is True
        service.holder().invalidate()
        loaded = service.get_index()
        assert loaded.dense and loaded.vectors.shape[0] == len(loaded.rows)
        assert any(h.dense > 0 for h in service.retrieve("cotton plantation", top_k=5))
        # a build after a words-only generation (a first build that died) embeds everything
        manifest = gen.read_manifest(gen.generation_dir(service.index_dir(), record["generation"]))
        assert (manifest["dense"] is False
                and not (gen.generation_dir(service.index_dir(), record["generation"]) / "vectors.npy").exists())
