"""Run the graph for the app: build the context, stream progress, store the run under its run_id."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from flask import current_app

from historian_blueprint import get_store
from historian_blueprint.graph.graph import compiled
from historian_blueprint.graph.nodes import Context
from historian_blueprint.graph.state import Output
from historian_blueprint.index import service
from historian_blueprint.verify.reports import Caps
from historian_blueprint.verify.service import collection_search, document_getter

PROMPT_VERSION = "offline-1"


def llm_client() -> Any:
    """The app's LLM client (one per app: chat models and the response cache are shared by its runs)."""
    from historian_blueprint import get_state
    from historian_blueprint.llm.client import LLMClient, ResponseCache
    from historian_blueprint.llm.settings import LLMSettings

    state = get_state()
    if "llm_client" not in state.extras:
        settings = LLMSettings.from_config(current_app.config)
        cache = ResponseCache(get_store().collection("llm_cache"), settings.cache_ttl)
        state.extras["llm_client"] = LLMClient(settings, cache=cache)
    return state.extras["llm_client"]


def llm_engine(client: Any = None) -> Any:
    """A fresh per-run engine (its own token usage) over the app's client."""
    from historian_blueprint.llm.prompts import load_calibration
    from historian_blueprint.llm.roles import LLMEngine

    client = client or llm_client()
    return LLMEngine(client=client, calibration=load_calibration(client.settings.calibration_file))


def make_context(**overrides: Any) -> Context:
    """The nodes' view of this app: retrieval, documents, settings."""
    config = current_app.config

    def retrieve(query: str, top_k: int) -> list[dict[str, Any]]:
        return [h.to_dict() for h in service.retrieve(query, top_k=top_k)]

    get = document_getter()
    context = Context(
        retrieve=retrieve,
        get_document=get,
        search=collection_search(get),
        caps=Caps.from_config(config),
        top_k=config["HISTORIAN_RETRIEVAL_TOP_K"],
        rerank_k=config["HISTORIAN_RETRIEVAL_RERANK_K"],
        max_revisions=config["HISTORIAN_VERIFY_MAX_REVISION_ATTEMPTS"],
        max_question_chars=config["HISTORIAN_LIMITS_MAX_QUESTION_CHARS"],
        n_documents=get_store().count_documents(),
        context_tokens=config["HISTORIAN_LLM_CONTEXT_TOKENS"],
    )
    if config["HISTORIAN_ENGINE"] == "llm" and "llm" not in overrides:
        context.llm = llm_engine()
    for key, value in overrides.items():
        setattr(context, key, value)
    return context


def stream(question: str, *, user_id: str | None = None, context: Context | None = None) -> Iterator[dict[str, Any]]:
    """Yield a progress event per finished node, then ``{"event": "done", "run_id", "output"}``."""
    run_id = uuid.uuid4().hex
    context = context or make_context()
    t0 = time.perf_counter()
    trace: list[dict[str, Any]] = []
    final: dict[str, Any] | None = None
    for mode, chunk in compiled().stream(
        {"question": question}, config={"configurable": {"historian": context}}, stream_mode=["custom", "values"],
    ):
        if mode == "custom":
            trace.append(chunk)
            yield chunk
        else:
            final = chunk
    state = final or {}
    output = dict(state.get("output") or {})
    output.pop("refusal", None)
    engine = context.llm
    if engine is not None:
        models = {"embedding": service.embedder().name, **engine.models()}
        tokens = {**engine.usage.totals(), "per_role": engine.usage.roles}
        prompt_version = engine.prompt_version
    else:
        models = {"embedding": service.embedder().name, "composer": "extractive (offline)", "verifiers": "grounding checks (offline)"}
        tokens, prompt_version = {"prompt": 0, "completion": 0}, PROMPT_VERSION
    output["metadata"] = {
        "run_id": run_id,
        "engine": "llm" if engine is not None else "embedded",
        "models": models,
        "prompt_version": prompt_version,
        "tokens": tokens,
        "latency_ms": {"total": round((time.perf_counter() - t0) * 1000, 2), **{e["node"]: e["ms"] for e in trace}},
        "retrieval": [{"source_id": h["source_id"], "score": h["score"], "start": h["start"], "end": h["end"]} for h in state.get("hits", [])],
        "revisions": state.get("revisions", 0),
        "index_generation": service.holder().loaded_generation,
        "route": state.get("route"),
        "sub_queries": state.get("sub_queries", []),
    }
    Output.model_validate(output)
    get_store().runs.insert_one(
        {"_id": run_id, "kind": "ask", "question": question, "user_id": user_id, "created_at": time.time(),
         "output": output, "trace": trace, "engine": output["metadata"]["engine"],
         "index_generation": output["metadata"]["index_generation"]}
    )
    yield {"event": "done", "run_id": run_id, "output": output}


def ask(question: str, *, user_id: str | None = None, on_event: Callable[[dict], None] | None = None, context: Context | None = None) -> dict[str, Any]:
    """Run the graph to the end; return the output schema (metadata.run_id names the stored run)."""
    for event in stream(question, user_id=user_id, context=context):
        if event.get("event") == "done":
            return event["output"]
        if on_event:
            on_event(event)
    raise RuntimeError("the graph ended without an output")
