"""Query latency (p50/p95, warm) and process memory, on the sample corpus and at scale (~90,000 chunks)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from historian_blueprint.services import get_settings, get_store
from historian_lab.bench.common import (
    SAMPLE_CORPUS, ensure_documents, ensure_index, percentile, read_jsonl, rss_mb, workspace,
)
from historian_blueprint.index import service


def queries(data: Path, n: int) -> list[str]:
    """Real questions: the historian QA set, then TimeQA, up to n."""
    out = [q["question"] for q in read_jsonl(data / "eval" / "historian_qa_dev.jsonl")]
    for q in read_jsonl(data / "eval" / "timeqa_dev_qa.jsonl"):
        if len(out) >= n:
            break
        out.append(q["question"])
    return out[:n]


def measure(app: Any, texts: list[str], warmup: int = 10) -> dict[str, Any]:
    with app.app_context():
        for text in texts[:warmup]:
            service.retrieve(text, rerank_k=get_settings(app).retrieval_rerank_k)
        latencies = []
        for text in texts:
            t0 = time.perf_counter()
            service.retrieve(text, rerank_k=get_settings(app).retrieval_rerank_k)
            latencies.append((time.perf_counter() - t0) * 1000)
        loaded = service.get_index()
        return {
            "chunks": len(loaded),
            "index_type": loaded.manifest["index_type"],
            "queries": len(latencies),
            "p50_ms": round(percentile(latencies, 50), 1),
            "p95_ms": round(percentile(latencies, 95), 1),
            "max_ms": round(max(latencies), 1),
            "rss_mb": round(rss_mb(), 1),
        }


def run_sample(root: Path, data: Path, n: int) -> dict[str, Any]:
    app = workspace(root, "sample")
    ensure_documents(app, sorted(SAMPLE_CORPUS.glob("*.jsonl")))
    ensure_index(app)
    return measure(app, queries(data, n))


def run_scale(root: Path, data: Path, n: int) -> dict[str, Any]:
    """The scale corpus; its index is built once (long) and kept in ``root/scale``."""
    app = workspace(root, "scale")
    ensure_documents(app, [data / "scale" / "chronam_1916_01_all.jsonl.gz"])
    job = ensure_index(app)
    with app.app_context():
        first_build = get_store().jobs.find_one({"kind": "reindex", "noop": False, "state": {"$regex": "^succeeded"}},
                                                sort=[("finished_at", 1)])
    result = measure(app, queries(data, n))
    result["index_build_s"] = round(first_build["timings"]["total_s"], 1) if first_build else None
    result["index_build_chunks_per_s"] = (
        round(first_build["counts"]["chunks"] / first_build["timings"]["total_s"], 1) if first_build else None
    )
    result["reindex_now_s"] = round(job["timings"]["total_s"], 2)
    return result


def run_scale_in_child(root: Path, data: Path, n: int) -> dict[str, Any]:
    """Run the scale measurement in a fresh process, so its RSS is its own."""
    import json
    import subprocess
    import sys

    code = (
        "import json, sys; from pathlib import Path; from historian_lab.bench.query import run_scale; "
        "print(json.dumps(run_scale(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]))))"
    )
    done = subprocess.run([sys.executable, "-c", code, str(root), str(data), str(n)], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])
