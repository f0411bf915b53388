"""How fast the index's encoder (all-MiniLM-L6-v2, mean-pooled, normalized, 256 tokens) runs on this machine's CPU
and, where there is one, its GPU, and how far the GPU's vectors are from the CPU's (issue 43: a lead for encoding that
uses what the host has; the product does not yet encode on CUDA).

    python lab/encoder_speed.py --base MODEL_DIR --texts FILE.jsonl.gz [--n 20000]

Texts: the distinct passages (``a``) of 300 characters or more of a reader training file, as stand-ins for chunks.
Prints one JSON object. Imports nothing from the product (it runs on a lent machine without its dependencies).
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from pathlib import Path


def passages(path: Path, n: int) -> list[str]:
    seen: dict[str, None] = {}
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            text = json.loads(line)["a"]
            if len(text) >= 300:  # chunk-like passages, not one-line premises
                seen.setdefault(text, None)
            if len(seen) >= n:
                break
    return list(seen)


def encode(model, tokenizer, texts: list[str], device: str, dtype, batch: int):  # noqa: ANN001, ANN201 - torch's
    import torch

    out = []
    with torch.inference_mode():
        for start in range(0, len(texts), batch):
            t = tokenizer(texts[start:start + batch], padding=True, truncation=True, max_length=256,
                          return_tensors="pt")
            t = {k: v.to(device) for k, v in t.items()}
            with torch.autocast(device.split(":")[0], dtype=dtype, enabled=dtype is not None):
                hidden = model(**t).last_hidden_state
            weights = t["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1)
            out.append(torch.nn.functional.normalize(pooled.float(), dim=-1).cpu())
    return torch.cat(out)


def main() -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, required=True)
    parser.add_argument("--texts", type=Path, required=True)
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--cpu-n", type=int, default=300)
    args = parser.parse_args()
    texts = passages(args.texts, args.n)
    tokenizer = AutoTokenizer.from_pretrained(str(args.base))
    model = AutoModel.from_pretrained(str(args.base)).float().eval()
    report: dict = {"texts": len(texts), "torch": torch.__version__, "cpu_threads": torch.get_num_threads()}
    start = time.time()
    reference = encode(model, tokenizer, texts[:args.cpu_n], "cpu", None, 32)
    report["cpu_fp32_chunks_per_s"] = round(args.cpu_n / (time.time() - start), 1)
    if torch.cuda.is_available():
        report["gpu"] = torch.cuda.get_device_name()
        model = model.to("cuda")
        for name, dtype, batch in (("fp32", None, 256), ("bf16", torch.bfloat16, 256), ("fp16", torch.float16, 256)):
            encode(model, tokenizer, texts[:1024], "cuda", dtype, batch)  # warm-up
            torch.cuda.synchronize()
            start = time.time()
            vectors = encode(model, tokenizer, texts, "cuda", dtype, batch)
            torch.cuda.synchronize()
            cosine = (vectors[:args.cpu_n] * reference).sum(-1)
            report[f"cuda_{name}"] = {"chunks_per_s": round(len(texts) / (time.time() - start), 1),
                                      "cosine_to_cpu_min": round(float(cosine.min()), 5),
                                      "cosine_to_cpu_mean": round(float(cosine.mean()), 6)}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
