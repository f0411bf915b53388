"""Encoding chunks into vectors for a build: sorted by length, in steps that report progress, resumable from the
vectors an interrupted build left (``EmbeddingCheckpoint``); a chunk that cannot be encoded is named, not fatal."""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

CHECKPOINT_DIR = "checkpoint"


def model_fingerprint(embedder: Any) -> str:
    """Which model made a vector: its name and dimension, and, for a model folder, the folder's resolved
    path and every file's size and modification time (two models in folders of the same name differ)."""
    parts = [str(embedder.name), str(embedder.dimension)]
    path = getattr(embedder, "path", None)
    if path and Path(path).is_dir():
        root = Path(path).resolve()
        parts.append(str(root))
        for file in sorted(f for f in root.rglob("*") if f.is_file()):
            stat = file.stat()
            parts.append(f"{file.relative_to(root)}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


class EmbeddingCheckpoint:
    """Vectors a build has paid for, kept on disk until its generation is written.

    A build that dies mid-embedding (killed, out of memory, power cut) leaves them, and the next build
    encodes only the rest. Vectors are keyed by the model (model_fingerprint) and the exact text embedded,
    so a changed document, header or model never reuses a stale one. Each block is written to a temporary file and
    renamed, so a part on disk is always whole.
    """

    def __init__(self, index_dir: Path, embedder: Any) -> None:
        self.root = index_dir / CHECKPOINT_DIR
        self.dir = self.root / model_fingerprint(embedder)[:24]
        self.dimension = embedder.dimension

    @staticmethod
    def key(text: str) -> bytes:
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()

    def load(self) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        if not self.dir.exists():
            return found
        for part in sorted(self.dir.glob("part-*.npz")):
            try:
                with np.load(part) as data:
                    keys, vectors = data["keys"], data["vectors"]
            except Exception:  # a part that cannot be read is only lost work
                continue
            if vectors.ndim != 2 or vectors.shape[1] != self.dimension or keys.shape != (len(vectors), 32):
                continue
            found.update(zip((k.tobytes() for k in keys), vectors))
        return found

    def save(self, keys: list[bytes], vectors: np.ndarray) -> None:
        if not keys:
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        name = f"part-{time.time_ns():020d}-{os.getpid()}"
        tmp = self.dir / f"{name}.tmp.npz"
        # not "S32": it drops trailing NULs
        digests = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), 32)
        np.savez(tmp, keys=digests, vectors=np.asarray(vectors, np.float32))
        os.replace(tmp, self.dir / f"{name}.npz")

    def clear(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


@dataclass
class Encoded:
    """A build's vectors per document, the documents whose chunks could not be encoded (with why), and counts."""

    vectors: dict[str, np.ndarray]
    broken: dict[str, str]
    embedded: int
    resumed: int
    encode_s: float


def encode_chunks(texts_of: dict[str, list[str]], sizes: dict[str, list[int]], embedder: Any, batch_size: int,
                  checkpoint: EmbeddingCheckpoint, progress: Callable[[str, int, int], None]) -> Encoded:
    """Encode every document's texts (``texts_of``: what is embedded, header included), shortest chunks first by
    ``sizes`` (least padding), taking what the checkpoint holds and saving each step to it."""
    flat = [(source_id, i, size) for source_id, lengths in sizes.items() for i, size in enumerate(lengths)]
    order = sorted(range(len(flat)), key=lambda k: flat[k][2])
    vectors_of = {source_id: np.zeros((len(texts), embedder.dimension), np.float32)
                  for source_id, texts in texts_of.items()}
    # what an interrupted build already embedded is taken from its checkpoint, not encoded again
    saved = checkpoint.load()
    resumed = 0
    if saved:
        remaining = []
        for k in order:
            sid, i, _ = flat[k]
            vector = saved.get(checkpoint.key(texts_of[sid][i]))
            if vector is None:
                remaining.append(k)
            else:
                vectors_of[sid][i] = vector
                resumed += 1
        order = remaining
        del saved
    broken: dict[str, str] = {}
    to_embed, embedded, encode_s = len(flat), 0, 0.0
    step = max(batch_size * 16, 16)
    progress("embed", resumed, to_embed)
    for first in range(0, len(order), step):
        block = [flat[k] for k in order[first:first + step]]
        texts = [texts_of[sid][i] for sid, i, _ in block]
        e0 = time.perf_counter()
        try:
            vectors = embedder.encode(texts, batch_size=batch_size)
        except Exception:
            vectors = None
        if vectors is None:  # find the chunks that fail; their documents are reported, the rest go on
            vectors = np.zeros((len(block), embedder.dimension), np.float32)
            for j, (sid, i, _) in enumerate(block):
                try:
                    vectors[j] = embedder.encode([texts_of[sid][i]], batch_size=1)[0]
                except Exception as exc:
                    broken.setdefault(sid, f"embedding failed: {exc}")
        encode_s += time.perf_counter() - e0
        for j, (sid, i, _) in enumerate(block):
            vectors_of[sid][i] = vectors[j]
        good = [j for j, (sid, _, _) in enumerate(block) if sid not in broken]
        try:
            checkpoint.save([checkpoint.key(texts[j]) for j in good], vectors[good])
        except OSError:  # a full disk costs resumability, not the build
            pass
        embedded += len(block)
        progress("embed", resumed + embedded, to_embed)
    return Encoded(vectors_of, broken, embedded, resumed, encode_s)
