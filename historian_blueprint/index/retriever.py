"""Hybrid retrieval over the serving generation: FAISS (dense) + BM25 (lexical), weighted fusion."""

from __future__ import annotations

import functools
import re

import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from historian_blueprint.index import generation as gen
from historian_blueprint.index.bm25 import BM25Index
from historian_blueprint.text import readings
from historian_blueprint.text.names import is_initialism, name_words, names

Mode = Literal["hybrid", "dense", "bm25"]


class IndexNotBuilt(RuntimeError):
    """No index generation exists yet."""


@dataclass(frozen=True)
class Filters:
    collection: str | None = None
    year_from: int | None = None
    year_to: int | None = None
    author: str | None = None  # every word of it in the document's author or title ("Wilson", "Rachel Adams")

    def __bool__(self) -> bool:
        return any(v is not None for v in (self.collection, self.year_from, self.year_to, self.author))


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk with its place in the source and its scores."""

    row: int
    source_id: str
    title: str
    author: str | None
    year: int | None
    collection: str | None
    start: int
    end: int
    locator: str
    text: str
    score: float
    dense: float
    bm25: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def minmax(values: np.ndarray) -> np.ndarray:
    if not len(values):
        return values
    low, high = float(values.min()), float(values.max())
    if high - low < 1e-12:
        return np.ones_like(values) if high > 0 else np.zeros_like(values)
    return (values - low) / (high - low)


def _read_faiss(path: Path) -> Any:
    """The FAISS index, its codes memory-mapped read-only where FAISS can (flat indexes): every worker process
    serving the generation shares one copy of them; else read into memory."""
    import faiss

    try:
        return faiss.read_index(str(path), faiss.IO_FLAG_MMAP_IFC | faiss.IO_FLAG_READ_ONLY)
    except (RuntimeError, AttributeError):
        return faiss.read_index(str(path))


class LoadedIndex:
    """A generation loaded into memory, ready to search."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.manifest = gen.read_manifest(directory)
        if self.manifest.get("format") != gen.FORMAT:
            raise gen.IndexMismatch(
                f"index format {self.manifest.get('format')} at {directory} is not {gen.FORMAT}: run `flask historian reindex --full`"
            )
        self.number = self.manifest["generation"]
        self.documents = gen.read_documents(directory)
        self.rows = gen.read_rows(directory)
        self.dense = bool(self.manifest.get("dense", True))  # false: words only (BM25), its vectors still being made
        self.vectors = gen.read_vectors(directory) if self.dense else None
        self.faiss = _read_faiss(directory / "faiss.index") if self.dense else None
        self.bm25 = BM25Index.load(directory)
        self.readings = readings.load(directory)  # the verifier's sentences of each document, made at index time
        infos = [self.documents[s] for s in self.rows.source_ids]
        self.years = np.array([i["year"] if i["year"] is not None else -1 for i in infos], dtype=np.int32)
        self.collections = np.array([i["collection"] or "" for i in infos], dtype=object)
        self._initialled: dict[str, np.ndarray] = {}  # by_author's answers for initials ("FDR")

    def __len__(self) -> int:
        return len(self.rows)

    @functools.cached_property
    def extent(self) -> dict[str, Any]:
        """How many documents this generation searches and the years they span (read once per generation)."""
        years = [info["year"] for info in self.documents.values() if isinstance(info.get("year"), int) and info["year"] > 0]
        collections = sorted({str(info["collection"]) for info in self.documents.values() if info.get("collection")})
        return {"documents": len(self.documents), "years": [min(years), max(years)] if years else [],
                "collections": collections}

    def check_model(self, name: str, dimension: int) -> None:
        """Raise IndexMismatch when the index was built with another embedding model."""
        built = self.manifest["model"]
        if built["name"] != name or built["dimension"] != dimension:
            raise gen.IndexMismatch(
                f"the index was built with embedding model {built['name']!r} ({built['dimension']} dimensions) but "
                f"{name!r} ({dimension} dimensions) is configured: run `flask historian reindex --full`"
            )

    def mask(self, filters: Filters) -> np.ndarray | None:
        if not filters:
            return None
        keep = np.ones(len(self.rows), dtype=bool)
        if filters.collection is not None:
            keep &= self.collections == filters.collection
        if filters.year_from is not None:
            keep &= self.years >= filters.year_from
        if filters.year_to is not None:
            keep &= (self.years <= filters.year_to) & (self.years >= 0)
        if filters.author is not None:
            keep &= self.by_author(filters.author)[self.doc_rows]
        return keep

    @functools.cached_property
    def doc_rows(self) -> np.ndarray:
        """Each row's document, as an index into ``self.people``."""
        order = {source_id: n for n, source_id in enumerate(self.documents)}
        return np.array([order[s] for s in self.rows.source_ids], dtype=np.int64)

    @functools.cached_property
    def people(self) -> list[set[str]]:
        """Each document's author and title words, lowercased, in ``self.documents`` order (an interview's
        title names its narrator)."""
        return [set(re.findall(r"[a-z]+", f"{info.get('author') or ''} {info.get('title') or ''}".lower()))
                for info in self.documents.values()]

    def by_author(self, name: str) -> np.ndarray:
        """Per document: does its author or title carry every word of ``name``, or its initials ("FDR")."""
        if is_initialism(name):  # read once per generation and name
            if name not in self._initialled:
                self._initialled[name] = np.array([names(name, f"{info.get('author') or ''} {info.get('title') or ''}")
                                                   for info in self.documents.values()], dtype=bool)
            return self._initialled[name]
        wanted = name_words(name)
        return np.array([bool(wanted) and wanted <= words for words in self.people], dtype=bool)

    def authors_named(self, name: str) -> int:
        """How many documents ``name`` picks out as author or narrator (0: the name is nobody's byline here)."""
        return int(self.by_author(name).sum())

    def dense_scores(self, query_vector: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        return np.asarray(self.vectors[candidates] @ query_vector, dtype=np.float32)

    def dense_top(self, query_vector: np.ndarray, k: int, mask: np.ndarray | None) -> np.ndarray:
        """Return the rows of the k nearest chunks (within the mask)."""
        if mask is None:
            _, ids = self.faiss.search(query_vector.reshape(1, -1), min(k, len(self.rows)))
            return ids[0][ids[0] >= 0]
        allowed = np.flatnonzero(mask)
        if not len(allowed):
            return allowed
        scores = self.dense_scores(query_vector, allowed)
        top = np.argpartition(-scores, min(k, len(scores)) - 1)[:k]
        return allowed[top[np.argsort(-scores[top])]]

    def search(
        self,
        query: str,
        query_vector: np.ndarray | None,
        *,
        top_k: int = 12,
        mode: Mode = "hybrid",
        dense_weight: float = 0.7,
        bm25_weight: float = 0.3,
        filters: Filters = Filters(),
    ) -> list[Hit]:
        """Rank chunks for the query; hybrid fuses min-max-normalized dense and BM25 scores."""
        if not len(self.rows):
            return []
        mask = self.mask(filters)
        pool = max(top_k * 4, 50)
        bm25_all = self.bm25.scores(query)
        if mask is not None:
            bm25_all = np.where(mask, bm25_all, -1.0).astype(np.float32)
        candidates: list[np.ndarray] = []
        if mode in ("hybrid", "bm25"):
            k = min(pool, len(bm25_all))
            top = np.argpartition(-bm25_all, k - 1)[:k]
            candidates.append(top[bm25_all[top] > 0])
        if not self.dense:  # words only until the vectors are made: every mode ranks by BM25
            mode, query_vector = "bm25", None
        if mode in ("hybrid", "dense") and query_vector is not None:
            candidates.append(self.dense_top(query_vector, pool, mask))
        if not candidates:
            return []
        rows = np.unique(np.concatenate(candidates)).astype(np.int64)
        if not len(rows):
            return []
        bm25 = bm25_all[rows]
        dense = self.dense_scores(query_vector, rows) if query_vector is not None else np.zeros(len(rows), np.float32)
        if mode == "dense":
            fused = dense
        elif mode == "bm25":
            fused = bm25
        else:
            fused = dense_weight * minmax(dense) + bm25_weight * minmax(bm25)
        order = np.argsort(-fused, kind="stable")[:top_k]
        return [self._hit(int(rows[i]), float(fused[i]), float(dense[i]), float(bm25[i])) for i in order]

    def _hit(self, row: int, score: float, dense: float, bm25: float) -> Hit:
        source_id = self.rows.source_ids[row]
        info = self.documents[source_id]
        return Hit(
            row=row, source_id=source_id, title=info["title"], author=info["author"], year=info["year"],
            collection=info["collection"], start=self.rows.starts[row], end=self.rows.ends[row],
            locator=self.rows.locators[row], text=self.rows.texts[row], score=round(score, 6),
            dense=round(dense, 6), bm25=round(bm25, 6),
        )


def rerank(hits: list[Hit], k: int) -> list[Hit]:
    """Keep the best k hits, dropping chunks that mostly repeat a better one (overlap windows)."""
    kept: list[Hit] = []
    for hit in hits:
        duplicate = any(
            h.source_id == hit.source_id
            and min(h.end, hit.end) - max(h.start, hit.start) > 0.5 * (hit.end - hit.start)
            for h in kept
        )
        if not duplicate:
            kept.append(hit)
        if len(kept) == k:
            break
    return kept


class IndexHolder:
    """Serve the current generation; notice a newer one (from any process) and load it."""

    def __init__(self, index_dir: Path, check_every_s: float = 1.0) -> None:
        self.index_dir = index_dir
        self.check_every_s = check_every_s
        self._loaded: LoadedIndex | None = None
        self._checked_at = 0.0
        self._lock = threading.Lock()

    def get(self, store: Any) -> LoadedIndex:
        """Return the serving generation, reloading when the meta record names a newer one."""
        now = time.monotonic()
        loaded = self._loaded
        if loaded is not None and now - self._checked_at < self.check_every_s:
            return loaded
        record = gen.current_generation(store)
        self._checked_at = now
        if record is None:
            raise IndexNotBuilt("no index yet: an admin must run a reindex (`flask historian reindex` or the admin page)")
        if loaded is not None and loaded.number == record["generation"]:
            return loaded
        with self._lock:
            if self._loaded is None or self._loaded.number != record["generation"]:
                self._loaded = LoadedIndex(gen.generation_dir(self.index_dir, record["generation"]))
                readings.serve(self._loaded.readings)
            return self._loaded

    def invalidate(self) -> None:
        """Check the meta record on the next call (a reindex finished in this process)."""
        self._checked_at = 0.0

    @property
    def loaded_generation(self) -> int | None:
        return self._loaded.number if self._loaded else None
