"""The demo host: a small document reader that registers Historian over the sample corpus.

Run it with ``historian serve``. Its data (store, index, runs, secret key) lives in
``HISTORIAN_DEMO_HOME`` when set, else the Flask instance folder.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
from flask.cli import with_appcontext
from flask import Blueprint, Flask, abort, current_app, flash, redirect, render_template, request, session, url_for
from flask_login import LoginManager, UserMixin, current_user, login_required, login_user, logout_user
from flask_wtf.csrf import generate_csrf, validate_csrf
from werkzeug.security import check_password_hash, generate_password_hash
from werkzeug.serving import WSGIRequestHandler
from wtforms import ValidationError

from historian_blueprint import Historian, get_settings, get_services, get_store, preload
from historian_blueprint.corpus.loader import load_corpus
from historian_blueprint.config import DEFAULT_CSP
from historian_blueprint.demo.login import NONCE, LoginThrottle, safe_next
from historian_blueprint.index import service
from historian_blueprint.serving import default_workers, serve_with_gunicorn
from historian_blueprint.web import headers

CORPUS_DIR = Path(__file__).resolve().parent / "corpus"
PAGE_SIZE = 20
ROLES = ("researcher", "admin")
_CORPUS_MARKER = "demo:sample_corpus"


class DemoUser(UserMixin):
    """A logged-in user; its id is the user name (Historian keys the user's runs by it)."""

    def __init__(self, name: str, role: str) -> None:
        self.id = name
        self.role = role


def demo_home(app: Flask, test_config: dict[str, Any] | None) -> Path:
    """Return the folder holding the demo's data."""
    home = (test_config or {}).get("DEMO_HOME") or os.environ.get("HISTORIAN_DEMO_HOME") or app.instance_path
    path = Path(home).resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def _secret_key(home: Path) -> str:
    path = home / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_hex(32), encoding="utf-8")
        path.chmod(0o600)
    return path.read_text(encoding="utf-8").strip()


def parse_users(spec: str) -> list[tuple[str, str, str]]:
    """Parse ``name:password:role,...`` (role ``researcher`` or ``admin``)."""
    users = []
    for item in filter(None, (part.strip() for part in spec.split(","))):
        parts = item.split(":")
        if len(parts) != 3 or not all(parts):
            raise ValueError(f"HISTORIAN_DEMO_USERS: {item!r} is not name:password:role")
        name, password, role = parts
        if role not in ROLES:
            raise ValueError(f"HISTORIAN_DEMO_USERS: role {role!r} of {name!r} is not one of {', '.join(ROLES)}")
        users.append((name, password, role))
    return users


def ensure_users(users_collection: Any, spec: str | None, out: Any = None) -> None:
    """Create the configured users, or on first start a researcher and an admin with random passwords."""
    if spec:
        for name, password, role in parse_users(spec):
            existing = users_collection.find_one({"_id": name})
            if existing and existing["role"] == role and check_password_hash(existing["password_hash"], password):
                continue
            users_collection.replace_one(
                {"_id": name},
                {"_id": name, "role": role, "password_hash": generate_password_hash(password)}, upsert=True
            )
        return
    if users_collection.count_documents({}):
        return
    lines = []
    for role in ROLES:
        password = secrets.token_urlsafe(12)
        users_collection.insert_one({"_id": role, "role": role, "password_hash": generate_password_hash(password)})
        lines.append(f"  {role:<10} password: {password}")
    print("Historian demo: created users (shown only this once):", *lines, sep="\n", file=out or sys.stderr, flush=True)


def load_sample_corpus_once(store: Any) -> None:
    """Load the bundled sample corpus on first start only."""
    if store.meta.find_one({"_id": _CORPUS_MARKER}):
        return
    report = load_corpus(store, sorted(CORPUS_DIR.glob("*.jsonl")))
    if report.errors:
        raise RuntimeError("sample corpus failed to load: " + "; ".join(report.errors[:5]))
    store.meta.insert_one({"_id": _CORPUS_MARKER, "kind": "demo", "summary": report.summary()})
    print(f"Historian demo: loaded the sample corpus ({report.summary()})", file=sys.stderr, flush=True)


def create_app(test_config: dict[str, Any] | None = None) -> Flask:
    """Create the demo document reader with Historian registered."""
    app = Flask(__name__, instance_relative_config=True)
    home = demo_home(app, test_config)
    app.config.from_mapping(
        SECRET_KEY=_secret_key(home),
        HISTORIAN_DATA_DIR=str(home),
        HISTORIAN_AUTO_MIGRATE=True,
        HISTORIAN_BASE_TEMPLATE="demo/base.html",
        HISTORIAN_SOURCE_URL=None,
        HISTORIAN_SECURITY_CSP=DEFAULT_CSP,  # the demo's layout has no inline script or style: enforce it
        DEMO_LOAD_CORPUS=True,
        DEMO_LOGIN_MAX_FAILURES=5,
        DEMO_LOGIN_MAX_FAILURES_PER_ADDRESS=20,
        DEMO_LOGIN_WINDOW_S=900,
        MAX_CONTENT_LENGTH=2_000_000,  # the reader's own forms (login) read no more
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_HTTPONLY=True,
    )
    for key in ("DEMO_LOGIN_MAX_FAILURES", "DEMO_LOGIN_MAX_FAILURES_PER_ADDRESS", "DEMO_LOGIN_WINDOW_S"):
        raw = os.environ.get(f"HISTORIAN_{key}")
        if raw is not None:
            if not (raw.strip().isascii() and raw.strip().isdigit()) or len(raw.strip()) > 9 or int(raw) < 1:
                raise ValueError(f"HISTORIAN_{key}={raw!r}: expected a whole number of at least 1")
            app.config[key] = int(raw)
    if test_config:
        app.config.update({k: v for k, v in test_config.items() if k != "DEMO_HOME"})

    login_manager = LoginManager(app)
    login_manager.login_view = "demo.login"

    Historian(app)

    with app.app_context():
        store = get_store()
        users = store.database["users"]
        ensure_users(users, os.environ.get("HISTORIAN_DEMO_USERS"))
        if app.config["DEMO_LOAD_CORPUS"]:
            load_sample_corpus_once(store)

    @login_manager.user_loader
    def load_user(user_id: str) -> DemoUser | None:
        record = get_store().database["users"].find_one({"_id": user_id})
        nonce = session.get(NONCE) or ""
        if not record or not nonce or not secrets.compare_digest(nonce, record.get("session_nonce") or ""):
            return None  # logged out since (every session of the user ends at a logout): log in again
        return DemoUser(record["_id"], record["role"])

    @app.after_request
    def security_headers(response):
        return headers.apply(response, get_settings(app))

    app.register_blueprint(build_reader())
    app.cli.commands["historian"].add_command(serve_command)
    return app


def _throttle() -> LoginThrottle:
    store = get_store()
    config = current_app.config
    return LoginThrottle(
        store.database["login_failures"], store.write_lock(), config["DEMO_LOGIN_MAX_FAILURES"],
        config["DEMO_LOGIN_MAX_FAILURES_PER_ADDRESS"], config["DEMO_LOGIN_WINDOW_S"],
    )


def _form_csrf_problem() -> str | None:
    try:
        validate_csrf(request.form.get("csrf_token"))
    except ValidationError as exc:
        return str(exc) or "The CSRF token is missing or invalid."
    return None


def login_view():
    if request.method == "GET":
        return render_template("demo/login.html", error=None)
    problem = _form_csrf_problem()
    if problem:
        return render_template("demo/login.html", error=f"{problem} Reload the page and try again."), 400
    name = request.form.get("username", "")[:200]
    address = request.remote_addr or "unknown"
    throttle = _throttle()
    held = session.get(LoginThrottle.SESSION_KEY)  # [name, address, time]: the turn an earlier 429 gave
    turn = held[2] if isinstance(held, list) and len(held) == 3 and held[:2] == [name, address] else None
    verdict = throttle.attempt(name, address, turn)  # refused at once or recorded: it never holds the thread
    if verdict.refused:
        if verdict.turn is not None:
            session[LoginThrottle.SESSION_KEY] = [name, address, verdict.turn]
        return render_template("demo/login.html", error=verdict.refused), 429, {
            "Retry-After": str(verdict.retry_after)}
    users = get_store().database["users"]
    record = users.find_one({"_id": name})
    if not throttle.password_matches(record, request.form.get("password", "")):  # equal work for unknown names
        return render_template("demo/login.html", error="Unknown user or wrong password."), 401
    throttle.succeeded(name, address, verdict.at)
    nonce = record.get("session_nonce")
    if not nonce:
        nonce = secrets.token_urlsafe(16)
        with get_store().write_lock():
            users.update_one({"_id": name}, {"$set": {"session_nonce": nonce}})
    session.clear()  # nothing from before the login (a planted session) carries over
    login_user(DemoUser(record["_id"], record["role"]))
    session[NONCE] = nonce
    return redirect(safe_next(request.args.get("next")) or url_for("demo.documents"))


def logout_view():
    problem = _form_csrf_problem()
    if problem:
        return render_template("demo/login.html", error=f"{problem} Log out again from a page of this site."), 400
    if current_user.is_authenticated:
        with get_store().write_lock():  # every session of this user, copies included, ends here
            get_store().database["users"].update_one(
                {"_id": current_user.id}, {"$set": {"session_nonce": secrets.token_urlsafe(16)}}
            )
    logout_user()
    session.clear()
    flash("Logged out.")
    return redirect(url_for("demo.login"))


@login_required
def documents_view():
    store = get_store()
    fields = store.fields
    q = request.args.get("q", "").strip()
    page = max(request.args.get("page", 1, type=int) or 1, 1)
    query: dict[str, Any] = {}
    if q:
        pattern = {"$regex": re.escape(q), "$options": "i"}
        query = {"$or": [{fields["title"]: pattern}, {fields["text"]: pattern}]}
    total = store.count_documents(query)
    pages = max((total + PAGE_SIZE - 1) // PAGE_SIZE, 1)
    page = min(page, pages)
    sort = [(fields["year"] or fields["date"], 1), (fields["title"], 1)]
    cursor = (store.documents.find(query, store.fields.projection()).sort(sort)
              .skip((page - 1) * PAGE_SIZE).limit(PAGE_SIZE))
    docs = [fields.document(r) for r in cursor]
    return render_template("demo/documents.html", docs=docs, q=q, page=page, pages=pages, total=total)


@login_required
def document_view(doc_id: str):
    doc = get_store().get_document(doc_id)
    if doc is None:
        abort(404)
    return render_template("demo/document.html", doc=doc)


def user_context():
    return {"demo_user": current_user, "demo_csrf_token": generate_csrf}


# The reader's pages: (rule, endpoint, view, methods); the views are named *_view beside the demo's modules
# (demo.login is the throttle's).
READER_ROUTES = (
    ("/login", "login", login_view, ["GET", "POST"]),
    ("/logout", "logout", logout_view, ["POST"]),
    ("/", "documents", documents_view, ["GET"]),
    ("/documents/<historian_document_id:doc_id>", "document", document_view, ["GET"]),  # links encode every "/"
)


def build_reader() -> Blueprint:
    """Return the document reader's own pages (list, search, read, login)."""
    bp = Blueprint("demo", __name__, template_folder="templates", static_folder="static",
                   static_url_path="/demo-static")
    for rule, endpoint, view, methods in READER_ROUTES:
        bp.add_url_rule(rule, endpoint, view_func=view, methods=methods)
    bp.app_context_processor(user_context)
    return bp


@click.command("serve")
@with_appcontext
@click.option("--port", default=5000, show_default=True, help="Port on 127.0.0.1.")
@click.option("--workers", type=click.IntRange(1, 32), default=default_workers,
              show_default="Linux: cores + 1, at most 4; else 1",
              help="Worker processes: more than 1 runs the app under gunicorn, the workers forked from a master that "
                   "loaded the models and the serving generation once (they share that memory); 1 serves with "
                   "Flask's own server in one process (one core's worth of Python).")
@click.option("--threads", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Threads per gunicorn worker.")
def serve_command(port: int, workers: int, threads: int) -> None:
    """Serve the demo document reader with Historian on 127.0.0.1."""
    from flask import current_app

    app = current_app._get_current_object()
    builder = None
    if service.current_generation(get_store()) is None:
        try:
            builder = _build_first_index(separate_process=workers > 1)
            click.echo("Building the search index in the background (progress on the admin page, "
                       "/historian/admin/reindex).")
        except service.ReindexBusy:
            pass
    click.echo(f"Historian demo on http://127.0.0.1:{port}/  (Historian at {get_settings(app).url_prefix}/)")
    if workers > 1:
        get_store().close()  # the workers fork from this process: none of them may inherit an open connection
        try:
            serve_with_gunicorn(lambda: app, bind=f"127.0.0.1:{port}", workers=workers, threads=threads,
                                preload=preload)
        finally:
            if builder is not None and builder.poll() is None:  # the server stops: so does its first build
                builder.terminate()
                try:
                    builder.wait(30)
                except subprocess.TimeoutExpired:
                    builder.kill()
        return
    app.run(host="127.0.0.1", port=port, threaded=True, use_reloader=False, debug=False, request_handler=QuietHandler)


def _build_first_index(*, separate_process: bool) -> subprocess.Popen | None:
    """Start the first build: in a thread of this process, or, when gunicorn's master is this process (workers fork
    from it, and a fork must not copy a thread in the middle of encoding), as ``historian reindex`` beside it, which
    ends with the server (on Linux also when the server is killed) and writes what it says to ``first-build.log`` in
    the demo home (its progress and errors are in its job, on the admin page)."""
    if not separate_process:
        service.start_reindex(user="demo")
        return None
    log = get_services().data_dir / "first-build.log"
    with open(log, "ab") as out:
        return subprocess.Popen([sys.executable, "-c", _BUILDER, str(os.getpid())], stdout=out,
                                stderr=subprocess.STDOUT)


# The first build's process: asks Linux for a SIGTERM when the server dies (PR_SET_PDEATHSIG), gives up if the server
# is already gone, then runs `historian reindex`.
_BUILDER = """
import ctypes, os, signal, sys
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)
except (OSError, AttributeError):
    pass
if os.getppid() != int(sys.argv[1]):
    sys.exit(0)
sys.argv[1:] = ["reindex"]
from historian_blueprint.demo import main
main()
"""


class QuietHandler(WSGIRequestHandler):
    """The development server without its version banner (``Server: Werkzeug/x Python/y``), and its own errors
    (a bad request line, a 414 for an over-long URL: answered before the app sees the request) with the security
    headers the app's pages carry, and as the documented JSON under ``/api/``."""

    def version_string(self) -> str:
        return "historian-demo"

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        from historian_blueprint.config import Settings
        from historian_blueprint.web.common import server_reply

        short = message or self.responses.get(code, ("Error",))[0]
        target = getattr(self, "path", None) or getattr(self, "requestline", "") or ""
        headers, data = server_reply(code, short, target, Settings())  # as gunicorn's own errors (serving.py)
        self.log_error("code %d, message %s", code, short)
        self.send_response(code, short)
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if getattr(self, "command", "") != "HEAD" and code >= 200 and code not in (204, 304):
            self.wfile.write(data)


def main() -> None:
    """Console script ``historian``: ``flask --app historian_blueprint.demo historian ...``. The demo app (which
    makes its home, its users and loads the corpus) is created only when a command runs: ``--help`` writes
    nothing."""
    from flask.cli import ScriptInfo

    from historian_blueprint.cli import build_cli

    group = build_cli()
    group.add_command(serve_command)
    group.main(args=sys.argv[1:], prog_name="historian", obj=ScriptInfo(create_app=create_app))
