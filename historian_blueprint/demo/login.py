"""The demo's login safety: where ``next`` may lead, and the throttle on failed logins."""

from __future__ import annotations

import json
import math
import time
import unicodedata
from typing import Any
from urllib.parse import urlsplit

NONCE = "demo_session_nonce"  # the session key holding the user's current nonce (a logout draws a new one)
_PRUNED_AT = [0.0]


def _now() -> float:
    return time.time()  # one place to read the clock (the tests move it)


def safe_next(target: str | None) -> str | None:
    """Return ``target`` when it is a path on this site, else None. Refused: anything with a control or
    space-like character (browsers drop tabs and newlines, so ``/\\t/evil.example`` becomes
    ``//evil.example``), backslashes (read as slashes), ``//host`` and any scheme or host."""
    if not target or len(target) > 2000 or not target.startswith("/") or target.startswith("//"):
        return None
    if "\\" in target or any(unicodedata.category(ch)[0] in "CZ" for ch in target):
        return None
    parts = urlsplit(target)
    return target if not parts.scheme and not parts.netloc else None


class LoginThrottle:
    """Login attempts per client address, per user name, and per (name, address), kept in the store (every
    worker process sees them) for ``window_s`` seconds:

    - an address with ``per_address`` failures is refused, whatever the name;
    - a name with ``per_user`` failures is refused from every address that has failed on it, while a correct
      password from an address without a failure on that name still gets in: guessing from elsewhere
      cannot lock the owner out, and each new address gets one guess per window at most.

    An attempt is recorded, under the store's write lock, before the password is checked, so parallel
    guesses all count; a successful login takes its attempt back and clears the name's failures."""

    def __init__(self, collection: Any, lock: Any, per_user: int, per_address: int, window_s: float) -> None:
        self.collection = collection
        self.lock = lock
        self.per_user, self.per_address = per_user, per_address
        self.window_s = window_s
        self.keep = max(per_user, per_address) + 1

    def _recent(self, key: str, now: float) -> list[float]:
        record = self.collection.find_one({"_id": key}) or {}
        return sorted(t for t in record.get("attempts", []) if t > now - self.window_s)

    def _wait(self, recent: list[float], limit: int, now: float) -> str:
        frees_at = recent[len(recent) - limit] + self.window_s  # when one fewer than the limit remain
        minutes = max(1, math.ceil((frees_at - now) / 60))
        return f"Try again in {minutes} minute{'s' if minutes > 1 else ''}."

    def _keys(self, name: str, address: str) -> tuple[str, str, str]:
        return f"user:{name}", f"address:{address}", "pair:" + json.dumps([name, address])

    def attempt(self, name: str, address: str) -> tuple[str | None, float]:
        """(why the login is refused, or None; the attempt's time, for ``succeeded``)."""
        now = _now()
        user_key, address_key, pair_key = self._keys(name, address)
        with self.lock:
            if now - _PRUNED_AT[0] > 60:  # names nobody has (a guesser's inventions) do not pile up
                _PRUNED_AT[0] = now
                self.collection.delete_many({"expires": {"$lt": now}})
            recent = {key: self._recent(key, now) for key in (user_key, address_key, pair_key)}
            by_address, by_user = recent[address_key], recent[user_key]
            if len(by_address) >= self.per_address:
                return f"Too many failed logins from your address. {self._wait(by_address, self.per_address, now)}", now
            if len(by_user) >= self.per_user and recent[pair_key]:
                return f"Too many failed logins for this user. {self._wait(by_user, self.per_user, now)}", now
            for key, attempts in recent.items():
                kept = [*attempts, now][-self.keep:]
                self.collection.replace_one({"_id": key}, {"_id": key, "attempts": kept, "expires": now + self.window_s},
                                            upsert=True)
        return None, now

    def succeeded(self, name: str, address: str, at: float) -> None:
        user_key, address_key, pair_key = self._keys(name, address)
        with self.lock:
            self.collection.delete_many({"_id": {"$in": [user_key, pair_key]}})
            self.collection.update_one({"_id": address_key}, {"$pull": {"attempts": at}})
