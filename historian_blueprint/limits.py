"""Work limits that hold: a deadline a run checks between its steps, and a cap on how many runs one user may have
going at once (so that one user's ten maps cannot starve everyone else's questions).

``Deadline`` is checked by the graphs before each node (ask/progress.py) and by the verifier between claims;
past it, a run stops, ends ``human_review`` with what it had done, and is stored like any other (never
``verified``). A node that asks a model runs its calls ``within`` the run's deadline: each call ends by it
(llm/client.py). ``Slots`` counts a user's running asks, maps and checks in the store, so every worker process of
a server sees the same count; a held slot's expiry is pushed forward while its holder keeps it, so it never
expires under a live run, and a slot a crashed process never gave back expires with the run's time limit.
"""

from __future__ import annotations

import logging
import math
import threading
import time
import uuid
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

GRACE_S = 5.0  # a slot outlives its run's time limit by this much before it counts as abandoned

log = logging.getLogger(__name__)


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

    def left(self) -> float:
        """Seconds until the deadline (0 once it has passed)."""
        return max(0.0, self.at - time.monotonic())

    def check(self, before: str) -> None:
        """Raise TimeLimit when the deadline has passed (``before``: the step that would run next)."""
        if self.passed():
            raise TimeLimit(self.seconds, before)


_CURRENT: ContextVar[Deadline | None] = ContextVar("historian_run_deadline", default=None)


@contextmanager
def within(deadline: Deadline | None) -> Iterator[None]:
    """Make ``deadline`` the one the calls of this block must end by (``current_deadline``); a node wraps its
    role's calls in it. Set and reset in the block's own thread: never across a ``yield`` of a generator."""
    token = _CURRENT.set(deadline)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current_deadline() -> Deadline | None:
    """The deadline of the run this code is part of (``within``), if any."""
    return _CURRENT.get()


class Busy(Exception):
    """A user already has as many runs going as allowed; ``retry_after``: seconds until one must have ended."""

    def __init__(self, running: int, retry_after: int) -> None:
        super().__init__(f"you already have {running} runs going (HISTORIAN_LIMITS_MAX_RUNNING_PER_USER); "
                         f"try again when one has finished")
        self.running, self.retry_after = running, retry_after


class Token(str):
    """A taken slot's id. Its slot is renewed while the holder keeps this object: one dropped without being given
    back (a stream that was never started, say) stops being renewed and expires like a crashed process's."""


_renewing: dict[str, threading.Event] = {}  # slot id -> set when it is given back
_renewing_guard = threading.Lock()


class Slots:
    """A user's running asks, maps and checks, kept in the store's ``<prefix>active`` collection.

    A slot expires ``timeout_s + grace_s`` after it was taken or last renewed; a thread of the process that took
    it renews it every quarter of that while it is held, so a live run keeps its slot however long it runs, and a
    crashed process's slots expire."""

    def __init__(self, store: Any, per_user: int, timeout_s: float, grace_s: float = GRACE_S) -> None:
        self.store, self.per_user, self.timeout_s, self.grace_s = store, per_user, timeout_s, grace_s

    @property
    def lifetime(self) -> float:
        """Seconds a slot lives without a renewal."""
        return self.timeout_s + self.grace_s

    @contextmanager
    def hold(self, user_id: Any, kind: str) -> Iterator[None]:
        """Take one of the user's slots for the block (Busy when all are taken), give it back after."""
        token = self.take(user_id, kind)
        try:
            yield
        finally:
            self.give_back(token)

    def take(self, user_id: Any, kind: str) -> Token:
        """Insert this run's slot, then count the user's others: at the limit already, take it back and raise Busy.
        Inserting first keeps the count safe where the write lock is a no-op (a MongoDB server): two racing
        requests both see both slots, and neither stays past the limit (both may be refused: a 429, never one slot
        too many). The count does not trust clocks: a slot stamped earlier than one already granted is no reason
        to keep both."""
        active = self.store.collection("active")
        with self.store.write_lock():
            now = time.time()
            key = f"{now:017.6f}-{uuid.uuid4().hex}"
            active.delete_many({"$or": [{"expires": {"$lt": now}},  # a slot without an expiry: an older version's
                                        {"expires": {"$exists": False}, "started": {"$lt": now - self.lifetime}}]})
            active.insert_one({"_id": key, "user_id": user_id, "kind": kind, "started": now,
                               "expires": now + self.lifetime})
            others = [r for r in active.find({"user_id": user_id}, {"started": 1}) if r["_id"] != key]
            if len(others) >= self.per_user:
                active.delete_one({"_id": key})
                started = [r["started"] for r in others]
                raise Busy(len(started), max(1, math.ceil(min(started, default=now) + self.timeout_s - now)))
        token = Token(key)
        self._renew(key, weakref.ref(token))
        return token

    def give_back(self, token: str) -> None:
        key = str(token)
        with _renewing_guard:
            stop = _renewing.pop(key, None)
        if stop is not None:
            stop.set()
        self.store.collection("active").delete_one({"_id": key})

    def _renew(self, key: str, holder: weakref.ref[Token]) -> None:
        """Push the slot's expiry forward every quarter of its lifetime until it is given back or its holder
        drops it (a thread per held slot: a run holds one, and the thread ends with it)."""
        stop = threading.Event()
        with _renewing_guard:
            _renewing[key] = stop
        active, every = self.store.collection("active"), self.lifetime / 4

        def keep() -> None:
            while not stop.wait(every):
                if holder() is None:
                    break
                try:
                    active.update_one({"_id": key}, {"$set": {"expires": time.time() + self.lifetime}})
                except Exception as exc:  # noqa: BLE001 - the next renewal tries again, well before the expiry
                    log.warning("could not renew run slot %s: %s", key, type(exc).__name__)
            with _renewing_guard:
                _renewing.pop(key, None)

        threading.Thread(target=keep, name=f"historian-slot-{key[-8:]}", daemon=True).start()
