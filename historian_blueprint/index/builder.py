"""Incremental reindex: hash documents, re-embed only new and changed ones, swap generations atomically."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from historian_blueprint.index import agreement, dense, generation as gen
from historian_blueprint.index.bm25 import BM25Index, tokenize
from historian_blueprint.index.chunking import chunk_document
from historian_blueprint.index.encoding import EmbeddingCheckpoint, encode_chunks
from historian_blueprint.settings import IndexSettings
from historian_blueprint.store import Document, Store

Progress = Callable[[str, int, int], None]
log = logging.getLogger(__name__)


@dataclass
class ReindexResult:
    generation: int | None
    noop: bool = False
    counts: dict[str, int] = field(default_factory=dict)
    errors: list[dict[str, str]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    encoder_check: dict[str, Any] | None = None  # how far the build's encoder is from the exact model (agreement.py)


def document_hash(doc: Document, settings: IndexSettings, model_name: str) -> str:
    """Hash everything that shapes a document's chunks, locators and vectors."""
    payload = [
        doc.text, doc.title, doc.author, doc.date, doc.year, doc.collection, doc.url, doc.pages,
        settings.chunk_size, settings.chunk_overlap, model_name, gen.FORMAT, settings.context_header,
    ]
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def context_header(info: dict[str, Any]) -> str:
    """The line that situates a chunk: "title — author — date" (a chunk alone rarely names who or when)."""
    when = info.get("date") or info.get("year")
    parts = [info.get("title") or "", info.get("author") or "", str(when) if when else ""]
    return " — ".join(p for p in parts if p)


def indexed_text(header: str, text: str) -> str:
    """What the embedder and BM25 see for one chunk; offsets and quotes always use the chunk text alone."""
    return f"{header}\n{text}" if header else text


def doc_info(doc: Document, digest: str) -> dict[str, Any]:
    return {
        "hash": digest, "title": doc.title, "author": doc.author, "date": doc.date,
        "year": doc.year, "collection": doc.collection, "url": doc.url,
    }


@dataclass
class Previous:
    """What an incremental build takes over from the serving generation: its folder, manifest and documents (their
    rows there), and the documents whose chunks and vectors it keeps."""

    directory: Path
    manifest: dict[str, Any]
    documents: dict[str, dict[str, Any]]
    kept: set[str]


def dense_index(vectors: np.ndarray, documents: dict[str, dict[str, Any]], settings: IndexSettings,
                dimension: int, previous: Previous | None) -> tuple[Any, dict[str, Any]]:
    """This generation's dense index: the previous one updated (IVF: the changed and deleted documents' rows out,
    the kept ones renumbered, the new ones in) when it can be, else built whole."""
    kind = dense.choose(settings.dense, len(vectors), settings.approximate_above)
    record = previous.manifest.get("dense_index") if previous is not None else None
    if previous is not None and dense.updatable(record, kind, len(vectors)):
        old_rows = previous.manifest["counts"]["chunks"]
        remap = np.full(old_rows, -1, dtype=np.int64)
        fresh = np.ones(len(vectors), dtype=bool)
        for source_id in previous.kept:
            start, end = previous.documents[source_id]["rows"]
            new_start, new_end = documents[source_id]["rows"]
            remap[start:end] = np.arange(new_start, new_end)
            fresh[new_start:new_end] = False
        added = np.flatnonzero(fresh)
        with gen.reading(previous.directory, "faiss.index"):
            old = dense.read(previous.directory / "faiss.index", shared=False)
        return dense.update(old, record, remap, vectors[added], added, settings.nprobe)
    return dense.build(vectors, dimension, kind, settings.nprobe)


def words_index(rows: gen.Assembled, documents: dict[str, dict[str, Any]], headers: dict[str, str],
                previous: Previous | None) -> BM25Index:
    """This generation's BM25: the kept documents' postings taken over from the previous generation (when it has
    them), only the new and changed documents' chunks tokenized; else every chunk tokenized."""
    old = BM25Index.load(previous.directory) if previous is not None else None
    if not isinstance(old, BM25Index):  # a first build, or the previous generation keeps weights, not postings
        return BM25Index.build(tokenize(indexed_text(headers[s], t)) for s, t in rows.pairs())
    remap = np.full(len(old), -1, dtype=np.int64)
    new_rows: list[int] = []
    fresh: list[list[str]] = []
    for source_id, info in documents.items():
        start, end = info["rows"]
        if source_id in previous.kept:
            old_start, old_end = previous.documents[source_id]["rows"]
            remap[old_start:old_end] = np.arange(start, end)
            continue
        for row in range(start, end):
            new_rows.append(row)
            fresh.append(tokenize(indexed_text(headers[source_id], rows.text(row))))
    return old.assemble(remap, np.asarray(new_rows, dtype=np.int64), fresh, len(rows))


def reindex(
    store: Store,
    index_dir: Path,
    settings: IndexSettings,
    *,
    embedder: Any,
    full: bool = False,
    only: set[str] | None = None,
    progress: Progress | None = None,
) -> ReindexResult:
    """Bring the index up to date with the documents; return counts, errors and timings.

    ``only`` limits (re-)embedding to those document ids (retry of failed documents); every other
    document keeps what the serving generation has for it.
    """
    progress = progress or (lambda phase, done, total: None)
    t0 = time.perf_counter()
    index_dir.mkdir(parents=True, exist_ok=True)
    current, old_dir, old_ok, old_manifest, old_docs = _previous(store, index_dir, embedder, full)
    if only is not None and not old_docs:  # nothing to keep the other documents from: build them all, rather than
        only = None                         # publish a generation of the retried documents alone
    if full:
        old_docs = {}

    # 1. scan: which documents are new, changed, unchanged or gone
    docs, hashes, errors = _scan(store, settings, embedder, progress)
    t_scan = time.perf_counter()

    keep, embed = _plan(docs, hashes, old_docs, only)
    new_ids = [s for s in embed if s not in old_docs]
    deleted = [s for s in old_docs if s not in docs]
    counts = {
        "documents": len(docs) + len(errors), "new": len(new_ids), "changed": len(embed) - len(new_ids),
        "unchanged": len(keep), "deleted": len(deleted), "failed": len(errors),
    }
    if not full and not embed and not deleted and old_manifest is not None:
        EmbeddingCheckpoint(index_dir, embedder).clear()  # nothing left to resume
        counts["chunks"] = old_manifest["counts"]["chunks"]
        return ReindexResult(current["generation"], noop=True, counts=counts, errors=errors,
                             timings={"scan_s": t_scan - t0, "total_s": time.perf_counter() - t0})

    # 2. chunk and embed what is new or changed; reuse rows and vectors of the rest
    pieces = _kept(keep, old_docs, old_dir)
    pending = _chunked(embed, docs, settings, errors)
    t_chunk = time.perf_counter()
    if current is None and pending:  # a first build serves by words while its vectors are made (no one waits for them)
        words_only = {**pieces, **{source_id: (rows, None) for source_id, rows in pending}}
        publish(store, index_dir, None, settings, embedder, docs, hashes, words_only, dict(counts, embedded_chunks=0))
        current = gen.current_generation(store)

    checkpoint = EmbeddingCheckpoint(index_dir, embedder)
    texts_of = {source_id: _embedded_texts(docs[source_id], rows, settings) for source_id, rows in pending}
    sizes = {source_id: [len(text) for text in rows.texts] for source_id, rows in pending}
    encoded = encode_chunks(texts_of, sizes, embedder, settings.batch_size, checkpoint, progress)
    for source_id, rows in pending:
        if source_id in encoded.broken:
            errors.append({"source_id": source_id, "error": encoded.broken[source_id]})
        else:
            pieces[source_id] = (rows, encoded.vectors[source_id])
    t_embed = time.perf_counter()
    progress("check", 0, 1)
    check = agreement.for_build(settings, embedder, texts_of, encoded, (old_manifest or {}).get("encoder_check"))
    t_check = time.perf_counter()

    # 3. assemble in document order, build the indexes, write the generation beside the old one
    progress("write", 0, 1)
    counts.update(embedded_chunks=encoded.embedded, resumed_chunks=encoded.resumed, failed=len(errors))
    previous = Previous(old_dir, old_manifest, old_docs, set(keep)) if old_ok and old_manifest and old_docs else None
    number, chunks = publish(store, index_dir, current, settings, embedder, docs, hashes, pieces, counts,
                             previous_ok=old_ok, previous=previous, phases=(phases := {}), encoder_check=check)
    counts["chunks"] = chunks
    checkpoint.clear()  # the generation holds every vector now
    progress("write", 1, 1)
    t_end = time.perf_counter()
    timings = {
        "scan_s": t_scan - t0, "chunk_s": t_chunk - t_scan, "embed_s": t_embed - t_chunk,
        "encode_s": encoded.encode_s, "check_s": t_check - t_embed, "write_s": t_end - t_check, "total_s": t_end - t0,
        **{f"write_{name}": value for name, value in phases.items()},
    }
    return ReindexResult(number, counts=counts, errors=errors, timings=timings, encoder_check=check)


def _embedded_texts(doc: Document, rows: gen.ChunkRows, settings: IndexSettings) -> list[str]:
    """What is embedded of a document's chunks: each with the document's context header when the setting asks."""
    if not settings.context_header:
        return rows.texts
    header = context_header(doc_info(doc, ""))
    return [indexed_text(header, t) for t in rows.texts]


def _plan(docs: dict[str, Document], hashes: dict[str, str], old_docs: dict[str, dict[str, Any]],
          only: set[str] | None) -> tuple[list[str], list[str]]:
    """Which documents keep the serving generation's chunks and vectors, and which are (re-)embedded."""
    keep, embed = [], []
    for source_id in docs:
        old = old_docs.get(source_id)
        if old is not None and (old["hash"] == hashes[source_id] or (only is not None and source_id not in only)):
            keep.append(source_id)
        elif only is None or source_id in only:
            embed.append(source_id)
    return keep, embed


def _kept(keep: list[str], old_docs: dict[str, dict[str, Any]], old_dir: Path | None
          ) -> dict[str, tuple[gen.ChunkRows | gen.Kept, np.ndarray]]:
    """The kept documents' rows and vectors in the serving generation: mapped rows kept as they are (copied as bytes
    when written), an older generation's rows read; vectors as mapped views."""
    old_rows = gen.read_rows(old_dir) if keep else gen.ChunkRows.empty()
    old_vectors = gen.read_vectors(old_dir) if keep else None
    pieces: dict[str, tuple[gen.ChunkRows | gen.Kept, np.ndarray]] = {}
    for source_id in keep:
        start, end = old_docs[source_id]["rows"]
        if isinstance(old_rows, gen.MappedRows):
            rows: gen.ChunkRows | gen.Kept = gen.Kept(old_rows, start, end)
        else:
            rows = gen.ChunkRows.empty()
            rows.extend(old_rows, start, end)
        pieces[source_id] = (rows, old_vectors[start:end])
    return pieces


def _chunked(embed: list[str], docs: dict[str, Document], settings: IndexSettings, errors: list[dict[str, str]]
             ) -> list[tuple[str, gen.ChunkRows]]:
    """The chunks of each document to embed; one that cannot be chunked is added to ``errors``."""
    pending: list[tuple[str, gen.ChunkRows]] = []
    for source_id in embed:
        doc = docs[source_id]
        try:
            chunks = chunk_document(source_id, doc.text, settings.chunk_size, settings.chunk_overlap, doc.pages)
        except Exception as exc:  # a document that cannot be chunked is reported, the rest go on
            errors.append({"source_id": source_id, "error": f"chunking failed: {exc}"})
            continue
        rows = gen.ChunkRows(
            [c.source_id for c in chunks], [c.ordinal for c in chunks], [c.start for c in chunks],
            [c.end for c in chunks], [c.locator for c in chunks], [c.text for c in chunks],
        )
        pending.append((source_id, rows))
    return pending


def _previous(store: Store, index_dir: Path, embedder: Any, full: bool
              ) -> tuple[dict[str, Any] | None, Path | None, bool, dict[str, Any] | None, dict[str, dict[str, Any]]]:
    """The serving generation and what a build may take over from it: (its record, its folder, whether it is whole,
    its manifest and its documents when an incremental build can reuse them)."""
    current = gen.current_generation(store)
    old_dir = gen.generation_dir(index_dir, current["generation"]) if current else None
    old_docs: dict[str, dict[str, Any]] = {}
    old_manifest: dict[str, Any] | None = None
    # checked once per build: what an incremental build takes over, and whose readings `publish` reuses; whole (every
    # checksum) unless its files are as they were when the build that wrote them read them back (names, sizes, times)
    old_ok = old_dir is not None and old_dir.exists()
    unchanged = old_ok and current.get("files") == [list(f) for f in gen.signature(old_dir)]
    damage = gen.check(old_dir, full=not unchanged) if old_ok else []
    if damage:  # nothing is taken over from a damaged generation: every document is read and embedded afresh
        log.warning("Historian: generation %s is damaged (%s): building a whole new one", current["generation"],
                    "; ".join(map(str, damage)))
        old_ok = False
    if old_ok and not full:
        try:
            old_manifest = gen.read_manifest(old_dir)
            if old_manifest.get("format") == gen.FORMAT and old_manifest["model"]["name"] == embedder.name \
                    and old_manifest.get("dense", True):  # a words-only generation has no vectors to keep
                old_docs = gen.read_documents(old_dir)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:  # unreadable though unchanged
            log.warning("Historian: generation %s cannot be read (%s): building a whole new one", current["generation"],
                        type(exc).__name__)
            old_manifest, old_docs, old_ok = None, {}, False
    return current, old_dir, old_ok, old_manifest, old_docs


def _scan(store: Store, settings: IndexSettings, embedder: Any, progress: Progress
          ) -> tuple[dict[str, Document], dict[str, str], list[dict[str, str]]]:
    """Every document of the collection read once: the readable ones with their hashes, the others as errors."""
    errors: list[dict[str, str]] = []
    docs: dict[str, Document] = {}
    hashes: dict[str, str] = {}
    total = store.count_documents()
    for n, record in enumerate(store.documents.find({}, store.fields.projection()), start=1):
        problems = store.fields.problems(record)
        source_id = str(record.get(store.fields["id"], "?")) if isinstance(record, dict) else "?"
        if problems:
            errors.append({"source_id": source_id, "error": "; ".join(problems)})
        else:
            doc = store.fields.document(record)
            docs[doc.id] = doc
            hashes[doc.id] = document_hash(doc, settings, embedder.name)
        if n % 500 == 0:
            progress("scan", n, total)
    progress("scan", total, total)
    return docs, hashes, errors


def publish(store: Store, index_dir: Path, current: dict[str, Any] | None, settings: IndexSettings, embedder: Any,
            docs: dict[str, Document], hashes: dict[str, str],
            pieces: dict[str, tuple[gen.ChunkRows | gen.Kept, np.ndarray | None]],
            counts: dict[str, int], previous_ok: bool = False, previous: Previous | None = None,
            phases: dict[str, float] | None = None, encoder_check: dict[str, Any] | None = None) -> tuple[int, int]:
    """Write a generation of these documents' chunks (in document order) beside the serving one and make it serve:
    with their vectors and FAISS, or, when a piece has no vectors (``None``: a first build before its vectors are
    made), by words only (BM25; the manifest says ``"dense": false``); ``encoder_check``: how far its encoder is from
    the exact model (agreement.py), recorded. Return its number and its chunk count."""
    lap = gen.Laps(phases)
    rows_all = gen.Assembled()
    vector_parts = []
    documents: dict[str, dict[str, Any]] = {}
    dense = all(vectors is not None for _, vectors in pieces.values())
    for source_id in docs:
        if source_id not in pieces:
            continue
        rows, vectors = pieces[source_id]
        documents[source_id] = (doc_info(docs[source_id], hashes[source_id])
                                | {"rows": [len(rows_all), len(rows_all) + len(rows)]})
        rows_all.add(rows)
        if dense:
            vector_parts.append(vectors)
    dimension = embedder.dimension
    vectors_all = (np.vstack(vector_parts).astype(np.float32, copy=False) if vector_parts
                   else np.zeros((0, dimension), np.float32))
    lap("assemble_s")
    faiss_index, dense_record = (dense_index(vectors_all, documents, settings, dimension, previous) if dense
                                 else (None, {"kind": "none"}))
    headers = {s: context_header(info) if settings.context_header else "" for s, info in documents.items()}
    lap("dense_s")
    bm25 = words_index(rows_all, documents, headers, previous)
    lap("words_s")
    number = (current["generation"] if current else 0) + 1
    final_dir = gen.generation_dir(index_dir, number)
    serving = current["generation"] if current else 0  # kept: the named one and the one before (the fallback)
    gen.prune(index_dir, keep=set([n for n in gen.generations_on_disk(index_dir) if n <= serving][:2]))
    building = final_dir.with_name(f"{final_dir.name}.building-{os.getpid()}")
    manifest = {
        "format": gen.FORMAT, "generation": number, "created_at": datetime.now(timezone.utc).isoformat(),
        "model": {"name": embedder.name, "dimension": dimension, "device": getattr(embedder, "device", "cpu")},
        "dense": dense, "encoder_check": encoder_check if dense else None,
        "chunking": {"size": settings.chunk_size, "overlap": settings.chunk_overlap},
        "context_header": settings.context_header,
        "rows": "mapped", "words": "postings", "index_type": dense_record["kind"], "dense_index": dense_record,
        "counts": {**counts, "chunks": len(rows_all)},
    }
    # the verifier's readings of whole documents (seconds per thousand): not in a words-only first generation,
    # which must serve as soon as it can
    texts = [docs[s].text for s in documents] if dense else []
    # the serving generation's readings of unchanged documents are taken over when reindex found it whole
    previous = gen.generation_dir(index_dir, current["generation"]) if current and previous_ok else None
    gen.write_generation(building, manifest, documents, rows_all, vectors_all if dense else None, faiss_index, bm25,
                         texts, previous, phases)
    lap.restart()
    # what was written is as recorded before it serves: the checksums were made by reading the files back
    # (write_generation), so their sizes are what is left to compare
    damage = gen.check(building, full=False)
    lap("check_s")
    if damage:
        raise gen.IndexDamaged(building, damage)
    os.replace(building, final_dir)
    store.meta.replace_one(
        {"_id": gen.INDEX_META_ID},
        {"_id": gen.INDEX_META_ID, "generation": number, "path": str(final_dir), "dense": dense,
         "updated_at": manifest["created_at"], "chunks": len(rows_all), "documents": len(documents),
         "encoder": manifest["model"]["name"], "device": manifest["model"]["device"],
         "encoder_check": manifest["encoder_check"],
         "files": [list(f) for f in gen.signature(final_dir)]},
        upsert=True,
    )
    gen.prune(index_dir, keep={number, current["generation"]} if current else {number})
    return number, len(rows_all)
