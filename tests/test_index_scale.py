"""A larger collection's index: the approximate dense index (IVF) above a size, updated per changed document; BM25
taken over from the kept documents' term counts; both the same as a whole build where it matters to a search."""

from __future__ import annotations

import numpy as np
import pytest

from historian_blueprint import get_store
from historian_blueprint.index import dense, service
from historian_blueprint.index import generation as gen
from historian_blueprint.index.bm25 import BM25Index, tokenize
from tests.conftest import make_plain_app, small_docs
from tests.test_index import run_reindex

QUERIES = ["slavery plantation master", "the tariff and the revenue", "Congress war Mexico treaty",
           "Pacific railroad bill passed", "freedom of speech"]


def test_bm25_from_kept_postings_scores_as_a_whole_build(tmp_path):
    docs = small_docs(per_file=3, chars=1200)
    chunks = [tokenize(d["content"][i:i + 300]) for d in docs for i in range(0, 1200, 300)]
    BM25Index.build(chunks).save(tmp_path)
    old = BM25Index.load(tmp_path)  # mapped, as an incremental build reads it
    # the new collection: the first document's first chunk changed, the second document gone, a new chunk at the end
    changed = [tokenize("The Pacific railroad bill passed both houses in a night.")] + chunks[1:4]
    new_chunks = changed + chunks[8:] + [tokenize("A wholly new document about the tariff on wool.")]
    remap = np.full(len(chunks), -1, dtype=np.int64)
    remap[1:4] = [1, 2, 3]
    remap[8:] = np.arange(4, 4 + len(chunks) - 8)
    new_rows = np.array([0, len(new_chunks) - 1])
    assembled = old.assemble(remap, new_rows, [changed[0], new_chunks[-1]], len(new_chunks))
    whole = BM25Index.build(new_chunks)
    for query in QUERIES + ["wool tariff railroad", "zzzunknown"]:
        assert np.allclose(assembled.scores(query), whole.scores(query), rtol=1e-6, atol=1e-7), query
    assert assembled.scores("railroad").argmax() == 0 and assembled.scores("wool").argmax() == len(new_chunks) - 1
    (tmp_path / "again").mkdir()
    assembled.save(tmp_path / "again")  # written and read back, as the next build and the workers read it
    again = BM25Index.load(tmp_path / "again")
    assert all(np.array_equal(again.scores(q), assembled.scores(q)) for q in QUERIES)
    assert "wool" in again.vocabulary and "railroad" in again.vocabulary and "zzzunknown" not in again.vocabulary


@pytest.fixture
def approximate(tmp_path):
    app = make_plain_app(tmp_path, small_docs(per_file=6), HISTORIAN_INDEX_APPROXIMATE_ABOVE=20,
                         HISTORIAN_INDEX_NPROBE=10_000)  # every list read: the test asks for what a scan finds
    assert run_reindex(app)["state"] == "succeeded"
    return app


def rows_find_themselves(loaded) -> bool:
    """Every chunk's own vector finds that chunk first: the index's ids are the generation's rows."""
    return all(loaded.dense_top(np.asarray(loaded.vectors[r]), 1, None)[0] == r for r in range(len(loaded)))


def test_above_the_size_the_index_is_approximate_and_finds_what_a_scan_finds(approximate):
    with approximate.app_context():
        loaded = service.get_index()
        assert loaded.manifest["index_type"] == "ivf" and len(loaded) > 20
        record = loaded.manifest["dense_index"]
        assert record["lists"] == dense.lists_for(len(loaded)) and record["nprobe"] == record["lists"]
        assert rows_find_themselves(loaded)
        model = service.embedder()
        for query in QUERIES:
            vector = model.encode([query])[0]
            exact = np.argsort(-(np.asarray(loaded.vectors) @ vector), kind="stable")[:5]
            assert set(loaded.dense_top(vector, 5, None)) == set(exact), query


def test_a_changed_document_updates_the_approximate_index_instead_of_rebuilding_it(approximate, monkeypatch):
    with approximate.app_context():
        store = get_store()
        before = service.get_index()
        trained = before.manifest["dense_index"]["trained_on"]
        ids = sorted(before.documents)
        changed, gone = ids[0], ids[1]
        doc = store.documents.find_one({"_id": changed})
        store.documents.update_one({"_id": changed}, {"$set": {
            "content": "The transcontinental telegraph line was finished at Salt Lake City. " + doc["content"]}})
        store.documents.delete_one({"_id": gone})
    builds = []
    real_build = dense.build
    monkeypatch.setattr(dense, "build", lambda *a, **k: builds.append(a) or real_build(*a, **k))
    job = run_reindex(approximate)
    assert job["state"] == "succeeded" and job["counts"]["changed"] == 1 and job["counts"]["deleted"] == 1
    assert builds == []  # updated in place of a rebuild
    with approximate.app_context():
        loaded = service.get_index()
        assert loaded.manifest["dense_index"]["trained_on"] == trained
        assert loaded.faiss.ntotal == len(loaded) and gone not in loaded.rows.source_ids
        assert rows_find_themselves(loaded)
        hits = service.retrieve("telegraph line finished at Salt Lake City", top_k=3)
        assert hits[0].source_id == changed
        assert not any(h.source_id == gone for h in service.retrieve("slavery plantation master", top_k=12))


def test_a_collection_grown_past_what_its_index_learned_is_trained_again():
    record = {"kind": "ivf", "lists": 16, "nprobe": 16, "trained_on": 100}
    assert dense.updatable(record, "ivf", 400) and not dense.updatable(record, "ivf", 401)
    assert not dense.updatable(record, "flat", 50) and not dense.updatable({"kind": "hnsw"}, "ivf", 50)
    assert dense.choose("auto", 200_001, 200_000) == "ivf" and dense.choose("auto", 200_000, 200_000) == "flat"
    with pytest.raises(ValueError):
        dense.choose("annoy", 10, 5)


def test_the_generation_records_its_files_and_a_damaged_counts_file_is_named(approximate):
    with approximate.app_context():
        directory = service.get_index().directory
    assert "bm25_postings.npz" in gen.read_manifest(directory)["files"]
    with open(directory / "bm25_postings.npz", "r+b") as fh:
        fh.seek(100)
        fh.write(b"\0\0\0\0")
    assert [d.file for d in gen.check(directory, full=True)] == ["bm25_postings.npz"]


def _as_written_before(directory):
    """Turn a generation into the layout written before issue 43: chunks.jsonl, and BM25 as weights with a JSON
    vocabulary (the same scores), no mapped rows or postings."""
    import json

    from scipy import sparse

    from historian_blueprint.index import bm25

    rows = gen.read_rows(directory)
    with open(directory / "chunks.jsonl", "w", encoding="utf-8") as fh:
        for i in range(len(rows)):
            fh.write(json.dumps([rows.source_ids[i], rows.ordinals[i], rows.starts[i], rows.ends[i],
                                 rows.locators[i], rows.texts[i]], ensure_ascii=False) + "\n")
    del rows
    index = BM25Index.load(directory)
    indptr, row_ids = np.asarray(index.indptr), np.asarray(index.rows)
    columns = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    tf = np.asarray(index.tfs, dtype=np.float64)
    norm = bm25.K1 * (1 - bm25.B + bm25.B * np.asarray(index.lengths, np.float64)[row_ids] / index.avgdl)
    values = (index.idf[columns] * tf * (bm25.K1 + 1) / (tf + norm)).astype(np.float32)
    sparse.save_npz(directory / "bm25.npz", sparse.csc_matrix((values, (row_ids, columns)),
                                                                shape=(len(index), len(indptr) - 1)))
    (directory / "bm25_vocab.json").write_text(json.dumps({w: i for i, w in enumerate(index.vocabulary)}))
    del index
    for name in ("rows.npy", "texts.bin", "locators.bin", *bm25.FILES):
        (directory / name).unlink()
    manifest = gen.read_manifest(directory)
    manifest.pop("rows")
    manifest.pop("words")
    manifest["files"] = {c.name: {"size": c.stat().st_size, "sha256": gen.digest(c)}
                         for c in sorted(directory.iterdir()) if c.name != "manifest.json"}
    (directory / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def test_a_generation_written_before_still_serves_and_is_built_on(tmp_path):
    app = make_plain_app(tmp_path, small_docs(per_file=3))
    assert run_reindex(app)["state"] == "succeeded"
    with app.app_context():
        directory = service.get_index().directory
        before = [h.text for h in service.retrieve("slavery plantation master", top_k=5)]
    _as_written_before(directory)
    app = make_plain_app(tmp_path)  # a fresh process: nothing loaded yet
    with app.app_context():
        loaded = service.get_index()
        assert isinstance(loaded.rows, gen.ChunkRows) and not isinstance(loaded.bm25, BM25Index)
        assert [h.text for h in service.retrieve("slavery plantation master", top_k=5)] == before
        store = get_store()
        doc = store.documents.find_one({})
        store.documents.update_one({"_id": doc["_id"]}, {"$set": {"content": doc["content"] + " A line added."}})
    job = run_reindex(app)
    assert job["state"] == "succeeded" and job["counts"]["changed"] == 1 and job["counts"]["unchanged"] > 0
    with app.app_context():
        loaded = service.get_index()
        assert isinstance(loaded.rows, gen.MappedRows) and loaded.rows.problems() is None
        assert isinstance(loaded.bm25, BM25Index)
        assert [h.text for h in service.retrieve("slavery plantation master", top_k=5)] == before


def test_an_incremental_build_copies_kept_rows_to_what_a_whole_build_writes(tmp_path):
    docs = small_docs(per_file=3)
    docs.insert(1, {"_id": "accents", "title": "Café society", "date": "1916-01-03",
                    "content": "À Paris, le café — “the Café de la Paix” — was full; naïve reporters wrote. " * 40})
    app = make_plain_app(tmp_path, docs)
    assert run_reindex(app)["state"] == "succeeded"
    with app.app_context():
        store = get_store()
        ids = [d["_id"] for d in docs]
        store.documents.update_one({"_id": ids[3]}, {"$set": {"content": "A changed page, now short. " * 30}})
        store.documents.delete_one({"_id": ids[5]})
        store.documents.insert_one({"_id": "late", "title": "Late", "content": "Written after the first build. " * 50})
    job = run_reindex(app)
    assert job["state"] == "succeeded" and job["counts"]["unchanged"] > 0 and job["counts"]["changed"] == 1
    with app.app_context():
        incremental = service.get_index().directory
    assert run_reindex(app, full=True)["state"] == "succeeded"
    with app.app_context():
        whole = service.get_index()
    assert whole.directory != incremental
    for name in ("texts.bin", "locators.bin"):
        assert (incremental / name).read_bytes() == (whole.directory / name).read_bytes(), name
    assert np.array_equal(np.load(incremental / "rows.npy"), np.load(whole.directory / "rows.npy"))
    kept = gen.read_rows(incremental)
    assert kept.problems() is None and "À Paris, le café" in " ".join(kept.texts[:40])


def test_bm25_assembled_at_random_is_the_whole_build():
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(40)]
    for trial in range(20):
        chunks = [list(rng.choice(words, rng.integers(0, 12))) for _ in range(rng.integers(1, 60))]
        old = BM25Index.build(chunks)
        keep = rng.random(len(chunks)) < rng.random()  # from every chunk gone to none
        fresh = [list(rng.choice(words + ["new1", "new2"], rng.integers(0, 9))) for _ in range(rng.integers(0, 8))]
        kept = [c for c, k in zip(chunks, keep) if k]
        order = rng.permutation(len(kept) + len(fresh))  # new chunks anywhere among the kept, kept ones in order
        new_rows = np.sort(order[len(kept):])
        kept_rows = np.sort(order[:len(kept)])
        remap = np.full(len(chunks), -1, dtype=np.int64)
        remap[np.flatnonzero(keep)] = kept_rows
        whole = [None] * (len(kept) + len(fresh))
        for row, chunk in zip(kept_rows, kept):
            whole[row] = chunk
        for row, chunk in zip(new_rows, fresh):
            whole[row] = chunk
        assembled = old.assemble(remap, new_rows, fresh, len(whole))
        built = BM25Index.build(whole)
        for query in ["w1 w2", "w3", "new1 w5 w5", "new2", "absent"]:
            assert np.allclose(assembled.scores(query), built.scores(query), rtol=1e-6, atol=1e-7), (trial, query)
