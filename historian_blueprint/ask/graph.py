"""The LangGraph StateGraph of docs/design.md, built by a function so tests can compile it their own way."""

from __future__ import annotations

import functools

from typing import Literal

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

from historian_blueprint.ask import nodes
from historian_blueprint.ask.state import InputState, OutputState, State

MAX_COMPOSE_ATTEMPTS = 2


def after_ingest(state: State) -> Literal["route", "finalize"]:
    return "finalize" if state.get("error") else "route"


def after_retrieve(state: State) -> Literal["extract", "expand"]:
    weak = not state.get("hits") or max(h["score"] for h in state["hits"]) <= 0
    return "expand" if weak and not state.get("expanded") else "extract"


def after_validate(state: State) -> list[str] | Literal["compose", "finalize"]:
    if state.get("validation_errors"):
        return "compose" if state.get("compose_attempts", 0) < MAX_COMPOSE_ATTEMPTS else "finalize"
    if state["draft"].refusal:
        return "finalize"
    return ["challenge", "interrogate", "counter_argue"]


def after_judge(state: State, config: RunnableConfig) -> Literal["cite", "revise"]:
    """Revise while the judge asks for it and revisions are left; otherwise the answer as judged is held against
    its question (``cite``, which can only lower a status) and finalized."""
    if state["status"] == "needs_revision" and state.get("revisions", 0) < nodes.ctx(config).max_revisions:
        return "revise"
    return "cite"


def build_graph() -> StateGraph:
    """Return the (uncompiled) builder."""
    g = StateGraph(State, input_schema=InputState, output_schema=OutputState)
    for fn in (
        nodes.ingest, nodes.route, nodes.plan, nodes.retrieve, nodes.expand, nodes.extract, nodes.compose,
        nodes.validate, nodes.challenge, nodes.interrogate, nodes.counter_argue, nodes.judge, nodes.revise,
        nodes.cite, nodes.finalize,
    ):
        g.add_node(fn.__name__, fn)
    g.add_edge(START, "ingest")
    g.add_conditional_edges("ingest", after_ingest, ["route", "finalize"])
    g.add_edge("route", "plan")
    g.add_edge("plan", "retrieve")
    g.add_conditional_edges("retrieve", after_retrieve, ["extract", "expand"])
    g.add_edge("expand", "retrieve")
    g.add_edge("extract", "compose")
    g.add_edge("compose", "validate")
    g.add_conditional_edges("validate", after_validate,
                            ["compose", "finalize", "challenge", "interrogate", "counter_argue"])
    g.add_edge(["challenge", "interrogate", "counter_argue"], "judge")
    g.add_conditional_edges("judge", after_judge, ["cite", "revise"])
    g.add_edge("revise", "validate")
    g.add_edge("cite", "finalize")
    g.add_edge("finalize", END)
    return g


@functools.cache
def compiled():
    """The compiled graph (no checkpointer: runs are stored by Historian itself), made once per process."""
    return build_graph().compile()
