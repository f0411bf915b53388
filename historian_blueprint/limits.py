"""Work limits that hold: a deadline a run checks between its steps, and a cap on how many runs one user may have
going at once (so that one user's ten maps cannot starve everyone else's questions).

``Deadline`` is checked by the graphs before each node (graph/progress.py) and by the verifier between claims;
past it, a run stops, ends ``human_review`` with what it had done, and is stored like any other (never
``verified``). ``Slots`` counts a user's running asks, maps and checks in the store, so every worker process of
a server sees the same count; a slot a crashed process never gave back expires with the run's time limit.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

GRACE_S = 5.0  # a slot outlives its run's time limit by this much before it counts as abandoned


class TimeLimit(Exception):
    """A run reached its time limit (HISTORIAN_LIMITS_TIMEOUT_S) before the step named ``at``."""

    def __init__(self, seconds: float, at: str) -> None:
        super().__init__(f"the run reached its time limit of {seconds:g} s (HISTORIAN_LIMITS_TIMEOUT_S) before its "
                         f"{at} step; nothing here is verified: ask again, or ask something narrower")
        self.seconds, self.at = seconds, at


class Deadline:
    """A point in time ``seconds`` from now (monotonic clock)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = float(seconds)
        self.at = time.monotonic() + self.seconds

    def passed(self) -> bool:
        return time.monotonic() >= self.at

    def check(self, before: str) -> None:
        """Raise TimeLimit when the deadline has passed (``before``: the step that would run next)."""
        if self.passed():
            raise TimeLimit(self.seconds, before)


class Busy(Exception):
    """A user already has as many runs going as allowed; ``retry_after``: seconds until one must have ended."""

    def __init__(self, running: int, retry_after: int) -> None:
        super().__init__(f"you already have {running} runs going (HISTORIAN_LIMITS_MAX_RUNNING_PER_USER); "
                         f"try again when one has finished")
        self.running, self.retry_after = running, retry_after


class Slots:
    """A user's running asks, maps and checks, kept in the store's ``<prefix>active`` collection."""

    def __init__(self, store: Any, per_user: int, timeout_s: float) -> None:
        self.store, self.per_user, self.timeout_s = store, per_user, timeout_s

    @contextmanager
    def hold(self, user_id: Any, kind: str) -> Iterator[None]:
        """Take one of the user's slots for the block (Busy when all are taken), give it back after."""
        token = self.take(user_id, kind)
        try:
            yield
        finally:
            self.give_back(token)

    def take(self, user_id: Any, kind: str) -> str:
        """Insert this run's slot, then count the user's: over the limit, take it back and raise Busy. Inserting
        first keeps the count exact where the write lock is a no-op (a MongoDB server): two racing requests
        both see both slots, and at most one of them, never both, may stay."""
        active = self.store.collection("active")
        now = time.time()
        token = f"{now:017.6f}-{uuid.uuid4().hex}"  # ordered by when it was taken: the earliest slots stay
        with self.store.write_lock():
            active.delete_many({"started": {"$lt": now - self.timeout_s - GRACE_S}})
            active.insert_one({"_id": token, "user_id": user_id, "kind": kind, "started": now})
            held = sorted(active.find({"user_id": user_id}, {"started": 1}), key=lambda r: r["_id"])
            if token not in [r["_id"] for r in held[: self.per_user]]:
                active.delete_one({"_id": token})
                started = [r["started"] for r in held if r["_id"] != token]
                raise Busy(len(started), max(1, math.ceil(min(started, default=now) + self.timeout_s - now)))
        return token

    def give_back(self, token: str) -> None:
        self.store.collection("active").delete_one({"_id": token})
