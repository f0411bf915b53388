"""Several worker processes on a real WSGI server: gunicorn, run from Python (``historian serve --workers N``).

The master builds the app once and ``historian_blueprint.preload(app)`` loads what every worker needs (the serving
generation, the encoder's model, the spaCy pipeline, the graphs, the lexicons) before the fork, with no Python thread
started and no connection left open, and freezes it out of the garbage collector's reach (``gc.freeze``), so the
workers share these pages with the master instead of each holding a copy. The serving generation's vectors and FAISS
codes are memory-mapped read-only files (index.retriever) besides. A new generation is loaded by every worker within a
second of its swap, with no restart (into each worker's own memory, until the next start). Writes to the embedded
store are serialized across the workers by its file lock; several machines need a real MongoDB (docs/operations.md).
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Callable
from typing import Any


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
            for key, value in {"bind": bind, "workers": workers, "threads": threads, "worker_class": "gthread",
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
