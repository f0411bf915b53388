"""The cost-against-size picture of `historian bench scale --plot PNG` (matplotlib, no display)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def draw(rows: list[dict[str, Any]], path: Path) -> None:
    """Four panels against chunks (log-log): build and incremental build seconds, ask and retrieval p95, memory per
    worker, index size on disk; a dotted line is linear growth from the smallest size."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    chunks = [r["chunks"] for r in rows]
    panels = [
        ("build (s)", [("full build", "build_s"), ("1% incremental", "incremental_s")]),
        ("p95 latency (ms)", [("whole ask", "ask_p95_ms"), ("retrieval", "retrieval_p95_ms")]),
        ("memory per worker (MB)", [("RSS", "rss_mb"), ("PSS (two workers)", "pss_mb")]),
        ("index on disk (MB)", [("generation", "disk_mb")]),
    ]
    figure, axes = plt.subplots(2, 2, figsize=(10, 7.5))
    for axis, (title, series) in zip(axes.flat, panels):
        for label, key in series:
            values = [r.get(key) for r in rows]
            if any(v is None for v in values):
                continue
            axis.plot(chunks, values, marker="o", label=label)
            axis.plot(chunks, [values[0] * c / chunks[0] for c in chunks], linestyle=":", color="grey")
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("chunks")
        axis.set_title(title)
        axis.legend(fontsize=8)
    figure.suptitle("Historian: cost against collection size (dotted: linear from the smallest)")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=90)
    plt.close(figure)
