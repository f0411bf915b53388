"""The map as the app runs it: a context over the app's index and store, progress events, a stored run of
kind "map" (owner-only like ask's runs: history, permalink, delete, export)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Collection, Iterator
from dataclasses import replace
from typing import Any

from historian_blueprint import history
from historian_blueprint.services import get_services, get_settings, get_store
from historian_blueprint.index import service
from historian_blueprint.limits import Deadline, within
from historian_blueprint.mapping.graph import MapContext, iter_map
from historian_blueprint.mapping.topic import Topic
from historian_blueprint.redaction import redact_text
from historian_blueprint.settings import MapSettings, read


def make_map_context(client: Any = None, **overrides: Any) -> MapContext:
    """The map's view of this app: hybrid retrieval over the serving index, the store's documents, the
    index's embedder, the HISTORIAN_MAP_* settings, and with the LLM engine (``HISTORIAN_ENGINE=llm``, or a
    ``client`` given, e.g. one with scripted models) its mapper role."""
    settings = read(MapSettings, get_settings())
    store = get_store()
    service.retriever()  # IndexNotBuilt / IndexMismatch say what to do before anything runs

    def retrieve(query: str, top_k: int) -> list[dict[str, Any]]:
        return [h.to_dict() for h in service.retrieve(query, top_k=top_k)]

    documents: dict[str, Any] = {}

    def get_document(source_id: str) -> Any:
        if source_id not in documents:
            documents[source_id] = store.get_document(source_id)
        return documents[source_id]

    embedder = service.meaning()  # the exact vectors the map's thresholds were fit on
    context = MapContext(
        retrieve=retrieve, get_document=get_document, embed=embedder.encode, top_k=settings.top_k,
        per_document=settings.per_document, max_sources=settings.max_sources, max_rounds=settings.max_rounds,
        weights=settings.weights, document_types=settings.document_types,
    )
    if client is not None or get_settings().engine == "llm":
        from historian_blueprint.mapping.llm_mapper import llm_mapper
        from historian_blueprint.llm.engine import LLMEngine

        context.mapper = llm_mapper(LLMEngine(client=client or get_services().llm()))
    for key, value in overrides.items():
        if not hasattr(context, key):
            raise TypeError(f"make_map_context() got an unknown setting {key!r}")
        setattr(context, key, value)
    return context


def stream_map(topic: Topic | str, *, user_id: str | None = None, context: MapContext | None = None,
               include: Collection[str] = ()) -> Iterator[dict[str, Any]]:
    """Yield a progress event per finished node, then ``{"event": "done", "run_id", "output"}``; the run is
    stored with kind "map". ``topic``: as read by ``mapping.topic.read_topic`` (text is read there). ``include``:
    sources the asker maps although they would be set aside as about another event (mapping.event)."""
    events: list[dict[str, Any]] = []
    context = context or make_map_context()
    if include:
        context = replace(context, include=frozenset(include))
    deadline = context.deadline or Deadline(get_settings().limits_timeout_s)  # from now
    context = replace(context, deadline=deadline, mapper=bounded(context.mapper, deadline))
    run_id = uuid.uuid4().hex
    output: dict[str, Any] = {}
    listening = True  # a map whose progress stops being read is finished (within its time limit) and stored
    for event in iter_map(topic, context):
        if event["event"] == "output":
            output = event["output"]
        else:
            events.append(event)
            if listening:
                try:
                    yield event
                except GeneratorExit:
                    listening = False
    output["metadata"].update({"run_id": run_id, "engine": "llm" if context.mapper else "embedded",
                               # the sources asked for that the map read and kept (not any id a caller sent)
                               "included": sorted(context.include & {s["source_id"] for s in output["sources"]}),
                               "index_generation": service.generation(),
                               # a failure's text as the map's page shows it: never a key an endpoint echoed
                               "failures": [redact_text(f) for f in output["metadata"].get("failures", [])]})
    history.record_run(get_store(), {
        "_id": run_id, "kind": "map", "question": output["topic"], "topic": output["topic"], "user_id": user_id,
        "created_at": time.time(), "output": output, "trace": events, "engine": output["metadata"]["engine"],
    })
    if listening:
        yield {"event": "done", "run_id": run_id, "output": output}


def bounded(mapper: Callable[..., Any] | None, deadline: Deadline) -> Callable[..., Any] | None:
    """The mapper with its model calls ending by the map's deadline (None stays None: the offline reading)."""
    if mapper is None:
        return None

    def read(*args: Any) -> Any:
        with within(deadline):
            return mapper(*args)

    return read


def map_topic(topic: Topic | str, *, user_id: str | None = None, on_event: Callable[[dict], None] | None = None,
              context: MapContext | None = None, include: Collection[str] = ()) -> dict[str, Any]:
    """Map a topic to the end; return the output (metadata.run_id names the stored run)."""
    for event in stream_map(topic, user_id=user_id, context=context, include=include):
        if event.get("event") == "done":
            return event["output"]
        if on_event:
            on_event(event)
    raise RuntimeError("the map graph ended without an output")
