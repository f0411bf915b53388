"""One index generation on disk: chunks with offsets, vectors, FAISS and BM25 indexes, a manifest.

Generations live in ``<data dir>/index/gen-NNNNNN/``; the current one is named by the ``index``
record of the meta collection, so every process (and every worker) agrees on which one serves.
The manifest records the size and SHA-256 of every other file of its generation; ``check`` compares them (sizes
only, or the digests too), so that a damaged generation is named and never served.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from historian_blueprint.index.bm25 import FILES as BM25_FILES, LEGACY_FILES as BM25_LEGACY_FILES, BM25Index
from historian_blueprint.index.rows import (  # noqa: F401 - gen.read_rows, gen.Kept
    Assembled, ChunkRows, Kept, MappedRows, read_rows, write_rows)
from historian_blueprint.resources import file_digest
from historian_blueprint.text import readings

FORMAT = 1
INDEX_META_ID = "index"


# the command that makes a whole new generation (the admin page's full rebuild)
REBUILD = "flask historian reindex --full"


class IndexMismatch(RuntimeError):
    """The index on disk was built with another model or format: a reindex is needed."""


class IndexNotBuilt(RuntimeError):
    """No index generation serves yet."""


@dataclass(frozen=True)
class Damage:
    """One file of a generation that cannot be trusted, and why."""

    file: str
    problem: str

    def __str__(self) -> str:
        return f"{self.file}: {self.problem}"


class IndexDamaged(IndexNotBuilt):
    """The generation named to serve is damaged (and no earlier good one is on disk): nothing is served from it."""

    def __init__(self, directory: Path, damage: list[Damage]) -> None:
        self.directory = directory
        self.damage = damage
        super().__init__(
            f"the search index is damaged ({directory.name}/{damage[0]}"
            + (f", and {len(damage) - 1} more" if len(damage) > 1 else "")
            + f"): nothing is served from it; an admin must rebuild it with `{REBUILD}` "
              "(or Rebuild all on the admin page)"
        )


@dataclass
class Health:
    """What the serving index holder knows about damage: the generation named to serve, the one it serves (an
    earlier good one when the named one is damaged, else None), and the damage found."""

    named: int | None = None
    serving: int | None = None
    damage: list[Damage] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"named": self.named, "serving": self.serving, "damaged": [vars(d) for d in self.damage],
                "rebuild": REBUILD if self.damage else None}


class Laps:
    """Seconds spent in each phase of writing a generation, added to ``into`` (None: not kept)."""

    def __init__(self, into: dict[str, float] | None) -> None:
        self.into = into
        self.restart()

    def restart(self) -> None:
        self.at = time.perf_counter()

    def __call__(self, name: str) -> None:
        now = time.perf_counter()
        if self.into is not None:
            self.into[name] = self.into.get(name, 0.0) + now - self.at
        self.at = now


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
    rows: Assembled | ChunkRows,
    vectors: np.ndarray | None,
    faiss_index: Any,
    bm25: BM25Index,
    texts: Iterable[str] = (),
    previous: Path | None = None,
    phases: dict[str, float] | None = None,
) -> None:
    """Write every file of a generation into ``directory`` (a fresh temporary folder); ``texts``: the documents
    whose sentences the verifier will read from the generation (text/readings.py) instead of afresh; ``previous``: the
    serving generation's folder, whose readings of unchanged documents are taken over; ``phases``: where the seconds
    of each step are added."""
    import faiss

    lap = Laps(phases)
    directory.mkdir(parents=True)
    write_rows(directory, rows, list(documents))
    if vectors is not None:  # a words-only generation (a first build before its vectors) has neither
        np.save(directory / "vectors.npy", vectors)
        faiss.write_index(faiss_index, str(directory / "faiss.index"))
    bm25.save(directory)
    lap("files_s")
    readings.save(directory, texts, readings.load(previous) if previous is not None else None)
    lap("readings_s")
    (directory / "documents.json").write_text(json.dumps(documents, ensure_ascii=False), encoding="utf-8")
    manifest = {**manifest, "files": {child.name: {"size": child.stat().st_size, "sha256": digest(child)}
                                      for child in sorted(directory.iterdir())}}
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    lap("digests_s")
    fsync_dir(directory)
    lap("fsync_s")


digest = file_digest  # a generation's files are checked by their SHA-256 (resources.file_digest)


def row_files(manifest: dict[str, Any]) -> list[str]:
    """The files of a generation's chunk rows: mapped (written since issue 43), or one JSON line a chunk before."""
    return ["rows.npy", "texts.bin", "locators.bin"] if manifest.get("rows") == "mapped" else ["chunks.jsonl"]


def word_files(manifest: dict[str, Any]) -> list[str]:
    """The files of a generation's BM25: postings (written since issue 43), or weights with a JSON vocabulary before."""
    return list(BM25_FILES if manifest.get("words") == "postings" else BM25_LEGACY_FILES)


def required_files(manifest: dict[str, Any]) -> list[str]:
    """The files every generation of this manifest's kind has (a words-only one has no vectors)."""
    names = row_files(manifest) + ["documents.json"] + word_files(manifest)
    return names + (["vectors.npy", "faiss.index"] if manifest.get("dense", True) else [])


def check(directory: Path, *, full: bool) -> list[Damage]:
    """The damage found in a generation: its manifest unreadable, a file missing, of another size than recorded, or
    (``full``) of another SHA-256. A generation written before checksums were recorded is checked for its files only."""
    try:
        manifest = read_manifest(directory)
        if not isinstance(manifest, dict) or "generation" not in manifest or "model" not in manifest:
            raise ValueError("not a generation's manifest")
    except FileNotFoundError:
        return [Damage("manifest.json", "missing")]
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        return [Damage("manifest.json", f"unreadable ({type(exc).__name__})")]
    damage = []
    recorded = manifest.get("files") if isinstance(manifest.get("files"), dict) else {}
    for name in sorted(set(required_files(manifest)) | {str(n) for n in recorded}):
        path = directory / name
        want = recorded.get(name)
        try:
            if not path.is_file():
                damage.append(Damage(name, "missing"))
            elif want is None:
                continue
            elif not isinstance(want, dict):
                damage.append(Damage("manifest.json", f"its record of {name} is not a size and a checksum"))
            elif (size := path.stat().st_size) != want.get("size"):
                damage.append(Damage(name, f"{size} bytes where the manifest records {want.get('size')}"))
            elif full and digest(path) != want.get("sha256"):
                damage.append(Damage(name, "its content differs from the manifest's checksum"))
        except OSError as exc:  # a disk that cannot read it (EIO), a file that may not be read
            damage.append(Damage(name, f"cannot be read ({type(exc).__name__})"))
    return damage


def signature(directory: Path) -> tuple[tuple[str, int, int], ...]:
    """Each file's name, size and modification time: what a cheap look at a generation sees change."""
    try:
        return tuple(sorted((c.name, c.stat().st_size, c.stat().st_mtime_ns) for c in directory.iterdir()))
    except OSError:
        return ()


@contextmanager
def reading(directory: Path, name: str) -> Iterator[None]:
    """Reading one file of a generation: what cannot be read is IndexDamaged naming the file (never a traceback)."""
    try:
        yield
    except (OSError, ValueError, KeyError, IndexError, TypeError, EOFError, RuntimeError, UnicodeDecodeError) as exc:
        if isinstance(exc, (IndexNotBuilt, IndexMismatch)):
            raise
        raise IndexDamaged(directory, [Damage(name, f"cannot be read ({type(exc).__name__})")]) from exc


def generations_on_disk(index_dir: Path) -> list[int]:
    """The numbers of the finished generations in ``index_dir``, newest first."""
    if not index_dir.exists():
        return []
    numbers = [c.name[4:] for c in index_dir.iterdir() if c.is_dir() and c.name.startswith("gen-")]
    return sorted((int(n) for n in numbers if n.isdigit()), reverse=True)


def read_manifest(directory: Path) -> dict[str, Any]:
    return json.loads((directory / "manifest.json").read_text(encoding="utf-8"))


def read_documents(directory: Path) -> dict[str, dict[str, Any]]:
    return json.loads((directory / "documents.json").read_text(encoding="utf-8"))


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
