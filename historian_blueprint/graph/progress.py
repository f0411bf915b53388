"""What both graphs' nodes share: ``@node`` times a node, adds its trace entry and streams a progress event (the
ask graph's nodes in graph/nodes.py, the map's in mapping/graph.py)."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer


def node(detail: Callable[[dict[str, Any]], str] | None = None):
    """Time a node, add a trace entry and stream a progress event when it finishes."""

    def wrap(fn: Callable[[Any, RunnableConfig], dict[str, Any]]):
        @functools.wraps(fn)
        def run(state: Any, config: RunnableConfig) -> dict[str, Any]:
            t0 = time.perf_counter()
            update = fn(state, config)
            ms = round((time.perf_counter() - t0) * 1000, 2)
            text = detail(update) if detail else ""
            entry = {"node": fn.__name__, "ms": ms, "detail": text}
            try:
                get_stream_writer()({"event": "node", **entry})
            except RuntimeError:  # not running under a stream: nothing to report to
                pass
            return {**update, "trace": [entry]}

        return run

    return wrap
