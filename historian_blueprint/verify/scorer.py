"""The support scorer: a small cross-encoder (MiniLM-L6, int8 ONNX, shipped in ``verify/model/``) that reads
an evidence window and a claim and gives a logit for "the window carries the claim".

It is trained by ``historian train-checker`` (``checker/train.py``) and loaded offline; ONNX Runtime runs it
on the CPU. ``score`` takes many pairs at once and batches them by length.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

MODEL_DIR = Path(__file__).resolve().parent / "model"
MODEL_FILE = "model.onnx"
MAX_TOKENS = 192       # evidence is cut first, the claim only when it alone is longer
_BATCH_TOKENS = 2048   # pairs per ONNX run are capped so that batch * longest stays near this


class ScorerUnavailable(RuntimeError):
    """The model files are missing or cannot be loaded (``historian train-checker`` writes them)."""


def load_tokenizer(path: Path, max_len: int = MAX_TOKENS) -> Any:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path))
    tok.no_padding()
    tok.enable_truncation(max_length=max_len, strategy="longest_first")
    return tok


def encode(tokenizer: Any, evidence: Sequence[str], claims: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Token ids, attention mask and token types of (evidence, claim) pairs, padded to the longest."""
    encoded = tokenizer.encode_batch(list(zip(evidence, claims)))
    width = max(len(e.ids) for e in encoded)
    ids = np.zeros((len(encoded), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    types = np.zeros_like(ids)
    for row, e in enumerate(encoded):
        n = len(e.ids)
        ids[row, :n], mask[row, :n], types[row, :n] = e.ids, e.attention_mask, e.type_ids
    return ids, mask, types


class SupportScorer:
    """Logits of (evidence, claim) pairs; thread-safe (one ONNX Runtime session, whose run is)."""

    def __init__(self, directory: Path = MODEL_DIR) -> None:
        model = directory / MODEL_FILE
        if not model.exists():
            raise ScorerUnavailable(f"no support model at {model}: run `historian train-checker`")
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = min(2, os.cpu_count() or 1)
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        meta_file = directory / "meta.json"
        self.meta = json.loads(meta_file.read_text(encoding="utf-8")) if meta_file.exists() else {}
        self.tokenizer = load_tokenizer(directory / "tokenizer.json", int(self.meta.get("max_tokens", MAX_TOKENS)))

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """One logit per (evidence, claim) pair, in order."""
        if not pairs:
            return []
        lengths = [len(e) + len(c) for e, c in pairs]
        order = sorted(range(len(pairs)), key=lengths.__getitem__)
        out = [0.0] * len(pairs)
        i = 0
        while i < len(order):
            j = i + 1
            while j < len(order) and (j - i + 1) * min(MAX_TOKENS, lengths[order[j]] // 3 + 8) <= _BATCH_TOKENS:
                j += 1
            chunk = order[i:j]
            ids, mask, types = encode(self.tokenizer, [pairs[k][0] for k in chunk], [pairs[k][1] for k in chunk])
            logits = self.session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
            for k, value in zip(chunk, np.asarray(logits).reshape(-1)):
                out[k] = float(value) if np.isfinite(value) else -10.0  # a broken reading never supports
            i = j
        return out


_loaded: dict[str, SupportScorer | ScorerUnavailable] = {}
_load_lock = threading.Lock()


def default_scorer() -> SupportScorer:
    """The shipped scorer, loaded once per process; a failure to load is remembered and raised as
    ScorerUnavailable every time (the verifier then fails safe: claims are not verified)."""
    with _load_lock:
        if "model" not in _loaded:
            try:
                _loaded["model"] = SupportScorer(MODEL_DIR)
            except ScorerUnavailable as exc:
                _loaded["model"] = exc
            except Exception as exc:  # noqa: BLE001 - a corrupt file, a missing runtime: the same for the verifier
                _loaded["model"] = ScorerUnavailable(f"the support model at {MODEL_DIR} cannot be loaded: {type(exc).__name__}: {exc}")
        found = _loaded["model"]
    if isinstance(found, ScorerUnavailable):
        raise found
    return found


def forget_loaded() -> None:
    """Load the model files again on next use (after ``historian train-checker`` wrote new ones)."""
    with _load_lock:
        _loaded.clear()
