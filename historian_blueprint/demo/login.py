"""The demo's login safety: where ``next`` may lead, and the throttle on failed logins."""

from __future__ import annotations

import functools
import json
import math
import secrets
import time
import unicodedata
from typing import Any
from urllib.parse import urlsplit

from werkzeug.security import check_password_hash, generate_password_hash

NONCE = "demo_session_nonce"  # the session key holding the user's current nonce (a logout draws a new one)
_PRUNED_AT = [0.0]


def _now() -> float:
    return time.time()  # one place to read the clock (the tests move it)


def _sleep(seconds: float) -> None:
    time.sleep(seconds)  # the name-wide slow-down waits here (the tests record it instead)


@functools.cache
def dummy_password_hash() -> str:
    """A hash of a random password, made once per process with the same function and parameters as the users'
    (``generate_password_hash``'s defaults, as ``ensure_users`` makes them): a login for an unknown name is
    checked against it, so it costs what a wrong password for a real name costs and the answer's timing does
    not tell which names exist."""
    return generate_password_hash(secrets.token_urlsafe(16))


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
    """Failed logins per (user name, client address), per address and per name, kept in the store (every worker
    process sees them) for ``window_s`` seconds:

    - an address with ``per_address`` failures is refused, whatever the name;
    - an address with ``per_pair`` failures on a name is refused for that name (other names still get in);
    - a name's failures from all addresses together never refuse anyone: from ``slow_after`` of them on, every
      attempt on the name waits ``slow_base_s * 2 ** (failures - slow_after)`` seconds, at most ``slow_cap_s``,
      before its password is checked (right or wrong, known name or not: the wait tells nothing).

    So an address that has not failed on a name is never refused it: guesses from elsewhere cannot lock the owner
    out. An attempt is recorded, under the store's write lock, before the password is checked, so parallel guesses
    all count; a successful login takes its own attempt back and clears the (name, its address) failures only,
    never the failures other addresses made on the name (they keep counting for their addresses and the
    slow-down)."""

    def __init__(self, collection: Any, lock: Any, per_pair: int, per_address: int, window_s: float, *,
                 slow_after: int | None = None, slow_base_s: float = 0.25, slow_cap_s: float = 4.0) -> None:
        self.collection = collection
        self.lock = lock
        self.per_pair, self.per_address = per_pair, per_address
        self.window_s = window_s
        self.slow_after = per_pair if slow_after is None else slow_after
        self.slow_base_s, self.slow_cap_s = slow_base_s, slow_cap_s
        self.keep = max(per_pair, per_address, self.slow_after + 8) + 1  # enough of a name's to reach the cap
        dummy_password_hash()  # made before the first password check, whether its name is known or not

    def _recent(self, key: str, now: float) -> list[float]:
        record = self.collection.find_one({"_id": key}) or {}
        return sorted(t for t in record.get("attempts", []) if t > now - self.window_s)

    def _wait(self, recent: list[float], limit: int, now: float) -> str:
        frees_at = recent[len(recent) - limit] + self.window_s  # when one fewer than the limit remain
        minutes = max(1, math.ceil((frees_at - now) / 60))
        return f"Try again in {minutes} minute{'s' if minutes > 1 else ''}."

    def _keys(self, name: str, address: str) -> tuple[str, str, str]:
        return f"user:{name}", f"address:{address}", "pair:" + json.dumps([name, address])

    def delay(self, name_failures: int) -> float:
        """The slow-down before checking a password for a name with ``name_failures`` recent failures."""
        if name_failures < self.slow_after:
            return 0.0
        return min(self.slow_cap_s, self.slow_base_s * 2.0 ** min(name_failures - self.slow_after, 32))

    def attempt(self, name: str, address: str) -> tuple[str | None, float]:
        """(why the login is refused, or None; the attempt's time, for ``succeeded``). An attempt let through
        first waits out the name's slow-down (outside the lock)."""
        now = _now()
        user_key, address_key, pair_key = self._keys(name, address)
        with self.lock:
            if now - _PRUNED_AT[0] > 60:  # names nobody has (a guesser's inventions) do not pile up
                _PRUNED_AT[0] = now
                self.collection.delete_many({"expires": {"$lt": now}})
            recent = {key: self._recent(key, now) for key in (user_key, address_key, pair_key)}
            by_address, by_pair = recent[address_key], recent[pair_key]
            if len(by_address) >= self.per_address:
                return f"Too many failed logins from your address. {self._wait(by_address, self.per_address, now)}", now
            if len(by_pair) >= self.per_pair:
                return f"Too many failed logins for this user. {self._wait(by_pair, self.per_pair, now)}", now
            wait = self.delay(len(recent[user_key]))
            for key, attempts in recent.items():
                kept = [*attempts, now][-self.keep:]
                record = {"_id": key, "attempts": kept, "expires": now + self.window_s}
                self.collection.replace_one({"_id": key}, record, upsert=True)
        if wait:
            _sleep(wait)
        return None, now

    @staticmethod
    def password_matches(record: dict | None, password: str) -> bool:
        """Whether ``password`` is the user's; for an unknown name (``record`` None) the password is checked
        against ``dummy_password_hash()`` anyway and the answer is False, so both cost the same."""
        matches = check_password_hash(record["password_hash"] if record else dummy_password_hash(), password)
        return matches and record is not None

    def succeeded(self, name: str, address: str, at: float) -> None:
        user_key, address_key, pair_key = self._keys(name, address)
        with self.lock:
            self.collection.delete_one({"_id": pair_key})
            for key in (user_key, address_key):
                self.collection.update_one({"_id": key}, {"$pull": {"attempts": at}})
