"""Graph nodes: each takes the state (and config), returns only the fields it changes, reports progress."""

from __future__ import annotations

import functools
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer

from historian_blueprint.graph import offline
from historian_blueprint.graph.state import Answer, State
from historian_blueprint.index.chunking import Layout, sentence_spans
from historian_blueprint.verify import text as tx
from historian_blueprint.verify.draft import verify_claims
from historian_blueprint.verify.grounding import Cited, ClaimResult, SourceText
from historian_blueprint.verify.reports import Caps, challenge as make_challenge, counter_argue as make_counter
from historian_blueprint.verify.reports import interrogate as make_interrogation, judge as make_judge

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass
class Context:
    """What the nodes need from the app: retrieval, documents, settings. Passed in the run config."""

    retrieve: Callable[[str, int], list[dict[str, Any]]]
    get_document: Callable[[str], SourceText | None]
    search: Callable[[str], Sequence[SourceText]] | None
    caps: Caps = field(default_factory=Caps)
    top_k: int = 12
    rerank_k: int = 6
    max_revisions: int = 2
    max_question_chars: int = 2000
    n_documents: int = 0
    checker: Callable[..., ClaimResult] | None = None
    llm: Any = None  # an llm.roles.LLMEngine when HISTORIAN_ENGINE is "llm"; None for the offline engine
    context_tokens: int = 8000


def ctx(config: RunnableConfig) -> Context:
    return config["configurable"]["historian"]


def node(detail: Callable[[dict[str, Any]], str] | None = None):
    """Time a node, add a trace entry and stream a progress event when it finishes."""

    def wrap(fn: Callable[[State, RunnableConfig], dict[str, Any]]):
        @functools.wraps(fn)
        def run(state: State, config: RunnableConfig) -> dict[str, Any]:
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


@node(lambda u: u.get("error") or f"{len(u.get('question', ''))} characters")
def ingest(state: State, config: RunnableConfig) -> dict[str, Any]:
    question = _CONTROL.sub("", state.get("question") or "")
    question = re.sub(r"\s+", " ", question).strip()
    limit = ctx(config).max_question_chars
    if not question:
        return {"question": "", "error": "the question is empty"}
    if len(question) > limit:
        return {"question": question[:limit], "error": f"the question is longer than {limit} characters"}
    history = [{"question": str(t.get("question", ""))[:limit], "answer": str(t.get("answer", ""))[:2000]}
               for t in (state.get("history") or [])[-5:] if isinstance(t, dict)]
    return {"question": question, "history": history, "error": None, "revisions": 0, "compose_attempts": 0, "expanded": False}


@node(lambda u: u["route"])
def route(state: State, config: RunnableConfig) -> dict[str, Any]:
    return {"route": offline.route(state["question"])}


def _failure(exc: Exception) -> dict[str, Any]:
    return {"llm_failures": [str(exc)]}


@node(lambda u: f"{len(u['sub_queries'])} queries" + (" (model failed: offline plan)" if u.get("llm_failures") else ""))
def plan(state: State, config: RunnableConfig) -> dict[str, Any]:
    c = ctx(config)
    fallback = offline.plan(state["question"], state["route"], state.get("history"))
    if c.llm is None:
        return {"sub_queries": fallback}
    from historian_blueprint.llm.roles import LLMError, PlanReply

    try:
        turns = "".join(f"\nEarlier question: {t.get('question', '')}" for t in (state.get("history") or [])[-5:])
        reply = c.llm.ask("planner", f"Question: {state['question']}\nKind: {state['route']}{turns}", PlanReply)
    except LLMError as exc:
        return {"sub_queries": fallback, **_failure(exc)}
    queries = [q.strip() for q in reply.sub_queries if q.strip()]
    return {"sub_queries": list(dict.fromkeys([state["question"], *queries]))[:4]}


@node(lambda u: f"{len(u['hits'])} chunks retrieved")
def retrieve(state: State, config: RunnableConfig) -> dict[str, Any]:
    c = ctx(config)
    best: dict[int, dict[str, Any]] = {}
    for query in state["sub_queries"]:
        for hit in c.retrieve(query, c.top_k):
            if hit["row"] not in best or best[hit["row"]]["score"] < hit["score"]:
                best[hit["row"]] = hit
    hits = sorted(best.values(), key=lambda h: -h["score"])[: max(c.rerank_k * 2, c.top_k)]
    return {"hits": hits}


@node(lambda u: f"expanded to {len(u['sub_queries'])} queries")
def expand(state: State, config: RunnableConfig) -> dict[str, Any]:
    return {"sub_queries": offline.expand(state["question"], state.get("hits", [])), "expanded": True}


@node(lambda u: f"{len(u['facts'])} evidence sentences" if "facts" in u else "skipped: the model composes from the passages")
def extract(state: State, config: RunnableConfig) -> dict[str, Any]:
    c = ctx(config)
    if c.llm is not None:
        return {}  # computed on demand if the composer falls back to the extractive answer
    return {"facts": _facts(state, c)}


def _facts(state: State, c: Context) -> list[Any]:
    """Evidence sentences of the retrieved passages, each with its locator in its document."""
    context = offline.thread_words(state["question"], state.get("history"))
    facts = offline.extract(state["question"], state.get("hits", []), context=context)
    layouts: dict[str, Layout | None] = {}
    refined = []
    for fact in facts:
        if fact.source_id not in layouts:
            doc = c.get_document(fact.source_id)
            layouts[fact.source_id] = Layout(doc.text) if doc else None
        layout = layouts[fact.source_id]
        refined.append(fact.model_copy(update={"locator": layout.locate(fact.start, fact.end)}) if layout else fact)
    return refined


@node(lambda u: "refusal" if u["draft"].refusal else f"{len(u['draft'].bullets)} bullets, {len(u['draft'].citations)} citations")
def compose(state: State, config: RunnableConfig) -> dict[str, Any]:
    c = ctx(config)
    attempts = {"compose_attempts": state.get("compose_attempts", 0) + 1}
    if c.llm is not None and state.get("hits"):
        from historian_blueprint.llm import prompts
        from historian_blueprint.llm.roles import ComposerReply, LLMError, evidence_block, to_answer

        hits = state["hits"]
        text, ids, _ = evidence_block(hits, state.get("history", []), state["question"], c.context_tokens)
        try:
            reply = c.llm.ask("composer", text, ComposerReply, extra_system=prompts.few_shot_text())
        except LLMError as exc:  # the extractive answer stands in; the run cannot be verified (judge)
            facts = _facts(state, c)
            draft = offline.compose(state["question"], facts, state["sub_queries"], c.n_documents)
            return {"draft": draft, "facts": facts, **attempts, **_failure(exc)}
        if reply.insufficient or not reply.findings:
            return {"draft": offline.refusal(state["question"], _facts(state, c), state["sub_queries"], c.n_documents), **attempts}
        draft = to_answer(reply, hits[: len(ids)], ids, c.get_document)
        return {"draft": draft, **attempts}
    draft = offline.compose(state["question"], state.get("facts", []), state["sub_queries"], c.n_documents)
    return {"draft": draft, **attempts}


def answer_claims(draft: Answer) -> list[tuple[str, list[Cited]]]:
    """Each bullet is a claim cited to its citation's exact span."""
    out = []
    for n, (bullet, citation) in enumerate(zip(draft.bullets, draft.citations)):
        if draft.claims:  # the model's own words, checked against the span it cites
            claim = draft.claims[n]
        else:
            quoted = re.search(r"“(.+)”", bullet, re.S)
            claim = quoted.group(1) if quoted else re.sub(r"\s*\[\d+\]", "", bullet).strip()
        out.append((claim, [Cited(citation.source_id, citation.start, citation.end)]))
    return out


_MARKER = re.compile(r"\s*\[(\d+)\]")


def narrative_claims(draft: Answer) -> list[tuple[str, list[Cited]]]:
    """The model's prose, sentence by sentence, each checked against the citations its ``[n]`` markers name.

    A sentence without a marker is checked against every source the answer cites (it may not rest on the
    model's memory). Findings repeated in the prose (however the prose's sentences split them), questions
    and sentences of fewer than three words are left out. Only LLM drafts have prose of their own: the offline narrative is built from the findings.
    """
    if not draft.claims or not draft.answer or draft.summary:
        return []
    by_id = {cit.id: cit for cit in draft.citations}
    every = [Cited(cit.source_id, cit.start, cit.end) for cit in draft.citations]
    prose = draft.answer
    for finding in draft.claims:  # a finding repeated in the prose is checked once, as the finding
        words = finding.strip().rstrip(".").split()
        if words:
            prose = re.sub(r"\s+".join(re.escape(w) for w in words) + r"\.?", " ", prose)
    out = []
    for start, end in sentence_spans(prose):
        sentence = prose[start:end]
        claim = _MARKER.sub("", sentence).strip()
        if len(claim.split()) < 3 or tx.is_question(claim) or not tx.content_words(claim):
            continue
        named = [by_id[int(n)] for n in _MARKER.findall(sentence) if int(n) in by_id]
        out.append((claim, [Cited(c.source_id, c.start, c.end) for c in named] or every))
    return out


@node(lambda u: "; ".join(u["validation_errors"]) or f"valid; {len(u.get('claims', []))} claims checked")
def validate(state: State, config: RunnableConfig) -> dict[str, Any]:
    c = ctx(config)
    draft = state["draft"]
    errors = []
    if draft is None:
        return {"validation_errors": ["no draft"]}
    try:
        Answer.model_validate(draft.model_dump())
    except Exception as exc:
        errors.append(f"schema: {exc}")
    if not draft.refusal:
        fewest = 1 if state.get("revisions") else 3  # a revision may drop findings that failed
        if not fewest <= len(draft.bullets) <= 8:
            errors.append(f"{len(draft.bullets)} bullets (need {fewest}–8)")
        ids = {cit.id for cit in draft.citations}
        markers = {int(m) for m in re.findall(r"\[(\d+)\]", draft.answer + " ".join(draft.bullets))}
        if markers - ids:
            errors.append(f"markers without citations: {sorted(markers - ids)}")
        for cit in draft.citations:
            doc = c.get_document(cit.source_id)
            if doc is None or doc.text[cit.start:cit.end] != cit.text:
                errors.append(f"citation [{cit.id}] is not the text at its offsets")
    if errors or draft.refusal:
        return {"validation_errors": errors, "claims": []}
    return {"validation_errors": [], **_ground(state, config, draft)}


def _ground(state: State, config: RunnableConfig, draft: Answer) -> dict[str, Any]:
    """The deterministic floor: verify every claim of the answer against its cited span."""
    c = ctx(config)
    findings = answer_claims(draft)
    verification = verify_claims(
        findings + narrative_claims(draft), get_document=c.get_document, search=c.search, caps=c.caps,
        passages=state.get("hits", []), checker=c.checker,
    )
    claims = [cl if cl.id <= len(findings) else cl.model_copy(update={"part": "narrative"}) for cl in verification.claims]
    if draft.failed_citations:  # a quote that could not be anchored is a failed citation, never dropped
        failed = set(draft.failed_citations)
        claims = [
            cl.model_copy(update={
                "verdict": "misquote", "type": "misattribution", "severity": "high", "confidence": 0.0,
                "reason": "the quote given for this claim is not in the cited source",
            }) if cl.id in failed else cl
            for cl in claims
        ]
    return {"claims": claims}


def _with_model(state: State, config: RunnableConfig, role: str, schema_name: str, floor: Any, task: str, merge: Callable[[Any], Any]) -> tuple[Any, dict[str, Any]]:
    """Ask the role's model (LLM engine only) and merge its reply into the floor's report; failures fail safe."""
    c = ctx(config)
    if c.llm is None:
        return floor, {}
    from historian_blueprint.llm import roles

    try:
        reply = c.llm.ask(role, task, getattr(roles, schema_name),
                          extra_system=roles.prompts.skeptic_text(c.llm.calibration) if role == "challenger" else "")
    except roles.LLMError as exc:
        return floor, _failure(exc)
    return merge(reply), {}


def _claims_task(state: State) -> str:
    from historian_blueprint.llm.roles import claims_block

    return f"Question: {state['question']}\n\nAnswer: {state['draft'].answer}\n\n{claims_block(state['claims'])}"


@node(lambda u: u["verification"]["challenge"]["summary"])
def challenge(state: State, config: RunnableConfig) -> dict[str, Any]:
    from historian_blueprint.llm.roles import merge_challenge

    c = ctx(config)
    floor = make_challenge(state["claims"], c.caps)
    report, extra = _with_model(state, config, "challenger", "ChallengerReply", floor, _claims_task(state) if c.llm else "",
                                lambda r: merge_challenge(floor, r, state["claims"], c.caps))
    return {"verification": {"challenge": report.model_dump()}, **extra}


@node(lambda u: u["verification"]["interrogation"]["summary"])
def interrogate(state: State, config: RunnableConfig) -> dict[str, Any]:
    from historian_blueprint.llm.roles import merge_interrogation

    c = ctx(config)
    floor = make_interrogation(state["claims"], c.caps)
    report, extra = _with_model(state, config, "interrogator", "InterrogatorReply", floor, _claims_task(state) if c.llm else "",
                                lambda r: merge_interrogation(floor, r, c.caps))
    return {"verification": {"interrogation": report.model_dump()}, **extra}


@node(lambda u: u["verification"]["counter"]["summary"])
def counter_argue(state: State, config: RunnableConfig) -> dict[str, Any]:
    from historian_blueprint.llm.roles import evidence_block, merge_counter

    c = ctx(config)
    hits = state.get("hits", [])
    floor = make_counter(state["claims"], hits, c.caps)
    task, shown = "", hits
    if c.llm is not None:
        passages, ids, _ = evidence_block(hits, [], state["question"], c.context_tokens)
        task, shown = f"{_claims_task(state)}\n\nRetrieved passages:\n{passages}", hits[: len(ids)]
    report, extra = _with_model(state, config, "counter_arguer", "CounterReply", floor, task,
                                lambda r: merge_counter(floor, r, shown, c.caps))
    return {"verification": {"counter": report.model_dump()}, **extra}


@node(lambda u: u["verification"]["judge"]["summary"])
def judge(state: State, config: RunnableConfig) -> dict[str, Any]:
    from historian_blueprint.verify.reports import ChallengeReport, CounterReport, InterrogationReport

    c = ctx(config)
    v = state["verification"]
    failed = any(ch.name == "verifier" and not ch.ok for claim in state["claims"] for ch in claim.checks)
    report = make_judge(
        state["claims"], ChallengeReport(**v["challenge"]), InterrogationReport(**v["interrogation"]),
        CounterReport(**v["counter"]), c.caps, revisions_left=state.get("revisions", 0) < c.max_revisions,
        failed_checks=failed,
    )
    extra: dict[str, Any] = {}
    if c.llm is not None:
        from historian_blueprint.llm import roles
        from historian_blueprint.llm.settings import VERIFYING_ROLES

        failures = [f for f in state.get("llm_failures", []) if f.split(":", 1)[0] in VERIFYING_ROLES]
        if not failures:
            task = (f"{_claims_task(state)}\n\nReports:\n{json.dumps({k: v[k] for k in ('challenge', 'interrogation', 'counter')})}"
                    f"\n\nThe deterministic checks give: {report.status} at {report.confidence:.2f}.")
            try:
                report = roles.merge_judge(report, c.llm.ask("judge", task, roles.JudgeReply))
            except roles.LLMError as exc:
                failures, extra = [str(exc)], _failure(exc)
        if failures:
            report = roles.failed_judge(report, failures)
        elif state["draft"] is not None and any("rejected" in n for n in state["draft"].notes):
            report = roles.cap_for_rejections(report, [n for n in state["draft"].notes if "rejected" in n])
    return {"verification": {"judge": report.model_dump()}, "confidence": report.confidence, "status": report.status, **extra}


@node(lambda u: f"revision {u['revisions']}: {len(u['draft'].citations)} findings kept")
def revise(state: State, config: RunnableConfig) -> dict[str, Any]:
    c = ctx(config)
    flagged = {claim.id for claim in state["claims"] if claim.verdict != "supported"}
    count = {"revisions": state.get("revisions", 0) + 1}
    if c.llm is not None and state.get("hits"):
        from historian_blueprint.llm.roles import ComposerReply, LLMError, evidence_block, to_answer

        text, ids, _ = evidence_block(state["hits"], state.get("history", []), state["question"], c.context_tokens)
        findings = "\n".join(
            f"{'Finding' if cl.part == 'finding' else 'Sentence of your answer'} {cl.id}: {cl.text} "
            f"[{'FLAGGED: ' + cl.reason if cl.id in flagged else 'supported'}]"
            for cl in state["claims"]
        )
        try:
            reply = c.llm.ask("refiner", f"{text}\n\nCurrent answer: {state['draft'].answer}\n\n{findings}", ComposerReply)
            draft = to_answer(reply, state["hits"][: len(ids)], ids, c.get_document)
            return {"draft": draft, **count}
        except LLMError as exc:
            return {"draft": offline.revise(state["draft"], flagged), **count, **_failure(exc)}
    return {"draft": offline.revise(state["draft"], flagged), **count}


@node(lambda u: f"{len(u['draft'].citations)} citations")
def cite(state: State, config: RunnableConfig) -> dict[str, Any]:
    return {"draft": state["draft"]}


@node(lambda u: u["output"]["status"])
def finalize(state: State, config: RunnableConfig) -> dict[str, Any]:
    draft: Answer | None = state.get("draft")
    verification = dict(state.get("verification") or {})
    if state.get("error"):
        status, answer, bullets, citations = "human_review", f"Historian could not run: {state['error']}.", [], []
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
    if state.get("llm_failures"):
        verification["model_failures"] = list(dict.fromkeys(state["llm_failures"]))
    if draft is not None and draft.notes:
        verification["composer_notes"] = draft.notes
    output = {
        "answer": answer, "bullets": bullets, "citations": citations, "confidence": confidence, "status": status,
        "claims": [c.model_dump() for c in state.get("claims", [])], "verification": verification,
        "refusal": bool(draft and draft.refusal),
    }
    return {"output": output}
