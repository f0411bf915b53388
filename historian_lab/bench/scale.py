"""How Historian's cost grows with the collection (`historian bench scale`): collections of 10k, 100k and 1M chunks
built, reindexed after a 1% change, measured on disk and in a serving worker.

The collections are the January 1916 front pages (``scale/chronam_1916_01_all.jsonl.gz``, 2,291 pages, about 92k
chunks) and, past them, **grown copies**: copy ``k`` of a page has its own id, its title marked "(copy k)", and one word
in five of four letters or more respelled (each letter moved ``k`` places in the alphabet, case and length kept: new
words for the word index, as an archive's OCR makes). Encoding a million chunks would take a day of these two cores,
so the builds **replay** vectors (``Replay``): a real page's chunk gets the vector the configured encoder gave it (made
once and kept in ``<workdir>/scale-base``), a grown chunk a real chunk's vector (chosen by its text's hash) with
Gaussian noise of norm ``NOISE``, renormalized. Encoding is measured apart, per chunk, on the real pages
(``encode_chunks_per_s``), and each row says what its build would add to encode for real (``encode_s_estimate``).

Asks, recall and memory are measured in worker processes that only serve (``scale_worker``): two at once, so that PSS
shows what the memory-mapped index files cost each when they are shared.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
import subprocess
import sys
import time
import zlib
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from historian_blueprint.index import builder
from historian_blueprint.index import generation as gen
from historian_blueprint.index.chunking import chunk_document
from historian_blueprint.services import get_settings, get_store
from historian_blueprint.settings import IndexSettings, read
from historian_lab.bench.common import read_jsonl, workspace
from historian_lab.bench.query import queries

SIZES = (10_000, 100_000, 1_000_000)
NOISE = 0.35          # a grown chunk's vector: a real one plus noise of this norm (cosine to it about 0.94)
RESPELL_ONE_IN = 5    # of a grown copy's words of four letters or more, those respelled
CHANGED_SHARE = 0.01  # the incremental build: this share of the documents changed
CHANGE_MARK = " [Scale benchmark edit.]"
FIRST_BUILD = "first-build.json"  # a workspace's first build: when, its timings and counts
_WORD = re.compile(r"[A-Za-z]{4,}")


# ------------------------------------------------------------------ the collections
def real_pages(data: Path) -> list[dict[str, Any]]:
    """The January 1916 front pages, in file order."""
    return list(read_jsonl(data / "scale" / "chronam_1916_01_all.jsonl.gz"))


def respell(text: str, k: int) -> str:
    """One word in ``RESPELL_ONE_IN`` (chosen by a checksum of the word and ``k``) with each letter moved ``k`` places
    in the alphabet: the same length, case and spacing, another word."""
    def shifted(match: re.Match) -> str:
        word = match.group(0)
        if zlib.crc32(f"{k}:{word}".encode()) % RESPELL_ONE_IN:
            return word
        return "".join(chr((ord(c) - base + k) % 26 + base) for c in word
                       for base in ((65 if c.isupper() else 97),))
    return _WORD.sub(shifted, text)


def grown(page: dict[str, Any], k: int) -> dict[str, Any]:
    """Copy ``k`` of a page (``k`` = 0: the page itself)."""
    if k == 0:
        return page
    return {**page, "_id": f"{page['_id']}~{k}", "title": f"{page['title']} (copy {k})",
            "content": respell(page["content"], k)}


def collection(pages: list[dict[str, Any]], chunk_counts: list[int], size: int) -> list[dict[str, Any]]:
    """The real pages, then their copies, until the chunks (counted on the real pages) reach ``size``."""
    out: list[dict[str, Any]] = []
    total = 0
    for k in range(10_000):
        for page, count in zip(pages, chunk_counts):
            if total >= size:
                return out
            out.append(grown(page, k))
            total += count
    return out


def chunk_counts(root: Path, pages: list[dict[str, Any]], settings: IndexSettings) -> list[int]:
    """Each real page's chunk count (kept in ``root``)."""
    path = root / f"chunk-counts-{settings.chunk_size}-{settings.chunk_overlap}.json"
    if path.exists():
        counts = json.loads(path.read_text())
        if len(counts) == len(pages):
            return counts
    counts = [len(chunk_document(p["_id"], p["content"], settings.chunk_size, settings.chunk_overlap))
              for p in pages]
    path.write_text(json.dumps(counts))
    return counts


# ------------------------------------------------------------------ replayed vectors
def _key(text: str) -> bytes:
    return hashlib.sha1(text.encode("utf-8")).digest()


def embedded_texts(page: dict[str, Any], settings: IndexSettings) -> list[str]:
    """What the build embeds of a page: each chunk with its context header (builder._embedded_texts)."""
    chunks = chunk_document(page["_id"], page["content"], settings.chunk_size, settings.chunk_overlap)
    header = builder.context_header(page) if settings.context_header else ""
    return [builder.indexed_text(header, c.text) for c in chunks]


class BaseVectors:
    """The configured encoder's vectors of the real pages' chunks, made once and kept (``root/<encoder>.npz``),
    extended as more pages are needed; saved every ``save_every`` chunks, so an interrupted run resumes."""

    def __init__(self, root: Path, encoder: Any) -> None:
        self.path = root / f"base-{encoder.name}-{encoder.__class__.__name__}.npz"
        self.encoder = encoder
        self.keys: list[bytes] = []
        self.vectors = np.zeros((0, encoder.dimension), np.float32)
        if self.path.exists():
            with np.load(self.path) as saved:
                self.keys = [row.tobytes() for row in saved["keys"]]
                self.vectors = saved["vectors"]
        self.rows = {k: i for i, k in enumerate(self.keys)}

    def cover(self, texts: list[str], save_every: int = 4000) -> float:
        """Encode the texts not yet kept; return the seconds spent encoding."""
        missing = list(dict.fromkeys(t for t in texts if _key(t) not in self.rows))
        spent = 0.0
        for start in range(0, len(missing), save_every):
            block = missing[start:start + save_every]
            t0 = time.perf_counter()
            vectors = self.encoder.encode(block, batch_size=8)
            spent += time.perf_counter() - t0
            self.keys.extend(_key(t) for t in block)
            self.vectors = np.vstack([self.vectors, vectors.astype(np.float32)])
            self.rows = {k: i for i, k in enumerate(self.keys)}
            tmp = self.path.with_suffix(".tmp.npz")
            np.savez(tmp, keys=np.frombuffer(b"".join(self.keys), np.uint8).reshape(-1, 20), vectors=self.vectors)
            tmp.replace(self.path)
        return spent


class Replay:
    """An embedder that replays vectors: a kept text's own, any other a kept vector (by its hash) with noise."""

    def __init__(self, encoder: Any, base: BaseVectors) -> None:
        self.name, self.dimension = encoder.name, encoder.dimension
        self.base = base
        self.own = self.grown = 0  # texts given their own vector, and a real one with noise

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        out = np.empty((len(texts), self.dimension), np.float32)
        scale = NOISE / math.sqrt(self.dimension)
        for i, text in enumerate(texts):
            key = _key(text)
            row = self.base.rows.get(key)
            if row is not None:
                out[i] = self.base.vectors[row]
                self.own += 1
                continue
            self.grown += 1
            seed = int.from_bytes(key[:8], "little")
            vector = self.base.vectors[seed % len(self.base.vectors)] \
                + np.random.default_rng(seed).standard_normal(self.dimension, dtype=np.float32) * scale
            out[i] = vector / np.linalg.norm(vector)
        return out


# ------------------------------------------------------------------ one size
def _load(app: Any, docs: list[dict[str, Any]]) -> float:
    """Make the workspace's store hold exactly these documents (unchanged ones untouched); return seconds."""
    t0 = time.perf_counter()
    with app.app_context():
        store = get_store()
        have = {d["_id"]: d.get("content") for d in store.documents.find({}, {"_id": 1, "content": 1})}
        wanted = {d["_id"] for d in docs}
        gone = [i for i in have if i not in wanted]
        if gone:
            store.documents.delete_many({"_id": {"$in": gone}})
        fresh = [d for d in docs if d["_id"] not in have]
        for start in range(0, len(fresh), 500):
            store.documents.insert_many(fresh[start:start + 500])
        for d in docs:
            if d["_id"] in have and have[d["_id"]] != d["content"]:
                store.documents.replace_one({"_id": d["_id"]}, d)
    return time.perf_counter() - t0


def _change(app: Any, share: float, seed: int = 11) -> int:
    """Change ``share`` of the documents (append a sentence); return how many."""
    import random

    with app.app_context():
        store = get_store()
        ids = sorted(d["_id"] for d in store.documents.find({}, {"_id": 1}))
        chosen = random.Random(seed).sample(ids, max(1, math.ceil(share * len(ids))))
        for doc_id in chosen:
            doc = store.documents.find_one({"_id": doc_id})
            store.documents.update_one({"_id": doc_id}, {"$set": {"content": doc["content"] + CHANGE_MARK}})
    return len(chosen)


def _on_disk(app: Any) -> int:
    from historian_blueprint.index import generation as gen, service

    with app.app_context():
        record = gen.current_generation(get_store())
        directory = gen.generation_dir(service.index_dir(app), record["generation"])
    return sum(f.stat().st_size for f in directory.iterdir())


def _workers(root: Path, name: str, encoder: str, questions: list[str], asks: int) -> list[dict[str, Any]]:
    """Two serving workers at once on the built index; the first measures, both report memory."""
    barrier = root / name / "workers"
    barrier.mkdir(parents=True, exist_ok=True)
    for stale in barrier.iterdir():
        stale.unlink()
    (barrier / "questions.json").write_text(json.dumps(questions))
    procs = [subprocess.Popen([sys.executable, "-m", "historian_lab.bench.scale_worker", str(root), name, encoder,
                               str(barrier), str(n), str(asks if n == 0 else 0)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for n in range(2)]
    out = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=3600)
        if proc.returncode != 0:
            raise RuntimeError(f"scale worker failed: {stderr[-3000:]}")
        out.append(json.loads(stdout.strip().splitlines()[-1]))
    return out


def measure(root: Path, size: int, questions: list[str], encoder: str, asks: int,
            pages: list[dict[str, Any]], log: Any, reuse_build: bool = False) -> dict[str, Any]:
    """One row: build, 1% incremental build, size on disk, the workers' figures. ``reuse_build``: keep the index an
    earlier run built for this size (and the figures of that first build, ``first-build.json``) instead of a new
    first build; the row says when that build was made."""
    from historian_blueprint.index import service

    name = f"scale-{size}"
    # replayed vectors are not an encoder's: the check of an encoder against the exact model (agreement.py) is an
    # encoding cost, measured by `bench retrieval --encoder`, not here
    app = workspace(root, name, HISTORIAN_INDEX_ENCODER=encoder, HISTORIAN_INDEX_ENCODER_CHECK=0)
    with app.app_context():
        settings = read(IndexSettings, get_settings(app))
        model = service.embedder(app)
    counts = chunk_counts(root, pages, settings)
    docs = collection(pages, counts, size)
    base = BaseVectors(root, model)
    real = [d for d in docs if "~" not in d["_id"]]
    log(f"{name}: {len(docs)} documents ({len(real)} real pages); vectors of the real pages")
    base_s = base.cover([t for page in real for t in embedded_texts(page, settings)])
    replay = Replay(model, base)
    record = root / name / FIRST_BUILD
    with app.app_context():
        serving = gen.current_generation(get_store())
    if reuse_build and record.is_file() and serving is not None:  # the first build an earlier run made and timed
        made = json.loads(record.read_text(encoding="utf-8"))
        full = SimpleNamespace(timings=made["timings"], counts=made["counts"])
        log(f"{name}: the first build of {made['made_at']} ({full.timings['total_s']:.0f} s) kept; 1% change")
    else:
        load_s = _load(app, docs)
        log(f"{name}: store loaded in {load_s:.0f} s; full build")
        with app.app_context():  # a first build, from nothing: every document read, chunked, tokenized
            shutil.rmtree(service.index_dir(app), ignore_errors=True)
            get_store().meta.delete_one({"_id": gen.INDEX_META_ID})
            full = builder.reindex(get_store(), service.index_dir(app), settings, embedder=replay, full=True)
        made = {"made_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "timings": full.timings,
                "counts": full.counts}
        record.write_text(json.dumps(made), encoding="utf-8")
        log(f"{name}: full build {full.timings['total_s']:.0f} s; 1% change")
    changed = _change(app, CHANGED_SHARE)
    with app.app_context():
        step = builder.reindex(get_store(), service.index_dir(app), settings, embedder=replay)
    log(f"{name}: incremental build {step.timings['total_s']:.1f} s; workers")
    first, second = _workers(root, name, encoder, questions, asks)
    rate = _encode_rate(base, real, settings)
    chunks = full.counts["chunks"]
    return {
        "chunks": chunks, "documents": len(docs), "real_pages": len(real), "build_made_at": made["made_at"],
        "build_s": round(full.timings["total_s"], 1), "build_chunks_per_s": round(chunks / full.timings["total_s"], 1),
        "build_timings_s": {k: round(v, 1) for k, v in full.timings.items()},
        "encode_chunks_per_s": rate, "encode_s_estimate": round(chunks / rate, 0) if rate else None,
        "incremental_documents": changed, "incremental_s": round(step.timings["total_s"], 2),
        "incremental_timings_s": {k: round(v, 2) for k, v in step.timings.items()},
        "incremental_ratio": round(step.timings["total_s"] / full.timings["total_s"], 4),
        "incremental_ratio_with_encoding": (
            round((step.timings["total_s"] + step.counts["embedded_chunks"] / rate)
                  / (full.timings["total_s"] + chunks / rate), 4) if rate else None),
        "index_type": first["index_type"], "disk_mb": round(_on_disk(app) / 2**20, 1),
        "load_s": first["load_s"],
        "retrieval_p50_ms": first["retrieval_p50_ms"], "retrieval_p95_ms": first["retrieval_p95_ms"],
        "ask_p50_ms": first["ask_p50_ms"], "ask_p95_ms": first["ask_p95_ms"], "asks": first["asks"],
        "recall_at_10": first["recall_at_10"],
        "rss_mb": max(first["rss_mb"], second["rss_mb"]), "pss_mb": max(first["pss_mb"], second["pss_mb"]),
        "private_mb": max(first["private_mb"], second["private_mb"]),
        "anonymous_mb": max(first["anonymous_mb"], second["anonymous_mb"]),
        "base_encode_s": round(base_s, 1), "replayed": {"own": replay.own, "grown": replay.grown},
    }


def _encode_rate(base: BaseVectors, real: list[dict[str, Any]], settings: IndexSettings, n: int = 600) -> float:
    """Chunks per second of the configured encoder on real chunks (with their headers)."""
    texts = [t for page in real[:40] for t in embedded_texts(page, settings)][:n]
    if not texts:
        return 0.0
    base.encoder.encode(texts[:16], batch_size=8)
    t0 = time.perf_counter()
    base.encoder.encode(texts, batch_size=8)
    return round(len(texts) / (time.perf_counter() - t0), 1)


def run(root: Path, data: Path, sizes: tuple[int, ...] = SIZES, encoder: str = "int8", asks: int = 30,
        plot: Path | None = None, log: Any = None, reuse_build: bool = False) -> dict[str, Any]:
    log = log or (lambda message: print(message, file=sys.stderr, flush=True))
    pages = real_pages(data)
    asked = queries(data, 200)  # historian_qa_dev's questions, then TimeQA's
    rows = [measure(root, size, asked, encoder, asks, pages, log, reuse_build) for size in sizes]
    result = {"encoder": encoder, "noise": NOISE, "queries": len(asked), "rows": rows,
              "machine": _machine()}
    if plot is not None:
        from historian_lab.bench.scale_plot import draw

        draw(rows, plot)
        result["plot"] = str(plot)
    return result


def _machine() -> dict[str, Any]:
    import os
    import platform

    memory = 0
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            memory = int(fh.readline().split()[1]) // 2**20
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "memory_gib": memory, "python": platform.python_version(),
            "machine": platform.machine()}
