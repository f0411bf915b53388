"""Run the graph for the app: build the context, stream progress, store the run under its run_id."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, replace
from typing import Any

from historian_blueprint import history as run_history
from historian_blueprint.services import Services, get_services, get_settings, get_store
from historian_blueprint.config import PROFILES
from historian_blueprint.ask.graph import compiled
from historian_blueprint.ask.nodes import Context, finalize
from historian_blueprint.limits import Deadline, TimeLimit
from historian_blueprint.index import service
from historian_blueprint.llm.client import LLMClient
from historian_blueprint.ask.roles.base import Engine
from historian_blueprint.present.report import status_words
from historian_blueprint.schema import Output
from historian_blueprint.settings import Caps, RunSettings, read
from historian_blueprint.verify.service import collection_search, document_getter


def llm_client() -> LLMClient:
    """The app's LLM client (``Services.llm``)."""
    return get_services().llm()


def engine(client: LLMClient | None = None, kind: str | None = None) -> Engine:
    """The roles of one run (``Services.engine``)."""
    return get_services().engine(client=client, kind=kind)


def make_context(profile: str | None = None, services: Services | None = None, **overrides: Any) -> Context:
    """The nodes' view of this app's services: retrieval, documents, the engine, settings (``profile``: this
    run's)."""
    services = services or get_services()
    if profile and profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")

    def retrieve(query: str, top_k: int, filters: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        return [h.to_dict() for h in service.retrieve(query, top_k=top_k, filters=service.Filters(**(filters or {})))]

    searched = service.serving(services.app)
    get = document_getter()
    # what retrieval searches: the backend's documents (no scan of the host collection per ask)
    extent = searched.status() if searched else None
    n_documents = extent.documents if extent else services.store().count_documents()
    context = Context(
        retrieve=retrieve, get_document=get, search=collection_search(get),
        bylines=searched.authors_named if searched else lambda name: 0,
        # a host's backend written before years_of: no year is known, so no document is said to be missing
        years_of=getattr(searched, "years_of", lambda name: []) if searched else lambda name: [],
        embed=lambda texts: service.meaning().encode(texts),
        engine=overrides.pop("engine", None) or services.engine(), caps=Caps.of(services.settings),
        n_documents=n_documents, years=tuple(extent.years) if extent else (),
        **asdict(read(RunSettings, services.settings, profile)),
    )
    for key, value in overrides.items():
        if not hasattr(context, key):
            raise TypeError(f"make_context() got an unknown setting {key!r}")
        setattr(context, key, value)
    return context


def collection_extent() -> dict[str, Any]:
    """How many documents the search backend searches and the years they span (a refusal says what the
    collection covers: "its 319 documents date from 1860 to 1945")."""
    searched = service.serving()
    if searched is None:
        return {"documents": get_store().count_documents(), "years": []}
    status = searched.status()
    return {"documents": status.documents, "years": list(status.years)}


def thread_history(parent_id: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """The last five turns of the thread a follow-up continues (oldest first) and the thread's id.

    Who may follow up on a run is the caller's decision (the web layer lets owners and admins).
    """
    if not parent_id:
        return [], None
    parent = get_store().runs.find_one({"_id": parent_id, "kind": "ask"})
    if parent is None:
        raise LookupError(f"no run {parent_id} to follow up")
    thread_id = parent.get("thread_id") or parent["_id"]
    turns = list(get_store().runs.find({"thread_id": thread_id, "kind": "ask",
                                        "user_id": parent.get("user_id")}).sort("created_at", 1))
    if not any(t["_id"] == parent["_id"] for t in turns):
        turns.append(parent)
    turns = [t for t in turns if t["created_at"] <= parent["created_at"]][-5:]
    return [{"question": t["question"], "answer": t["output"]["answer"]} for t in turns], thread_id


def run_metadata(state: dict[str, Any], context: Context, *, run_id: str, seconds: float,
                 trace: list[dict[str, Any]], refused: bool, profile: str | None, thread_id: str | None,
                 parent_id: str | None, filters: dict[str, Any]) -> dict[str, Any]:
    """The stored run's ``metadata``: the engine and models, what was searched and found, timings, the thread."""
    described = context.engine.describe()
    try:
        search = service.search_status()
    except (service.IndexNotBuilt, service.IndexMismatch):
        search = {"dense": False, "model": None}
    return {
        "run_id": run_id,
        "engine": context.engine.name,
        "models": {"embedding": search["model"], **described["models"]},
        # words only while a first build's vectors are made
        "search": {k: v for k, v in search.items() if k != "model"},
        "prompt_version": described["prompt_version"],
        "tokens": described["tokens"],
        "latency_ms": {"total": round(seconds * 1000, 2), **{e["node"]: e["ms"] for e in trace}},
        "retrieval": [{"source_id": h["source_id"], "score": h["score"], "start": h["start"], "end": h["end"]}
                      for h in state.get("hits", [])],
        "revisions": state.get("revisions", 0),
        "refusal": refused,  # the evidence was too weak to answer: the answer names what was searched
        "index_generation": service.generation(),
        "route": state.get("route"),
        "sub_queries": state.get("sub_queries", []),
        "profile": profile or get_settings().profile,
        "thread_id": thread_id or run_id,
        "parent_id": parent_id,
        "collection": collection_extent(),
        "filters": filters,
    }


def stream(
    question: str, *, user_id: str | None = None, context: Context | None = None, parent_id: str | None = None,
    profile: str | None = None, filters: dict[str, Any] | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield a progress event per finished node, then ``{"event": "done", "run_id", "output"}``.

    ``parent_id`` makes this a follow-up: the thread's last five turns inform planning and composition.
    ``profile`` (default / research / course) sets this run's retrieval depth and revision attempts.
    ``filters`` limit every search of the run: ``author`` (every word of it in a document's author or title:
    a speaker or narrator), ``year_from``, ``year_to``, ``collection``.
    """
    history, thread_id = thread_history(parent_id)
    run_id = uuid.uuid4().hex
    filters = {k: v for k, v in (filters or {}).items() if v not in (None, "")}
    unknown = set(filters) - {"author", "year_from", "year_to", "collection"}
    if unknown:
        raise ValueError(f"unknown search filter {', '.join(sorted(unknown))}")
    context = context or make_context(profile)
    # this run's own copy: its filters, and its time limit starting now (a context given without one may be reused)
    context = replace(context, filters=filters, deadline=context.deadline or Deadline(get_settings().limits_timeout_s))
    t0 = time.perf_counter()
    trace: list[dict[str, Any]] = []
    final: dict[str, Any] | None = None
    listening = True  # the asker still reads the progress; a run they stop reading is finished and stored anyway
    try:
        for mode, chunk in compiled().stream(
            {"question": question, "history": history}, config={"configurable": {"historian": context}},
            stream_mode=["custom", "values"],
        ):
            if mode == "custom":
                trace.append(chunk)
                if listening:
                    try:
                        yield chunk
                    except GeneratorExit:
                        listening = False
            else:
                final = chunk
    except TimeLimit as exc:  # stopped between two nodes: what it had, unverified, with the reason
        final = {**(final or {}), **finalize({**(final or {}), "error": str(exc), "stopped": True},
                                              {"configurable": {"historian": context}})}
        final["output"]["verification"]["time_limit"] = {"seconds": exc.seconds, "stopped_before": exc.at}
    state = final or {}
    output = dict(state.get("output") or {})
    refused = bool(output.pop("refusal", False))
    output["metadata"] = run_metadata(
        state, context, run_id=run_id, seconds=time.perf_counter() - t0, trace=trace, refused=refused,
        profile=profile, thread_id=thread_id, parent_id=parent_id, filters=filters)
    Output.model_validate(output)
    words = status_words(output)  # the standing every place shows; the history lists it as the page says it
    run_history.record_run(
        get_store(),
        {"_id": run_id, "kind": "ask", "question": question, "user_id": user_id, "created_at": time.time(),
         "standing": {"group": words.group, "label": words.label},
         "thread_id": thread_id or run_id, "parent_id": parent_id, "profile": output["metadata"]["profile"],
         "output": output, "trace": trace, "engine": output["metadata"]["engine"],
         "index_generation": output["metadata"]["index_generation"]}
    )
    if listening:
        yield {"event": "done", "run_id": run_id, "output": output}


def ask(
    question: str, *, user_id: str | None = None, on_event: Callable[[dict], None] | None = None,
    context: Context | None = None, parent_id: str | None = None, profile: str | None = None,
    filters: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run the graph to the end; return the output schema (metadata.run_id names the stored run)."""
    for event in stream(question, user_id=user_id, context=context, parent_id=parent_id, profile=profile,
                        filters=filters):
        if event.get("event") == "done":
            return event["output"]
        if on_event:
            on_event(event)
    raise RuntimeError("the graph ended without an output")
