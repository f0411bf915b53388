"""A retrieval backend on MongoDB's own search: ``$vectorSearch`` (meanings) and ``$search`` (words), for a
collection beyond one machine (MongoDB Atlas, or Community 8.2+ with mongot).

UNTESTED AGAINST A LIVE SERVER here (none can run on the build machines): the pipelines follow MongoDB's documented
stages and are tested as built, and the results are read from recorded replies (tests/test_retrievers.py).

The passages live in a chunk collection (``HISTORIAN_RETRIEVAL_ATLAS_COLLECTION``, default
``<prefix>chunks``), one document per chunk: ``source_id, ordinal, start, end, locator, text, title, author, year,
collection`` and ``embedding`` (the search encoder's normalized vector, 384 numbers for the bundled model).
``export_chunks`` writes them from the serving local generation. The Atlas indexes it expects:

- vector index ``HISTORIAN_RETRIEVAL_ATLAS_VECTOR_INDEX`` (default ``historian_vectors``): ``{"fields": [{"type":
  "vector", "path": "embedding", "numDimensions": 384, "similarity": "dotProduct"}, {"type": "filter", "path":
  "collection"}, {"type": "filter", "path": "year"}]}``
- search index ``HISTORIAN_RETRIEVAL_ATLAS_SEARCH_INDEX`` (default ``historian_text``): ``text``, ``author`` and
  ``title`` as string fields, ``collection`` as a token field (``equals`` needs one), ``year`` as a number.

The backend serves retrieval only: the collection's extent and bylines (what a question's scope and an author filter
are read against) and the knowledge map still read the local generation, so keep one built beside it
(``flask historian reindex``; ``export-chunks`` copies it).

The two rankings are fused as the local backend fuses FAISS and BM25: each min-max normalized, weighted by
``HISTORIAN_RETRIEVAL_DENSE_WEIGHT`` and ``HISTORIAN_RETRIEVAL_BM25_WEIGHT``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from historian_blueprint.index.retriever import Filters, Hit, Mode, minmax
from historian_blueprint.index.retrievers import RetrieverStatus
from historian_blueprint.text.names import names

CANDIDATES_PER_RESULT = 20  # numCandidates = limit x 20, MongoDB's advice for ANN recall
MAX_CANDIDATES = 10_000     # the most numCandidates MongoDB accepts
FIELDS = ("source_id", "ordinal", "start", "end", "locator", "text", "title", "author", "year", "collection")


def vector_pipeline(vector: list[float], k: int, filters: Filters, index: str) -> list[dict[str, Any]]:
    """``$vectorSearch`` for the ``k`` nearest chunks (an MQL pre-filter on the indexed filter fields)."""
    stage: dict[str, Any] = {"index": index, "path": "embedding", "queryVector": [float(x) for x in vector],
                             "numCandidates": min(max(k * CANDIDATES_PER_RESULT, 100), MAX_CANDIDATES),
                             "limit": min(k, MAX_CANDIDATES)}
    where = _mql_filter(filters)
    if where:
        stage["filter"] = where
    return [{"$vectorSearch": stage}, _project("vectorSearchScore")]


def text_pipeline(query: str, k: int, filters: Filters, index: str) -> list[dict[str, Any]]:
    """``$search`` (Atlas Search, BM25 scoring) for the ``k`` best chunks by their words."""
    must = [{"text": {"query": query, "path": "text"}}]
    conditions: list[dict[str, Any]] = []
    if filters.collection is not None:
        conditions.append({"equals": {"path": "collection", "value": filters.collection}})
    if filters.year_from is not None or filters.year_to is not None:
        bounds = {op: v for op, v in (("gte", filters.year_from), ("lte", filters.year_to)) if v is not None}
        conditions.append({"range": {"path": "year", **bounds}})
    if filters.author is not None:
        must.append({"text": {"query": filters.author, "path": ["author", "title"]}})
    search: dict[str, Any] = {"index": index, "compound": {"must": must}}
    if conditions:
        search["compound"]["filter"] = conditions
    return [{"$search": search}, {"$limit": k}, _project("searchScore")]


def _mql_filter(filters: Filters) -> dict[str, Any]:
    where: dict[str, Any] = {}
    if filters.collection is not None:
        where["collection"] = {"$eq": filters.collection}
    years = {op: v for op, v in (("$gte", filters.year_from), ("$lte", filters.year_to)) if v is not None}
    if years:
        where["year"] = years
    return where


def _project(meta: str) -> dict[str, Any]:
    return {"$project": {"_id": 0, **{f: 1 for f in FIELDS}, "score": {"$meta": meta}}}


def _normalized(rows: list[dict[str, Any]]) -> dict[tuple[str, int], float]:
    """Each passage's score min-max normalized, as the local backend normalizes FAISS and BM25 scores."""
    scores = minmax(np.array([float(r["score"]) for r in rows], dtype=np.float64))
    return {(r["source_id"], int(r["start"])): float(x) for r, x in zip(rows, scores)}


STATUS_TTL_S = 30.0
_STATUS: dict[tuple[int, str, bool], tuple[float, RetrieverStatus]] = {}  # by client, collection, kind


class AtlasRetriever:
    """Meanings by ``$vectorSearch``, words by ``$search``, fused; ``lexical-only`` when no encoder is given."""

    def __init__(self, chunks: Any, encode: Callable[[str], Any] | None, *, vector_index: str, search_index: str,
                 dense_weight: float, bm25_weight: float) -> None:
        self.chunks, self.encode = chunks, encode
        self.vector_index, self.search_index = vector_index, search_index
        self.dense_weight, self.bm25_weight = dense_weight, bm25_weight

    def search(self, query: str, k: int, filters: Filters = Filters(), mode: Mode = "hybrid") -> list[Hit]:
        pool = max(k * 4, 50)
        dense_rows = []
        if mode in ("hybrid", "dense") and self.encode is not None:
            vector = list(self.encode(query))
            dense_rows = list(self.chunks.aggregate(vector_pipeline(vector, pool, filters, self.vector_index)))
        words_rows = []
        if mode in ("hybrid", "bm25") or self.encode is None:
            words_rows = list(self.chunks.aggregate(text_pipeline(query, pool, filters, self.search_index)))
        if filters.author is not None:  # the byline or title names them, read as the local backend reads it
            dense_rows, words_rows = ([r for r in rows if names(filters.author, _byline(r))]
                                      for rows in (dense_rows, words_rows))
        dense, words = _normalized(dense_rows), _normalized(words_rows)
        rows = {(r["source_id"], int(r["start"])): r for r in words_rows + dense_rows}
        if not dense:  # words alone (or meanings alone) rank by their own score
            fused = {key: words.get(key, 0.0) for key in rows}
        elif not words:
            fused = {key: dense.get(key, 0.0) for key in rows}
        else:
            fused = {key: self.dense_weight * dense.get(key, 0.0) + self.bm25_weight * words.get(key, 0.0)
                     for key in rows}
        best = sorted(rows, key=lambda key: (-fused[key], key))[:k]
        return [_hit(rows[key], fused[key], dense.get(key, 0.0), words.get(key, 0.0), n) for n, key in enumerate(best)]

    def status(self) -> RetrieverStatus:
        """What the chunk collection holds (three scans of it: kept STATUS_TTL_S, since every ask reads it)."""
        database = getattr(self.chunks, "database", None)
        key = (id(getattr(database, "client", database)), getattr(self.chunks, "full_name", ""),
               self.encode is not None)
        cached = _STATUS.get(key)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        status = self._status()
        _STATUS[key] = (time.monotonic() + STATUS_TTL_S, status)
        return status

    def _status(self) -> RetrieverStatus:
        count = self.chunks.estimated_document_count()
        state = "building" if not count else "serving" if self.encode is not None else "lexical-only"
        if not count:
            return RetrieverStatus(state)
        years = sorted(int(y) for y in self.chunks.distinct("year") if isinstance(y, int) and y > 0)
        return RetrieverStatus(state, None, len(self.chunks.distinct("source_id")), years[:1] + years[-1:],
                               sorted(str(c) for c in self.chunks.distinct("collection") if c))

    def _authored(self, name: str, field: str) -> list[Any]:
        """The distinct ``field`` values of the chunks whose author ``name`` names (none when no author does)."""
        authors = [a for a in self.chunks.distinct("author") if a and names(name, str(a))]
        return self.chunks.distinct(field, {"author": {"$in": authors}}) if authors else []

    def authors_named(self, name: str) -> int:
        return len(self._authored(name, "source_id"))

    def years_of(self, name: str) -> list[int]:
        return sorted({int(y) for y in self._authored(name, "year") if isinstance(y, (int, float)) and y > 0})


def _byline(row: dict[str, Any]) -> str:
    return f"{row.get('author') or ''} {row.get('title') or ''}"


def _hit(row: dict[str, Any], score: float, dense: float, words: float, rank: int) -> Hit:
    year = row.get("year")
    return Hit(row=rank, source_id=str(row["source_id"]), title=row.get("title") or "", author=row.get("author"),
               year=int(year) if isinstance(year, (int, float)) else None, collection=row.get("collection"),
               start=int(row["start"]), end=int(row["end"]), locator=row.get("locator") or "", text=row["text"],
               score=round(score, 6), dense=round(dense, 6), bm25=round(words, 6))


def export_chunks(loaded: Any, chunks: Any, batch: int = 500) -> int:
    """Write the serving local generation's chunks, with their vectors, into the chunk collection (replacing it)."""
    chunks.delete_many({})
    rows, written, pending = loaded.rows, 0, []
    for i in range(len(rows)):
        info = loaded.documents[rows.source_ids[i]]
        pending.append({"source_id": rows.source_ids[i], "ordinal": rows.ordinals[i], "start": rows.starts[i],
                        "end": rows.ends[i], "locator": rows.locators[i], "text": rows.texts[i],
                        "title": info.get("title"), "author": info.get("author"), "year": info.get("year"),
                        "collection": info.get("collection"),
                        "embedding": [float(x) for x in loaded.vectors[i]] if loaded.dense else None})
        if len(pending) >= batch:
            chunks.insert_many(pending)
            written, pending = written + len(pending), []
    if pending:
        chunks.insert_many(pending)
        written += len(pending)
    return written
