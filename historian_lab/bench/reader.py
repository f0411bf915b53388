"""Speed of the reader model: (evidence window, claim) pairs per second on this machine, as the verifier builds
them (windows of the sample corpus around sentences used as claims), and one claim's three windows."""

from __future__ import annotations

import os
import random
import time
from typing import Any

from historian_lab.bench.common import SAMPLE_CORPUS, percentile, read_jsonl
from historian_blueprint.verify.evidence import sentences_of
from historian_blueprint.verify.reader import READER_DIR, Reader
from historian_blueprint.verify.windows import windows


def pairs_from_corpus(n: int, seed: int = 7) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    docs = [d["content"] for path in sorted(SAMPLE_CORPUS.glob("*.jsonl")) for d in read_jsonl(path)]
    out = []
    while len(out) < n:
        text = rng.choice(docs)
        spans = sentences_of(text)
        if not spans:
            continue
        start, end, _ = rng.choice(spans)
        claim = " ".join(text[start:end].split())[:300]
        for w in windows(claim, text, [(start, end)], limit=3):
            out.append((w.text, claim))
    return out[:n]


def run(n: int = 512, rounds: int = 3) -> dict[str, Any]:
    if n < 1:
        raise ValueError("--pairs must be at least 1")
    reader = Reader(READER_DIR)  # its own: the process's cache would time the cache
    pairs = pairs_from_corpus(n)
    reader.nli(pairs[:32])  # warm
    rates, per_claim = [], []
    for _ in range(rounds):
        reader._cache.clear()
        t0 = time.perf_counter()
        reader.nli(pairs)
        rates.append(len(pairs) / (time.perf_counter() - t0))
    reader._cache.clear()
    for i in range(0, min(len(pairs), 300), 3):  # one claim's three windows at a time, as the verifier asks
        t0 = time.perf_counter()
        reader.nli(pairs[i:i + 3])
        per_claim.append((time.perf_counter() - t0) * 1000)
    tokens = [len(e.ids) for e in reader.tokenizer.encode_batch(pairs[:200])]
    return {
        "pairs": len(pairs),
        "cpu_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "pairs_per_s": {"best": round(max(rates), 1), "median": round(sorted(rates)[len(rates) // 2], 1)},
        "three_windows_ms": {"p50": round(percentile(per_claim, 50), 1), "p95": round(percentile(per_claim, 95), 1)},
        "mean_tokens": round(sum(tokens) / len(tokens), 1),
        "model_mb": round((READER_DIR / "model.onnx").stat().st_size / 2**20, 1), "target_pairs_per_s": 100,
    }
