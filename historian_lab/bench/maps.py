"""Warm latency of the knowledge map on the sample corpus, offline: one map per topic, p50/p95 per topic."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from historian_lab.bench.common import SAMPLE_CORPUS, ensure_documents, ensure_index, percentile, workspace

TOPICS = (
    "the repeal of the silver purchase act", "the Spanish-American War", "reconstruction of the southern states",
    "the tariff and the revenue", "the Great Depression and unemployment relief", "the Panama Canal",
    "life under slavery on the plantations", "the European war of 1916", "the public debt",
    "Indian affairs and the reservations",
)


def run(root: Path, data: Path, n: int = 10) -> dict[str, Any]:
    from historian_blueprint.mapping.run import make_map_context, map_topic

    app = workspace(root, "sample")
    ensure_documents(app, sorted(SAMPLE_CORPUS.glob("*.jsonl")))
    ensure_index(app)
    topics = [TOPICS[i % len(TOPICS)] for i in range(n)]
    with app.app_context():
        context = make_map_context()
        map_topic("the Homestead Act", user_id="bench", context=context)  # warm: spaCy, the encoder, the index
        latencies, per_node, sizes = [], {}, []
        for topic in topics:
            t0 = time.perf_counter()
            out = map_topic(topic, user_id="bench", context=context)
            latencies.append((time.perf_counter() - t0) * 1000)
            for step in out["metadata"]["trace"]:
                per_node.setdefault(step["node"], []).append(step["ms"])
            sizes.append({"sources": len(out["sources"]), "entities": len(out["entities"]),
                          "relations": len(out["relations"]), "conflicts": len(out["conflicts"]),
                          "consensus": len(out["consensus"]), "rounds": out["metadata"]["rounds"]})
    return {
        "topics": len(topics),
        "latency_ms": {"p50": round(percentile(latencies, 50), 1), "p95": round(percentile(latencies, 95), 1),
                       "max": round(max(latencies), 1)},
        "per_node_ms_p50": {k: round(percentile(v, 50), 1) for k, v in per_node.items()},
        "mean": {k: round(sum(s[k] for s in sizes) / len(sizes), 1) for k in sizes[0]},
        "target_p95_ms": 10_000,
    }
