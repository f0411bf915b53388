"""Graph nodes: each takes the state (and config), returns only the fields it changes, reports progress.

Nodes that need judgment ask their role of the run's engine (``roles``); they never ask which engine it is. They
ask it ``within`` the run's deadline: a model call ends by it (limits.py, llm/client.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.runnables import RunnableConfig

from historian_blueprint.ask.roles import extractive
from historian_blueprint.ask.roles.base import Engine, Outcome, Reports, Task
from historian_blueprint.questions.reading import read_question
from historian_blueprint.questions.premises import absent_document, unmet_premises
from historian_blueprint.questions.shapes import Shape, described, side_filters
from historian_blueprint.present.report import status_words
from historian_blueprint.schema import (
    REFUSAL_PREFIX, STATUS_LABELS, Answer, ChallengeReport, CounterReport, InterrogationReport, JudgeReport,
    SourceText, worse,
)
from historian_blueprint.settings import Caps
from historian_blueprint.text.dialect import dialect_query, in_dialect
from historian_blueprint.text.questions import clean_question, tidy
from historian_blueprint.verify.composed import verify_composed
from historian_blueprint.verify.findings import ClaimResult
from historian_blueprint.verify.reports import premise_summary
from historian_blueprint.ask.progress import node
from historian_blueprint.limits import Deadline, within
from historian_blueprint.redaction import redact_text
from historian_blueprint.ask.state import State


@dataclass
class Context:
    """What the nodes need from the app: retrieval, documents, the engine, settings. Passed in the run config."""

    # (query, top_k, filters=None): filters as index.retriever.Filters' fields
    retrieve: Callable[..., list[dict[str, Any]]]
    get_document: Callable[[str], SourceText | None]
    search: Callable[[str], Sequence[SourceText]] | None
    engine: Engine
    caps: Caps = field(default_factory=Caps)
    top_k: int = 12
    rerank_k: int = 6
    max_revisions: int = 2
    max_question_chars: int = 2000
    n_documents: int = 0
    years: tuple[int, ...] = ()  # the first and last year of the searched documents, when known
    deadline: Deadline | None = None  # the run's time limit (set when it starts: ask/run.py)
    checker: Callable[..., ClaimResult] | None = None
    filters: dict[str, Any] = field(default_factory=dict)  # the asker's: author, year_from, year_to, collection
    bylines: Callable[[str], int] = lambda name: 0           # how many documents a name is the author or narrator of
    years_of: Callable[[str], list[int]] = lambda name: []   # the years of those documents (questions.scope)
    # the sentence encoder (a comparison's sides are read by meaning)
    embed: Callable[[list[str]], Any] | None = None


def ctx(config: RunnableConfig) -> Context:
    return config["configurable"]["historian"]


def task_for(state: State, c: Context) -> Task:
    """What the roles are asked about at this point of the run."""
    return Task(
        question=state["question"], get_document=c.get_document, history=state.get("history") or [],
        route=state.get("route", "simple"), sub_queries=state.get("sub_queries", []), hits=state.get("hits", []),
        n_documents=c.n_documents, years=c.years, asked=state["asked"], embed=c.embed,
    )


def shape_in(state: State) -> Shape:
    """The run's question's shape, as read once by ``route`` (a single answer before it, or when it never ran)."""
    asked = state.get("asked")
    return asked.shape if asked is not None else Shape()


def _routed(update: dict[str, Any]) -> str:
    shape = update["asked"].shape
    return update["route"] + (f"; {shape.kind} of {len(shape.sides) or shape.asked}" if shape.asked or shape.sides
                              else "; open list" if shape.kind == "list" else "")


def failures(outcome: Outcome) -> dict[str, Any]:
    """A role's failures, for the run's record (the judge reads them: no verified answer past a failure)."""
    return {"llm_failures": outcome.failures} if outcome.failures else {}


@node(lambda u: u.get("error") or f"{len(u.get('question', ''))} characters")
def ingest(state: State, config: RunnableConfig) -> dict[str, Any]:
    limit = ctx(config).max_question_chars
    try:
        question = clean_question(state.get("question"), limit)
    except ValueError as exc:  # the run is stored, with what was wrong
        return {"question": tidy(state.get("question"))[:limit], "error": str(exc)}
    history = [{"question": str(t.get("question", ""))[:limit], "answer": str(t.get("answer", ""))[:2000]}
               for t in (state.get("history") or [])[-5:] if isinstance(t, dict)]
    return {"question": question, "history": history, "error": None, "revisions": 0, "compose_attempts": 0,
            "expanded": False}


@node(_routed)
def route(state: State, config: RunnableConfig) -> dict[str, Any]:
    """The question read once (questions.reading): every node and role after this one reads that value."""
    c = ctx(config)
    asked = read_question(state["question"], state.get("history"), c.bylines, years_of=c.years_of)
    return {"route": asked.route, "asked": asked}


@node(lambda u: f"{len(u['sub_queries'])} queries" + (" (model failed: offline plan)" if u.get("llm_failures") else ""))
def plan(state: State, config: RunnableConfig) -> dict[str, Any]:
    c = ctx(config)
    task = task_for(state, c)
    with within(c.deadline):
        outcome = c.engine.planner.plan(task)
    return {"sub_queries": outcome.value, **failures(outcome)}


@node(lambda u: f"{len(u['hits'])} chunks retrieved")
def retrieve(state: State, config: RunnableConfig) -> dict[str, Any]:
    """Every sub-query within the asker's filters (and within the document the question asks about, when the
    collection holds it: questions.scope), and the question in the narratives' eye-dialect spellings
    (passages in eye dialect only: text.dialect); a comparison also searches each side on its own (its author's
    or year's documents), and each side's best passages are kept whatever the others score."""
    c = ctx(config)
    shape = shape_in(state)
    sides = ([(side.query, narrowed(c.filters, side_filters(side, shape))) for side in shape.sides]
             if shape.comparison else [])
    scope = state["asked"].scope  # the document the question asks about, when the collection holds it
    within = (narrowed(c.filters, {"author": scope.name, "year_from": scope.year, "year_to": scope.year})
              if scope is not None and scope.held else dict(c.filters))
    searches = [(query, within) for query in state["sub_queries"]]
    spelled = dialect_query(state["question"])  # the narratives' spellings of its words ("master": "marse", "marster")
    if spelled:
        searches.append((spelled, within))
    planned = len(searches)
    searches += sides
    best: dict[tuple[str, int, int], dict[str, Any]] = {}
    kept: list[tuple[str, int, int]] = []
    extra: list[dict[str, Any]] = []
    for n, (query, filters) in enumerate(searches):
        hits = c.retrieve(query, c.top_k, filters or None)
        if query == spelled:  # its best passages in eye dialect join the others; they take no one's place
            extra = [h for h in hits if in_dialect(h["text"])][:DIALECT_KEEP]
            continue
        if n >= planned:
            kept += [passage(h) for h in hits[:SIDE_KEEP]]
        for hit in hits:
            key = passage(hit)
            if key not in best or best[key]["score"] < hit["score"]:
                best[key] = hit
    ranked = sorted(best.values(), key=lambda h: -h["score"])
    cap = max(c.rerank_k * 2, c.top_k)
    keep = set(kept)
    rest = [h for h in ranked if passage(h) not in keep][: max(cap - len(keep), 0)]
    hits = [h for h in ranked if passage(h) in keep] + rest
    taken = {passage(h) for h in hits}
    hits += [h for h in extra if passage(h) not in taken]
    return {"hits": sorted(hits, key=lambda h: -h["score"])}


def passage(hit: dict[str, Any]) -> tuple[str, int, int]:
    """A retrieved passage's identity, whatever the backend: its source and offsets."""
    return hit["source_id"], hit["start"], hit["end"]


def narrowed(asked: dict[str, Any], side: dict[str, Any]) -> dict[str, Any]:
    """A side's search within the asker's filters: both authors' words, the years both allow."""
    out = {**side, **asked}
    if asked.get("author") and side.get("author"):
        out["author"] = f"{asked['author']} {side['author']}"
    for key, pick in (("year_from", max), ("year_to", min)):
        values = [v for v in (asked.get(key), side.get(key)) if v is not None]
        if values:
            out[key] = pick(values)
    return out


SIDE_KEEP = 3     # each side of a comparison keeps its three best passages
DIALECT_KEEP = 3  # the eye-dialect search adds its three best passages in eye dialect


@node(lambda u: f"expanded to {len(u['sub_queries'])} queries")
def expand(state: State, config: RunnableConfig) -> dict[str, Any]:
    return {"sub_queries": extractive.expand(state["question"], state.get("hits", [])), "expanded": True}


@node(lambda u: f"{len(u['facts'])} evidence sentences" if "facts" in u
      else "skipped: the model composes from the passages")
def extract(state: State, config: RunnableConfig) -> dict[str, Any]:
    c = ctx(config)
    task = task_for(state, c)
    with within(c.deadline):
        facts = c.engine.composer.extract(task)
    return {} if facts is None else {"facts": facts}


@node(lambda u: "refusal" if u["draft"].refusal
      else f"{len(u['draft'].bullets)} bullets, {len(u['draft'].citations)} citations")
def compose(state: State, config: RunnableConfig) -> dict[str, Any]:
    c = ctx(config)
    task = task_for(state, c)
    with within(c.deadline):
        outcome = c.engine.composer.compose(task, state.get("facts"))
    return {"draft": outcome.value, "compose_attempts": state.get("compose_attempts", 0) + 1, **failures(outcome)}


@node(lambda u: "; ".join(u["validation_errors"]) or f"valid; {len(u.get('claims', []))} claims checked")
def validate(state: State, config: RunnableConfig) -> dict[str, Any]:
    """The draft's form (``Answer.form_problems``), then what of the question its citations do not mention (a
    premise nothing cited mentions refuses: questions.premises), then every claim against its cited span (the
    deterministic floor: verify.composed)."""
    c = ctx(config)
    draft = state["draft"]
    if draft is None:
        return {"validation_errors": ["no draft"]}
    shaped = shape_in(state).kind != "single"  # a side or an item may have a single finding
    fewest = 1 if state.get("revisions") or shaped else 3  # a revision may drop findings that failed
    absent = absent_document(state.get("asked"))  # "Roosevelt's 1933 message": the collection has none
    if absent is not None:
        text = f"{REFUSAL_PREFIX} “{state['question']}”: {absent['finding']}."
        return {"validation_errors": [], "claims": [], "verification": {"premise": absent},
                "draft": Answer(answer=text, bullets=[], citations=[], refusal=True)}
    errors = draft.form_problems(fewest, c.get_document)
    if errors or draft.refusal:
        return {"validation_errors": errors, "claims": []}
    found = unmet_premises(state.get("asked"), draft.citations, c.get_document)
    if found is not None and found["refuse"]:  # nothing cited mentions whom or what the question is about
        text = (f"{REFUSAL_PREFIX} “{state['question']}”: {found['finding']}. The closest passages found were "
                + "; ".join(f"{cit.title} ({cit.locator})" for cit in draft.citations[:3]) + ".")
        return {"validation_errors": [], "claims": [],
                "draft": Answer(answer=text, bullets=[], citations=[], refusal=True),
                "verification": {"premise": found}}
    claims = verify_composed(draft, get_document=c.get_document, search=c.search, caps=c.caps,
                             passages=state.get("hits", []), checker=c.checker)
    return {"validation_errors": [], "claims": claims, "verification": {"premise": found}}


def _report(state: State, config: RunnableConfig, key: str,
            role: Callable[[Engine], Callable[..., Outcome]]) -> dict[str, Any]:
    """Ask a verifier role for its report on the grounded claims; store it under ``verification[key]``."""
    c = ctx(config)
    task = task_for(state, c)
    with within(c.deadline):
        outcome = role(c.engine)(task, state["draft"], state["claims"])
    return {"verification": {key: outcome.value.model_dump()}, **failures(outcome)}


@node(lambda u: u["verification"]["challenge"]["summary"])
def challenge(state: State, config: RunnableConfig) -> dict[str, Any]:
    return _report(state, config, "challenge", lambda engine: engine.challenger.challenge)


@node(lambda u: u["verification"]["interrogation"]["summary"])
def interrogate(state: State, config: RunnableConfig) -> dict[str, Any]:
    return _report(state, config, "interrogation", lambda engine: engine.interrogator.interrogate)


@node(lambda u: u["verification"]["counter"]["summary"])
def counter_argue(state: State, config: RunnableConfig) -> dict[str, Any]:
    return _report(state, config, "counter", lambda engine: engine.counter_arguer.counter_argue)


@node(lambda u: u["verification"]["judge"]["summary"])
def judge(state: State, config: RunnableConfig) -> dict[str, Any]:
    """The judge's role: the claims' verdicts and the reports weighed into a status (what the answer as a whole
    owes its question is checked after, by ``cite``)."""
    c = ctx(config)
    v = state["verification"]
    reports = Reports(ChallengeReport(**v["challenge"]), InterrogationReport(**v["interrogation"]),
                      CounterReport(**v["counter"]))
    task = task_for(state, c)
    with within(c.deadline):
        outcome = c.engine.judge.judge(
            task, state.get("draft"), state["claims"], reports,
            revisions_left=state.get("revisions", 0) < c.max_revisions, failures=state.get("llm_failures", []),
        )
    report = outcome.value.report
    update: dict[str, Any] = {"verification": {"judge": report.model_dump()}}
    if outcome.value.claims != state["claims"]:  # a quote the judge gave confirmed a claim: its claims and reports
        update = {"claims": outcome.value.claims,
                  "verification": {**outcome.value.reports.as_dict(), "judge": report.model_dump()}}
    return {**update, "confidence": report.confidence, "status": report.status, **failures(outcome)}


@node(lambda u: STATUS_LABELS[u["status"]])
def cite(state: State, config: RunnableConfig) -> dict[str, Any]:
    """The judged answer's citations held against its question: an answer that misses part of it (a premise no
    citation mentions, fewer list items than asked) is flagged, and so is one whose checks cannot cover it whole
    (a comparison, a list that names no count). This only ever lowers a status, never raises one."""
    report = JudgeReport(**state["verification"]["judge"])
    found = (state.get("verification") or {}).get("premise")
    extra: dict[str, Any] = {}
    short = _short_list(state)
    if short:  # a list with fewer items than asked answers part of its question
        found = {"unmet": [*(found or {}).get("unmet", []), {"text": short, "kind": "count"}],
                 "finding": "; ".join(x for x in ((found or {}).get("finding"), short) if x), "refuse": False}
        extra["premise"] = found
    if found and worse(report.status, "flagged") != report.status:  # an answer that misses its question is not verified
        report = report.model_copy(update={"status": "flagged", "safe_to_publish": False,
                                           "summary": premise_summary(report.summary, "flagged", found["finding"])})
    shape = shape_in(state)
    # each side's passages are checked, the contrast between them is not: a comparison is to be read; and each
    # passage of a list that names no count is checked, not whether the list is whole
    unchecked = ("comparison", COMPARISON_FINDING) if shape.comparison else (
        ("open_list", OPEN_LIST_FINDING) if shape.kind == "list" and not shape.asked else None)
    if unchecked and worse(report.status, "flagged") != report.status:
        extra[unchecked[0]] = {"finding": unchecked[1]}
        report = report.model_copy(update={"status": "flagged", "safe_to_publish": False,
                                           "summary": premise_summary(report.summary, "flagged", unchecked[1])})
    return {"verification": {"judge": report.model_dump(), **extra}, "status": report.status}


COMPARISON_FINDING = ("each side's passages are quoted as they were found; whether they speak to the same point is "
                      "for you to judge")
OPEN_LIST_FINDING = ("the checks confirm each passage quoted, not that the list is whole: the collection may name "
                     "more items than these passages hold")


def _short_list(state: State) -> str:
    """"found 2 of the 4 items asked" when a list answer holds fewer items than its question asks; else ""."""
    shape, draft = shape_in(state), state.get("draft")
    if shape.kind != "list" or not shape.asked or draft is None:
        return ""
    table = described(shape, state.get("question", ""), [c.model_dump() for c in draft.citations], draft.claims) or {}
    found = table.get("found", 0)
    return f"found {found} of the {shape.asked} items asked" if found < shape.asked else ""


@node(lambda u: f"revision {u['revisions']}: {len(u['draft'].citations)} findings kept")
def revise(state: State, config: RunnableConfig) -> dict[str, Any]:
    c = ctx(config)
    task = task_for(state, c)
    with within(c.deadline):
        outcome = c.engine.refiner.revise(task, state["draft"], state["claims"])
    return {"draft": outcome.value, "revisions": state.get("revisions", 0) + 1, **failures(outcome)}


@node(lambda u: status_words(u["output"]).label, closing=True)
def finalize(state: State, config: RunnableConfig) -> dict[str, Any]:
    draft: Answer | None = state.get("draft")
    verification = dict(state.get("verification") or {})
    if state.get("error"):
        stopped = "Historian stopped" if state.get("stopped") else "Historian could not run"
        status, answer, bullets, citations = "human_review", f"{stopped}: {state['error']}.", [], []
        confidence = 0.0
    elif draft is None or draft.refusal or state.get("validation_errors"):
        status = "human_review"
        answer = draft.answer if draft else "No answer could be composed."
        if state.get("validation_errors"):
            answer += " (The answer failed validation: " + "; ".join(state["validation_errors"]) + ")"
        bullets, citations, confidence = [], [], 0.0
    else:
        status = state.get("status", "human_review")
        answer, bullets, citations = draft.answer, draft.bullets, [c.model_dump() for c in draft.citations]
        confidence = state.get("confidence", 0.0)
    if state.get("llm_failures"):  # what failed, as the answer page shows it: never a key an endpoint echoed
        verification["model_failures"] = list(dict.fromkeys(redact_text(f) for f in state["llm_failures"]))
    if draft is not None and draft.notes:
        verification["composer_notes"] = draft.notes
    claimed = draft.claims if draft is not None and not draft.refusal else []
    table = (described(shape_in(state), state.get("question", ""), citations, claimed)
             if citations else None)
    output = {
        "answer": answer, "bullets": bullets, "citations": citations, "confidence": confidence, "status": status,
        "shape": table,
        "claims": [c.model_dump() for c in state.get("claims", [])], "verification": verification,
        "refusal": bool(draft and draft.refusal),
    }
    return {"output": output}
