"""Issue 38 (6): a request body the server cannot read is the client's error, never a server failure. The demo under
gunicorn (one worker, a few threads) is sent, over raw sockets, every body-reading route times every way a chunked
body can be malformed and a body shorter than its Content-Length (closed, or held open): each is a 400, JSON under
/api/, with the security headers, and a short body is answered within a few seconds. Gunicorn's own answers (a bad
request line, 414, 431) are JSON with the headers under /api/ too. Issue 38 (8): the /verify form's sources are
capped as the API's are."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from http.cookiejar import CookieJar
from urllib.parse import urlencode

import pytest


THREADS = 14  # the worker's threads, and as many clients at once: no case waits for a free thread
HELD_S = 7.0  # a body that stops arriving is answered within this (the guard waits 5 s for the next bytes)
FORM, JSON_BODY = "application/x-www-form-urlencoded", "application/json"
# every route that reads a body, with the body it reads (the JSON routes take the CSRF token from a header)
ROUTES = [
    ("/login", FORM), ("/logout", FORM),
    ("/historian/ask", FORM), ("/historian/ask/stream", FORM), ("/historian/verify", FORM), ("/historian/map", FORM),
    ("/historian/map/stream", JSON_BODY), ("/historian/admin/reindex", FORM),
    ("/historian/runs/no-such-run/delete", FORM), ("/historian/maps/no-such-map/delete", FORM),
    ("/historian/api/ask", JSON_BODY), ("/historian/api/verify", JSON_BODY), ("/historian/api/map", JSON_BODY),
    ("/historian/api/reindex", JSON_BODY),
]
# (name, what follows the head, then: "close" half-closes the connection after it, "keep" leaves it open)
CHUNKED = [
    ("bare LF ends the size line", b"5\nhello\r\n0\r\n\r\n", "keep"),
    ("no CRLF after the chunk's data", b"5\r\nhelloXX0\r\n\r\n", "keep"),
    ("size larger than the data, then close", b"ff\r\nhello", "close"),
    ("size not hexadecimal", b"xyz\r\nhello\r\n0\r\n\r\n", "keep"),
    ("negative size", b"-5\r\nhello\r\n0\r\n\r\n", "keep"),
    ("garbage after the size", b"5 %%\r\nhello\r\n0\r\n\r\n", "keep"),
    ("garbage in the trailers", b"5\r\nhello\r\n0\r\nno colon here\r\n\r\n", "keep"),
    ("size of twenty hex digits", b"ffffffffffffffffffff\r\nhello\r\n0\r\n\r\n", "keep"),  # gunicorn waits for it
]
SHORT = [("short body, then close", "close"), ("short body, held open", "keep")]
SECURITY = ("x-content-type-options", "x-frame-options", "content-security-policy")

SERVE = """
import sys
from historian_blueprint.demo import create_app
from historian_blueprint.serving import serve_with_gunicorn
serve_with_gunicorn(lambda: create_app({"DEMO_HOME": sys.argv[1], "DEMO_LOAD_CORPUS": False}),
                    bind="127.0.0.1:" + sys.argv[2], workers=1, threads=int(sys.argv[3]))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The demo under gunicorn, an admin's session cookie and CSRF token."""
    home = tmp_path_factory.mktemp("home")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HISTORIAN_")}
    env.update(HISTORIAN_DEMO_USERS="root:root-pw:admin", HF_HUB_OFFLINE="1")
    port = _free_port()
    log = home / "serve.log"
    with log.open("w") as out:
        server = subprocess.Popen([sys.executable, "-c", SERVE, str(home / "data"), str(port), str(THREADS)],
                                  env=env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        jar = CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        deadline = time.monotonic() + 60
        while True:
            try:
                page = opener.open(f"{base}/login", timeout=5).read().decode()
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, log.read_text()
                time.sleep(0.3)
        form = {"username": "root", "password": "root-pw", "csrf_token": _token(page)}
        opener.open(f"{base}/login", data=urlencode(form).encode(), timeout=10).read()
        token = _token(opener.open(f"{base}/historian/admin/reindex", timeout=10).read().decode())
        cookie = "; ".join(f"{c.name}={c.value}" for c in jar)
        yield {"port": port, "cookie": cookie, "token": token, "log": log}
    finally:
        server.terminate()
        server.wait(timeout=30)


def _token(page: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)


def _exchange(port: int, raw: bytes, then: str = "keep", wait_s: float = 30) -> tuple[bytes, float]:
    """Send ``raw``, half-close the connection or not, and read until the server closes it: what came back and how
    long after the last byte sent it took."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait_s) as s:
        s.sendall(raw)
        if then == "close":
            s.shutdown(socket.SHUT_WR)
        sent = time.monotonic()
        received = b""
        try:
            while chunk := s.recv(65536):
                received += chunk
        except (ConnectionResetError, TimeoutError):
            pass
        return received, time.monotonic() - sent


def _parse(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    """The first response in ``raw``: status, headers (lower-case names), body."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines[0].startswith("HTTP/") else 0
    fields = dict(line.split(":", 1) for line in lines[1:] if ":" in line)
    headers = {k.strip().lower(): v.strip() for k, v in fields.items()}
    length = int(headers.get("content-length", len(body)))
    return status, headers, body[:length]


def _head(served: dict, path: str, kind: str, framing: str) -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {served['cookie']}\r\n"
            f"X-CSRFToken: {served['token']}\r\nContent-Type: {kind}\r\n{framing}\r\n\r\n").encode()


def _cases(served: dict) -> list[tuple[str, str, bytes, str]]:
    cases = []
    for path, kind in ROUTES:
        for name, body, then in CHUNKED:
            cases.append((path, name, _head(served, path, kind, "Transfer-Encoding: chunked") + body, then))
        for name, then in SHORT:
            start = b"csrf_token=x&text=" if kind == FORM else b'{"question": "'
            cases.append((path, name, _head(served, path, kind, "Content-Length: 100") + start, then))
    return cases


def test_every_malformed_or_short_body_is_a_400_within_seconds(served):
    cases = _cases(served)
    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(lambda case: _exchange(served["port"], case[2], case[3]), cases))
    statuses: dict[int, int] = {}
    wrong, slow = [], []
    for (path, name, _, _), (raw, took) in zip(cases, results):
        status, headers, body = _parse(raw)
        statuses[status] = statuses.get(status, 0) + 1
        if took > HELD_S:
            slow.append((path, name, round(took, 1)))
        # the guard's answer, not a CSRF failure or a cut-off body read as if whole
        if status != 400 or not all(h in headers for h in SECURITY) or b"the request body" not in body:
            wrong.append((path, name, status, raw[:300]))
        elif "/api/" in path and not (headers.get("content-type", "").startswith("application/json")
                                      and json.loads(body)["error"]["code"] == "bad_request"):
            wrong.append((path, name, status, raw[:300]))
    print(f"{len(cases)} cases, statuses {statuses}, slowest {max(took for _, took in results):.1f} s")
    assert wrong == [] and slow == []
    assert len(cases) == len(ROUTES) * (len(CHUNKED) + len(SHORT)) and statuses == {400: len(cases)}
    assert "Traceback" not in served["log"].read_text()


def test_a_whole_body_leaves_the_connection_open_for_the_next_request(served):
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", served["port"], timeout=10)
    try:
        headers = {"Cookie": served["cookie"], "X-CSRFToken": served["token"], "Content-Type": JSON_BODY}
        conn.request("POST", "/historian/api/verify", body=json.dumps({"text": "x", "sources": ["no-such-doc"]}),
                     headers=headers)
        first = conn.getresponse()
        assert first.status == 400 and "no document with id no-such-doc" in first.read().decode()
        assert not first.will_close
        began = time.monotonic()
        conn.request("GET", "/historian/api/runs", headers=headers)
        second = conn.getresponse()
        assert second.status == 200 and json.loads(second.read())["runs"] == [] and time.monotonic() - began < 2
    finally:
        conn.close()


@pytest.mark.parametrize("request_bytes, status, code", [
    (b"GET /historian/api/ask /again HTTP/1.1\r\nHost: x\r\n\r\n", 400, "bad_request"),  # three parts, not two
    (b"GET /historian/api/" + b"a" * 10_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414, "uri_too_long"),
    (b"GET /historian/api/runs HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(150))
     + b"\r\n", 431, "headers_too_large"),  # gunicorn allows 100 fields
    (b"GET /historian/api/runs HTTP/1.1\r\nHost: x\r\nX-Big: " + b"y" * 9000 + b"\r\n\r\n", 431,
     "headers_too_large"),  # and 8,190 bytes a field
])
def test_gunicorns_own_errors_under_the_api_are_json_with_the_security_headers(served, request_bytes, status, code):
    raw, _ = _exchange(served["port"], request_bytes)
    got, headers, body = _parse(raw)
    assert got == status and headers["content-type"] == "application/json"
    assert json.loads(body)["error"]["code"] == code
    assert all(h in headers for h in SECURITY) and headers["connection"] == "close"


def test_gunicorns_own_errors_elsewhere_are_a_page_with_the_security_headers(served):
    raw, _ = _exchange(served["port"], b"GET /historian/" + b"a" * 10_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    got, headers, body = _parse(raw)
    assert got == 414 and headers["content-type"].startswith("text/html") and b"URI Too Long" in body
    assert all(h in headers for h in SECURITY)


def test_the_development_server_cuts_off_a_body_that_stops_arriving(tmp_path):
    import threading

    from werkzeug.serving import make_server

    from tests.conftest import make_plain_app

    server = make_server("127.0.0.1", 0, make_plain_app(tmp_path, WTF_CSRF_ENABLED=False), threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        head = b"POST /historian/api/verify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        held, took = _exchange(server.port, head + b'Content-Length: 100\r\n\r\n{"text": "', "keep")
        chunked, _ = _exchange(server.port, head + b"Transfer-Encoding: chunked\r\n\r\nxyz\r\nhello\r\n0\r\n\r\n")
    finally:
        server.shutdown()
    assert _parse(held)[0] == 400 and b"stopped arriving" in _parse(held)[2] and took < HELD_S
    assert _parse(chunked)[0] == 400 and json.loads(_parse(chunked)[2])["error"]["code"] == "bad_request"


def test_the_verify_form_names_at_most_as_many_sources_as_the_api(researcher):
    from historian_blueprint.web.bodies import MAX_SOURCES

    token = _token(researcher.get("/historian/verify").data.decode())
    draft = "Hoover abolished every tax."
    began = time.monotonic()  # 100,000 ids took 29.7 s and a 790 KB page naming each of them
    page = researcher.post("/historian/verify", data={"text": draft, "csrf_token": token,
                                                      "sources": ",".join(f"doc-{n}" for n in range(100_000))})
    took = time.monotonic() - began
    said = f"sources: List should have at most {MAX_SOURCES} items after validation, not 100000"
    assert said in page.get_data(as_text=True) and took < 5 and len(page.data) < 50_000
    api = researcher.post("/historian/api/verify", headers={"X-CSRFToken": token}, json={
        "text": draft, "sources": [f"doc-{n}" for n in range(MAX_SOURCES + 1)]})
    assert api.status_code == 400 and api.get_json()["error"]["message"] == said.replace("100000", str(MAX_SOURCES + 1))
    # as many as allowed are looked up (none of them is a document here), not refused by the cap
    page = researcher.post("/historian/verify", data={"text": draft, "csrf_token": token,
                                                      "sources": ",".join(f"doc-{n}" for n in range(MAX_SOURCES))})
    assert "no document with id doc-0" in page.get_data(as_text=True)
