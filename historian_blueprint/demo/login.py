"""The demo's login safety: where ``next`` may lead, and the throttle on failed logins."""

from __future__ import annotations

import functools
import json
import math
import secrets
import time
import unicodedata
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from werkzeug.security import check_password_hash, generate_password_hash

NONCE = "demo_session_nonce"  # the session key holding the user's current nonce (a logout draws a new one)
_PRUNED_AT = [0.0]


def _now() -> float:
    return time.time()  # one place to read the clock (the tests move it)


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


class Verdict(NamedTuple):
    """What ``LoginThrottle.attempt`` decided: why the login is refused (None: check the password), the seconds to
    wait before trying again (``Retry-After``, with a refusal), the attempt's time (for ``succeeded``) and, with a
    refusal for the name's slow-down, the turn the caller holds (to hand back on its next attempt)."""

    refused: str | None
    retry_after: int
    at: float
    turn: float | None = None


class LoginThrottle:
    """Failed logins per (user name, client address), per address and per name, kept in the store (every worker
    process sees them) for ``window_s`` seconds:

    - an address with ``per_address`` failures is refused, whatever the name;
    - an address with ``per_pair`` failures on a name is refused for that name (other names still get in);
    - a name's failures from all addresses together slow it down: from ``slow_after`` of them on, each attempt
      whose password is checked sets the name's "not before" time ``slow_base_s * 2 ** (failures - slow_after)``
      seconds on (at most ``slow_cap_s``), and an attempt that comes earlier is refused at once, its password not
      checked (right or wrong, known name or not: the refusal tells nothing), with the seconds to wait.

    The wait is the caller's, not a server thread's, and a refusal writes nothing (a flood of them does not grow
    the store). A refusal for the name's time gives the caller a turn at that time (the demo keeps it in the signed
    session, with the name and address): coming back with it from that address, when that address has no recent
    failure of its own on the name, the attempt is checked even if guesses from elsewhere have pushed the name's time
    on since. A turn is good for one checked attempt (the pair's failures record its use), and gives a guessing
    address nothing. So an address that has not failed on a name waits at most one slow-down step for it and is then
    let in: guesses from elsewhere cannot lock the owner out.

    An attempt is recorded, under the store's write lock, before the password is checked, so parallel guesses all
    count; the name's time moves by a conditional update (or ``$max``), so workers without a shared lock (a real
    MongoDB) do not both take one turn. A successful login takes its own attempt back and clears the (name, its
    address) failures only, never the failures other addresses made on the name (they keep counting for their
    addresses and the slow-down)."""

    SESSION_KEY = "demo_login_turn"  # where the demo keeps a caller's turn: [name, address, time]

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

    def _recent(self, record: dict, now: float) -> list[float]:
        return sorted(t for t in record.get("attempts", []) if t > now - self.window_s)

    def _limited(self, why: str, recent: list[float], limit: int, now: float) -> Verdict:
        frees_at = recent[len(recent) - limit] + self.window_s  # when one fewer than the limit remain
        seconds = max(1, math.ceil(frees_at - now))
        minutes = max(1, math.ceil(seconds / 60))
        return Verdict(f"{why} Try again in {minutes} minute{'s' if minutes > 1 else ''}.", seconds, now)

    @staticmethod
    def _keys(name: str, address: str) -> tuple[str, str, str]:
        """The store keys of a name's, an address's and the pair's records."""
        return f"user:{name}", f"address:{address}", "pair:" + json.dumps([name, address])

    def delay(self, name_failures: int) -> float:
        """The slow-down step after an attempt that brings a name to ``name_failures`` recent failures."""
        if name_failures < self.slow_after:
            return 0.0
        return min(self.slow_cap_s, self.slow_base_s * 2.0 ** min(name_failures - self.slow_after, 32))

    def attempt(self, name: str, address: str, turn: float | None = None) -> Verdict:
        """Refuse the attempt, or record it (it counts as a failure until ``succeeded`` takes it back) and let its
        password be checked; never waits. ``turn``: the one this (name, address) was given by an earlier refusal."""
        now = _now()
        user_key, address_key, pair_key = self._keys(name, address)
        with self.lock:
            if now - _PRUNED_AT[0] > 60:  # names nobody has (a guesser's inventions) do not pile up
                _PRUNED_AT[0] = now
                self.collection.delete_many({"expires": {"$lt": now}})
            records = {key: self.collection.find_one({"_id": key}) or {} for key in (user_key, address_key, pair_key)}
            recent = {key: self._recent(record, now) for key, record in records.items()}
            if len(recent[address_key]) >= self.per_address:
                return self._limited("Too many failed logins from your address.", recent[address_key],
                                     self.per_address, now)
            if len(recent[pair_key]) >= self.per_pair:
                return self._limited("Too many failed logins for this user.", recent[pair_key], self.per_pair, now)
            not_before = records[user_key].get("not_before")
            step = self.delay(len(recent[user_key]) + 1)  # this attempt counted: the wait it sets for the next
            # a turn is honoured only for an address with no recent failure on the name (the owner arriving): a
            # guessing address has failures of its own, so turns give it no checked guess beyond the name's pace
            if turn is not None and turn <= now < turn + self.window_s and not recent[pair_key]:
                if step:  # the caller's turn, not used yet: checked, and the name's time moves on from it
                    self.collection.update_one({"_id": user_key}, {"$max": {"not_before": now + step}}, upsert=True)
            elif now < (not_before or 0.0):
                return self._defer(not_before, turn, now)
            elif step and not self._claim(user_key, not_before, now + step):  # another worker took this turn
                return self._defer((self.collection.find_one({"_id": user_key}) or {}).get("not_before") or now,
                                   turn, now)
            for key, attempts in recent.items():
                self.collection.update_one({"_id": key}, {"$set": {"attempts": [*attempts, now][-self.keep:],
                                                                   "expires": now + self.window_s}}, upsert=True)
        return Verdict(None, 0, now)

    def _claim(self, user_key: str, seen: float | None, until: float) -> bool:
        """Move the name's not-before time to ``until`` if it is still ``seen`` (a filter on the old value: of two
        workers that read the same time, one moves it)."""
        if seen is None:  # the name's first step: at worst two workers both pass, once
            self.collection.update_one({"_id": user_key}, {"$max": {"not_before": until}}, upsert=True)
            return True
        moved = self.collection.update_one({"_id": user_key, "not_before": seen}, {"$set": {"not_before": until}})
        return moved.matched_count == 1

    @staticmethod
    def _defer(not_before: float, turn: float | None, now: float) -> Verdict:
        """Refuse an attempt before the name's time: the caller keeps a turn still to come, or gets that time."""
        turn = min(turn, not_before) if turn is not None and turn > now else not_before
        seconds = max(1, math.ceil(turn - now))
        return Verdict(f"Too many failed sign-ins for this name; try again in {seconds} s.", seconds, now, turn)

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
