"""Reindex jobs: one at a time (an atomic claim), with progress, heartbeats and per-document errors."""

from __future__ import annotations

import os
import socket
import time
import traceback
import uuid
from pathlib import Path
from typing import Any

from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError

from historian_blueprint.index.builder import IndexSettings, ReindexResult, reindex
from historian_blueprint.redaction import redact_text
from historian_blueprint.store import Store

LOCK_ID = "reindex_lock"
STALE_AFTER_S = 120.0
HOST = socket.gethostname()


class ReindexBusy(RuntimeError):
    """Another reindex holds the claim."""

    def __init__(self, job_id: str) -> None:
        super().__init__(f"a reindex is already running (job {job_id})")
        self.job_id = job_id


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _holder_is_dead(lock: dict[str, Any]) -> bool:
    if lock.get("heartbeat_at", 0) < time.time() - STALE_AFTER_S:
        return True
    return lock.get("host") == HOST and not _pid_alive(int(lock.get("pid", 0)))


def claim(store: Store, *, full: bool = False, only: list[str] | None = None, user: str | None = None) -> str:
    """Create a job and take the one-reindex claim for it; raise ReindexBusy if someone holds it."""
    job_id = uuid.uuid4().hex
    now = time.time()
    ours = {"job_id": job_id, "heartbeat_at": now, "pid": os.getpid(), "host": HOST}
    with store.write_lock():
        try:
            store.meta.find_one_and_update(
                {"_id": LOCK_ID, "$or": [{"job_id": None}, {"heartbeat_at": {"$lt": now - STALE_AFTER_S}}]},
                {"$set": ours},
                upsert=True,
            )
        except DuplicateKeyError:
            lock = store.meta.find_one({"_id": LOCK_ID}) or {}
            if not _holder_is_dead(lock):
                raise ReindexBusy(lock.get("job_id", "?")) from None
            taken = store.meta.find_one_and_update(
                {"_id": LOCK_ID, "job_id": lock.get("job_id")}, {"$set": ours}, return_document=ReturnDocument.AFTER
            )
            if not taken or taken.get("job_id") != job_id:
                raise ReindexBusy(lock.get("job_id", "?")) from None
        # We hold the one claim: any other job still marked queued or running lost its process (taken over
        # above, or its claim had gone stale before we came); record that rather than leave it "running".
        store.jobs.update_many(
            {"_id": {"$ne": job_id}, "state": {"$in": ["queued", "running"]}},
            {"$set": {"state": "crashed", "finished_at": now, "message": "the process running it died"}},
        )
        store.jobs.insert_one(
            {
                "_id": job_id, "kind": "reindex", "state": "queued", "full": full, "only": only, "user": user,
                "created_at": now, "started_at": None, "finished_at": None, "heartbeat_at": now,
                "pid": os.getpid(), "host": HOST, "phase": "queued", "progress": {"done": 0, "total": 0},
                "counts": {}, "errors": [], "timings": {}, "generation": None, "message": None,
            }
        )
    return job_id


def release(store: Store, job_id: str) -> None:
    store.meta.update_one({"_id": LOCK_ID, "job_id": job_id}, {"$set": {"job_id": None}})


SYNC_ID = "index_sync"  # historian_meta: {"pending": true} when documents changed while a build held the claim


def run(store: Store, job_id: str, index_dir: Path, settings: IndexSettings, embedder: Any) -> ReindexResult | None:
    """Run a claimed job to the end, recording progress; always release the claim. ``embedder``: the encoder, or
    a function that makes it (made inside, so that a model that cannot load fails the job, not the claim)."""
    job = store.jobs.find_one({"_id": job_id})
    store.jobs.update_one({"_id": job_id}, {"$set": {"state": "running", "started_at": time.time()}})
    last = [0.0]

    def progress(phase: str, done: int, total: int) -> None:
        now = time.time()
        if now - last[0] < 0.5 and done < total:
            return
        last[0] = now
        store.jobs.update_one(
            {"_id": job_id}, {"$set": {"phase": phase, "progress": {"done": done, "total": total}, "heartbeat_at": now}}
        )
        store.meta.update_one({"_id": LOCK_ID, "job_id": job_id}, {"$set": {"heartbeat_at": now}})

    try:
        if job.get("only") is None:  # a whole build reads every document from here on: writes asked until now are in it
            store.meta.update_one({"_id": SYNC_ID}, {"$set": {"pending": False}})
        if callable(embedder) and not hasattr(embedder, "encode"):
            embedder = embedder()
        only = set(job["only"]) if job.get("only") is not None else None
        result = reindex(store, index_dir, settings, embedder=embedder, full=job["full"], only=only, progress=progress)
        state = "succeeded" if not result.errors else "succeeded_with_errors"
        message = "index already up to date" if result.noop else f"generation {result.generation} serving"
        store.jobs.update_one(
            {"_id": job_id},
            {"$set": {
                "state": state, "finished_at": time.time(), "phase": "done", "counts": result.counts,
                "errors": result.errors, "timings": result.timings, "generation": result.generation,
                "noop": result.noop, "message": message, "encoder_check": result.encoder_check,
            }},
        )
        return result
    except Exception as exc:
        store.jobs.update_one(
            {"_id": job_id},
            {"$set": {"state": "failed", "finished_at": time.time(),
                      "message": redact_text(f"{type(exc).__name__}: {exc}"),
                      "traceback": redact_text(traceback.format_exc(limit=8))}},
        )
        raise
    finally:
        release(store, job_id)


def failed_documents(store: Store) -> list[str]:
    """Return the ids that failed in the latest finished reindex."""
    last = store.jobs.find_one(
        {"kind": "reindex", "state": {"$in": ["succeeded", "succeeded_with_errors"]}}, sort=[("finished_at", -1)]
    )
    return sorted({e["source_id"] for e in (last or {}).get("errors", [])})


def recent(store: Store, limit: int = 20) -> list[dict[str, Any]]:
    found = list(store.jobs.find({"kind": "reindex"}, {"traceback": 0}).sort("created_at", -1).limit(limit))
    return [settled(store, job) for job in found]


def settled(store: Store, job: dict[str, Any]) -> dict[str, Any]:
    """The job as it stands: one still marked queued or running whose process is gone (killed: SIGKILL leaves
    no chance to say so) or silent past STALE_AFTER_S is recorded as crashed, as the next claim would record it,
    instead of showing "running" until then."""
    if job.get("state") not in ("queued", "running"):
        return job
    # on this machine the process tells (a cold encoder load sends no heartbeat for minutes); elsewhere the silence
    dead = not _pid_alive(int(job.get("pid", 0))) if job.get("host") == HOST else _holder_is_dead(job)
    if not dead:
        return job
    update = {"state": "crashed", "finished_at": time.time(), "message": "the process running it died"}
    store.jobs.update_one({"_id": job["_id"], "state": job["state"]}, {"$set": update})
    return {**job, **update}
