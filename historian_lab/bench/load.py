"""Load on a served instance: concurrent researchers asking over HTTP, optionally while a full reindex runs in
this process (the documented `historian reindex` beside a running server).

Against the demo (no ``--url``) the bench serves it itself: a child ``historian serve`` on a free port of
127.0.0.1 over the same store and index, a temporary researcher account for the askers (removed at the end,
with its runs). One user first asks every question of the mix ``rounds`` times (models load, caches fill: with
several workers each needs its own turn at each question), then ``warm`` more in a row while the server's CPU time
is read from /proc (the kernel picks the worker that takes each request, so every worker usually, not surely, has
had its turn): on a machine of C cores, C / (CPU seconds per ask) asks per second is the ceiling any number of
users can reach with this mix. Then ``users`` threads, each with its own session, ask for ``duration`` seconds; the
server's CPU per ask under that load is read too, and the throughput reached as a share of the ceiling.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from historian_lab.bench.common import percentile

QUESTIONS = (
    "What did the president say about the transcontinental railroad?",
    "How did the government respond to the panic of 1873?",
    "What was said about the tariff and the revenue?",
    "What did the messages say about land grants to railroads?",
    "How were the Indian tribes treated in the annual messages?",
    "What did the president propose about silver coinage?",
    "What was said about the civil service reform?",
    "What happened to the public debt after the war?",
    "What did the president say about the Interstate Commerce Act?",
    "How did the messages describe the condition of the Treasury?",
    "What was said about the Pacific railroads' debts to the government?",
    "What did the president say about strikes and labor?",
)


class Session:
    """One researcher's browser: a cookie jar, logged in through the host's form, with the API's CSRF token."""

    def __init__(self, base: str, name: str, password: str, prefix: str = "/historian") -> None:
        self.base, self.prefix = base.rstrip("/"), prefix
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
        login_page = self._get("/login")
        form = {"username": name, "password": password}
        token = re.search(r'name="csrf_token" value="([^"]+)"', login_page)
        if token:
            form["csrf_token"] = token.group(1)
        self.opener.open(f"{self.base}/login", data=urlencode(form).encode(), timeout=30).read()
        ask_page = self._get(f"{prefix}/ask")
        found = re.search(r'name="csrf_token" value="([^"]+)"', ask_page)
        if not found:
            raise RuntimeError(f"could not log in to {base} as {name!r} (no ask form after the login)")
        self.token = found.group(1)

    def _get(self, path: str) -> str:
        return self.opener.open(f"{self.base}{path}", timeout=30).read().decode()

    def ask(self, question: str, timeout: float = 120) -> dict[str, Any]:
        request = urllib.request.Request(
            f"{self.base}{self.prefix}/api/ask", data=json.dumps({"question": question}).encode(), method="POST",
            headers={"Content-Type": "application/json", "X-CSRFToken": self.token},
        )
        return json.loads(self.opener.open(request, timeout=timeout).read())


@dataclass
class Ask:
    started: float
    ended: float
    ok: bool
    error: str = ""


@dataclass
class Tally:
    asks: list[Ask] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, ask: Ask) -> None:
        with self.lock:
            self.asks.append(ask)


def _timed_ask(session: Session, question: str) -> Ask:
    t0 = time.time()
    try:
        out = session.ask(question)
        ok = bool(out.get("metadata", {}).get("run_id"))
        return Ask(t0, time.time(), ok, "" if ok else "no run id in the reply")
    except urllib.error.HTTPError as exc:
        return Ask(t0, time.time(), False, f"HTTP {exc.code}: {exc.read()[:200].decode(errors='replace')}")
    except Exception as exc:  # noqa: BLE001 - every failure is a figure
        return Ask(t0, time.time(), False, f"{type(exc).__name__}: {exc}")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (all its threads) and of its worker processes, from /proc."""
    total = 0.0
    for each in [pid, *_children(pid)]:
        try:
            with open(f"/proc/{each}/stat", encoding="ascii") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:  # a worker that exited meanwhile
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (gunicorn's workers)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii") as fh:
                    if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(entry))
            except OSError:
                continue
    return sorted(out)


def memory(pid: int) -> dict[str, Any]:
    """RSS, PSS (resident memory with shared pages divided among their sharers) and USS (the pages only this
    process holds: what it adds) of a server process and of each of its workers, in MB; with workers, the largest
    worker USS as a share of the largest worker RSS (what one more worker costs against what one needs)."""
    def read(each: int) -> dict[str, float]:
        kb: dict[str, int] = {}
        try:
            with open(f"/proc/{each}/smaps_rollup", encoding="ascii") as fh:
                for line in fh:
                    key, _, rest = line.partition(":")
                    if key in ("Rss", "Pss", "Private_Clean", "Private_Dirty"):
                        kb[key] = int(rest.split()[0])
        except OSError:
            return {}
        return {"rss_mb": round(kb.get("Rss", 0) / 1024, 1), "pss_mb": round(kb.get("Pss", 0) / 1024, 1),
                "uss_mb": round((kb.get("Private_Clean", 0) + kb.get("Private_Dirty", 0)) / 1024, 1)}

    workers = [read(w) for w in _children(pid)]
    out: dict[str, Any] = {"server": read(pid), "workers": workers}
    if len(workers) > 1 and any(w.get("rss_mb") for w in workers):  # the largest own memory over the largest whole
        largest_own = max(w.get("uss_mb", 0) for w in workers)
        out["added_worker_share"] = round(largest_own / max(w.get("rss_mb", 0) for w in workers), 3)
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DemoServer:
    """The demo served by a child process on 127.0.0.1, over the same store, with a temporary researcher."""

    def __init__(self, store: Any, workers: int = 1, threads: int = 4) -> None:
        self.store = store
        self.workers, self.threads = workers, threads
        self.name = f"bench-{secrets.token_hex(4)}"
        self.password = secrets.token_urlsafe(16)
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> DemoServer:
        from werkzeug.security import generate_password_hash

        with self.store.write_lock():
            self.store.database["users"].insert_one({"_id": self.name, "role": "researcher",
                                                     "password_hash": generate_password_hash(self.password)})
        script = Path(sys.executable).parent / "historian"
        # the server's log goes to a file: a pipe nobody reads fills after ~600 requests and every request
        # thread then blocks on its log line
        self.log = tempfile.TemporaryFile(mode="w+", encoding="utf-8")
        self.proc = subprocess.Popen([str(script), "serve", "--port", str(self.port), "--workers", str(self.workers),
                                      "--threads", str(self.threads)],
                                     stdout=self.log, stderr=subprocess.STDOUT, text=True)
        try:
            self._wait_until_up()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _wait_until_up(self) -> None:
        deadline = time.time() + 120
        while True:
            try:
                urllib.request.urlopen(f"{self.base}/login", timeout=2).read()
                return
            except OSError:
                if self.proc.poll() is not None:
                    self.log.seek(0)
                    raise RuntimeError(f"the demo server did not start: {self.log.read()[-2000:]}") from None
                if time.time() > deadline:
                    raise RuntimeError("the demo server did not answer within 120 s") from None
                time.sleep(0.3)

    def __exit__(self, *exc: object) -> None:
        from historian_blueprint import history

        if self.proc:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            self.log.close()
        for run in list(self.store.runs.find({"user_id": self.name}, {"kind": 1, "user_id": 1, "history_bucket": 1})):
            history.delete_run(self.store, run)
        with self.store.write_lock():
            self.store.database["users"].delete_one({"_id": self.name})
            self.store.database["login_failures"].delete_many({"_id": f"user:{self.name}"})


def _summary(asks: list[Ask], seconds: float) -> dict[str, Any]:
    latencies = [(a.ended - a.started) * 1000 for a in asks if a.ok]
    errors = [a.error for a in asks if not a.ok]
    return {
        "asks": len(asks), "ok": len(latencies), "errors": len(errors), "first_errors": errors[:3],
        "throughput_per_s": round(len(latencies) / seconds, 2) if seconds else 0.0,
        "latency_ms": {"p50": round(percentile(latencies, 50), 1), "p95": round(percentile(latencies, 95), 1),
                       "max": round(max(latencies, default=0.0), 1)},
    }


def run(
    *, base: str, name: str, password: str, users: int = 20, duration: float = 60, warm: int = 8,
    server_pid: int | None = None, reindex: Any = None, rounds: int = 1,
) -> dict[str, Any]:
    """Drive ``users`` concurrent askers for ``duration`` seconds; ``reindex`` (a callable returning a job
    waiter) starts a full reindex a quarter of the way in."""
    single = Session(base, name, password)
    for question in QUESTIONS * rounds:  # the models load, and the per-passage caches fill as they will under load
        _timed_ask(single, question)
    cpu0, t0 = (_cpu_seconds(server_pid) if server_pid else 0.0), time.time()
    warm_asks = [_timed_ask(single, QUESTIONS[i % len(QUESTIONS)]) for i in range(warm)]
    warm_wall = time.time() - t0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    single_user: dict[str, Any] = {**_summary(warm_asks, warm_wall), "cores": cores}
    if server_pid:
        cpu_per_ask = (_cpu_seconds(server_pid) - cpu0) / max(1, len(warm_asks))
        single_user["server_cpu_s_per_ask"] = round(cpu_per_ask, 3)
        single_user["cpu_bound_ceiling_per_s"] = round(cores / cpu_per_ask, 2) if cpu_per_ask else None

    sessions = [Session(base, name, password) for _ in range(users)]
    tally, stop = Tally(), threading.Event()

    def user(k: int, session: Session) -> None:
        i = k
        while not stop.is_set():
            tally.add(_timed_ask(session, QUESTIONS[i % len(QUESTIONS)]))
            i += users

    threads = [threading.Thread(target=user, args=(k, s), daemon=True) for k, s in enumerate(sessions)]
    cpu_load0 = _cpu_seconds(server_pid) if server_pid else 0.0
    client0 = time.process_time()  # the askers share the machine's cores with the server: their CPU is read too
    began = time.time()
    for t in threads:
        t.start()
    job: dict[str, Any] | None = None
    window = (0.0, 0.0)
    if reindex is not None:
        time.sleep(duration / 4)
        r0 = time.time()
        job = reindex()
        window = (r0, time.time())
    time.sleep(max(0.0, began + duration - time.time()))
    stop.set()
    for t in threads:
        t.join(180)
    elapsed = time.time() - began
    load = _summary(tally.asks, elapsed)
    load["client_cores"] = round((time.process_time() - client0) / elapsed, 2)
    if server_pid and load["ok"]:
        used = _cpu_seconds(server_pid) - cpu_load0
        load["server_cpu_s_per_ask"] = round(used / load["ok"], 3)
        load["server_cores_used"] = round(used / elapsed, 2)  # of ``cores``: how much of the machine the server had
        if single_user.get("cpu_bound_ceiling_per_s"):
            per_ask = single_user["server_cpu_s_per_ask"]
            load["share_of_ceiling"] = round(load["throughput_per_s"] / single_user["cpu_bound_ceiling_per_s"], 3)
            # the ceiling on the cores the askers leave to the server (they run on this machine too)
            left = max(cores - load["client_cores"], 0.1) / per_ask
            load["share_of_ceiling_left"] = round(load["throughput_per_s"] / left, 3)
    out: dict[str, Any] = {"base": base, "users": users, "duration_s": round(elapsed, 1), "single_user": single_user,
                           "load": load}
    if server_pid:
        out["memory"] = memory(server_pid)
    if job is not None:
        during = [a for a in tally.asks if a.started < window[1] and a.ended > window[0]]
        out["reindex"] = {"state": job.get("state"), "seconds": round(window[1] - window[0], 1),
                          "counts": job.get("counts"), "asks_during": len(during),
                          "failed_during": sum(1 for a in during if not a.ok)}
    return out
