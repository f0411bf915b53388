"""Each user's history of runs, newest first, read in a few keyed lookups however long it grows.

Runs are large (the output, the trace), and the embedded store answers a query by decoding every document
its hash indexes cannot rule out: listing a user's 10,000 runs that way took seconds. So every run also gets
a small summary (question or topic, time, status, confidence, thread, rounds) in a bucket of ``BUCKET``
summaries, in ``<prefix>history``: one counter document per user and kind (the next sequence number and the
live count of each bucket) and one document per bucket. A page reads the counter, then at most a few buckets
by ``_id``. Every change is one atomic update (``$inc``, ``$push``, ``$pull``), so concurrent writers on a real
MongoDB, where the write lock is a no-op, keep the counts exact; the embedded store also takes its lock.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from typing import Any

from pymongo import ReturnDocument

from historian_blueprint.store import Store

BUCKET = 100
PER_PAGE = 50


def _key(user_id: Any, kind: str) -> str:
    """The counter's id: JSON, so no user name (``x:0``, ``~``) can meet another key."""
    return json.dumps([kind, user_id])


def _bucket_id(key: str, n: int) -> str:
    return f"{key}#{n}"


def summary(run: Mapping[str, Any]) -> dict[str, Any]:
    """The fields a history list shows, shaped like the stored run (so templates read either)."""
    output = run.get("output") or {}
    return {
        "_id": run["_id"], "question": run.get("question"), "topic": run.get("topic"),
        "created_at": run.get("created_at"), "thread_id": run.get("thread_id"),
        "output": {"status": output.get("status"), "confidence": output.get("confidence"),
                   "standing": run.get("standing"),  # the answer's standing in words, as its page says it
                   "metadata": {"rounds": (output.get("metadata") or {}).get("rounds"),
                                "refusal": (output.get("metadata") or {}).get("refusal")}},
    }


REPAIR_AFTER_S = 120.0  # a journal entry this old belongs to a writer that died (a live one is done in milliseconds)


def record_run(store: Store, run: dict[str, Any]) -> None:
    """Store a run and file its summary: both or neither, whatever stops the process between the writes.

    The writes are journaled: an entry naming the run and its bucket is written first and removed last, so a
    process killed in between leaves the entry, and ``repair`` (run at start-up) finishes the filing or, when
    the run itself was never stored, drops it."""
    history = store.collection("history")
    journal = store.collection("history_journal")
    key = _key(run.get("user_id"), run["kind"])
    with store.write_lock():
        counter = history.find_one_and_update({"_id": key}, {"$inc": {"next": 1}}, upsert=True,
                                               return_document=ReturnDocument.AFTER)
        bucket = (counter["next"] - 1) // BUCKET
        run["history_bucket"] = bucket
        journal.insert_one({"_id": run["_id"], "key": key, "bucket": bucket, "at": time.time()})
        store.runs.insert_one(run)
        history.update_one({"_id": _bucket_id(key, bucket)}, {"$push": {"items": summary(run)}}, upsert=True)
        history.update_one({"_id": key}, {"$inc": {f"counts.{bucket}": 1}})
        journal.delete_one({"_id": run["_id"]})


def repair(store: Store, older_than_s: float | None = None) -> int:
    """Finish what writers that died left half done: a stored run gets its summary and its bucket's count made
    exact; a run never stored leaves nothing. Returns how many entries were settled. With the embedded store
    every entry is a dead writer's (a live one holds the lock this takes); on a MongoDB server, where writers
    take no lock, only entries older than ``older_than_s`` (default REPAIR_AFTER_S) are."""
    history = store.collection("history")
    journal = store.collection("history_journal")
    if older_than_s is None:
        older_than_s = 0.0 if store.serializes_writes else REPAIR_AFTER_S
    settled = 0
    with store.write_lock():
        for found in list(journal.find({"at": {"$lte": time.time() - older_than_s}}, {"_id": 1})):
            entry = journal.find_one_and_delete({"_id": found["_id"]})  # claimed: a second repairer skips it
            if entry is None:
                continue
            key, bucket = entry["key"], int(entry["bucket"])
            run = store.runs.find_one({"_id": entry["_id"]})
            if run is not None:
                history.update_one({"_id": _bucket_id(key, bucket), "items._id": {"$ne": run["_id"]}},
                                   {"$push": {"items": summary(run)}})
                history.update_one({"_id": _bucket_id(key, bucket)}, {"$setOnInsert": {"items": [summary(run)]}},
                                   upsert=True)
                items = (history.find_one({"_id": _bucket_id(key, bucket)}) or {}).get("items", [])
                history.update_one({"_id": key}, {"$set": {f"counts.{bucket}": len(items)}}, upsert=True)
            settled += 1
    return settled


def delete_run(store: Store, run: Mapping[str, Any]) -> None:
    """Delete a stored run and its summary."""
    history = store.collection("history")
    with store.write_lock():
        store.runs.delete_one({"_id": run["_id"]})
        bucket = run.get("history_bucket")
        if bucket is None:
            return
        key = _key(run.get("user_id"), run["kind"])
        pulled = history.update_one({"_id": _bucket_id(key, bucket)}, {"$pull": {"items": {"_id": run["_id"]}}})
        if pulled.modified_count:
            history.update_one({"_id": key}, {"$inc": {f"counts.{bucket}": -1}})


def _counts(counter: Mapping[str, Any]) -> list[int]:
    by_bucket = {int(n): max(0, int(c)) for n, c in (counter.get("counts") or {}).items()}
    return [by_bucket.get(n, 0) for n in range(max(by_bucket, default=-1) + 1)]


def _buckets(store: Store, key: str, numbers: list[int]) -> dict[int, list[dict[str, Any]]]:
    found = store.collection("history").find({"_id": {"$in": [_bucket_id(key, n) for n in numbers]}})
    return {int(doc["_id"].rsplit("#", 1)[1]): doc.get("items", []) for doc in found}


def page(store: Store, user_id: Any, kind: str, number: int = 1, per_page: int = PER_PAGE,
         query: str = "") -> tuple[list[dict[str, Any]], int]:
    """One page of a user's runs of one kind, newest first, and how many there are (``query``: only those
    whose question or topic holds it, case-insensitive)."""
    key = _key(user_id, kind)
    counter = store.collection("history").find_one({"_id": key})
    if not counter:
        return [], 0
    counts = _counts(counter)
    if query:
        pattern = re.compile(re.escape(query), re.I)
        everything = _buckets(store, key, [n for n, c in enumerate(counts) if c])
        matching = [item for n in sorted(everything, reverse=True) for item in reversed(everything[n])
                    if pattern.search(item.get("question") or item.get("topic") or "")]
        start = (number - 1) * per_page
        return matching[start:start + per_page], len(matching)
    total = sum(counts)
    skip, wanted, needed = (number - 1) * per_page, [], per_page
    for n in range(len(counts) - 1, -1, -1):  # newest bucket first
        if needed <= 0:
            break
        if skip >= counts[n]:
            skip -= counts[n]
            continue
        wanted.append((n, skip))
        needed -= counts[n] - skip
        skip = 0
    found = _buckets(store, key, [n for n, _ in wanted])
    items = [item for n, skip_here in wanted for item in list(reversed(found.get(n, [])))[skip_here:]]
    return items[:per_page], total


def rebuild(store: Store) -> int:
    """File every stored run's summary anew, oldest first (the migration that creates the history): grouped
    in memory and written a bucket at a time, so a store of many runs migrates in seconds."""
    with store.write_lock():
        history = store.collection("history")
        history.delete_many({})
        fields = {"question": 1, "topic": 1, "created_at": 1, "thread_id": 1, "kind": 1, "user_id": 1,
                  "output.status": 1, "output.confidence": 1, "output.metadata.rounds": 1,
                  "output.metadata.refusal": 1, "standing": 1}
        runs = sorted(store.runs.find({}, fields), key=lambda r: (r.get("created_at") or 0, r["_id"]))
        lists: dict[str, list[dict[str, Any]]] = {}
        for run in runs:
            lists.setdefault(_key(run.get("user_id"), run.get("kind", "ask")), []).append(run)
        for key, own in lists.items():
            buckets = [own[i:i + BUCKET] for i in range(0, len(own), BUCKET)]
            history.insert_many([{"_id": _bucket_id(key, n), "items": [summary(r) for r in bucket]}
                                 for n, bucket in enumerate(buckets)])
            history.insert_one({"_id": key, "next": len(own),
                                "counts": {str(n): len(b) for n, b in enumerate(buckets)}})
            for n, bucket in enumerate(buckets):
                store.runs.update_many({"_id": {"$in": [r["_id"] for r in bucket]}}, {"$set": {"history_bucket": n}})
    return len(runs)
