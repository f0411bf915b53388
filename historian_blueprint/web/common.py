"""What the pages share: the one error type a page raises (``Problem``: an HTTP status, a machine-readable code,
a message), the code of each error status, a server's own errors answered the same way, the index's errors as
problems, who is asking, a run this user may see, paging, server-sent progress, where a citation opens."""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from flask import Response, current_app, jsonify, render_template, request, stream_with_context, url_for

from historian_blueprint import history
from historian_blueprint.services import get_settings, get_store
from historian_blueprint.config import Settings
from historian_blueprint.index.service import IndexDamaged, IndexMismatch, IndexNotBuilt
from historian_blueprint.limits import Busy, Slots
from historian_blueprint.present import formats
from historian_blueprint.store import STORE_ERRORS, store_problem
from historian_blueprint.web.auth import current_identity
from historian_blueprint.web.headers import headers_for


class Problem(ValueError):
    """A request Historian cannot serve, with an HTTP status and a machine-readable code."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers or {}


# The machine-readable code of each error status, under /api/ (docs/operations.md lists them).
ERROR_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed",
               408: "timeout", 413: "too_large", 414: "uri_too_long", 417: "expectation_failed",
               429: "too_many_requests", 431: "headers_too_large", 500: "internal_error", 501: "not_implemented",
               505: "bad_request"}


def server_reply(status: int, message: str, target: str, settings: Settings) -> tuple[dict[str, str], bytes]:
    """The headers and body of an error a WSGI server answers itself, before or beside the app (a request line it
    cannot parse, a 414, a 431): the documented JSON when ``target`` (the path, as far as it was read) is under
    /api/, else a short page; with the security headers, and the connection closed."""
    if "/api/" in target:
        kind = "application/json"
        body = json.dumps({"error": {"code": ERROR_CODES.get(status, "error"), "message": message}})
    else:
        kind = "text/html; charset=utf-8"
        body = f"<!doctype html><title>{status}</title><p>{html.escape(message)}</p>"
    data = body.encode("utf-8")
    headers = {**headers_for(settings), "Content-Type": kind, "Content-Length": str(len(data)), "Connection": "close"}
    return headers, data


def _slots() -> Slots:
    settings = get_settings()
    return Slots(get_store(), settings.limits_max_running_per_user, settings.limits_timeout_s)


def _take(kind: str) -> tuple[Slots, str]:
    """One of this requester's run slots: 429 with Retry-After when they have as many runs going as allowed
    (HISTORIAN_LIMITS_MAX_RUNNING_PER_USER), so one user cannot starve the others."""
    slots = _slots()
    try:
        return slots, slots.take(_runner(), kind)
    except Busy as exc:
        raise Problem(429, "too_many_requests", str(exc), {"Retry-After": str(exc.retry_after)}) from None


@contextmanager
def running(kind: str) -> Iterator[None]:
    """Hold one of this user's run slots for the block (``_take``)."""
    slots, token = _take(kind)
    try:
        yield
    finally:
        slots.give_back(token)


class _HeldEvents:
    """``make()``'s events while they hold a run slot: the slot is given back when they end or are closed, also when
    they are closed before the first event (a generator that never started runs no ``finally``)."""

    def __init__(self, slots: Slots, token: str, make: Callable[[], Iterator[dict[str, Any]]]) -> None:
        self._slots, self._token, self._make = slots, token, make
        self._events: Iterator[dict[str, Any]] | None = None

    def _run(self) -> Iterator[dict[str, Any]]:
        try:
            inner = self._make()
            try:
                yield from inner
            finally:
                inner.close()
        finally:
            self._slots.give_back(self._token)

    def __iter__(self) -> _HeldEvents:
        return self

    def __next__(self) -> dict[str, Any]:
        if self._events is None:
            self._events = self._run()
        return next(self._events)

    def close(self) -> None:
        if self._events is not None:
            self._events.close()
        else:
            self._slots.give_back(self._token)


def running_events(kind: str, make: Callable[[], Iterator[dict[str, Any]]]) -> Iterator[dict[str, Any]]:
    """``make()``'s events with a run slot taken now (429 before any event when none is free) and given back
    when the run ends, however the stream is left."""
    slots, token = _take(kind)
    return _HeldEvents(slots, token, make)


def _runner() -> str:
    """Whose slots a request takes: the user's; without a login (HISTORIAN_LOGIN_REQUIRED off), the address's, so
    that every anonymous visitor does not share one user's allowance."""
    name = user()
    return name if name != "anonymous" else f"anonymous@{request.remote_addr or '?'}"


def wants_events() -> bool:
    """Whether this request is a progress stream's (``.../stream`` asked for as server-sent events): its errors are
    an ``error`` event the page reads, never a page or JSON."""
    return request.path.endswith("/stream") and request.accept_mimetypes.best == "text/event-stream"


def error_event(message: str, code: str = "error") -> str:
    """A progress stream's ``error`` event (the page shows its message)."""
    return f"event: error\ndata: {json.dumps({'code': code, 'message': message})}\n\n"


def problem_response(exc: Problem) -> Any:
    """A problem as the asker reads it: an ``error`` event for a progress stream (``.../stream``) that never
    started, JSON under /api/ or for a JSON request, else Historian's error page."""
    if wants_events():
        return Response(error_event(exc.message, exc.code), exc.status, exc.headers, mimetype="text/event-stream")
    if "/api/" in request.path or request.is_json or request.accept_mimetypes.best == "application/json":
        return jsonify(error={"code": exc.code, "message": exc.message}), exc.status, exc.headers
    return render_template("historian/error.html", title="Historian", message=exc.message), exc.status, exc.headers


@contextmanager
def index_problems() -> Iterator[None]:
    """The index's errors as problems: damaged (503, naming the file and the rebuild), none built yet (503, with what
    to do), built with another model (409)."""
    try:
        yield
    except IndexDamaged as exc:
        raise Problem(503, "index_damaged", str(exc)) from None
    except IndexNotBuilt as exc:
        raise Problem(503, "index_not_built", str(exc)) from None
    except IndexMismatch as exc:
        raise Problem(409, "index_mismatch", str(exc)) from None


def user() -> str:
    identity = current_identity()
    return identity.user_id if identity else "anonymous"


def is_admin() -> bool:
    identity = current_identity()
    return bool(identity and identity.is_admin)


def load_run(run_id: str, kind: str = "ask", what: str = "run") -> dict[str, Any]:
    """The run of this kind (``ask`` or ``map``), if this user may see it (its owner or an admin); 404
    otherwise, so ids do not leak."""
    run = get_store().runs.find_one({"_id": run_id, "kind": kind})
    if run is None or (run.get("user_id") != user() and not is_admin()):
        raise Problem(404, "not_found", f"no {what} {run_id}")
    return run


RUNS_PER_PAGE = 50


def page_number(raw: str | None) -> int:
    """``?page=N`` (1-based); anything else is a clear 400."""
    if raw is None or raw == "":
        return 1
    # "²" is a digit to isdigit(), and int() refuses strings of more than 4,300 digits: both are checked first
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 6 or int(raw) < 1 or int(raw) > 100_000:
        raise Problem(400, "bad_request", "page must be a whole number from 1")
    return int(raw)


def host_source_url(source_id: str, start: int | None, end: int | None) -> str | None:
    """``HISTORIAN_SOURCE_URL`` with {id}, {start}, {end} filled (the host's own document page)."""
    pattern = get_settings().source_url
    if not pattern:
        return None
    return pattern.format(id=source_id, start="" if start is None else start, end="" if end is None else end)


def delete_own(run: dict[str, Any], what: str) -> None:
    """Delete a stored run (an answer or a map): only its owner may; an admin who can see it gets 403."""
    if run.get("user_id") != user():
        raise Problem(403, "forbidden", f"you can delete only your own {what}")
    history.delete_run(get_store(), run)


def server_sent(events: Iterator[dict[str, Any]], done: Callable[[dict[str, Any]], dict[str, Any]],
                what: str) -> Response:
    """Server-sent events of a run: one ``node`` event per finished step, ``done`` with ``done(event)``'s payload
    (or ``error``: the page must hear about a failure rather than hang)."""
    def generate() -> Iterator[str]:
        try:
            for event in events:
                if event.get("event") == "done":
                    yield f"event: done\ndata: {json.dumps(done(event))}\n\n"
                else:
                    yield f"event: node\ndata: {json.dumps(event)}\n\n"
        except (IndexNotBuilt, IndexMismatch) as exc:
            yield error_event(str(exc), "index")
        except STORE_ERRORS as exc:
            current_app.logger.exception("%s failed", what)
            yield error_event(store_problem(exc), "store_failing")
        except Exception as exc:  # noqa: BLE001 - a stream that already began can only end with an error event
            current_app.logger.exception("%s failed", what)
            yield error_event(f"Historian failed: {type(exc).__name__}")
        finally:  # the asker left: the run goes on to its end (or its time limit) and is stored, by design
            close = getattr(events, "close", None)
            if close is not None:
                close()

    return Response(stream_with_context(generate()), mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


def source_link(source_id: str, start: int | None = None, end: int | None = None, run_id: str | None = None) -> str:
    """Where a citation opens: the host's document page (HISTORIAN_SOURCE_URL), else Historian's source page with
    the span highlighted and in view."""
    return host_source_url(source_id, start, end) or url_for(
        "historian.source", source_id=source_id, run=run_id, span=f"{start}-{end}" if start is not None else None,
        _anchor="h-mark-first" if start is not None else None,
    )


def export_as(kind: str, fmt: str, output: dict[str, Any], title: str, name: str) -> Response:
    """A stored answer's or map's output in one of its kind's export formats (present/formats.py), downloaded as
    ``<name>.<fmt>``; a format there is not is a 404 naming the ones there are."""
    try:
        chosen = formats.find(fmt, kind)
    except LookupError as exc:
        raise Problem(404, "not_found", str(exc)) from None
    body = chosen.render(formats.Exported(kind, output, title, get_store().get_document))
    return exported(body, chosen.mimetype, f"{name}.{fmt}")


def exported(body: str, mimetype: str, filename: str, inline: bool = False) -> Response:
    """An export as a download (or ``inline``): Flask adds the charset to text/* only; other types name theirs."""
    kind = {"mimetype": mimetype} if mimetype.startswith("text/") else {"content_type": f"{mimetype}; charset=utf-8"}
    disposition = "inline" if inline else f'attachment; filename="{filename}"'
    return Response(body, **kind, headers={"Content-Disposition": disposition})
