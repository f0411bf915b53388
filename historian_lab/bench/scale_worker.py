"""One serving worker of `historian bench scale` (run as ``python -m historian_lab.bench.scale_worker``): loads the
built index as a worker would; worker 0 times retrieval and whole asks, then worker 1 serves the same questions (so
that both touch the same pages of the mapped files, as two workers serving one site do); each one's memory is read
while both are alive (RSS, PSS, private, anonymous: the heap no other process can share); then worker 0 measures
the served index's recall@10 against an exact scan of every vector. Prints one JSON object."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from historian_lab.bench.common import percentile, workspace


def memory() -> dict[str, float]:
    """This process's RSS, PSS and private memory in MB (``/proc/self/smaps_rollup``)."""
    fields: dict[str, float] = {}
    with open("/proc/self/smaps_rollup", encoding="ascii") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 3 and parts[0].endswith(":"):
                fields[parts[0][:-1]] = int(parts[1]) / 1024
    private = fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0)
    return {"rss_mb": round(fields.get("Rss", 0), 1), "pss_mb": round(fields.get("Pss", 0), 1),
            "private_mb": round(private, 1), "anonymous_mb": round(fields.get("Anonymous", 0), 1)}


def exact_top(vectors: np.ndarray, query: np.ndarray, k: int, block: int = 262_144) -> np.ndarray:
    """The k rows of highest inner product, by a scan of every vector."""
    best_rows, best_scores = np.zeros(0, np.int64), np.zeros(0, np.float32)
    for start in range(0, len(vectors), block):
        scores = np.asarray(vectors[start:start + block] @ query, dtype=np.float32)
        top = np.argpartition(-scores, min(k, len(scores)) - 1)[:k]
        best_rows = np.concatenate([best_rows, top + start])
        best_scores = np.concatenate([best_scores, scores[top]])
    order = np.argsort(-best_scores)[:k]
    return best_rows[order]


def as_request(app: Any, ask: Any, question: str) -> None:
    """Ask as a request does: in a new thread (the threaded server's), with its own app context (its own store)."""
    failed: list[BaseException] = []

    def run() -> None:
        try:
            with app.app_context():
                ask(question)
        except BaseException as exc:  # noqa: BLE001 - raised in the caller
            failed.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if failed:
        raise failed[0]


def asks_of_other(barrier: Path) -> int:
    """How many asks worker 0 timed (it leaves ``asks-N`` beside the questions)."""
    found = [int(p.name[5:]) for p in barrier.glob("asks-*") if p.name[5:].isdigit()]
    return found[0] if found else 0


def serve(root: Path, name: str, encoder: str, barrier: Path, number: int, asks: int) -> dict[str, Any]:
    from historian_blueprint import preload
    from historian_blueprint.ask.run import ask
    from historian_blueprint.index import service
    from historian_blueprint.services import get_settings

    questions = json.loads((barrier / "questions.json").read_text())
    app = workspace(root, name, HISTORIAN_INDEX_ENCODER=encoder)
    out: dict[str, Any] = {}
    t0 = time.perf_counter()
    # what `historian serve` loads before its workers fork (the index, the encoders, spaCy, the lexicons); this process
    # stands for such a worker, so the figures hold what a forked worker holds (its freeze of the heap changes nothing)
    preload(app)
    with app.app_context():
        loaded = service.get_index()
        model = service.embedder(app)
        out["load_s"] = round(time.perf_counter() - t0, 2)
        out["index_type"] = loaded.manifest.get("index_type")
        k = get_settings(app).retrieval_rerank_k
        warm = questions[:5] if number else questions[:10]
        for q in warm:
            service.retrieve(q, rerank_k=k)
        if number == 0:
            latencies = []
            for q in questions:
                t0 = time.perf_counter()
                service.retrieve(q, rerank_k=k)
                latencies.append((time.perf_counter() - t0) * 1000)
            out["retrieval_p50_ms"] = round(percentile(latencies, 50), 1)
            out["retrieval_p95_ms"] = round(percentile(latencies, 95), 1)
            as_request(app, ask, questions[0])  # warm the graph
            latencies = []
            for q in questions[1:asks + 1]:
                t0 = time.perf_counter()
                as_request(app, ask, q)
                latencies.append((time.perf_counter() - t0) * 1000)
            out["asks"] = len(latencies)
            out["ask_p50_ms"] = round(percentile(latencies, 50), 1) if latencies else None
            out["ask_p95_ms"] = round(percentile(latencies, 95), 1) if latencies else None
    deadline = time.monotonic() + 3600
    if number == 1:  # the same load as worker 0, after its timing: both touch the same pages of the mapped files
        while not (barrier / "timed-0").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        with app.app_context():
            for q in questions:
                service.retrieve(q, rerank_k=k)
        for q in questions[:asks_of_other(barrier) + 1]:
            as_request(app, ask, q)
    else:
        (barrier / f"asks-{asks}").touch()
        (barrier / "timed-0").touch()
    (barrier / f"ready-{number}").touch()
    while not all((barrier / f"ready-{n}").exists() for n in range(2)) and time.monotonic() < deadline:
        time.sleep(0.2)
    out.update(memory())
    (barrier / f"measured-{number}").touch()
    while not all((barrier / f"measured-{n}").exists() for n in range(2)) and time.monotonic() < deadline:
        time.sleep(0.2)
    if number == 0:  # after memory is read: the exact scan reads every vector
        with app.app_context():
            overlap = []
            for q in questions:
                vector = model.encode([q])[0]
                served = set(loaded.dense_top(vector, 10, None).tolist())
                overlap.append(len(served & set(exact_top(loaded.vectors, vector, 10).tolist())) / 10)
            out["recall_at_10"] = round(float(np.mean(overlap)), 4)
    return out


if __name__ == "__main__":
    root, name, encoder, barrier, number, asks = sys.argv[1:7]
    print(json.dumps(serve(Path(root), name, encoder, Path(barrier), int(number), int(asks))))
