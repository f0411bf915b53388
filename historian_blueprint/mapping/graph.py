"""The map graph: scout → mapper → adversary ─┬─ new sources and round < max ─> scout
                                              └─ otherwise ─> judge → synthesis

Nodes read what they need from ``MapContext`` (passed in the run config, as ask's nodes read ``Context``),
return only what they change, and report progress through the same ``node`` wrapper as ask's nodes.
"""

from __future__ import annotations

import functools
import operator
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Annotated, Any, Literal, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

from historian_blueprint.ask.progress import node
from historian_blueprint.limits import Deadline
from historian_blueprint.mapping import adversary, credibility, entities, synthesis
from historian_blueprint.mapping.compare import Comparison, Embed, compare
from historian_blueprint.mapping.event import keep_to_event
from historian_blueprint.mapping.nlp import Reading, Statement, name_key, read_passages
from historian_blueprint.mapping.schema import MapOutput
from historian_blueprint.mapping.topic import Topic, read_topic
from historian_blueprint.text.markdown import md_escape

FACETS = ("{t}", "who was involved in {t}", "when did {t} happen", "where did {t} take place", "what caused {t}",
          "how many people were affected by {t}")


@dataclass
class MapContext:
    """What the map's nodes need from the app."""

    retrieve: Callable[[str, int], list[dict[str, Any]]]
    get_document: Callable[[str], Any]  # a host document: .title .text .author .year .extra (doc_type)
    embed: Embed
    top_k: int = 8
    per_document: int = 2   # passages of one document kept per query (results spread across documents)
    passages_per_source: int = 4  # passages of one document the mapper reads (its best-ranked) ...
    whole_below: int = 4000  # ... or the whole document when it is this short (characters): a letter, a dispatch
    max_sources: int = 16
    max_rounds: int = 3
    weights: dict[str, float] = field(default_factory=dict)
    document_types: dict[str, float] = field(default_factory=dict)
    mapper: Callable[[str, str, list[tuple[int, int]]], Reading] | None = None  # the LLM engine's mapper role
    deadline: Deadline | None = None  # the run's time limit: past it no further round, no further source read
    include: frozenset[str] = frozenset()  # sources the asker includes although they would be set aside

    def out_of_time(self) -> bool:
        return self.deadline is not None and self.deadline.passed()


class MapState(TypedDict, total=False):
    topic: Topic  # read once where the map starts (mapping.topic)
    round: int
    pending: list[dict[str, Any]]
    queries: list[dict[str, Any]]
    asked: list[str]
    sources: dict[str, dict[str, Any]]
    found_new: list[str]
    readings: dict[str, Reading]
    stopped: bool  # the time limit cut the map short
    on_topic: list[str]
    set_aside: dict[str, str]  # sources read but left out, with why (mapping.event)
    comparison: Comparison
    credibility: dict[str, dict[str, Any]]
    output: dict[str, Any]
    failures: Annotated[list[str], operator.add]
    trace: Annotated[list[dict[str, Any]], operator.add]


def mctx(config: RunnableConfig) -> MapContext:
    return config["configurable"]["historian_map"]


@node(lambda u: f"round {u['round']}: {len(u['found_new'])} new sources")
def scout(state: MapState, config: RunnableConfig) -> dict[str, Any]:
    """Run this round's queries; keep at most ``per_document`` passages of a document per query; remember
    which query found each source."""
    c = mctx(config)
    round_ = state.get("round", 0)
    pending = state.get("pending") or [
        {"query": f.format(t=state["topic"].text), "round": 0, "aimed_at": "facet", "new_sources": []} for f in FACETS]
    sources = {k: {**v, "passages": list(v["passages"]), "found_by": list(v["found_by"])}
               for k, v in (state.get("sources") or {}).items()}
    before = set(sources)
    queries = []
    for q in pending:
        q = dict(q, new_sources=[])
        per_doc: dict[str, int] = {}
        for h in c.retrieve(q["query"], c.top_k):
            sid = h["source_id"]
            if per_doc.get(sid, 0) >= c.per_document:
                continue
            if sid not in sources and len(sources) >= c.max_sources:
                continue
            per_doc[sid] = per_doc.get(sid, 0) + 1
            entry = sources.setdefault(sid, {"passages": [], "found_by": [], "round": round_, "rank": len(sources)})
            if (h["start"], h["end"]) not in map(tuple, entry["passages"]):
                entry["passages"].append([h["start"], h["end"]])
            if q["query"] not in entry["found_by"]:
                entry["found_by"].append(q["query"])
            if sid not in before and sid not in q["new_sources"]:
                q["new_sources"].append(sid)
        queries.append(q)
    found = [s for s in sources if s not in before]
    asked = sorted({*state.get("asked", []), *(adversary.key(q["query"]) for q in queries)})
    return {"sources": sources, "found_new": found, "queries": (state.get("queries") or []) + queries, "round": round_,
            "asked": asked}


@node(lambda u: f"{len(u.get('readings', {}))} sources read, "
                f"{len(u['comparison'].conflicts) if u.get('comparison') else 0} conflicts")
def mapper(state: MapState, config: RunnableConfig) -> dict[str, Any]:
    """Entities, relations and statements of every new source's passages; statements compared across the
    sources that share named entities with the topic's best source (the same events)."""
    c = mctx(config)
    readings = dict(state.get("readings") or {})
    failures = []
    stopped = False
    for sid, entry in state["sources"].items():
        if sid not in readings and c.out_of_time():  # the sources read so far are mapped; the others are listed
            stopped = True
            continue
        doc = c.get_document(sid)
        if doc is None:
            continue
        short = len(doc.text) <= c.whole_below  # a short document is read whole: its conflicts may lie outside the hits
        passages = [(0, len(doc.text))] if short else [tuple(p) for p in entry["passages"][: c.passages_per_source]]
        if sid in readings and readings[sid].passages == passages:
            continue  # read already, and no new passage of it among its best
        if c.mapper is not None:
            try:
                readings[sid] = replace(c.mapper(sid, doc.text, passages), passages=passages)
                continue
            except Exception as exc:  # noqa: BLE001 - the LLM mapper fails safe: the offline reading stands in
                failures.append(f"mapper on {sid}: {type(exc).__name__}: {exc}")
        readings[sid] = replace(read_passages(sid, doc.text, passages), passages=passages)
    all_entities = entities.merge([m for r in readings.values() for m in r.mentions])
    links = entities.shared(all_entities, {sid: r.proper for sid, r in readings.items()})
    read = {sid: v for sid, v in state["sources"].items() if sid in readings}
    on_topic, set_aside = keep_to_event(state["topic"], read, links, c.get_document, c.include)
    statements = [s for sid in on_topic if sid in readings for s in readings[sid].statements]
    years = {sid: getattr(c.get_document(sid), "year", None) for sid in on_topic}
    if c.out_of_time():  # past the time limit nothing more is weighed: the sources and names read so far stand
        stopped, comparison = True, Comparison(statements)
    else:
        comparison = compare(statements, c.embed, years)
    return {"readings": readings, "on_topic": on_topic, "set_aside": set_aside, "comparison": comparison,
            "failures": failures, **({"stopped": True} if stopped else {})}


@node(lambda u: f"{len(u.get('pending') or [])} counter-queries" if u.get("pending") else "no new counter-queries")
def adversary_node(state: MapState, config: RunnableConfig) -> dict[str, Any]:
    """Counter-queries against contested, single-source and low-prior claims, while the last round found new
    sources and rounds are left."""
    c = mctx(config)
    round_ = state.get("round", 0)
    if c.out_of_time():
        return {"pending": [], "stopped": True}
    if round_ >= c.max_rounds or (round_ > 0 and not state.get("found_new")):
        return {"pending": []}
    comparison = state["comparison"]
    st = comparison.statements
    contested = {e.a for e in comparison.conflicts} | {e.b for e in comparison.conflicts}
    agreed = {e.a for e in comparison.agreements} | {e.b for e in comparison.agreements}
    weak: list[tuple[str, Statement]] = [("contested", st[i]) for i in sorted(contested)]
    weak += [("single source", s)
             for i, s in enumerate(st) if i not in contested and i not in agreed and (s.names or s.figures)]
    asked = set(state.get("asked", []))
    pending = adversary.counter_queries(state["topic"], weak, asked, round_ + 1)
    return {"pending": pending, "asked": sorted(asked), "round": round_ + 1 if pending else round_}


def after_adversary(state: MapState) -> Literal["scout", "judge"]:
    return "scout" if state.get("pending") else "judge"


@node(lambda u: f"{len(u.get('credibility', {}))} sources judged")
def judge(state: MapState, config: RunnableConfig) -> dict[str, Any]:
    """Credibility of each on-topic source: type, distance from the events, corroboration, contradictions,
    interest, OCR noise."""
    c = mctx(config)
    comparison = state["comparison"]
    st = comparison.statements
    compared: dict[str, set[int]] = {}
    agreed: dict[str, set[int]] = {}
    contradicted: dict[str, set[int]] = {}
    for edges, into in ((comparison.agreements, agreed), (comparison.conflicts, contradicted)):
        for e in edges:
            for i in (e.a, e.b):
                into.setdefault(st[i].source_id, set()).add(i)
                compared.setdefault(st[i].source_id, set()).add(i)
    years = [int(f.quantity.value) for s in st for f in s.figures if f.quantity.year]
    event_year = int(statistics.median_low(years)) if years else None
    keys = {k for r in state["readings"].values() for m in r.mentions for k in [name_key(m.text)] if k}
    out: dict[str, dict[str, Any]] = {}
    for sid in state["on_topic"]:
        doc = c.get_document(sid)
        if doc is None:
            continue
        extra = getattr(doc, "extra", {}) or {}
        profile = credibility.Profile(sid, doc.title, doc.author, doc.year, extra.get("doc_type"), doc.text)
        n = len(compared.get(sid, ()))
        author_key = name_key(doc.author or "")
        value, factors = credibility.score(
            profile, event_year=event_year, corroborated=len(agreed.get(sid, ())) / n if n else None,
            contradicted=len(contradicted.get(sid, ())) / n if n else None,
            mentioned=bool(author_key) and author_key in keys, weights=c.weights, types=c.document_types,
        )
        out[sid] = {"source_id": sid, "title": doc.title, "author": doc.author, "year": doc.year,
                    "doc_type": extra.get("doc_type"), "credibility": value, "factors": factors,
                    "found_by": state["sources"][sid]["found_by"]}
    return {"credibility": out}


@node(lambda u: f"{len(u['output']['conflicts'])} conflicts, {len(u['output']['consensus'])} consensus points")
def synthesize(state: MapState, config: RunnableConfig) -> dict[str, Any]:
    """Entities, cited relations, conflicts with a verdict, consensus, the report."""
    c = mctx(config)
    comparison = state["comparison"]
    cred = {sid: s["credibility"] for sid, s in state["credibility"].items()}
    on_topic = set(state["on_topic"])
    readings = {sid: r for sid, r in state["readings"].items() if sid in on_topic}
    found = entities.merge([m for r in readings.values() for m in r.mentions])
    texts = {sid: c.get_document(sid).text for sid in readings}
    ents = [{"id": e.id, "name": e.name, "type": e.type, "aliases": e.aliases, "sources": e.sources,
             "mentions": [{"source_id": m.source_id, "start": m.start, "end": m.end, "text": m.text}
                          for m in e.mentions]}
            for e in found]
    spans = {(m.source_id, m.start, m.end): e.id for e in found for m in e.mentions}
    relations = []
    for sid, r in readings.items():
        for t in r.triplets:
            subject_id = _entity_at(spans, sid, t.subject_span)
            object_id = _entity_at(spans, sid, t.object_span)
            if subject_id is None and object_id is None:
                continue
            relations.append({"subject": t.subject, "relation": t.relation, "object": t.object,
                              "subject_id": subject_id, "object_id": object_id, "credibility": cred.get(sid, 0.5),
                              "citation": {"source_id": sid, "start": t.start, "end": t.end,
                                           "text": texts[sid][t.start:t.end]}})
    authors = {sid: name_key(s.get("author") or "") for sid, s in state["credibility"].items()}
    output: dict[str, Any] = {
        "topic": state["topic"].text,
        "entities": ents,
        "relations": relations,
        "conflicts": synthesis.conflicts(comparison, cred, state["credibility"]),
        "consensus": synthesis.consensus(comparison, cred, authors),
        "counter_queries": [q for q in state.get("queries", []) if q["round"] > 0],
        "sources": sorted(state["credibility"].values(), key=lambda s: -s["credibility"]),
    }
    output["report"] = synthesis.report(state["topic"].text, output)
    output["metadata"] = {
        "rounds": max([q["round"] for q in state.get("queries", [])] or [0]),
        "facet_queries": [q["query"] for q in state.get("queries", []) if q["round"] == 0],
        "set_aside": sorted(set(state["sources"]) - on_topic),  # retrieved, not mapped (ids, as before)
        # ... of them, those read and left out as about another event, each with why (mapping.event)
        "set_aside_why": [{"source_id": sid, "title": getattr(c.get_document(sid), "title", "") or sid, "why": why}
                          for sid, why in sorted((state.get("set_aside") or {}).items())],
        "statements_compared": len(comparison.statements),
        # an LLM mapper's names and quotes not in the source
        "dropped_quotes": sum(r.dropped for r in state["readings"].values()),
        "failures": state.get("failures", []),
    }
    if output["metadata"]["set_aside_why"]:
        output["report"] += "\n\n## Sources set aside\n\n" + "\n".join(
            f"- {md_escape(a['title'])}: {md_escape(a['why'])}" for a in output["metadata"]["set_aside_why"]) + "\n"
    if state.get("stopped"):
        output["metadata"]["time_limit"] = ("the map reached its time limit (HISTORIAN_LIMITS_TIMEOUT_S): no "
                                            "further round was run, sources not yet read were left out, and "
                                            "statements not yet compared were not")
        output["report"] += f"\n\n_Cut short: {output['metadata']['time_limit']}._\n"
    return {"output": output}


def _entity_at(spans: dict[tuple[str, int, int], str], sid: str, at: tuple[int, int]) -> str | None:
    for (s, a, b), eid in spans.items():
        if s == sid and a < at[1] and b > at[0]:
            return eid
    return None


def build_graph() -> StateGraph:
    g = StateGraph(MapState)
    g.add_node("scout", scout)
    g.add_node("mapper", mapper)
    g.add_node("adversary", adversary_node)
    g.add_node("judge", judge)
    g.add_node("synthesis", synthesize)
    g.add_edge(START, "scout")
    g.add_edge("scout", "mapper")
    g.add_edge("mapper", "adversary")
    g.add_conditional_edges("adversary", after_adversary, ["scout", "judge"])
    g.add_edge("judge", "synthesis")
    g.add_edge("synthesis", END)
    return g


@functools.cache
def compiled():
    """The compiled map graph (no checkpointer: maps are stored by Historian itself)."""
    return build_graph().compile()


def iter_map(topic: Topic | str, context: MapContext) -> Iterator[dict[str, Any]]:
    """Run the map graph on the topic (read here when it comes as text: ``read_topic``'s ValueError when it is
    empty or too long): a progress event per finished node, then ``{"event": "output", "output": ...}`` with the
    output validated against the contract (its metadata holds the trace and latency)."""
    topic = read_topic(topic)
    t0 = time.perf_counter()
    trace: list[dict[str, Any]] = []
    final: dict[str, Any] = {}
    for mode, chunk in compiled().stream({"topic": topic},
                                         config={"configurable": {"historian_map": context}, "recursion_limit": 50},
                                         stream_mode=["custom", "values"]):
        if mode == "custom":
            trace.append(chunk)
            yield chunk
        else:
            final = chunk
    output = final["output"]
    output["metadata"]["latency_ms"] = {"total": round((time.perf_counter() - t0) * 1000, 2)}
    output["metadata"]["trace"] = [{"node": e["node"], "ms": e["ms"], "detail": e["detail"]} for e in trace]
    MapOutput.model_validate(output)
    yield {"event": "output", "output": output}


def run_map(topic: Topic | str, context: MapContext) -> dict[str, Any]:
    """iter_map to the end: the output."""
    for event in iter_map(topic, context):
        if event["event"] == "output":
            return event["output"]
    raise RuntimeError("the map graph ended without an output")
