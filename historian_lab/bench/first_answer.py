"""A new user's first impression: from `historian serve` on an empty demo home to the first answered question.

The bench starts the demo in a child process on a free port of 127.0.0.1 with a fresh home (a temporary folder:
it loads the sample corpus and starts the first build, as a new user's first `historian serve` does), logs in as
a researcher and asks one question a second until it is answered; then goes on asking until the answers search
by meaning too (the build's vectors are made and serve), and a few more after the switch. Every request after
the first answer counts: none may fail, neither while the vectors are built nor when they switch on.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import urllib.error
from pathlib import Path
from typing import Any

from historian_lab.bench.load import QUESTIONS, Session, _free_port

PASSWORD = "first-answer-bench"


def run(timeout_s: float = 1800, after: int = 5, keep: Path | None = None) -> dict[str, Any]:
    """Serve an empty demo home, time the first answer and watch the switch to search by meaning."""
    home = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="historian-first-answer-"))
    if keep and any(home.iterdir()):
        raise ValueError(f"{home} is not empty: the bench starts from an empty demo home")
    port = _free_port()
    env = dict(os.environ, HISTORIAN_DEMO_HOME=str(home), HISTORIAN_DEMO_USERS=f"reader:{PASSWORD}:researcher")
    log = tempfile.TemporaryFile(mode="w+", encoding="utf-8")
    t0 = time.time()
    proc = subprocess.Popen([str(Path(sys.executable).parent / "historian"), "serve", "--port", str(port)],
                            env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
    out: dict[str, Any] = {"home": str(home)}
    try:
        base = f"http://127.0.0.1:{port}"
        session = _logged_in(base, proc, log, t0 + timeout_s)
        out["serving_s"] = round(time.time() - t0, 1)  # the pages answer (the corpus is loaded)
        before = 0  # refused with 503 before the first generation serves: expected, counted apart
        asks: list[dict[str, Any]] = []
        n, switched_after = 0, None
        while time.time() < t0 + timeout_s:
            question = QUESTIONS[n % len(QUESTIONS)]
            n += 1
            a0 = time.time()
            try:
                reply = session.ask(question)
                ok, dense = (bool(reply.get("metadata", {}).get("run_id")),
                             bool(reply["metadata"].get("search", {}).get("dense")))
                error = "" if ok else "no run id in the reply"
            except urllib.error.HTTPError as exc:
                if exc.code == 503 and not asks:
                    before += 1
                    time.sleep(1)
                    continue
                ok, dense, error = False, False, f"HTTP {exc.code}: {exc.read()[:200].decode(errors='replace')}"
            except OSError as exc:
                ok, dense, error = False, False, f"{type(exc).__name__}: {exc}"
            asks.append({"at_s": round(a0 - t0, 2), "ms": round((time.time() - a0) * 1000, 1), "ok": ok, "dense": dense,
                         "error": error})
            if dense and switched_after is None:
                switched_after = len(asks)
            if switched_after is not None and len(asks) >= switched_after + after:
                break
            if not dense:
                time.sleep(0.5)
        first = next((a for a in asks if a["ok"]), None)
        first_dense = next((a for a in asks if a["ok"] and a["dense"]), None)
        out.update({
            "first_answer_s": round(first["at_s"] + first["ms"] / 1000, 1) if first else None,
            "first_answer_words_only": bool(first) and not first["dense"],
            "refused_before_first_generation": before,
            "asks_after_first_answer": len(asks),
            "words_only_answers": sum(a["ok"] and not a["dense"] for a in asks),
            "dense_from_s": round(first_dense["at_s"], 1) if first_dense else None,
            "failed_after_first_answer": sum(not a["ok"] for a in asks),
            "first_errors": [a["error"] for a in asks if not a["ok"]][:3],
        })
        return out
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _logged_in(base: str, proc: subprocess.Popen, log: Any, deadline: float) -> Session:
    """A researcher's session once the demo answers its login page."""
    while True:
        try:
            return Session(base, "reader", PASSWORD)
        except OSError:
            if proc.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"the demo server did not start: {log.read()[-2000:]}") from None
            if time.time() > deadline:
                raise RuntimeError("the demo server did not answer in time") from None
            time.sleep(0.3)
