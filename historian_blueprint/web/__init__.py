"""The Historian blueprint: pages and JSON API under ``HISTORIAN_URL_PREFIX``."""

from __future__ import annotations

import logging
from urllib.parse import quote, urlsplit

from flask import Blueprint, current_app, jsonify, render_template, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge
from werkzeug.routing import PathConverter, Rule

from historian_blueprint.services import get_settings, get_services
from historian_blueprint.migrate import pending_message
from historian_blueprint.resources import resource_path
from historian_blueprint.serving import SERVER_ERRORS
from historian_blueprint.store import STORE_ERRORS, store_problem
from historian_blueprint.web import admin, api, auth, filters, headers, maps, research, views
from historian_blueprint.web.bodies import BodyGuard
from historian_blueprint.web.common import ERROR_CODES, Problem, problem_response, server_reply, wants_events

log = logging.getLogger("historian")

# The modules of pages and endpoints, each with its ROUTES ((rule, view, methods), the views top-level functions): a
# new page is a module of this folder (its templates under templates/historian/) named here. The templates' filters
# and globals are all in filters.py; the error handlers and hooks all in this module.
PAGES = (views, api, admin, research, maps)


class AnyPath(PathConverter):
    """A path that may hold any character, a newline included (``path`` stops at one); not starting with a
    slash, so ``/api//ask`` still finds no rule and gets werkzeug's redirect to ``/api/ask``."""

    regex = r"[^/][\s\S]*?"
    part_isolating = False  # spans slashes (werkzeug would infer True: the pattern holds no literal "/")


class DocumentId(PathConverter):
    """A host's document id in a path: it may hold slashes, and its links encode every one (``%2F``), so an id
    such as ``a/../b`` is never read by a browser as a path to walk (it would open ``b``)."""

    def to_url(self, value: str) -> str:
        return quote(str(value), safe="")


def converters(state) -> None:  # before any rule that uses them is added
    state.app.url_map.converters.setdefault("historian_anything", AnyPath)
    state.app.url_map.converters.setdefault("historian_document_id", DocumentId)


def answer_what_the_server_refuses(state) -> None:
    """A body the server cannot read is the client's 400 on every route of the app, the host's too (a malformed
    chunk, a body that stops arriving: ``BodyGuard``), not a failure; and the errors gunicorn answers itself
    (served with ``serving.thread_worker``) are answered as Historian's are."""
    state.app.wsgi_app = BodyGuard(state.app.wsgi_app)
    settings = get_settings(state.app)
    state.app.extensions.setdefault(
        SERVER_ERRORS, lambda status, message, target: server_reply(status, message, target, settings))


def cap_the_body():
    """Every body Historian reads (JSON, forms, uploads) stops at HISTORIAN_LIMITS_MAX_BODY_BYTES: 413."""
    limit = get_settings().limits_max_body_bytes
    host = current_app.config.get("MAX_CONTENT_LENGTH")
    request.max_content_length = min(limit, host) if host else limit
    if request.content_length is not None and request.content_length > request.max_content_length:
        raise RequestEntityTooLarge(f"the body is larger than {request.max_content_length} bytes")


def check_the_login_once():
    """A host whose login cannot work hears it once, with the fix, in its log (the app's LoginManager may be
    set up after Historian's, so this is checked at the first request rather than at ``init_app``)."""
    state = get_services()
    if "login_checked" not in state.extras:
        state.extras["login_checked"] = True
        problem = auth.login_problem(current_app)
        if problem:
            log.warning("Historian: %s", problem)


def refuse_while_migrations_pending():
    pending = get_services().pending_migrations
    if not pending or request.endpoint in ("historian.static", "historian.api_health"):
        return None
    message = pending_message(pending)
    if "/api/" in request.path:
        return jsonify(error={"code": "migrations_pending", "message": message}), 503
    return render_template("historian/error.html", title="Historian needs a migration", message=message), 503


def security_headers(response):
    return headers.apply(response, get_settings())


def layout():
    return {"historian_base_template": get_settings().base_template}


def problem(exc: Problem):
    return problem_response(exc)


def http_error(exc: HTTPException):
    """The blueprint's one handler of HTTP errors: under /api/ every error is the documented JSON; a page's bad
    request is Historian's error page with what was wrong; other pages' errors are Flask's."""
    if "/api/" not in request.path:
        if exc.code == 400:
            return render_template("historian/error.html", title="Bad request", message=exc.description), 400
        return exc
    code = ERROR_CODES.get(exc.code or 500, "error")
    return jsonify(error={"code": code, "message": exc.description or exc.name}), exc.code or 500


def same_site_redirect(response):
    """werkzeug's redirect of a path with doubled slashes (``/historian//ask``: routing, before any view) names
    the host the Host header gave; under Historian's prefix the Location becomes the path alone, so a forged
    Host header sends no one elsewhere. The host app's own paths keep werkzeug's answer."""
    if response.status_code not in (301, 308) or request.url_rule is not None or not response.location:
        return response
    target = urlsplit(response.location)
    prefix = get_settings().url_prefix.rstrip("/")
    if target.netloc and (target.path == prefix or target.path.startswith(prefix + "/")):
        response.location = target.path + (f"?{target.query}" if target.query else "")
    return response


def server_error(exc: Exception):
    """A failure inside Historian: logged with its traceback, answered without one; a store that cannot be read
    or written is a 503 that says so ("the database cannot be written (disk full?)")."""
    current_app.logger.exception("Historian failed on %s %s", request.method, request.path)
    if isinstance(exc, STORE_ERRORS):
        return problem_response(Problem(503, "store_failing", store_problem(exc)))
    message = f"Historian failed ({type(exc).__name__}); the error is in the server log"
    if wants_events():
        return problem_response(Problem(500, "internal_error", message))
    if "/api/" in request.path:
        return jsonify(error={"code": "internal_error", "message": message}), 500
    return render_template("historian/error.html", title="Historian failed", message=message), 500


def api_not_found(rest: str = ""):
    """No API route here: JSON, not the host's HTML 404 (405 when the path exists for other methods)."""
    adapter = current_app.url_map.bind("localhost")
    allowed = []
    for method in ("GET", "POST", "PUT", "PATCH", "DELETE"):
        try:
            rule, _ = adapter.match(request.path, method=method, return_rule=True)
        except HTTPException:
            continue
        if rule.endpoint != request.endpoint:
            allowed.append(method)
    if allowed:
        return jsonify(error={"code": "method_not_allowed", "message": f"use {', '.join(allowed)}"}), 405
    return jsonify(error={"code": "not_found", "message": f"no API route {request.path}"}), 404


def catch_all_under_api(state) -> None:
    """Every other path and method under /api/ reaches ``api_not_found``: a rule without methods matches any
    (TRACE, PROPFIND...), and its converter matches any characters (a newline too), so routing never
    answers the host's HTML 404 or 405 there."""
    prefix = state.url_prefix or ""
    state.app.view_functions["historian.api_not_found"] = api_not_found
    for path in (f"{prefix}/api/", f"{prefix}/api/<historian_anything:rest>"):
        state.app.url_map.add(Rule(path, endpoint="historian.api_not_found"))


def build_blueprint() -> Blueprint:
    """Return a new blueprint (templates and static files found installed or in a checkout)."""
    bp = Blueprint(
        "historian",
        __name__,
        template_folder=str(resource_path("templates")),
        static_folder=str(resource_path("static")),
        static_url_path="/static",
    )
    bp.record_once(converters)
    bp.record_once(answer_what_the_server_refuses)
    bp.before_request(cap_the_body)
    bp.before_request(check_the_login_once)
    bp.before_request(refuse_while_migrations_pending)
    bp.after_request(security_headers)
    bp.context_processor(layout)
    bp.register_error_handler(Problem, problem)
    bp.register_error_handler(HTTPException, http_error)
    bp.after_app_request(same_site_redirect)
    bp.register_error_handler(Exception, server_error)
    bp.record_once(catch_all_under_api)
    filters.register(bp)
    for page in PAGES:
        for rule, view, methods in page.ROUTES:
            bp.add_url_rule(rule, view_func=view, methods=methods)
    return bp
