"""What both graphs' nodes share: ``@node`` times a node, adds its trace entry and streams a progress event (the
ask graph's nodes in ask/nodes.py, the map's in mapping/graph.py); in the ask graph it also keeps the run's
time limit: past its deadline, every node but the closing one raises ``limits.TimeLimit`` instead of running
(ask/run.py then ends the run ``human_review`` with what it had). The map keeps its own (mapping/graph.py: no
further round, no further source read, then its closing nodes)."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer


def node(detail: Callable[[dict[str, Any]], str] | None = None, closing: bool = False):
    """Time a node, add a trace entry and stream a progress event when it finishes (``closing``: the node that
    writes the output, which runs past the deadline too)."""

    def wrap(fn: Callable[[Any, RunnableConfig], dict[str, Any]]):
        @functools.wraps(fn)
        def run(state: Any, config: RunnableConfig) -> dict[str, Any]:
            deadline = getattr((config.get("configurable") or {}).get("historian"), "deadline", None)
            if deadline is not None and not closing:
                deadline.check(fn.__name__)
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
