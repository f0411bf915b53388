"""Benchmark workspaces: isolated Historian apps whose stores and indexes persist between runs."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from flask import Flask

from historian_blueprint.services import get_store, setup
from historian_blueprint.corpus.loader import load_corpus
from historian_blueprint.index import service
from historian_blueprint.resources import resource_path

SAMPLE_CORPUS = resource_path("demo", "corpus")  # the product's sample corpus


def default_data_dir() -> Path:
    """``../shared/data`` next to the checkout (or the working directory), where the labeled sets live."""
    for base in (Path.cwd(), Path(__file__).resolve().parents[2]):
        candidate = base.parent / "shared" / "data"
        if candidate.is_dir():
            return candidate
    return Path.cwd().parent / "shared" / "data"


def workspace(root: Path, name: str, **config: Any) -> Flask:
    """Return a bare app with Historian's state and storage (no pages, no commands) whose data lives in
    ``root/name`` (kept between runs)."""
    root = Path(root).resolve()
    app = Flask(f"bench_{name}", instance_path=str(root / name / "instance"))
    app.config.update(
        SECRET_KEY="bench", HISTORIAN_AUTO_MIGRATE=True, HISTORIAN_LOGIN_REQUIRED=False,
        HISTORIAN_DATA_DIR=str(root / name), **config,
    )
    setup(app)
    return app


def ensure_documents(app: Flask, paths: list[Path]) -> dict[str, int]:
    """Upsert the documents of these files (a no-op when they are already loaded)."""
    with app.app_context():
        report = load_corpus(get_store(), paths)
        if report.errors:
            raise RuntimeError("; ".join(report.errors[:3]))
        return {"inserted": report.inserted, "updated": report.updated, "unchanged": report.unchanged}


def ensure_index(app: Flask, full: bool = False) -> dict[str, Any]:
    """Bring the workspace's index up to date; return the job record."""
    with app.app_context():
        job_id = service.start_reindex(full=full, background=False, user="bench")
        service.run_claimed(job_id)
        job = service.find_job(job_id)
    if job["state"] not in ("succeeded", "succeeded_with_errors"):
        raise RuntimeError(f"reindex failed: {job.get('message')}")
    return job


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def rss_mb() -> float:
    """Current resident set size of this process in MB (peak if /proc is unavailable)."""
    try:
        with open(f"/proc/{os.getpid()}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource  # Unix only; imported where it is needed

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    k = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


def sample_app(root: Path) -> tuple[Any, dict[str, str]]:
    """The sample corpus's workspace under ``root``, loaded and indexed, and its documents' texts by id (to find
    gold quotes in)."""
    from historian_blueprint.services import get_store

    app = workspace(root, "sample")
    ensure_documents(app, sorted(SAMPLE_CORPUS.glob("*.jsonl")))
    ensure_index(app)
    with app.app_context():
        texts = {doc.id: doc.text for doc in get_store().iter_documents()}
    return app, texts
