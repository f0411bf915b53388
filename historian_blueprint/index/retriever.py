"""Hybrid retrieval over the serving generation: FAISS (dense) + BM25 (lexical), weighted fusion."""

from __future__ import annotations

import functools
import logging
import re
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from historian_blueprint.index import generation as gen
from historian_blueprint.index.bm25 import BM25Index
from historian_blueprint.index.dense import read as read_dense
from historian_blueprint.text import readings
from historian_blueprint.text.names import is_initialism, name_words, names

Mode = Literal["hybrid", "dense", "bm25"]


IndexNotBuilt = gen.IndexNotBuilt  # defined with the generation's other errors; imported from here by the layers above
log = logging.getLogger(__name__)
APPROXIMATE_MARGIN = 40  # an approximate index is asked for this many more candidates than wanted, re-scored exactly


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


class LoadedIndex:
    """A generation loaded into memory, ready to search."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        with gen.reading(directory, "manifest.json"):
            self.manifest = gen.read_manifest(directory)
            if self.manifest.get("format") != gen.FORMAT:
                raise gen.IndexMismatch(
                    f"index format {self.manifest.get('format')} at {directory} is not {gen.FORMAT}: run "
                    f"`{gen.REBUILD}`"
                )
            self.number = self.manifest["generation"]
            # false: words only (BM25), its vectors still being made
            self.dense = bool(self.manifest.get("dense", True))
        with gen.reading(directory, "documents.json"):
            self.documents = gen.read_documents(directory)
        self.rows_file = gen.row_files(self.manifest)[0]
        with gen.reading(directory, self.rows_file):
            self.rows = gen.read_rows(directory)
        with gen.reading(directory, "vectors.npy"):
            self.vectors = gen.read_vectors(directory) if self.dense else None
        with gen.reading(directory, "faiss.index"):
            self.faiss = read_dense(directory / "faiss.index", shared=True) if self.dense else None
        self.words_file = gen.word_files(self.manifest)[0]
        with gen.reading(directory, self.words_file):
            self.bm25 = BM25Index.load(directory)
        self.readings = readings.load(directory)  # the verifier's sentences of each document, made at index time
        self._check_agreement()
        infos = list(self.documents.values())
        doc_years = np.array([i["year"] if i["year"] is not None else -1 for i in infos], dtype=np.int32)
        doc_collections = np.array([i["collection"] or "" for i in infos], dtype=object)
        self.years = doc_years[self.doc_rows] if len(infos) else np.zeros(0, np.int32)
        self.collections = doc_collections[self.doc_rows] if len(infos) else np.zeros(0, object)
        self._initialled: dict[str, np.ndarray] = {}  # by_author's answers for initials ("FDR")

    def _check_agreement(self) -> None:
        """The files agree with each other: one vector, one FAISS entry and one BM25 row per chunk, every chunk's text
        as long as its span (a chunk's text is its document's ``content[start:end]``), every chunk's document known."""
        rows = self.rows
        where = None
        if self.vectors is not None and len(self.vectors) != len(rows):
            where = ("vectors.npy", f"{len(self.vectors)} vectors for {len(rows)} chunks")
        elif self.faiss is not None and self.faiss.ntotal != len(rows):
            where = ("faiss.index", f"{self.faiss.ntotal} entries for {len(rows)} chunks")
        elif len(self.bm25) != len(rows):
            where = (self.words_file, f"{len(self.bm25)} rows for {len(rows)} chunks")
        elif isinstance(rows, gen.ChunkRows) and not set(rows.source_ids) <= set(self.documents):
            where = ("documents.json", "chunks name documents it does not list")
        elif (problem := rows.problems()) is not None:
            where = (self.rows_file, problem)
        if where:
            raise gen.IndexDamaged(self.directory, [gen.Damage(*where)])

    def __len__(self) -> int:
        return len(self.rows)

    @functools.cached_property
    def extent(self) -> dict[str, Any]:
        """How many documents this generation searches and the years they span (read once per generation)."""
        years = [info["year"] for info in self.documents.values()
                 if isinstance(info.get("year"), int) and info["year"] > 0]
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
        """Each row's document, as an index into ``self.people`` (and the documents' order)."""
        if isinstance(self.rows, gen.MappedRows):
            return self.rows.doc_index()
        return self.rows.doc_index(list(self.documents))

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

    def years_of(self, name: str) -> list[int]:
        """The years of the documents ``name`` picks out as author or narrator, each once, in order."""
        mine = self.by_author(name)
        return sorted({int(info["year"]) for keep, info in zip(mine, self.documents.values())
                       if keep and isinstance(info.get("year"), int) and info["year"] > 0})

    def dense_scores(self, query_vector: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        return np.asarray(self.vectors[candidates] @ query_vector, dtype=np.float32)

    def dense_top(self, query_vector: np.ndarray, k: int, mask: np.ndarray | None) -> np.ndarray:
        """Return the rows of the k nearest chunks (within the mask)."""
        if mask is None:
            if self.manifest.get("index_type") in ("flat", None):
                _, ids = self.faiss.search(query_vector.reshape(1, -1), min(k, len(self.rows)))
                return ids[0][ids[0] >= 0]
            # approximate: a wider pool from the index, ranked again by the exact vectors
            _, ids = self.faiss.search(query_vector.reshape(1, -1), min(max(2 * k, k + APPROXIMATE_MARGIN),
                                                                        len(self.rows)))
            found = ids[0][ids[0] >= 0]
            return found[np.argsort(-self.dense_scores(query_vector, found), kind="stable")[:k]]
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
        text = self.rows.texts[row]
        if len(text) != self.rows.ends[row] - self.rows.starts[row]:  # mapped rows are checked as they are read
            raise gen.IndexDamaged(self.directory, [gen.Damage(self.rows_file, "a chunk's text is not as long as its "
                                                               "span (texts moved or edited)")])
        return Hit(
            row=row, source_id=source_id, title=info["title"], author=info["author"], year=info["year"],
            collection=info["collection"], start=self.rows.starts[row], end=self.rows.ends[row],
            locator=self.rows.locators[row], text=text, score=round(score, 6),
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
    """Serve the current generation; notice a newer one (from any process) and load it. A generation is checked
    whole (every file's size and checksum) when it is loaded, and by a look at its files' sizes and times at each
    check after that (a file changed in place is checked whole again). A damaged generation is never served: the
    newest earlier good one on disk serves instead, or IndexDamaged names the file and the command that rebuilds."""

    def __init__(self, index_dir: Path, check_every_s: float = 1.0) -> None:
        self.index_dir = index_dir
        self.check_every_s = check_every_s
        self._loaded: LoadedIndex | None = None
        self._checked_at = 0.0
        self._seen: tuple = ()  # the loaded generation's files as they were when checked whole
        self._named: int | None = None  # the generation the meta record names, whether or not it serves
        self._damage: dict[int, tuple[tuple, list[gen.Damage]]] = {}  # generation -> (its files then, its damage)
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
            raise IndexNotBuilt("no index yet: an admin must run a reindex (`flask historian reindex` or "
                                "the admin page)")
        named = record["generation"]
        if loaded is not None and self._named == named and gen.signature(loaded.directory) == self._seen:
            return loaded
        with self._lock:
            self._named = named
            if self._loaded is None or self._loaded.number != named \
                    or gen.signature(self._loaded.directory) != self._seen:
                self._load(named)
            return self._loaded

    def _load(self, named: int) -> None:
        """Load the named generation, or the newest good one before it; raise IndexDamaged when none is good."""
        first_damage: gen.IndexDamaged | None = None
        for number in [named] + [n for n in gen.generations_on_disk(self.index_dir) if n < named]:
            directory = gen.generation_dir(self.index_dir, number)
            if self._loaded is not None and self._loaded.number == number and gen.signature(directory) == self._seen:
                return  # still the good earlier generation already serving
            try:
                self._loaded, self._seen = self._open(directory), gen.signature(directory)
            except gen.IndexDamaged as exc:
                first_damage = first_damage or exc
                continue
            except gen.IndexMismatch:
                if number == named:
                    raise
                continue  # an earlier generation of another format is no fallback
            readings.serve(self._loaded.readings)
            if number != named:
                log.error("Historian: %s; serving generation %d until it is rebuilt", first_damage, number)
            return
        self._loaded = None
        readings.serve(None)
        raise first_damage or IndexNotBuilt(f"generation {named} is not on disk: run `{gen.REBUILD}`")

    def _open(self, directory: Path) -> LoadedIndex:
        """A generation checked whole and loaded (its damage remembered until its files change)."""
        number = int(directory.name[4:])
        files = gen.signature(directory)
        known = self._damage.get(number)
        try:  # another format is a rebuild to ask for, not damage: said before any file is hashed
            built = gen.read_manifest(directory).get("format")
        except (OSError, ValueError, AttributeError):
            built = gen.FORMAT  # unreadable: the check below names it
        if built != gen.FORMAT:
            raise gen.IndexMismatch(f"index format {built} at {directory} is not {gen.FORMAT}: run `{gen.REBUILD}`")
        damage = known[1] if known and known[0] == files else gen.check(directory, full=True)
        if not damage:
            try:
                return LoadedIndex(directory)
            except gen.IndexDamaged as exc:
                damage = exc.damage
            except gen.IndexMismatch:
                raise
            except Exception as exc:  # noqa: BLE001 - anything else a damaged file makes a reader raise
                damage = [gen.Damage("manifest.json", f"the generation cannot be loaded ({type(exc).__name__})")]
        self._damage[number] = (files, damage)
        raise gen.IndexDamaged(directory, damage)

    def health(self) -> gen.Health:
        """The generation named to serve, the one serving, and the damage of the named one (empty when it serves)."""
        serving = self._loaded.number if self._loaded else None
        damage = (self._damage.get(self._named, ((), []))[1]
                  if self._named is not None and serving != self._named else [])
        return gen.Health(self._named, serving, list(damage))

    def invalidate(self) -> None:
        """Check the meta record on the next call (a reindex finished in this process)."""
        self._checked_at = 0.0

    @property
    def loaded_generation(self) -> int | None:
        return self._loaded.number if self._loaded else None
