"""One index generation on disk: chunks with offsets, vectors, FAISS and BM25 indexes, a manifest.

Generations live in ``<data dir>/index/gen-NNNNNN/``; the current one is named by the ``index``
record of the meta collection, so every process (and every worker) agrees on which one serves.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from historian_blueprint.index.bm25 import BM25Index
from historian_blueprint.text import readings

FORMAT = 1
INDEX_META_ID = "index"


class IndexMismatch(RuntimeError):
    """The index on disk was built with another model or format: a reindex is needed."""


@dataclass
class ChunkRows:
    """Column-wise chunk records, in row order (row i is vector i)."""

    source_ids: list[str]
    ordinals: list[int]
    starts: list[int]
    ends: list[int]
    locators: list[str]
    texts: list[str]

    @classmethod
    def empty(cls) -> ChunkRows:
        return cls([], [], [], [], [], [])

    def __len__(self) -> int:
        return len(self.texts)

    def extend(self, other: ChunkRows, start: int = 0, end: int | None = None) -> None:
        for name in ("source_ids", "ordinals", "starts", "ends", "locators", "texts"):
            getattr(self, name).extend(getattr(other, name)[start:end])


def generation_dir(index_dir: Path, number: int) -> Path:
    return index_dir / f"gen-{number:06d}"


def current_generation(store: Any) -> dict[str, Any] | None:
    """Return the meta record naming the serving generation, or None before the first build."""
    return store.meta.find_one({"_id": INDEX_META_ID})


def fsync_dir(path: Path) -> None:
    for child in path.iterdir():
        with open(child, "rb") as fh:
            os.fsync(fh.fileno())
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_generation(
    directory: Path,
    manifest: dict[str, Any],
    documents: dict[str, dict[str, Any]],
    rows: ChunkRows,
    vectors: np.ndarray | None,
    faiss_index: Any,
    bm25: BM25Index,
    texts: Iterable[str] = (),
    previous: Path | None = None,
) -> None:
    """Write every file of a generation into ``directory`` (a fresh temporary folder); ``texts``: the documents
    whose sentences the verifier will read from the generation (text/readings.py) instead of afresh; ``previous``: the
    serving generation's folder, whose readings of unchanged documents are taken over."""
    import faiss

    directory.mkdir(parents=True)
    with open(directory / "chunks.jsonl", "w", encoding="utf-8") as fh:
        for i in range(len(rows)):
            fh.write(
                json.dumps([rows.source_ids[i], rows.ordinals[i], rows.starts[i], rows.ends[i], rows.locators[i], rows.texts[i]], ensure_ascii=False)
                + "\n"
            )
    if vectors is not None:  # a words-only generation (a first build before its vectors) has neither
        np.save(directory / "vectors.npy", vectors)
        faiss.write_index(faiss_index, str(directory / "faiss.index"))
    bm25.save(directory)
    readings.save(directory, texts, readings.load(previous) if previous is not None else None)
    (directory / "documents.json").write_text(json.dumps(documents, ensure_ascii=False), encoding="utf-8")
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    fsync_dir(directory)


def read_manifest(directory: Path) -> dict[str, Any]:
    return json.loads((directory / "manifest.json").read_text(encoding="utf-8"))


def read_documents(directory: Path) -> dict[str, dict[str, Any]]:
    return json.loads((directory / "documents.json").read_text(encoding="utf-8"))


def read_rows(directory: Path) -> ChunkRows:
    rows = ChunkRows.empty()
    with open(directory / "chunks.jsonl", encoding="utf-8") as fh:
        for line in fh:
            sid, ordinal, start, end, locator, text = json.loads(line)
            rows.source_ids.append(sid)
            rows.ordinals.append(ordinal)
            rows.starts.append(start)
            rows.ends.append(end)
            rows.locators.append(locator)
            rows.texts.append(text)
    return rows


def read_vectors(directory: Path, mmap: bool = True) -> np.ndarray:
    return np.load(directory / "vectors.npy", mmap_mode="r" if mmap else None)


def prune(index_dir: Path, keep: set[int]) -> None:
    """Delete generations not in ``keep`` and folders left by crashed builds."""
    if not index_dir.exists():
        return
    for child in index_dir.iterdir():
        if not child.is_dir() or not child.name.startswith("gen-"):
            continue
        number = child.name[4:10]
        if ".building" in child.name or not number.isdigit() or int(number) not in keep:
            shutil.rmtree(child, ignore_errors=True)
