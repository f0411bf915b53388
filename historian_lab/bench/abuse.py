"""One user pressing the server as hard as the API lets them while another asks: do the limits hold?

The demo is served by a child ``historian serve`` on 127.0.0.1 (bench/load.py's DemoServer) with
``HISTORIAN_LIMITS_TIMEOUT_S`` set to ``deadline``. The heavy user sends, at once: the longest draft allowed
(HISTORIAN_LIMITS_MAX_DRAFT_CHARS; more claims than one check reads: a 413), a draft of as many claims as one
check reads, and ``maps`` maps in parallel, each retried after its Retry-After while the bench runs. Meanwhile a
second user asks one question after another. Printed: the second user's ask latencies (p50/p95: the target is
p95 under 2 s), every heavy request's outcome and how long the server held it (none may run past the deadline
plus 1 s: its run's own time on the server, from its start to its end, which bounds its CPU; the client's wait,
queueing included, is printed beside it), and the stored runs cut off by the time limit, none ``verified``.

Then a login storm (``login_storm``): 36 guessers send wrong passwords for the bench user's name, each from a fresh
loopback address, while the same user loads the runs page: printed, that page's p50/p95 (target p95 under 0.5 s)
and how many guesses the throttle refused at once (429) against how many had their password checked (401).
"""

from __future__ import annotations

import http.client
import ipaddress
import itertools
import json
import os
import re
import socket
import threading
import time
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlencode, urlsplit

from historian_blueprint import history
from historian_lab.bench.common import SAMPLE_CORPUS, percentile, read_jsonl
from historian_lab.bench.load import QUESTIONS, DemoServer, Session

TOPICS = ("the panic of 1893", "the Pullman strike", "silver coinage", "the tariff", "the Chinese exclusion act",
          "the Alaska purchase", "the civil service", "the public debt", "the Indian treaties", "the railroads")


def _post(session: Session, path: str, body: dict[str, Any], timeout: float = 300) -> tuple[int, dict[str, Any], dict]:
    request = urllib.request.Request(
        f"{session.base}{session.prefix}{path}", data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json", "X-CSRFToken": session.token})
    try:
        with session.opener.open(request, timeout=timeout) as reply:
            return reply.status, json.loads(reply.read()), dict(reply.headers)
    except urllib.error.HTTPError as exc:
        try:
            body = json.loads(exc.read())
        except ValueError:
            body = {}
        return exc.code, body, dict(exc.headers)


def drafts(max_chars: int, max_claims: int) -> tuple[str, str]:
    """The longest draft allowed (sentences of the sample corpus up to ``max_chars``) and one of as many claims
    as one check reads (``max_claims``, as the checker splits them), each checked against the whole collection."""
    from historian_blueprint.text.claims import split_claims

    sentences = []
    for path in sorted(SAMPLE_CORPUS.glob("*.jsonl")):
        for doc in read_jsonl(path):
            text = " ".join(str(doc.get("content") or "").split())
            sentences += [s.strip() + "." for s in text.split(". ") if 60 <= len(s) <= 240 and s[:1].isupper()]
    longest, total = [], 0
    for s in sentences:
        if total + len(s) + 1 > max_chars:
            break
        longest.append(s)
        total += len(s) + 1
    most: list[str] = []
    for s in sentences:
        if len(split_claims(" ".join([*most, s]))) > max_claims or len(" ".join([*most, s])) > max_chars:
            break
        most.append(s)
    return " ".join(longest), " ".join(most)


STORM_ADDRESSES = ipaddress.IPv4Address("127.16.0.1")  # the guessers' first source address (Linux: all of 127/8)


STORM_KEYS = r"127\.(1[6-9]|2[0-9]|3[01])\.[0-9]+\.[0-9]+"  # a throttle record key naming a storm address


def storm_address(k: int) -> str:
    """The ``k``-th guess's source address: a loopback address of its own, so the server sees a new client."""
    return str(STORM_ADDRESSES + k)


def storm_addresses_work() -> bool:
    """Whether connections can come from ``storm_address``es (Linux routes all of 127.0.0.0/8 to loopback)."""
    try:
        with socket.socket() as s:
            s.bind((storm_address(0), 0))
        return True
    except OSError:
        return False


def login_storm(base: str, reader: Session, name: str, *, seconds: float, guessers: int = 36,
                page: str = "/runs") -> dict[str, Any]:
    """``guessers`` threads send wrong passwords for ``name`` as fast as they are answered, each guess from a fresh
    address (``storm_address``), for ``seconds``, while ``reader`` loads ``page`` one request after another. The
    reader's latencies, and the guesses refused at once (429) against those whose password was checked (401)."""
    parts = urlsplit(base)
    stop = time.time() + seconds
    numbers, lock = itertools.count(), threading.Lock()
    outcomes: dict[str, int] = {}
    reads: list[tuple[float, int]] = []

    def tally(outcome: str) -> None:
        with lock:
            outcomes[outcome] = outcomes.get(outcome, 0) + 1

    def guesser() -> None:
        first = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        first.request("GET", "/login")
        reply = first.getresponse()
        cookie = (reply.getheader("Set-Cookie") or "").split(";")[0]
        token = re.search(r'name="csrf_token" value="([^"]+)"', reply.read().decode()).group(1)
        first.close()
        form = urlencode({"username": name, "password": "not-the-password", "csrf_token": token})
        while time.time() < stop:
            with lock:
                address = storm_address(next(numbers))
            connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30,
                                                    source_address=(address, 0))
            try:
                connection.request("POST", "/login", body=form, headers={
                    "Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie})
                reply = connection.getresponse()
                reply.read()
                tally(str(reply.status))
            except OSError as exc:
                tally(type(exc).__name__)
            finally:
                connection.close()

    def read() -> None:
        while time.time() < stop:
            t0 = time.time()
            try:
                with reader.opener.open(f"{reader.base}{reader.prefix}{page}", timeout=60) as reply:
                    reply.read()
                    status = reply.status
            except urllib.error.HTTPError as exc:
                status = exc.code
            except OSError:  # a refused or timed-out connection: a failed read
                status = 0
            reads.append((time.time() - t0, status))

    threads = [threading.Thread(target=guesser) for _ in range(guessers)] + [threading.Thread(target=read)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    latencies = [s * 1000 for s, status in reads if status == 200]
    return {
        "seconds": seconds, "guessers": guessers, "page": f"{reader.prefix}{page}",
        "reader": {"requests": len(reads), "ok": len(latencies), "p50_ms": round(percentile(latencies, 50), 1),
                   "p95_ms": round(percentile(latencies, 95), 1), "max_ms": round(max(latencies, default=0.0), 1),
                   "target_p95_ms": 500},
        "guesses": {"sent": sum(outcomes.values()), "refused_429": outcomes.get("429", 0),
                    "checked_401": outcomes.get("401", 0),
                    "other": {k: v for k, v in outcomes.items() if k not in ("401", "429")}},
        "addresses": next(numbers),
    }


class Heavy:
    """What the heavy user's requests came to."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []

    def add(self, **outcome: Any) -> None:
        with self.lock:
            self.requests.append(outcome)


def run(*, store: Any, deadline: float, maps: int, duration: float, workers: int, threads: int) -> dict[str, Any]:
    from werkzeug.security import generate_password_hash

    from historian_blueprint.services import get_settings

    settings = get_settings()
    longest, most_claims = drafts(settings.limits_max_draft_chars, settings.limits_max_claims)
    os.environ["HISTORIAN_LIMITS_TIMEOUT_S"] = str(deadline)  # the served child reads it
    heavy = Heavy()
    asks: list[tuple[float, int]] = []
    storm: dict[str, Any] = {}
    with DemoServer(store, workers=workers, threads=threads) as server:
        second, password = f"{server.name}-2", server.password
        with store.write_lock():
            store.database["users"].insert_one({"_id": second, "role": "researcher",
                                                "password_hash": generate_password_hash(password)})
        try:
            presser, asker = Session(server.base, server.name, password), Session(server.base, second, password)
            _post(asker, "/api/ask", {"question": QUESTIONS[0]})  # models load before the clock starts
            stop = time.time() + duration

            def verify(text: str, what: str) -> None:
                t0 = time.time()
                status, body, headers = _post(presser, "/api/verify", {"text": text})
                heavy.add(what=what, status=status, seconds=round(time.time() - t0, 2),
                          server_s=round(float(body.get("latency_ms") or 0) / 1000, 2),
                          outcome=body.get("status") or (body.get("error") or {}).get("code"),
                          stopped="Historian stopped" in json.dumps(body.get("judge") or {}))

            def mapper(k: int) -> None:
                while time.time() < stop:
                    t0 = time.time()
                    status, body, headers = _post(presser, "/api/map", {"topic": TOPICS[k % len(TOPICS)]})
                    heavy.add(what="map", status=status, seconds=round(time.time() - t0, 2),
                              server_s=round(float(((body.get("metadata") or {}).get("latency_ms") or {})
                                                   .get("total") or 0) / 1000, 2),
                              outcome=(body.get("error") or {}).get("code") or "mapped",
                              stopped=bool((body.get("metadata") or {}).get("time_limit")))
                    if status == 429:
                        time.sleep(min(float(headers.get("Retry-After", 1)), max(0.0, stop - time.time())))

            def second_user() -> None:
                n = 0
                while time.time() < stop:
                    t0 = time.time()
                    status, body, _ = _post(asker, "/api/ask", {"question": QUESTIONS[n % len(QUESTIONS)]})
                    asks.append((time.time() - t0, status))
                    n += 1

            pressing = [threading.Thread(target=verify, args=(longest, "longest draft")),
                        threading.Thread(target=verify, args=(most_claims, "draft of the most claims"))]
            pressing += [threading.Thread(target=mapper, args=(k,)) for k in range(maps)]
            asking = threading.Thread(target=second_user)
            for t in [*pressing, asking]:
                t.start()
            for t in [*pressing, asking]:
                t.join()
            if storm_addresses_work():  # the second user reads the runs page while guessers press the first's name
                storm = login_storm(server.base, asker, server.name, seconds=min(duration, 10))
            else:
                storm = {"skipped": "connections cannot come from 127.16.0.0/12 here (Linux routes all of 127/8)"}
        finally:
            cut, stored = _clean_up(store, server.name, second)
    return _summary(heavy, asks, storm, cut, stored, deadline, maps, duration)


def _clean_up(store: Any, heavy_user: str, second: str) -> tuple[list[dict[str, Any]], int]:
    """Remove what the run left in the store (the guessers' records, the second user and its runs); return the heavy
    user's runs cut off by the time limit and how many runs it stored."""
    with store.write_lock():  # the guessers' address and pair records (the name's goes with the server):
        # every key holding a storm address (127.16.0.0/12), whatever the throttle's key format around it
        store.database["login_failures"].delete_many({"_id": {"$regex": STORM_KEYS}})
    cut = list(store.runs.find({"user_id": heavy_user, "output.metadata.time_limit": {"$exists": True}},
                               {"output.status": 1}))
    cut += list(store.runs.find({"user_id": heavy_user, "output.verification.time_limit": {"$exists": True}},
                                {"output.status": 1}))
    stored = store.runs.count_documents({"user_id": heavy_user})
    for run in list(store.runs.find({"user_id": second}, {"kind": 1, "user_id": 1, "history_bucket": 1})):
        history.delete_run(store, run)
    with store.write_lock():
        store.database["users"].delete_one({"_id": second})
    return cut, stored


def _summary(heavy: Heavy, asks: list[tuple[float, int]], storm: dict[str, Any], cut: list[dict[str, Any]],
             stored: int, deadline: float, maps: int, duration: float) -> dict[str, Any]:
    """The figures of one abuse run."""
    served = [r for r in heavy.requests if r["status"] == 200]
    latencies = [s * 1000 for s, status in asks if status == 200]
    cut_reported = sum(1 for r in served if r["stopped"])
    return {
        "deadline_s": deadline, "maps_in_parallel": maps, "duration_s": duration,
        "second_user": {"asks": len(asks), "ok": len(latencies), "errors": len(asks) - len(latencies),
                        "p50_ms": round(percentile(latencies, 50), 1), "p95_ms": round(percentile(latencies, 95), 1),
                        "target_p95_ms": 2000},
        "heavy_user": {
            "requests": len(heavy.requests), "served": len(served),
            "refused_429": sum(1 for r in heavy.requests if r["status"] == 429),
            "other": sorted({f"{r['what']}: {r['status']} {r['outcome']}" for r in heavy.requests
                             if r["status"] not in (200, 429)}),
            "drafts": [r for r in heavy.requests if r["what"] != "map"],
            "longest_served_s": max((r["seconds"] for r in served), default=0.0),  # as the client waited
            "longest_run_s": max((r["server_s"] for r in served), default=0.0),  # the run itself, on the server
            "past_deadline_plus_1s": sum(1 for r in served if r["server_s"] > deadline + 1),
            "cut_off_reported": cut_reported,
        },
        "login_storm": storm,
        "stored": {"heavy_user_runs": stored, "cut_off_runs": len(cut),
                   "cut_off_verified": sum(1 for r in cut if (r.get("output") or {}).get("status") == "verified")},
    }
