"""The LLM engine under fault, over HTTP: each thing a real endpoint or model can do wrong, played on one role
by the fake OpenAI-compatible server; the run must end below ``verified`` and be stored with the failure named.

A control run (no fault) comes first: it must be ``verified``, or the matrix's zero would prove nothing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flask import Flask

from historian_blueprint.services import get_store
from historian_lab.bench.common import SAMPLE_CORPUS, ensure_documents, ensure_index, read_jsonl, workspace
from historian_lab.bench.fake_llm_server import (
    OpenAICompatibleServer, Responder, faithful_responder, lying_responder,
)
from historian_blueprint.ask.run import ask, make_context

QUESTION = "List three causes of the depression"
# Three State of the Union addresses from the sample corpus: enough to answer QUESTION, indexed in seconds.
DOCUMENTS = ("sotu-1931-herbert-hoover", "sotu-1919-woodrow-wilson", "sotu-1893-grover-cleveland")
# The roles asked in every run: a fault on the refiner shows only when a run is revised, and the planner's
# failure does not stop verification (it only shapes retrieval; see settings.VERIFYING_ROLES).
ROLES = ("composer", "challenger", "interrogator", "counter_arguer", "judge")
MODEL = "fault-model"
# Short enough for the matrix to run in seconds: a 1 s timeout (the config takes whole seconds), one retry,
# no cache (a cached reply would hide the fault), a 1 s Retry-After.
TIMEOUT_S, MAX_RETRIES, BACKOFF_S, RETRY_AFTER_S = 1, 1, 0.05, 1
LIE = "the model judge said verified (0.99)"  # the judge's summary when the floor overrules a lying judge


@dataclass(frozen=True)
class Fault:
    """One cell of the matrix: what goes wrong, on which role, and what the stored run must say about it."""

    name: str
    role: str
    play: str | None  # the server's fault (``fake_llm_server.FAULTS``); None: the model itself misbehaves
    names: str  # words the stored run must record (beside "<role>:" for a role that failed)
    responder: Responder = faithful_responder

    @property
    def expected(self) -> tuple[str, ...]:
        """What one recorded text must hold, all of it."""
        return (self.names,) if self.play is None else (f"{self.role}:", self.names)


TRANSPORT = {  # fault -> how the engine names it in verification.model_failures
    "timeout": "timed out",
    "rate_limit": f"rate limited (429, Retry-After {RETRY_AFTER_S} s)",
    "server_error": "500",
    "malformed_json": "unparseable output",
    "empty_reply": "unparseable output",
    "cut_stream": "connection failed",
}


def matrix(roles: Iterable[str] = ("composer", "judge")) -> list[Fault]:
    """Every transport fault on each of ``roles``, then the judge that lies upward about a hallucinated answer."""
    unknown = set(roles) - set(ROLES)
    if unknown:
        raise ValueError(f"no fault matrix for {sorted(unknown)}; roles: {', '.join(ROLES)}")
    cells = [Fault(name, role, name, names) for role in roles for name, names in TRANSPORT.items()]
    return cells + [Fault("lying_judge", "judge", None, LIE, lying_responder)]


def llm_config(base_url: str, model: str = MODEL) -> dict[str, Any]:
    """The app's ``HISTORIAN_*`` keys for the LLM engine at ``base_url`` with short timeouts and no cache."""
    return {
        "HISTORIAN_ENGINE": "llm", "HISTORIAN_LLM_BASE_URL": base_url, "HISTORIAN_LLM_MODEL": model,
        "HISTORIAN_LLM_API_KEY": "not-needed", "HISTORIAN_LLM_TIMEOUT_S": TIMEOUT_S,
        "HISTORIAN_LLM_MAX_RETRIES": MAX_RETRIES, "HISTORIAN_LLM_BACKOFF_S": BACKOFF_S, "HISTORIAN_LLM_CACHE_TTL_S": 0,
    }


def fault_server(model: str = MODEL) -> OpenAICompatibleServer:
    """The fake endpoint the matrix plays its faults on (a hang outlasts the client's timeout, not much more)."""
    return OpenAICompatibleServer(faithful_responder, models=(model,), retry_after=RETRY_AFTER_S, hang_s=4 * TIMEOUT_S)


def fault_app(root: Path, base_url: str) -> Flask:
    """A workspace app (``root/faults``, kept between runs) on ``DOCUMENTS``, indexed, its LLM engine at
    ``base_url``."""
    corpus = Path(root) / "faults" / "corpus.jsonl"
    corpus.parent.mkdir(parents=True, exist_ok=True)
    docs = [d for d in read_jsonl(SAMPLE_CORPUS / "sotu_1860_1945.jsonl") if d["_id"] in DOCUMENTS]
    corpus.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    app = workspace(root, "faults", **llm_config(base_url))
    ensure_documents(app, [corpus])
    ensure_index(app)
    return app


def recorded(run: Mapping[str, Any], words: tuple[str, ...]) -> tuple[str, str] | None:
    """Where the stored run names all of ``words`` in one text, and how: (field, text); the places are tried in
    the order a reader meets them (the failures banner, the judge's summary, the steps)."""
    verification = run["output"].get("verification") or {}
    places = [("output.verification.model_failures", f) for f in verification.get("model_failures", [])]
    places.append(("output.verification.judge.summary", (verification.get("judge") or {}).get("summary", "")))
    places += [(f"trace.{e['node']}", e.get("detail", "")) for e in run.get("trace", [])]
    return next(((where, text) for where, text in places if all(w in text for w in words)), None)


def run_fault(app: Flask, server: OpenAICompatibleServer, fault: Fault | None,
              question: str = QUESTION) -> dict[str, Any]:
    """Play ``fault`` (None: the control), ask ``question`` through the app's LLM engine, read the stored run back.

    A run that raises instead of ending fail-safe is reported (``error``), not stored, never verified."""
    server.play({fault.role: fault.play} if fault and fault.play else None,
                responder=fault.responder if fault else None)
    run_id, run, error = None, None, None
    t0 = time.perf_counter()
    try:
        with app.app_context():
            run_id = ask(question, user_id="bench-faults", context=make_context())["metadata"]["run_id"]
            run = get_store().runs.find_one({"_id": run_id})
    except Exception as exc:  # noqa: BLE001 - the matrix reports it: a fault must never crash a run
        error = f"{type(exc).__name__}: {str(exc)[:200]}"
    finally:
        faulted = server.faulted.get(fault.role, 0) if fault and fault.play else None
        server.play()
    seconds = round(time.perf_counter() - t0, 2)
    status = run["output"]["status"] if run else None
    found = recorded(run, fault.expected) if run and fault else None
    return {
        "fault": fault.name if fault else "none", "role": fault.role if fault else None, "run_id": run_id,
        "status": status, "verified": status == "verified", "stored": run is not None,
        "failure_recorded": found is not None, "recorded_in": found[0] if found else None,
        "recorded_as": found[1] if found else None, "requests_faulted": faulted,
        "model_failures": (run["output"].get("verification") or {}).get("model_failures", []) if run else [],
        "error": error, "seconds": seconds,
    }


def run_fault_matrix(root: Path, roles: Iterable[str] = ("composer", "judge"),
                     question: str = QUESTION) -> dict[str, Any]:
    """The fault matrix on three sample documents (workspace ``root/faults``): per fault the stored run's status and
    where it records the failure; ``verified``, ``unrecorded`` and ``unstored`` must all be 0."""
    t0 = time.perf_counter()
    cells = matrix(roles)
    with fault_server() as server:
        app = fault_app(root, server.url)
        control = run_fault(app, server, None, question)
        rows = [run_fault(app, server, fault, question) for fault in cells]
    return {
        "question": question, "control": control, "faults": rows,
        "verified": sum(r["verified"] for r in rows), "unrecorded": sum(not r["failure_recorded"] for r in rows),
        "unstored": sum(not r["stored"] for r in rows),
        "settings": {"timeout_s": TIMEOUT_S, "max_retries": MAX_RETRIES, "backoff_s": BACKOFF_S,
                     "retry_after_s": RETRY_AFTER_S},
        "seconds": round(time.perf_counter() - t0, 2),
    }
