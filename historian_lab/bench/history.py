"""History pages at scale: one user with many stored runs, each page timed over the app's own routes.

The runs are realistic in size (an answer of a few kilobytes, a dozen claims, a trace), stored once and kept
in the workspace; the history is built by the migration's ``history.rebuild`` (timed, reported). Each route is
then requested ``repeat`` times in a row through the test client (routing, the store, the template): the
figures are what a served page costs minus the network.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask import Flask

from historian_blueprint import history
from historian_blueprint.services import get_settings, get_store
from historian_lab.bench.common import percentile, workspace

USER = "anonymous"  # who a test client is when login is not required


def _run(n: int) -> dict[str, Any]:
    claims = [{"text": f"Claim {k} of run {n} about the railroads and the tariff.", "verdict": "supported",
               "quote": "The receipts of the railroads fell in the last year. " * 3, "source_id": f"doc-{k}",
               "start": 100 * k, "end": 100 * k + 160} for k in range(12)]
    output = {"status": ("verified", "flagged", "needs_revision")[n % 3], "confidence": round(0.5 + (n % 50) / 100, 2),
              "answer": {"narrative": "The panic of 1893 followed the failure of railroads [1]. " * 40},
              "claims": claims, "metadata": {"run_id": f"bench-{n:05d}", "engine": "embedded"}}
    return {"_id": f"bench-{n:05d}", "kind": "ask", "user_id": USER,
            "question": f"Question {n} on railroads and banks?",
            "created_at": 1_700_000_000 + n, "thread_id": f"bench-{n:05d}", "output": output,
            "trace": [{"node": node, "ms": 1.0, "detail": "x" * 200}
                      for node in ("plan", "retrieve", "compose", "judge")]}


def _fill(app: Flask, runs: int) -> dict[str, float]:
    """Store ``runs`` runs of one user (kept between runs of the bench) and build the history."""
    with app.app_context():
        store = get_store()
        have = store.runs.count_documents({"user_id": USER})
        out = {"stored_s": 0.0}
        if have != runs:
            store.runs.delete_many({})
            t0 = time.perf_counter()
            for start in range(0, runs, 500):
                store.runs.insert_many([_run(n) for n in range(start, min(start + 500, runs))])
            out["stored_s"] = round(time.perf_counter() - t0, 1)
        t0 = time.perf_counter()
        history.rebuild(store)
        out["history_built_s"] = round(time.perf_counter() - t0, 1)
        return out


def run(root: Path, register_pages: Callable[[Flask], None], runs: int = 10_000, repeat: int = 30) -> dict[str, Any]:
    app = workspace(root, "history")
    register_pages(app)
    setup = _fill(app, runs)
    last = max(1, -(-runs // history.PER_PAGE))
    routes = {
        "/historian/runs (page 1)": "/historian/runs",
        f"/historian/runs?page={max(1, last // 2)} (middle)": f"/historian/runs?page={max(1, last // 2)}",
        f"/historian/runs?page={last} (last)": f"/historian/runs?page={last}",
        "/historian/api/runs (page 1)": "/historian/api/runs",
        "/historian/runs?q=question 99 (search)": "/historian/runs?q=question%2099",
    }
    client = app.test_client()
    figures: dict[str, Any] = {}
    for label, path in routes.items():
        first = client.get(path)
        assert first.status_code == 200, (path, first.status_code)
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            response = client.get(path)
            times.append((time.perf_counter() - t0) * 1000)
            assert response.status_code == 200
        figures[label] = {"p50_ms": round(percentile(times, 50), 1), "p95_ms": round(percentile(times, 95), 1),
                          "max_ms": round(max(times), 1)}
    with app.app_context():  # the query the pages made before the history: for comparison, three times
        store, times = get_store(), []
        for _ in range(3):
            t0 = time.perf_counter()
            store.runs.count_documents({"kind": "ask", "user_id": USER})
            list(store.runs.find({"kind": "ask", "user_id": USER}, {"question": 1, "created_at": 1, "output.status": 1})
                 .sort("created_at", -1).limit(50))
            times.append((time.perf_counter() - t0) * 1000)
    page = client.get("/historian/api/runs").get_json()
    return {"runs": runs, "user": USER, "store": "litemongo" if not get_settings(app).mongodb_uri else "mongodb",
            **setup, "repeat": repeat, "pages": figures, "total_on_page_1": page["total"],
            "query_without_history_ms": {"p50": round(percentile(times, 50), 1), "max": round(max(times), 1)},
            "slowest_page_p95_ms": max(f["p95_ms"] for label, f in figures.items() if "search" not in label)}
