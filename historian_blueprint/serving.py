"""Several worker processes on a real WSGI server: gunicorn, run from Python (``historian serve --workers N``).

The master builds the app once and ``historian_blueprint.preload(app)`` loads what every worker needs (the serving
generation, the encoder's model, the spaCy pipeline, the graphs, the lexicons) before the fork, with no Python thread
started and no connection left open, and freezes it out of the garbage collector's reach (``gc.freeze``), so the
workers share these pages with the master instead of each holding a copy. The serving generation's vectors and FAISS
codes are memory-mapped read-only files (index.retriever) besides. A new generation is loaded by every worker within a
second of its swap, with no restart (into each worker's own memory, until the next start). Writes to the embedded
store are serialized across the workers by its file lock; several machines need a real MongoDB (docs/operations.md).
The workers answer gunicorn's own errors (a request line it cannot parse, a 414, a 431) as the app answers errors
(``thread_worker``).
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import sys
from collections.abc import Callable
from typing import Any

# Where an app keeps how its server's own errors are answered (``app.extensions[SERVER_ERRORS]``, Historian's
# blueprint puts it there): a callable of (status, message, path as far as it was read) returning the reply's headers
# and body. ``thread_worker`` uses it; an app without one gets gunicorn's own page.
SERVER_ERRORS = "historian.server_errors"


def default_workers() -> int:
    """Worker processes ``historian serve`` starts when not told: on Linux one more than the cores the process may use
    (its CPU affinity, not a container's CPU quota), at most 4 (each worker holds about 200 MB of its own; measured on
    2 cores: 3 workers 22.5 asks/s, 2 workers 20.9); 1 elsewhere."""
    if not sys.platform.startswith("linux"):  # forking after native libraries loaded is untested elsewhere (macOS)
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return min(4, cores + 1)  # one more than the cores: a worker waiting on the store's lock leaves a core idle


def serve_with_gunicorn(factory: Callable[[], Any], *, bind: str, workers: int, threads: int = 4,
                        timeout: int = 120, preload: Callable[[Any], Any] | None = None) -> None:
    """Run ``factory()``'s app under gunicorn's threaded workers until interrupted; with ``preload``, the app is
    made once in the master and ``preload(app)`` runs there before the workers fork from it."""
    from gunicorn.app.base import BaseApplication

    _fewer_malloc_arenas()

    class Historian(BaseApplication):
        def load_config(self) -> None:
            for key, value in {"bind": bind, "workers": workers, "threads": threads, "worker_class": thread_worker(),
                               "timeout": timeout, "graceful_timeout": 30, "accesslog": None,
                               "preload_app": preload is not None}.items():
                self.cfg.set(key, value)
            if "control_socket_disable" in self.cfg.settings:  # gunicorn 25.1+: no socket file in the user's home
                self.cfg.set("control_socket_disable", True)
            if preload is not None:
                self.cfg.set("worker_exit", worker_exit)

        def load(self) -> Any:
            app = factory()
            if preload is not None:
                preload(app)
            return app

    Historian().run()


@functools.cache
def thread_worker() -> type:
    """Gunicorn's threaded worker (gthread) with its own error answers (a request line it cannot parse, a 414 for a
    long URL, a 431 for too many or too large headers: answered before the app sees the request) given as the app
    answers errors (``SERVER_ERRORS``: under Historian, JSON under /api/, with the security headers). Gunicorn still
    picks the status and logs the error. A host's ``gunicorn.conf.py`` sets ``worker_class = thread_worker()``."""
    from gunicorn import util
    from gunicorn.workers.gthread import ThreadWorker

    class HistorianThreadWorker(ThreadWorker):
        def handle_error(self, req: Any, client: Any, addr: Any, exc: BaseException) -> None:
            answer = getattr(self.wsgi, "extensions", {}).get(SERVER_ERRORS)
            if answer is None:
                return super().handle_error(req, client, addr, exc)
            page = _Written()
            super().handle_error(req, page, addr, exc)  # gunicorn's status, log line and access log; its page kept
            status, _, reason = page.status_line().partition(" ")
            reply = page.data
            try:
                detail = f"{reason}: {str(exc)[:200]}" if int(status) < 500 else reason
                headers, body = answer(int(status), detail, _request_target(req, exc))
                head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
                reply = f"HTTP/1.1 {status} {reason}\r\n{head}\r\n".encode("latin-1") + body
            except Exception:  # noqa: BLE001 - the app's answer failed: gunicorn's page is still an answer
                self.log.exception("The app's answer to a server error failed")
            try:
                util.write_nonblock(client, reply)
            except Exception:  # noqa: BLE001 - as gunicorn's own: the client may be gone
                self.log.debug("Failed to send error message.")
            return None

    return HistorianThreadWorker


class _Written:
    """Stands for the client's socket while gunicorn writes its error page: what it wrote is kept, not sent."""

    def __init__(self) -> None:
        self.data = b""

    def gettimeout(self) -> float | None:
        return None

    def setblocking(self, flag: bool) -> None:
        pass

    def sendall(self, data: bytes) -> None:
        self.data += data

    def status_line(self) -> str:
        """``"414 URI Too Long"``, from the first line gunicorn wrote."""
        return self.data.split(b"\r\n", 1)[0].decode("latin-1").partition(" ")[2]


_REQUEST_LINE = re.compile(r"(?:\r\n)?[A-Z]+ (/\S*)")


def _request_target(req: Any, exc: BaseException) -> str:
    """The path of a request gunicorn refused, as far as it was read. Its errors before the request is whole (a
    request line too long, headers too large) carry no request: the request line, or the request being parsed, is
    then found in the parser's frames, innermost first; "" when it is not."""
    found = [getattr(req, "path", None), getattr(getattr(exc, "req", None), "path", None), getattr(exc, "req", None)]
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_locals)
        tb = tb.tb_next
    for local in reversed(frames):
        found += [getattr(local.get("self"), "path", None), local.get("data"), local.get("line")]
    for item in found:
        if isinstance(item, (bytes, bytearray)):
            item = bytes(item[:8192]).decode("latin-1")
        if not isinstance(item, str):
            continue
        if item.startswith("/"):
            return item
        if match := _REQUEST_LINE.match(item):
            return match.group(1)
    return ""


def worker_exit(server: Any, worker: Any) -> None:
    """Gunicorn's last call in an exiting worker (its ``worker_exit`` hook; a host's ``gunicorn.conf.py`` that
    preloads Historian imports it): end the process now, with the exit status it was leaving with.
    A worker forked from a master that loaded ONNX Runtime inherits its state but not its background thread, and
    ONNX Runtime's exit handlers wait for that thread forever (measured: a worker hung at exit until killed).
    The standard streams are flushed first (gunicorn's log lines are written as they come); the store has nothing to
    flush (every write is committed as it is made)."""
    leaving = sys.exc_info()[1]
    code = leaving.code if isinstance(leaving, SystemExit) else (0 if leaving is None else 1)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code if isinstance(code, int) else (0 if code is None else 1))


def _fewer_malloc_arenas(arenas: int = 2) -> None:
    """Cap glibc's malloc arenas (``M_ARENA_MAX``) in the master, which the workers inherit: by default each thread
    that allocates may get an arena of its own, and a worker's request threads then hold tens of MB of freed
    memory apiece (measured: the second worker's own memory 260 MB, 226 MB with two arenas)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-8, arenas)  # M_ARENA_MAX
    except (OSError, AttributeError):  # not glibc (musl): nothing to cap
        pass
