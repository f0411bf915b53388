"""A dev tool, not part of the product: a fake OpenAI-compatible chat server (127.0.0.1 only) that the
tests and ``bench llm`` run the LLM engine against, and that shows ``doctor``'s diagnoses.

It serves ``GET /v1/models`` and ``POST /v1/chat/completions`` (JSON mode, usage fields, streaming) and
answers each Historian role with a reply computed by ``responder(role, messages)``; it can also play the
common misconfigurations (wrong key, no JSON mode, unknown model, wrong base path) and, per role, the faults
of a real endpoint (``FAULTS``: a hang past the client's timeout, 429 with Retry-After, 500, a reply that is
broken JSON or empty, a response cut off mid-way, a response dripped one byte at a time from its status line on,
so that no single read ever times out). ``echo_key`` makes a refused key come back in the 401's message, as some
servers do.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from historian_blueprint.llm.prompts import TASKS

Responder = Callable[[str, list[dict[str, Any]]], str]

# What the server can do to a role's requests instead of answering them well.
FAULTS = ("timeout", "rate_limit", "server_error", "malformed_json", "empty_reply", "cut_stream", "drip")


def role_of(messages: list[dict[str, Any]]) -> str:
    """Which Historian role sent this conversation (from its system message); "unknown" otherwise."""
    system = next((m.get("content") or "" for m in messages if m.get("role") == "system"), "")
    return next((role for role, task in TASKS.items() if task in system), "unknown")


class OpenAICompatibleServer:
    def __init__(
        self,
        responder: Responder,
        *,
        models: tuple[str, ...] = ("test-model",),
        api_key: str | None = None,
        json_mode: bool = True,
        prefix: str = "/v1",
        faults: Mapping[str, str] | None = None,
        fault_limit: int | None = None,
        retry_after: int = 1,
        hang_s: float = 10.0,
        drip_s: float = 1.0,
        echo_key: bool = False,
    ) -> None:
        """``faults``, ``fault_limit``: see ``play``; ``retry_after``: the seconds a 429 asks to wait;
        ``hang_s``: how long a ``timeout`` hangs before it drops the connection; ``drip_s``: the pause between
        two bytes of a ``drip``; ``echo_key``: a 401 names the key it refused (the request's Authorization)."""
        self.models = models
        self.api_key = api_key
        self.json_mode = json_mode
        self.prefix = prefix
        self.retry_after = retry_after
        self.hang_s = hang_s
        self.drip_s = drip_s
        self.echo_key = echo_key
        self.dripping = 0  # responses being dripped now: a client that gave up closed its socket, ending one
        self.drips: list[dict[str, float]] = []  # per dripped response: started, ended (time.monotonic()), bytes sent
        self.requests: list[dict[str, Any]] = []
        self._default_responder = responder
        self._closing = threading.Event()
        self._lock = threading.Lock()
        self.play(faults, limit=fault_limit)
        handler = type("Handler", (_Handler,), {"fake": self})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def play(self, faults: Mapping[str, str] | None = None, *, limit: int | None = None,
             responder: Responder | None = None) -> None:
        """From now on answer with ``responder`` (default: the server's own) and play ``faults`` (role -> one of
        ``FAULTS``) on those roles' requests; with ``limit``, only on each role's first ``limit`` requests."""
        unknown = set((faults or {}).values()) - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown fault(s) {sorted(unknown)}; choose from {', '.join(FAULTS)}")
        with self._lock:
            self.responder = responder or self._default_responder
            self.faults = dict(faults or {})
            self.fault_limit = limit
            self.faulted: dict[str, int] = {}  # role -> requests answered with its fault

    def fault_for(self, role: str) -> str | None:
        """The fault to play on this request of ``role`` (None: answer it well), counting the ones played."""
        fault = self.faults.get(role)
        if fault is None:
            return None
        with self._lock:
            if self.fault_limit is not None and self.faulted.get(role, 0) >= self.fault_limit:
                return None
            self.faulted[role] = self.faulted.get(role, 0) + 1
        return fault

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{self.prefix}"

    def __enter__(self) -> OpenAICompatibleServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()  # release hanging requests
        self.httpd.shutdown()
        self.httpd.server_close()


_PASSAGE = re.compile(r"^(E\d+) \((.*?); ([^;()]+)\): (.*)$", re.M)


def passages(prompt: str) -> list[tuple[str, str]]:
    """(evidence id, passage text) pairs of a Historian evidence block."""
    return [(m.group(1), m.group(4)) for m in _PASSAGE.finditer(prompt)]


def first_sentence(text: str) -> str:
    sentence = re.split(r"(?<=[.;:])\s", text.strip(), maxsplit=1)[0]
    return sentence if len(sentence) > 30 else text[:160]


def faithful_responder(role: str, messages: list[dict[str, Any]]) -> str:
    """A model that does each role's job literally: quotes its evidence, finds nothing wrong, judges verified."""
    prompt = str(messages[-1].get("content") or "")
    if role in ("composer", "refiner"):
        findings = [{"claim": first_sentence(t), "evidence_id": eid, "quote": first_sentence(t)}
                    for eid, t in passages(prompt)[:3]]
        return json.dumps({"answer": " ".join(f"{f['claim']} [{f['evidence_id']}]" for f in findings),
                           "findings": findings, "insufficient": not findings})
    replies = {
        "planner": {"sub_queries": [prompt.split("\n", 1)[0].removeprefix("Question: ")[:200] or "question"]},
        "challenger": {"weaknesses": []},
        "interrogator": {"citations": []},
        "counter_arguer": {"opposing_reading": None, "evidence_ids": [], "both_interpretations_valid": False,
                           "strength": 0},
        "judge": {"status": "verified", "confidence": 0.9, "required_revisions": [],
                  "reasoning": "the evidence carries the claims"},
    }
    return json.dumps(replies.get(role, {"ok": True}))


UNSUPPORTED_CLAIM = "The President abolished every federal tax in 1901 and the Senate agreed unanimously."


def lying_responder(role: str, messages: list[dict[str, Any]]) -> str:
    """A model that lies upward: the composer writes a claim no passage carries (quoting real sentences
    beside it), the reviewers find nothing wrong and the judge calls it verified at 0.99."""
    prompt = str(messages[-1].get("content") or "")
    if role in ("composer", "refiner"):
        findings = [{"claim": UNSUPPORTED_CLAIM, "evidence_id": eid, "quote": first_sentence(t)}
                    for eid, t in passages(prompt)[:3]]
        return json.dumps({"answer": f"{UNSUPPORTED_CLAIM} [E1]", "findings": findings, "insufficient": False})
    if role == "judge":
        return json.dumps({"status": "verified", "confidence": 0.99, "required_revisions": [],
                           "reasoning": "every claim is fully supported"})
    return faithful_responder(role, messages)


class _Handler(BaseHTTPRequestHandler):
    """The HTTP side of one ``OpenAICompatibleServer`` (``fake``: set per server by a subclass)."""

    fake: OpenAICompatibleServer

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: dict[str, Any], headers: Mapping[str, str] | None = None,
              cut: bool = False) -> None:
        """Send ``body`` as JSON; ``cut``: announce all of it, send half, drop the connection."""
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data[: len(data) // 2] if cut else data)
        if cut:
            self.close_connection = True

    def _drip(self, body: dict[str, Any]) -> None:
        """Send a 200 with ``body`` one byte every ``drip_s``, status line and headers included, until it is
        sent, the client hangs up or the server closes."""
        data = json.dumps(body).encode()
        raw = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
               .encode() + data)
        record = {"started": time.monotonic(), "ended": 0.0, "sent": 0}
        with self.fake._lock:
            self.fake.dripping += 1
            self.fake.drips.append(record)
        self.close_connection = True
        try:
            for i in range(len(raw)):
                if self.fake._closing.wait(self.fake.drip_s):
                    break
                self.wfile.write(raw[i:i + 1])
                self.wfile.flush()
                record["sent"] += 1
        except OSError:  # the client hung up: a broken pipe or a reset
            pass
        finally:
            record["ended"] = time.monotonic()
            with self.fake._lock:
                self.fake.dripping -= 1

    def _error(self, status: int, message: str, code: str) -> None:
        self._send(status, {"error": {"message": message, "type": "invalid_request_error", "code": code}})

    def _authorized(self) -> bool:
        if self.fake.api_key is None:
            return True
        if self.headers.get("Authorization") == f"Bearer {self.fake.api_key}":
            return True
        given = self.headers.get("Authorization") or ""
        echoed = f": {given} (key {given.removeprefix('Bearer ')})" if self.fake.echo_key else ""
        self._error(401, f"Incorrect API key provided{echoed}.", "invalid_api_key")
        return False

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        if self.path != f"{self.fake.prefix}/models":
            return self._error(404, f"no route {self.path}", "not_found")
        if self._authorized():
            self._send(200, {"object": "list",
                             "data": [{"id": m, "object": "model", "owned_by": "test"} for m in self.fake.models]})

    def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
        if self.path != f"{self.fake.prefix}/chat/completions":
            return self._error(404, f"no route {self.path}", "not_found")
        if not self._authorized():
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        self.fake.requests.append(body)
        if body.get("model") not in self.fake.models:
            return self._error(404, f"The model `{body.get('model')}` does not exist.", "model_not_found")
        if body.get("response_format") and not self.fake.json_mode:
            return self._error(400, "response_format is not supported by this server", "unsupported_parameter")
        messages = body.get("messages", [])
        role = role_of(messages)
        fault = self.fake.fault_for(role)
        if fault == "timeout":  # hang past the client's timeout, then drop the connection
            self.fake._closing.wait(self.fake.hang_s)
            self.close_connection = True
            return
        if fault == "rate_limit":
            return self._send(429, {"error": {"message": "Rate limit reached for requests", "type": "requests",
                                              "code": "rate_limit_exceeded"}},
                              headers={"Retry-After": str(self.fake.retry_after)})
        if fault == "server_error":
            return self._send(500, {"error": {"message": "The server had an error while processing your request.",
                                              "type": "server_error", "code": None}})
        content = self.fake.responder(role, messages)
        if fault == "drip":
            return self._drip({"id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion",
                               "created": int(time.time()), "model": body["model"],
                               "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                            "finish_reason": "stop"}]})
        if fault == "malformed_json":
            content = content[: len(content) // 2]  # the model stopped half-way through its object
        elif fault == "empty_reply":
            content = ""
        prompt_tokens = sum(len(str(m.get("content") or "")) for m in messages) // 4
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": len(content) // 4 + 1,
                 "total_tokens": prompt_tokens + len(content) // 4 + 1}
        ident, created = f"chatcmpl-{uuid.uuid4().hex[:12]}", int(time.time())
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            pieces = [content[i:i + 40] for i in range(0, len(content), 40)] or [""]
            if fault == "cut_stream":  # half the chunks, then the connection drops: no finish, no [DONE]
                pieces = pieces[: max(1, len(pieces) // 2)]
            for piece in pieces:
                chunk = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": body["model"],
                         "choices": [{"index": 0, "delta": {"role": "assistant", "content": piece},
                                      "finish_reason": None}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            if fault == "cut_stream":
                self.close_connection = True
                return
            last = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": body["model"],
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
            self.wfile.write(f"data: {json.dumps(last)}\n\n".encode())
            if (body.get("stream_options") or {}).get("include_usage"):
                tail = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": body["model"],
                        "choices": [], "usage": usage}
                self.wfile.write(f"data: {json.dumps(tail)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            return
        self._send(200, {
            "id": ident, "object": "chat.completion", "created": created, "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": usage,
        }, cut=fault == "cut_stream")
