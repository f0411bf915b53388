"""The retrieval interface: the shipped backends behind one protocol, a toy backend through the public door, and
the MongoDB search backend's pipelines as MongoDB documents them (run against recorded replies: untested against a
live server here)."""

from __future__ import annotations

import pytest

from historian_blueprint import ConfigError, get_store
from historian_blueprint.index import service
from historian_blueprint.index.service import Filters, Hit, Retriever, RetrieverStatus
from tests.conftest import make_plain_app, small_docs
from tests.test_index import run_reindex


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    path = tmp_path_factory.mktemp("retrievers")
    app = make_plain_app(path, small_docs())
    assert run_reindex(app)["state"] == "succeeded"
    return path


def test_local_and_lexical_backends_keep_the_protocol(built):
    for name, state in (("local", "serving"), ("lexical", "lexical-only")):
        app = make_plain_app(built, HISTORIAN_RETRIEVAL_BACKEND=name)
        with app.app_context():
            backend = service.retriever()
            assert isinstance(backend, Retriever)
            status = backend.status()
            assert status.state == state and status.generation and status.documents == len(small_docs())
            hits = service.retrieve("panic of 1893 banks", top_k=5)
            assert hits and all(isinstance(h, Hit) for h in hits)
            doc = get_store().get_document(hits[0].source_id)
            assert doc.text[hits[0].start:hits[0].end] == hits[0].text  # offsets into the source
            if name == "lexical":
                assert all(h.dense == 0 for h in hits)


def test_an_unknown_backend_is_a_clear_start_up_error(tmp_path):
    with pytest.raises(ConfigError, match="HISTORIAN_RETRIEVAL_BACKEND='solr'.*atlas, lexical, local"):
        make_plain_app(tmp_path, HISTORIAN_RETRIEVAL_BACKEND="solr")


class Toy:
    """A backend of one file: every question gets the first sentence of the collection's first document."""

    def __init__(self, app):
        with app.app_context():
            self.doc = next(iter(get_store().iter_documents()))

    def search(self, query, k, filters=Filters(), mode="hybrid"):
        end = self.doc.text.index(".") + 1
        return [Hit(0, self.doc.id, self.doc.title, self.doc.author, self.doc.year, self.doc.collection, 0, end,
                    "para 1", self.doc.text[:end], 1.0, 0.0, 1.0)]

    def status(self):
        return RetrieverStatus("serving", 1, 1)

    def authors_named(self, name):
        return 0

    def years_of(self, name):
        return []


def test_a_toy_backend_through_the_public_door(tmp_path, monkeypatch):
    monkeypatch.setitem(service.BACKENDS, "toy", None)  # registered for this test only
    service.backend("toy")(Toy)
    app = make_plain_app(tmp_path, small_docs(per_file=1), HISTORIAN_RETRIEVAL_BACKEND="toy")
    with app.app_context():
        from historian_blueprint.ask.run import ask

        result = ask("What happened?")
        first = next(iter(get_store().iter_documents()))
        assert result["metadata"]["retrieval"][0]["source_id"] == first.id
        assert {c["source_id"] for c in result["citations"]} <= {first.id}


# ---------------------------------------------------------------------------- the MongoDB search backend

def test_vector_pipeline_follows_the_documented_stage():
    from historian_blueprint.index.atlas import vector_pipeline

    stages = vector_pipeline([0.5, -0.25], 6, Filters(collection="Letters", year_from=1860, year_to=1865),
                             "historian_vectors")
    assert stages[0] == {"$vectorSearch": {
        "index": "historian_vectors", "path": "embedding", "queryVector": [0.5, -0.25], "numCandidates": 120,
        "limit": 6, "filter": {"collection": {"$eq": "Letters"}, "year": {"$gte": 1860, "$lte": 1865}}}}
    assert stages[1]["$project"]["score"] == {"$meta": "vectorSearchScore"}
    assert "filter" not in vector_pipeline([1.0], 3, Filters(), "v")[0]["$vectorSearch"]


def test_text_pipeline_follows_the_documented_stage():
    from historian_blueprint.index.atlas import text_pipeline

    stages = text_pipeline("panic of 1893", 10, Filters(collection="Letters", year_from=1890, author="Cleveland"),
                           "historian_text")
    assert stages == [
        {"$search": {"index": "historian_text", "compound": {
            "must": [{"text": {"query": "panic of 1893", "path": "text"}},
                     {"text": {"query": "Cleveland", "path": ["author", "title"]}}],
            "filter": [{"equals": {"path": "collection", "value": "Letters"}},
                       {"range": {"path": "year", "gte": 1890}}]}}},
        {"$limit": 10},
        {"$project": {"_id": 0, "source_id": 1, "ordinal": 1, "start": 1, "end": 1, "locator": 1, "text": 1,
                      "title": 1, "author": 1, "year": 1, "collection": 1, "score": {"$meta": "searchScore"}}},
    ]


class RecordedChunks:
    """A chunk collection that answers aggregate() with recorded replies, and keeps the pipelines it was sent."""

    def __init__(self, replies):
        self.replies, self.sent = replies, []

    def aggregate(self, pipeline):
        self.sent.append(pipeline)
        return iter(self.replies["$vectorSearch" if "$vectorSearch" in pipeline[0] else "$search"])

    def estimated_document_count(self):
        return 3

    def distinct(self, key, where=None):
        return ["a", "b"]


def row(source_id, start, score, text="The panic closed the banks."):
    return {"source_id": source_id, "ordinal": 0, "start": start, "end": start + len(text), "locator": "para 1",
            "text": text, "title": "T", "author": None, "year": 1893, "collection": "C", "score": score}


def test_atlas_results_are_fused_like_the_local_ones():
    from historian_blueprint.index.atlas import AtlasRetriever

    chunks = RecordedChunks({"$vectorSearch": [row("a", 0, 0.91), row("b", 40, 0.80)],
                             "$search": [row("b", 40, 7.5), row("c", 10, 2.5)]})
    atlas = AtlasRetriever(chunks, lambda q: [0.1, 0.2], vector_index="v", search_index="s", dense_weight=0.7,
                           bm25_weight=0.3)
    hits = atlas.search("panic banks", 3)
    assert [h.source_id for h in hits] == ["a", "b", "c"]  # a: 0.7; b: 0.3 (words 1.0); c: 0 (both lowest)
    assert hits[0].score == pytest.approx(0.7) and hits[1].score == pytest.approx(0.3)
    assert hits[1].start == 40 and hits[1].text == "The panic closed the banks."
    assert len(chunks.sent) == 2 and atlas.status().state == "serving"
    words_only = AtlasRetriever(chunks, None, vector_index="v", search_index="s", dense_weight=0.7, bm25_weight=0.3)
    assert [h.source_id for h in words_only.search("panic", 2)] == ["b", "c"]
    assert words_only.status().state == "lexical-only"


def test_the_atlas_backend_is_selected_by_one_setting(tmp_path, monkeypatch):
    app = make_plain_app(tmp_path, HISTORIAN_RETRIEVAL_BACKEND="atlas")
    with app.app_context():
        backend = service.retriever()
        assert type(backend).__name__ == "AtlasRetriever" and backend.vector_index == "historian_vectors"


def test_export_chunks_writes_every_chunk_with_its_vector(built):
    app = make_plain_app(built)
    result = app.test_cli_runner().invoke(args=["historian", "export-chunks"])
    assert result.exit_code == 0, result.output
    with app.app_context():
        loaded = service.get_index()
        chunks = get_store().database["historian_chunks"]
        assert chunks.count_documents({}) == len(loaded.rows)
        one = chunks.find_one({"source_id": loaded.rows.source_ids[0], "start": loaded.rows.starts[0]})
        assert len(one["embedding"]) == 384 and one["text"] == loaded.rows.texts[0]
        # the atlas backend over what was exported tells what it searches and whose bylines it holds as the local one
        from historian_blueprint.index.atlas import AtlasRetriever

        atlas = AtlasRetriever(chunks, None, vector_index="v", search_index="s", dense_weight=0.7, bm25_weight=0.3)
        local = service.retriever()
        ours, theirs = atlas.status(), local.status()
        assert (ours.documents, ours.years, ours.collections) == (theirs.documents, theirs.years, theirs.collections)
        author = next(info["author"] for info in loaded.documents.values() if info.get("author"))
        assert atlas.authors_named(author) == local.authors_named(author) > 0
        assert atlas.authors_named("Nobody Whatsoever") == local.authors_named("Nobody Whatsoever") == 0
        years = sorted({info["year"] for info in loaded.documents.values() if info.get("author") == author
                        and info.get("year")})
        assert atlas.years_of(author) == local.years_of(author) == years and years
        assert atlas.years_of("Nobody Whatsoever") == local.years_of("Nobody Whatsoever") == []


def test_atlas_reads_an_author_filter_as_the_local_backend_does():
    from historian_blueprint.index.atlas import AtlasRetriever

    def by(source_id, start, score, author):
        return {**row(source_id, start, score), "author": author, "title": ""}

    replies = [by("fdr", 0, 0.9, "Franklin D. Roosevelt"), by("tr", 10, 0.8, "Theodore Roosevelt"),
               by("wilson", 20, 0.7, "Woodrow Wilson")]
    chunks = RecordedChunks({"$vectorSearch": replies, "$search": replies})
    atlas = AtlasRetriever(chunks, lambda q: [0.1], vector_index="v", search_index="s", dense_weight=0.7,
                           bm25_weight=0.3)
    assert {h.source_id for h in atlas.search("banks", 5, Filters(author="FDR"))} == {"fdr"}  # initials
    assert {h.source_id for h in atlas.search("banks", 5, Filters(author="Roosevelt"))} == {"fdr", "tr"}
