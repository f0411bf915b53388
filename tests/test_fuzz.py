"""API fuzz test: every route of the README's "Pages and API" table (and the demo host's /login, /logout, /,
/documents/<id>) with fuzzed path parameters, query strings, form and JSON bodies of any shape, raw bytes and
Content-Type / Accept / Authorization / CSRF header variations, as anonymous, researcher, admin and API-token
callers, through Flask's in-process test client.

Invariants: no response is a 5xx (and no exception escapes the app: in production that is a 500), a streamed
run never ends in "Historian failed", and every response under /historian/api/ is JSON (errors the documented
{"error": {"code", "message"}}); exempt: redirects (werkzeug's 308 for "//") and the automatic OPTIONS reply.
A deterministic sweep of edge values (test_edge_values_...) complements the random examples.

Bounded: a fixed number of examples per route (``HISTORIAN_TEST_FUZZ_SCALE`` multiplies them), a deadline per
example, no example database. The pipelines (ask, map, verify) run on a small indexed corpus; the shape fuzz
skips bodies that would start one, and a separate, small test feeds them valid-shaped but fuzzed bodies. At
most one full reindex is started."""

from __future__ import annotations

import json
import logging
import os
import re
import time
import traceback
from collections import Counter
from datetime import timedelta
from io import BytesIO
from urllib.parse import parse_qsl, quote, urlencode

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from werkzeug.datastructures import FileStorage, MultiDict
from werkzeug.test import encode_multipart

from historian_blueprint import get_store
from historian_blueprint.config import PROFILES
from tests.conftest import login, small_docs
from tests.test_index import run_reindex

SCALE = float(os.environ.get("HISTORIAN_TEST_FUZZ_SCALE", "1"))
P = "/historian"
API = P + "/api/"
TOKENS = {"tok-admin": {"user": "ops", "role": "admin"}, "tok-r": {"user": "alice"}}
ODD_DOC = "odd/dïr ü 1"
MAX_QUESTION = 2000  # HISTORIAN_LIMITS_MAX_QUESTION_CHARS (default)
MAX_TOPIC = 300


def examples(n: int) -> int:
    return max(1, round(n * SCALE))


def fuzz_settings(n: int, deadline_s: float) -> settings:
    return settings(max_examples=examples(n), deadline=timedelta(seconds=deadline_s), database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.filter_too_much, HealthCheck.data_too_large])


# ---------------------------------------------------------------------------------------------- the app
class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


class Env:
    """One indexed demo app shared by the module, with stored runs and maps to aim at."""

    def __init__(self, app) -> None:
        self.app = app
        self.cookies: dict[str, str] = {}
        self.csrf: dict[str, str] = {}
        self.log = _Capture()
        self.sent: Counter[str] = Counter()
        self.statuses: Counter[str] = Counter()
        self.ids: dict[str, list[str]] = {}
        self.full_reindex_started = False

    def client(self, who: str):
        """A fresh client for ``who``: its session cookie restored, so /logout or /login in one example does not
        change who the next one is."""
        client = self.app.test_client()
        role = {"researcher": "researcher", "admin": "admin"}.get(who)
        if role:
            client.set_cookie("session", self.cookies[role])
        return client


def _csrf_of(client) -> str:
    page = client.get(P + "/ask").get_data(as_text=True)
    return re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)


def _wait_for_jobs(app, timeout: float = 120) -> None:
    deadline = time.time() + timeout
    with app.app_context():
        while get_store().jobs.count_documents({"state": {"$in": ["queued", "running"]}}) and time.time() < deadline:
            time.sleep(0.05)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    from historian_blueprint.demo import create_app

    home = tmp_path_factory.mktemp("fuzz")
    with pytest.MonkeyPatch.context() as mp:
        for name in list(os.environ):
            if name.startswith("HISTORIAN_") and not name.startswith("HISTORIAN_TEST_"):
                mp.delenv(name)
        mp.setenv("HISTORIAN_DEMO_USERS", "alice:alice-pw:researcher,root:root-pw:admin")
        app = create_app({"TESTING": True, "DEMO_HOME": str(home / "home"), "DEMO_LOAD_CORPUS": False,
                          "HISTORIAN_API_TOKENS": TOKENS})
    docs = small_docs(per_file=2, chars=1000) + [
        {"_id": ODD_DOC, "title": "<script>alert(1)</script> odd", "year": 1893, "collection": "Odd",
         "content": "The panic of 1893 closed banks in Chicago and\u0000 New York.\n\u202eevil\u202c"}]
    with app.app_context():
        get_store().documents.insert_many([dict(d) for d in docs])
    job = run_reindex(app)
    assert job["state"] == "succeeded", job
    e = Env(app)
    for role, (name, pw) in {"researcher": ("alice", "alice-pw"), "admin": ("root", "root-pw")}.items():
        client = login(app.test_client(), name, pw)
        e.csrf[role] = _csrf_of(client)  # the session now holds the token's secret
        e.cookies[role] = client.get_cookie("session").value
    alice, root = e.client("researcher"), e.client("admin")
    ask_a = alice.post(API + "ask", json={"question": "What did Lincoln say about the war?"},
                       headers={"X-CSRFToken": e.csrf["researcher"]})
    assert ask_a.status_code == 200, ask_a.data[:300]
    ask_r = root.post(API + "ask", json={"question": "Which banks closed in 1893?"},
                      headers={"X-CSRFToken": e.csrf["admin"]})
    assert ask_r.status_code == 200, ask_r.data[:300]
    map_a = alice.post(API + "map", json={"topic": "the war"}, headers={"X-CSRFToken": e.csrf["researcher"]})
    assert map_a.status_code == 200, map_a.data[:300]
    run_a, run_r = ask_a.json["metadata"]["run_id"], ask_r.json["metadata"]["run_id"]
    map_id = map_a.json["metadata"]["run_id"]
    with app.app_context():
        runs = get_store().runs
        runs.insert_one(dict(runs.find_one({"_id": run_a}), _id="bob-run", user_id="bob", thread_id="bob-run"))
        runs.insert_one(dict(runs.find_one({"_id": map_id}), _id="bob-map", user_id="bob"))
        e.templates = {"ask": runs.find_one({"_id": run_a}), "map": runs.find_one({"_id": map_id})}
        e.ids["job"] = [job["_id"]]
    e.ids["run"] = [run_a, run_r, "bob-run", map_id, "bob-map"]
    e.ids["doc"] = [d["_id"] for d in docs]
    e.ids["collection"] = sorted({d["collection"] for d in docs})
    logging.getLogger().addHandler(e.log)
    yield e
    logging.getLogger().removeHandler(e.log)
    _wait_for_jobs(app)  # no reindex thread outlives the module
    total = sum(e.sent.values())
    print(f"\n[fuzz] {total} requests; per route group:")
    for group, count in sorted(e.sent.items()):
        print(f"  {count:5d}  {group}")
    print("[fuzz] statuses:", dict(sorted(e.statuses.items())))


# ---------------------------------------------------------------------------------------------- strategies
WEIRD = ["", " ", "\x00", "\t\n", "\u202e", "\ufeff", "\ud7ff", "\U0001f600", "a" * 3000, "0", "-1", "1e309", "NaN",
         "null", "[]", "{}", "<script>alert(1)</script>", "'; DROP TABLE runs;--", "$where", "{\"$ne\": 1}", ".*",
         "(?i)", "\\", "%00", "../../etc/passwd", "²", "١٢٣", "ⅷ", "1" * 4301]
text = st.one_of(st.text(max_size=40), st.sampled_from(WEIRD),
                 st.text(alphabet=st.characters(codec="utf-8", categories=("Cc", "Cf", "Zs", "Nd", "So")), max_size=20))
numbers = st.one_of(st.integers(-(10**30), 10**30).map(str), st.integers(-3, 210).map(str),
                    st.floats(allow_nan=True, allow_infinity=True).map(repr),
                    st.sampled_from(["9" * 5000, "0x10", " 7", "7 ", "+5", "1_0"]))
LATIN1_PRINTABLE = st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f")
header_text = st.text(alphabet=LATIN1_PRINTABLE, max_size=60)


def json_values(keys: list[str]):
    key = st.one_of(st.sampled_from(keys + ["csrf_token", "", "$ne", "__proto__"]), st.text(max_size=10))
    leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.sampled_from([10**400, -(10**400)]),
                     st.floats(allow_nan=True, allow_infinity=True), text)
    return st.recursive(leaf,
                        lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(key, inner, max_size=4)),
                        max_leaves=12)


RAW = [b"", b" \n\t", b"null", b"[1]", b'"x"', b"1e999999", b"-0", b"{", b"}{", b"\xff\xfe", b"\xef\xbb\xbf{}",
       "{\"question\": \"h\u00e9\"}".encode("utf-16"), "{\"question\": \"h\u00e9\"}".encode("latin-1"),
       b"[" * 33 + b"]" * 33, b"[" * 32 + b"]" * 32, b"{\"a\":" * 40 + b"1" + b"}" * 40, b"[" * 5000,
       b'{"question": 1' + b"0" * 5000 + b"}", b'{"question": NaN, "topic": Infinity, "text": -Infinity}',
       b'{"question": "\\ud800"}', b'{"text": "\\u0000"}', b'{"full": true, "full": "x"}',
       b"question=\xff\xfe&topic=%ff", b"a=" + b"%" * 50, b"\x00" * 64]
CONTENT_TYPES = [None, "application/json", "application/json; charset=utf-16", "application/json; charset=latin-1",
                 "text/plain", "application/x-www-form-urlencoded", "application/x-www-form-urlencoded; charset=koi8-r",
                 "multipart/form-data", "multipart/form-data; boundary=", "multipart/form-data; boundary=zzz",
                 "application/octet-stream", "application/json-patch+json", "text/html", ";", "x/y; charset=nonsense"]


@st.composite
def bodies(draw, fields: list[str], csrf_form: str | None = None):
    """(Content-Type or None, body bytes). ``csrf_form``: a token to put in the form, where the body is a form."""
    fields = fields or ["x"]
    kind = draw(st.sampled_from(["json", "json", "form", "multipart", "raw", "binary", "empty"]))
    if kind == "json":
        value = draw(json_values(fields))
        if csrf_form and isinstance(value, dict) and draw(st.booleans()):
            value["csrf_token"] = csrf_form  # read only from a form or a header: here it is just a field
        body = json.dumps(value, ensure_ascii=draw(st.booleans())).encode(
            draw(st.sampled_from(["utf-8", "utf-8", "utf-16"])))
        ctype = draw(st.one_of(st.just("application/json"), st.sampled_from(CONTENT_TYPES)))
    elif kind in ("form", "multipart"):
        pairs = draw(st.lists(st.tuples(st.one_of(st.sampled_from(fields), st.text(max_size=8)), text), max_size=5))
        if csrf_form:
            pairs.append(("csrf_token", csrf_form))
        if kind == "form":
            body = urlencode(pairs).encode() + draw(st.sampled_from([b"", b"&%ff=%fe", b"&&=&",
                                                                     b"&" + b"x" * 10, b"&q=\xff"]))
            ctype = draw(st.one_of(st.just("application/x-www-form-urlencoded"), st.sampled_from(CONTENT_TYPES)))
        else:
            values = MultiDict(pairs)
            for name, content in draw(st.lists(st.tuples(st.sampled_from(fields + ["file"]),
                                                         st.binary(max_size=30)), max_size=2)):
                values.add(name, FileStorage(BytesIO(content),
                                             filename=draw(st.sampled_from(["a.txt", "", "ü.json", "../x"]))))
            boundary, body = encode_multipart(values, boundary="fuzz-boundary-7f3a")
            ctype = draw(st.one_of(st.just(f"multipart/form-data; boundary={boundary}"),
                                   st.sampled_from(CONTENT_TYPES)))
    elif kind == "raw":
        body = draw(st.sampled_from(RAW))
        ctype = draw(st.sampled_from(CONTENT_TYPES))
    elif kind == "binary":
        body = draw(st.binary(max_size=120))
        ctype = draw(st.sampled_from(CONTENT_TYPES))
    else:
        body, ctype = b"", draw(st.sampled_from(CONTENT_TYPES))
    return ctype, body


def _form_and_json(body: bytes, ctype: str | None) -> list[dict]:
    """What a handler could read from this body: its JSON object and/or its form fields (a conservative guess)."""
    seen = []
    try:
        value = json.loads(body.decode("utf-8"))
        if isinstance(value, dict):
            seen.append(value)
    except (ValueError, RecursionError):
        pass
    seen.append(dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)))
    if ctype and "multipart" in ctype:
        seen.append({k: "?" for k in ("question", "topic", "text", "full", "retry_failed") if k.encode() in body})
    return seen


def _runs_pipeline(route: str, body: bytes, ctype: str | None) -> bool:
    """Would this body (with a valid CSRF token) start an ask, a map or a draft check? Those are slow: the shape
    fuzz leaves them to test_valid_shaped_bodies_run_the_pipelines."""
    field = PIPELINE_FIELD.get(route)
    if not field:
        return False
    for data in _form_and_json(body, ctype):
        value = data.get(field)
        if isinstance(value, str) and value.strip() and len(value.strip()) <= MAX_QUESTION:
            return True
    return False


def _starts_full_reindex(route: str, body: bytes, ctype: str | None) -> bool:
    if route not in ("POST /api/reindex", "POST /admin/reindex"):
        return False
    return any(data.get("full") in (True, "1", "?") or data.get("retry_failed") in (True, "1", "?")
               for data in _form_and_json(body, ctype))


PIPELINE_FIELD = {"POST /api/ask": "question", "POST /ask": "question", "POST /ask/stream": "question",
                  "POST /api/map": "topic", "POST /map": "topic", "POST /map/stream": "topic",
                  "POST /api/verify": "text", "POST /verify": "text"}


# ---------------------------------------------------------------------------------------------- the routes
def run_ids(env: Env):
    return st.one_of(st.sampled_from(env.ids["run"] + ["", "0", "a" * 64, "a" * 65]), text)


def seg(value: str) -> str:
    return quote(value, safe="") if value else value


@st.composite
def query(draw, env: Env, names: dict):
    """A query string: the route's parameters (fuzzed values), some unknown ones, sometimes raw junk."""
    pairs = []
    for name, values in names.items():
        for _ in range(draw(st.integers(0, 2 if name == "span" else 1))):
            pairs.append((name, draw(values)))
    pairs += draw(st.lists(st.tuples(text, text), max_size=2))
    qs = urlencode(pairs)
    junk = draw(st.sampled_from(["", "", "", "&%ff=%fe", "&&=&", "&a=%", "&%zz", "&page=1&page=2", "&\u00e9=\u00e9",
                                 "&q=%00", "&" + "x=1&" * 50]))
    return qs + junk


def span_values():
    n = st.integers(-5, 10**10).map(str)
    return st.one_of(st.builds(lambda a, b: f"{a}-{b}", n, n),
                     st.sampled_from(["0-5", "5-0", "0-999999999", "1-2\n", "١-٢",
                                                                            "-", "1-", "-2", "1--2", "1-2-3"]), text)


def route_table(env: Env) -> dict:
    """Route name -> (methods, path strategy, query parameters, body fields or None, what the route needs)."""
    runs = run_ids(env)
    docs = st.one_of(st.sampled_from(env.ids["doc"]), text, st.sampled_from(["..", "a/../b", "a//b", "%2F"]))
    jobs = st.one_of(st.sampled_from(env.ids["job"]), text)
    fmt_ask = st.one_of(st.sampled_from(["md", "json", "bib", "txt", "", "MD", "json.json", "pdf"]), text)
    fmt_map = st.one_of(st.sampled_from(["json", "md", "bib", "", "JSON"]), text)
    page = st.one_of(numbers, text)
    get, post = ["GET"], ["POST"]
    return {
        # the demo host
        "GET /login": (get, st.just("/login"),
                       {"next": st.one_of(text, st.sampled_from(["/", "//evil.com", "/\\evil.com", "http://x"]))},
                       None),
        "POST /login": (post, st.just("/login"), {"next": text},
                        ["username", "password"]),
        "POST /logout": (["POST", "GET"], st.just("/logout"), {}, ["csrf_token"]),
        "GET /": (get, st.just("/"), {"q": text, "page": page}, None),
        "GET /documents/<id>": (get, docs.map(lambda d: "/documents/" + seg(d)), {}, None),
        # Historian pages
        "GET /historian/": (get, st.just(P + "/"), {}, None),
        "GET /ask": (get, st.just(P + "/ask"), {"parent": runs}, None),
        "POST /ask": (post, st.just(P + "/ask"), {}, ["question", "profile", "parent"]),
        "POST /ask/stream": (post, st.just(P + "/ask/stream"), {}, ["question", "profile", "parent"]),
        "GET /runs": (get, st.just(P + "/runs"), {"q": text, "page": page}, None),
        "GET /runs/<id>": (get, runs.map(lambda r: f"{P}/runs/{seg(r)}"), {"partial": text}, None),
        "POST /runs/<id>/delete": (post, st.sampled_from(["sac-ask", "bob-run", "sac-map", "nope"])
                                   .map(lambda r: f"{P}/runs/{r}/delete"), {}, []),
        "GET /runs/<id>/export.<fmt>": (get, st.tuples(runs, fmt_ask)
                                        .map(lambda t: f"{P}/runs/{seg(t[0])}/export.{seg(t[1])}"), {}, None),
        "GET /sources/<id>": (get, docs.map(lambda d: f"{P}/sources/{seg(d)}"),
                              {"run": runs, "span": span_values()}, None),
        "GET /verify": (get, st.just(P + "/verify"), {}, None),
        "POST /verify": (post, st.just(P + "/verify"), {}, ["text", "sources", "question"]),
        "GET /map": (get, st.just(P + "/map"), {"topic": text}, None),
        "POST /map": (post, st.just(P + "/map"), {}, ["topic"]),
        "POST /map/stream": (post, st.just(P + "/map/stream"), {}, ["topic"]),
        "GET /maps": (get, st.just(P + "/maps"), {"page": page}, None),
        "GET /maps/<id>": (get, runs.map(lambda r: f"{P}/maps/{seg(r)}"), {}, None),
        "POST /maps/<id>/delete": (post, st.sampled_from(["sac-map", "bob-map", "sac-ask", "nope"])
                                   .map(lambda r: f"{P}/maps/{r}/delete"), {}, []),
        "GET /maps/<id>/export.<fmt>": (get, st.tuples(runs, fmt_map)
                                        .map(lambda t: f"{P}/maps/{seg(t[0])}/export.{seg(t[1])}"),
                                        {"graph": text}, None),
        "GET /admin/reindex": (get, st.just(P + "/admin/reindex"), {"message": text}, None),
        "POST /admin/reindex": (post, st.just(P + "/admin/reindex"), {}, ["full", "retry_failed"]),
        # Historian JSON API
        "POST /api/map": (post, st.just(API + "map"), {}, ["topic"]),
        "GET /api/maps/<id>": (get, runs.map(lambda r: f"{API}maps/{seg(r)}"), {}, None),
        "POST /api/ask": (post, st.just(API + "ask"), {}, ["question", "profile", "parent"]),
        "POST /api/verify": (post, st.just(API + "verify"), {}, ["text", "sources", "question"]),
        "GET /api/runs": (get, st.just(API + "runs"), {"page": page}, None),
        "GET /api/runs/<id>": (get, runs.map(lambda r: f"{API}runs/{seg(r)}"), {}, None),
        "GET /api/health": (get, st.just(API + "health"), {}, None),
        "GET /api/config": (get, st.just(API + "config"), {}, None),
        "GET /api/retrieve": (get, st.just(API + "retrieve"), {
            "q": st.one_of(text, st.sampled_from(["war", "banks 1893", "x" * 2001, "cotton AND plantation"])),
            "top_k": numbers, "rerank_k": numbers,
            "mode": st.one_of(st.sampled_from(["hybrid", "bm25", "dense", "HYBRID"]), text),
            "collection": st.one_of(st.sampled_from(env.ids["collection"]), text), "year_from": numbers,
            "year_to": numbers}, None),
        "POST /api/reindex": (post, st.just(API + "reindex"), {}, ["full", "retry_failed"]),
        "GET /api/jobs/<id>": (get, jobs.map(lambda j: f"{API}jobs/{seg(j)}"), {}, None),
        "ANY /api/<unknown>": (["GET", "POST", "PUT", "DELETE"], st.one_of(
            text.map(lambda r: API + seg(r)),
            st.sampled_from(["", "runs/", "ask/", "health/x", "jobs", "maps", "retrieve/1", "..", "%ff", "a/b/c",
                             "run s", "ask%3Fx", "config;x", "%0A", "jobs/%0A"]).map(lambda r: API + r)),
                               {"q": text}, ["question"]),
    }


ROUTE_NAMES = [
    "GET /login", "POST /login", "POST /logout", "GET /", "GET /documents/<id>", "GET /historian/", "GET /ask",
    "POST /ask", "POST /ask/stream", "GET /runs", "GET /runs/<id>", "POST /runs/<id>/delete",
    "GET /runs/<id>/export.<fmt>", "GET /sources/<id>", "GET /verify", "POST /verify", "GET /map", "POST /map",
    "POST /map/stream", "GET /maps", "GET /maps/<id>", "POST /maps/<id>/delete", "GET /maps/<id>/export.<fmt>",
    "GET /admin/reindex", "POST /admin/reindex", "POST /api/map", "GET /api/maps/<id>", "POST /api/ask",
    "POST /api/verify", "GET /api/runs", "GET /api/runs/<id>", "GET /api/health", "GET /api/config",
    "GET /api/retrieve", "POST /api/reindex", "GET /api/jobs/<id>", "ANY /api/<unknown>",
]
WHO = ["anonymous", "researcher", "admin", "token-researcher", "token-admin", "bad-token"]
METHODS_EXTRA = ["HEAD", "OPTIONS", "PUT", "PATCH", "DELETE"]  # the others: test_any_method_and_odd_paths_under_api
ODD_METHODS = ["TRACE", "CONNECT", "PROPFIND", "FOO", "get", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "POST", "GET"]
API_PATHS = ["ask", "map", "verify", "runs", "runs/x", "maps/x", "health", "config", "retrieve", "reindex", "jobs/x",
             "nothing", "", "%0A", "jobs/%0A", "runs/a%0Ab", "/runs", "runs/", "ask/..", "%2e%2e/ask", "%00"]


@st.composite
def requests(draw, env: Env, route: str):
    if not hasattr(env, "table"):
        env.table = route_table(env)
    methods, paths, params, fields = env.table[route]
    method = draw(st.one_of(st.sampled_from(methods), st.sampled_from(methods), st.sampled_from(METHODS_EXTRA)))
    who = draw(st.sampled_from(WHO))
    headers: dict[str, str] = {}
    if who.startswith("token-"):
        headers["Authorization"] = "Bearer " + ("tok-admin" if who == "token-admin" else "tok-r")
    elif who == "bad-token":
        headers["Authorization"] = draw(st.one_of(header_text, header_text.map(lambda t: "Bearer " + t),
                                                  st.just("Bearer ")))
    csrf_kind = draw(st.sampled_from(["valid", "valid", "none", "garbage", "other"]))
    session_role = {"researcher": "researcher", "admin": "admin"}.get(who, "researcher")
    token = {"valid": env.csrf[session_role],
             "other": env.csrf["admin" if session_role == "researcher" else "researcher"],
             "garbage": draw(header_text), "none": None}[csrf_kind]
    where = draw(st.sampled_from(["X-CSRFToken", "X-CSRF-Token", "form"]))
    if token is not None and where != "form":
        headers[where] = token
    if draw(st.booleans()):
        headers["Accept"] = draw(st.one_of(st.sampled_from(["application/json", "text/html", "*/*", "text/event-stream",
                                                            "application/json;q=0.1, text/html;q=0.9", ";;;"]),
                                           header_text))
    for name in draw(st.lists(st.sampled_from(["X-Forwarded-For", "Origin", "Referer", "Cookie", "Content-Encoding",
                                               "Transfer-Encoding", "Range", "If-None-Match"]),
                              max_size=2, unique=True)):
        headers[name] = draw(header_text)
    ctype, body = None, b""
    if fields is not None and method not in ("GET", "HEAD"):
        ctype, body = draw(bodies(fields, csrf_form=token if where == "form" else None))
    elif draw(st.integers(0, 9)) == 0:  # a body on a GET, now and then
        ctype, body = draw(bodies(["q"]))
    if ctype is not None:
        headers["Content-Type"] = ctype
    path = draw(paths)
    qs = draw(query(env, params))
    return {"route": route, "who": who, "method": method, "path": path, "query": qs, "headers": headers, "body": body,
            "csrf": csrf_kind}


def describe(req: dict) -> str:
    body = req["body"]

    def cut(value: str) -> str:
        return value if len(value) <= 300 else f"{value[:300]}... ({len(value)} characters)"

    qs = cut(req["query"])
    return (f"  user:    {req['who']} (CSRF token: {req.get('csrf')})\n  request: {req['method']} {cut(req['path'])}"
            f"{'?' + qs if qs else ''}\n  headers: {req['headers']!r}\n"
            f"  body:    {body[:600]!r}{' ... (%d bytes)' % len(body) if len(body) > 600 else ''}")


def send(env: Env, req: dict) -> tuple[int, bytes]:
    """Send one request and check the invariants; returns (status, body)."""
    env.sent[req["route"]] += 1
    client = env.client(req["who"])
    del env.log.lines[:]
    try:
        response = client.open(req["path"], method=req["method"], query_string=req["query"], headers=req["headers"],
                               data=req["body"])
        data = response.get_data()  # a streamed body runs here
        response.close()
    except Exception:  # noqa: BLE001 - TESTING propagates what production answers with a 500
        pytest.fail(f"the app raised (a 500 in production):\n{describe(req)}\n{traceback.format_exc()}", pytrace=False)
    status = response.status_code
    env.statuses[f"{status // 100}xx"] += 1
    log = "\n".join(env.log.lines) or "(nothing logged)"
    assert status < 500, f"server error {status}:\n{describe(req)}\n  response: {data[:400]!r}\napp log:\n{log}"
    if response.mimetype == "text/event-stream":
        assert b"Historian failed" not in data, (f"a streamed run failed:\n{describe(req)}\n  stream: "
                                                 f"{data[-400:]!r}\napp log:\n{log}")
    path = req["path"]
    if path.startswith(API) and not (req["method"] == "OPTIONS" and status < 400) and not 300 <= status < 400:
        assert response.mimetype == "application/json", (
            f"non-JSON {status} ({response.mimetype}) under /api/:\n{describe(req)}\n  response: {data[:300]!r}")
        if req["method"] != "HEAD":
            payload = json.loads(data)
            if status >= 400 and path != API + "health":
                assert isinstance(payload.get("error"), dict) and {"code", "message"} <= set(payload["error"]), (
                    f"error {status} is not {{'error': {{code, message}}}}:\n{describe(req)}\n  "
                    f"response: {data[:300]!r}")
    return status, data


def _restore_sacrificial_runs(env: Env) -> None:
    """Runs the delete routes may delete (never the ones the other routes aim at)."""
    with env.app.app_context():
        runs = get_store().runs
        for run_id, kind in (("sac-ask", "ask"), ("sac-map", "map")):
            runs.replace_one({"_id": run_id}, dict(env.templates[kind], _id=run_id, thread_id=run_id), upsert=True)


# ---------------------------------------------------------------------------------------------- the tests
@pytest.mark.parametrize("route", ROUTE_NAMES)
@fuzz_settings(45, deadline_s=10)
@given(data=st.data())
def test_every_route_survives_fuzzed_input(env, route, data):
    req = data.draw(requests(env, route), label="request")
    authed = req["who"] in ("researcher", "admin", "token-researcher", "token-admin")
    valid = req["who"].startswith("token-") or req["csrf"] == "valid"
    if authed and valid:
        # the pipelines have their own (small) test; a full reindex is started once, in its own test
        assume(not _runs_pipeline(route, req["body"], req["headers"].get("Content-Type")))
        assume(not _starts_full_reindex(route, req["body"], req["headers"].get("Content-Type")))
    if "delete" in route:
        _restore_sacrificial_runs(env)
    send(env, req)


@fuzz_settings(90, deadline_s=10)
@given(data=st.data())
def test_any_method_and_odd_paths_under_api(env, data):
    """Methods no route has (TRACE, FOO, ...) and odd paths (empty, a newline, double slashes) under /api/ answer
    the documented JSON too."""
    rest = data.draw(st.one_of(st.sampled_from(API_PATHS), text.map(seg)), label="path")
    who = data.draw(st.sampled_from(WHO[:3]), label="who")
    method = data.draw(st.sampled_from(ODD_METHODS), label="method")
    send(env, {"route": "ANY method /api/<odd>", "who": who, "method": method, "path": API + rest, "query": "",
               "headers": {"Content-Type": "application/json"}, "body": b"{}" if method not in ("GET", "HEAD") else b"",
               "csrf": "none"})


EDGES = ["", "0", "-1", "007", "-0", "²", "١٢", "ⅷ", "1" * 4301, "\x00", "\n", "%", "a" * 3000, "1e309", "NaN", "..",
         "<script>", "\ud7ff\U0001f600"]
# route -> the path with {} where the fuzzed id goes, and the path with a real id (for its query parameters)
EDGE_PATHS = {
    "GET /documents/<id>": "/documents/{}", "GET /runs/<id>": P + "/runs/{}",
    "GET /runs/<id>/export.<fmt>": P + "/runs/{}/export.md",
    "GET /sources/<id>": P + "/sources/{}", "GET /maps/<id>": P + "/maps/{}",
    "GET /maps/<id>/export.<fmt>": P + "/maps/{}/export.json",
    "GET /api/maps/<id>": API + "maps/{}", "GET /api/runs/<id>": API + "runs/{}", "GET /api/jobs/<id>": API + "jobs/{}",
    "ANY /api/<unknown>": API + "{}",
}
EDGE_ROUTES = [r for r in ROUTE_NAMES if r.startswith(("GET", "ANY"))]


EDGE_BASES = {"GET /login": "/login", "GET /": "/", "GET /historian/": P + "/", "GET /ask": P + "/ask",
              "GET /runs": P + "/runs", "GET /verify": P + "/verify", "GET /map": P + "/map",
              "GET /maps": P + "/maps", "GET /admin/reindex": P + "/admin/reindex",
              "GET /api/runs": API + "runs", "GET /api/health": API + "health", "GET /api/config": API + "config",
              "GET /api/retrieve": API + "retrieve"}


def _short(failure: str) -> str:
    """An invariant's message without the log's traceback, but with the exception it ended in."""
    head = failure.split("app log:")[0].split("Traceback (most recent call last):")[0].rstrip()
    raised = [line.strip() for line in failure.splitlines() if re.match(r"\s*[\w.]+(Error|Exception): ", line)]
    return head + ("\n  raised: " + raised[-1] if raised else "")


@pytest.mark.parametrize("route", EDGE_ROUTES)
def test_edge_values_in_every_path_and_query_parameter(env, route):
    """Deterministic sweep (no Hypothesis): each edge value in the route's id and in each of its query parameters,
    as a researcher and as an admin; every failure is listed, not only the first."""
    if not hasattr(env, "table"):
        env.table = route_table(env)
    real = {"GET /documents/<id>": ODD_DOC, "GET /sources/<id>": ODD_DOC, "GET /api/jobs/<id>": env.ids["job"][0],
            "GET /maps/<id>": env.ids["run"][3], "GET /maps/<id>/export.<fmt>": env.ids["run"][3],
            "GET /api/maps/<id>": env.ids["run"][3], "ANY /api/<unknown>": "nothing"}.get(route, env.ids["run"][0])
    template = EDGE_PATHS.get(route)
    base = template.format(seg(real)) if template else EDGE_BASES[route]
    fixed = {"q": "war"} if route == "GET /api/retrieve" else {}
    cases = [(template.format(seg(v)), "") for v in EDGES] if template else []
    cases += [(base, urlencode({**fixed, name: v})) for name in env.table[route][2] for v in EDGES]
    failures = []
    for who in ("researcher", "admin"):
        for path, qs in cases:
            req = {"route": route + " (edges)", "who": who, "method": "GET", "path": path, "query": qs, "headers": {},
                   "body": b"", "csrf": "none"}
            try:
                send(env, req)
            except (AssertionError, pytest.fail.Exception) as exc:
                failures.append(_short(str(exc)))
    assert not failures, f"{len(failures)} of {2 * len(cases)} edge requests failed:\n\n" + "\n\n".join(failures[:8])


def _question_text():
    words = st.sampled_from(["What", "caused", "the", "war", "banks", "1893", "Lincoln", "cotton", "slavery", "?",
                             "[1]", "[sotu-1861-abraham-lincoln]", "[" + ODD_DOC + "]", "[nope]", "yes", "no", "not",
                             "never"])
    return st.one_of(
        st.lists(words, min_size=1, max_size=12).map(" ".join),
        st.text(min_size=1, max_size=80).filter(str.strip),
        st.tuples(st.lists(words, min_size=1, max_size=5).map(" ".join), text).map(lambda t: t[0] + " " + t[1]),
        st.sampled_from(["\u0000war\u0000", "war\u202e", "\U0001f600 war", "war " * 499, "x" * MAX_QUESTION, "ⅷ 1893",
                         "<script>alert(1)</script> war", "war\r\n\r\nevent: done\ndata: {}\n\n"]),
    )


@st.composite
def pipeline_requests(draw, env: Env, route: str):
    """A valid-shaped body (a non-empty string where the pipeline reads it) with fuzzed content, valid auth."""
    who = draw(st.sampled_from(["researcher", "admin", "token-researcher", "token-admin"]))
    headers = ({"Authorization": "Bearer " + ("tok-admin" if who == "token-admin" else "tok-r")}
               if who.startswith("token-") else {})
    token = env.csrf[who] if not who.startswith("token-") else None
    field = PIPELINE_FIELD[route]
    value = draw(_question_text())
    if field == "topic":
        value = value[:MAX_TOPIC + draw(st.sampled_from([0, 0, 1]))]
    fields = {field: value}
    runs = env.ids["run"]
    if field == "question":
        if draw(st.booleans()):
            fields["profile"] = draw(st.one_of(st.sampled_from(list(PROFILES)), text))
        if draw(st.booleans()):
            fields["parent"] = draw(st.one_of(st.sampled_from(runs), text))
    if field == "text":
        if draw(st.booleans()):
            fields["question"] = draw(st.one_of(st.just("Did banks close in 1893?"), text))
        if draw(st.booleans()):
            sources = draw(st.lists(st.one_of(st.sampled_from(env.ids["doc"]), text), max_size=4))
            fields["sources"] = sources if route.startswith("POST /api/") else ",".join(sources)
    as_json = route.startswith("POST /api/") or (route.endswith("/stream") and draw(st.booleans()))
    if as_json:
        body = json.dumps(fields, ensure_ascii=draw(st.booleans())).encode()
        headers["Content-Type"] = draw(st.sampled_from(["application/json", "text/plain",
                                                        "application/json; charset=utf-8"]))
    else:
        body = urlencode(list(fields.items()) + ([("csrf_token", token)] if token else [])).encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        token = None
    if token:
        headers["X-CSRFToken"] = token
    path = P + route.split(" ", 1)[1]
    return {"route": route + " (pipeline)", "who": who, "method": "POST", "path": path, "query": "", "headers": headers,
            "body": body, "csrf": "valid" if not who.startswith("token-") else "n/a (API token)"}


PIPELINE_BUDGET = [("POST /api/ask", 12, 30), ("POST /ask", 4, 30), ("POST /ask/stream", 4, 30),
                   ("POST /api/verify", 12, 30), ("POST /verify", 5, 30),
                   ("POST /api/map", 3, 60), ("POST /map", 1, 60), ("POST /map/stream", 2, 60)]


@pytest.mark.parametrize("route, n, deadline", PIPELINE_BUDGET, ids=[r for r, _, _ in PIPELINE_BUDGET])
def test_valid_shaped_bodies_run_the_pipelines(env, route, n, deadline):
    @fuzz_settings(n, deadline_s=deadline)
    @given(data=st.data())
    def fuzz(data):
        send(env, data.draw(pipeline_requests(env, route), label="request"))

    fuzz()


@fuzz_settings(25, deadline_s=10)
@given(data=st.data())
def test_reindex_api_with_valid_admin_csrf(env, data):
    """Starting reindexes: one full one, then fuzzed bodies with a valid admin CSRF token (incremental ones are
    no-ops, a second while one runs is a 409)."""
    admin = {"X-CSRFToken": env.csrf["admin"]}
    if not env.full_reindex_started:
        env.full_reindex_started = True
        send(env, {"route": "POST /api/reindex (valid)", "who": "admin", "method": "POST", "path": API + "reindex",
                   "query": "", "headers": {**admin, "Content-Type": "application/json"}, "body": b'{"full": true}',
                   "csrf": "valid"})
    ctype, body = data.draw(bodies(["full", "retry_failed"]), label="body")
    assume(not _starts_full_reindex("POST /api/reindex", body, ctype))
    headers = dict(admin, **({"Content-Type": ctype} if ctype else {}))
    status, reply = send(env, {"route": "POST /api/reindex (valid)", "who": "admin", "method": "POST",
                               "path": API + "reindex", "query": "", "headers": headers, "body": body, "csrf": "valid"})
    if status == 202:
        job = json.loads(reply)["job_id"]
        send(env, {"route": "GET /api/jobs/<id>", "who": "admin", "method": "GET", "path": API + "jobs/" + job,
                   "query": "", "headers": {}, "body": b"", "csrf": "none"})
