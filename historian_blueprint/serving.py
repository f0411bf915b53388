"""Several worker processes on a real WSGI server: gunicorn, run from Python (``historian serve --workers N``).

Each worker builds its own app from the factory after the fork (no model, thread pool or database connection
crosses a fork) and shares with the others what the operating system shares: the serving generation's vectors and
its FAISS codes are memory-mapped read-only files (index.retriever), so N workers hold one copy of them in memory,
and a new generation is loaded by every worker within a second of its swap, with no restart. Writes to the embedded
store are serialized across the workers by its file lock; several machines need a real MongoDB (README).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def serve_with_gunicorn(factory: Callable[[], Any], *, bind: str, workers: int, threads: int = 8,
                        timeout: int = 120) -> None:
    """Run ``factory()``'s app under gunicorn's threaded workers until interrupted."""
    from gunicorn.app.base import BaseApplication

    class Historian(BaseApplication):
        def load_config(self) -> None:
            for key, value in {"bind": bind, "workers": workers, "threads": threads, "worker_class": "gthread",
                               "timeout": timeout, "graceful_timeout": 30, "accesslog": None,
                               "preload_app": False}.items():
                self.cfg.set(key, value)

        def load(self) -> Any:
            return factory()

    Historian().run()
