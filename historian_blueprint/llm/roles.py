"""The LLM engine's roles on top of the deterministic floor.

Each role asks its model for a small JSON object and turns the reply into the graph's own types. The
composer's citations are re-anchored in the sources; the verifiers' findings are merged into the floor's
reports so that they can only add doubt, never remove it.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from historian_blueprint.graph.state import Answer, Citation
from historian_blueprint.index.chunking import Layout
from historian_blueprint.llm import prompts
from historian_blueprint.llm.budget import fit
from historian_blueprint.llm.client import LLMClient, LLMError, Usage
from historian_blueprint.verify.grounding import SourceText
from historian_blueprint.verify.reports import (
    Caps, ChallengeReport, CitationCheck, CounterReport, InterrogationReport, JudgeReport, Weakness,
)
from historian_blueprint.verify.schema import ClaimVerdict

Severity = Literal["low", "medium", "high", "critical"]
Status = Literal["verified", "flagged", "needs_revision", "human_review"]
STATUS_ORDER = ("verified", "flagged", "needs_revision", "human_review")
SEVERITY_PENALTY = {"low": 0.02, "medium": 0.05, "high": 0.1, "critical": 0.3}
ASSESSMENT_ORDER = ("exact", "paraphrase", "out_of_context", "misquote", "missing")
# A quote that is not in its passage verbatim may still be anchored when this similar to the source's words.
ANCHOR_MIN_RATIO = 0.9


# ----------------------------------------------------------------------------- reply schemas
class PlanReply(BaseModel):
    sub_queries: list[str] = Field(min_length=1, max_length=4)


class Finding(BaseModel):
    claim: str = Field(min_length=1)
    evidence_id: str
    quote: str = Field(min_length=1)


class ComposerReply(BaseModel):
    answer: str
    findings: list[Finding] = []
    insufficient: bool = False


class ChallengeFinding(BaseModel):
    claim_id: int
    issue: str
    severity: Severity


class ChallengerReply(BaseModel):
    weaknesses: list[ChallengeFinding] = []


class CitationJudgement(BaseModel):
    claim_id: int
    assessment: Literal["exact", "paraphrase", "misquote", "out_of_context", "missing"]
    detail: str = ""


class InterrogatorReply(BaseModel):
    citations: list[CitationJudgement] = []


class CounterReply(BaseModel):
    opposing_reading: str | None = None
    evidence_ids: list[str] = []
    both_interpretations_valid: bool = False
    strength: float = Field(0.0, ge=0, le=1)


class JudgeReply(BaseModel):
    status: Status
    confidence: float = Field(ge=0, le=1)
    required_revisions: list[str] = []
    reasoning: str = ""


# ----------------------------------------------------------------------------- the engine
@dataclass
class LLMEngine:
    """One run's view of the LLM engine: the shared client, this run's token usage, its failures."""

    client: LLMClient
    calibration: list[dict[str, Any]] = field(default_factory=lambda: prompts.SKEPTIC_EXAMPLES)
    usage: Usage = field(default_factory=Usage)
    prompt_version: str = prompts.PROMPT_VERSION

    def ask(self, role: str, task_input: str, schema: type[BaseModel], extra_system: str = "") -> Any:
        system = prompts.system(prompts.TASKS[role], schema.model_json_schema())
        if extra_system:
            system += "\n\n" + extra_system
        return self.client.structured(role, [SystemMessage(content=system), HumanMessage(content=task_input)], schema, self.usage)

    def models(self) -> dict[str, str]:
        from historian_blueprint.llm.settings import ROLES

        return {role: self.client.settings.role(role).model for role in ROLES}


def evidence_block(hits: list[dict[str, Any]], history: list[dict[str, Any]], question: str, budget: int) -> tuple[str, list[str], int]:
    """The question, recent turns and numbered passages, trimmed to the context budget."""
    entries = [
        f"E{n} ({h.get('author') or h.get('title')}, {h.get('year') or 'n.d.'}, {h.get('locator')}; {h['source_id']}): "
        + " ".join(h["text"].split())
        for n, h in enumerate(hits, start=1)
    ]
    turns = [f"Q: {t.get('question', '')}\nA: {t.get('answer', '')[:600]}" for t in history[-5:]]
    fixed = 1500 + len(prompts.RULES) // 4 + len(prompts.few_shot_text()) // 4 + len(question) // 4
    kept_turns, kept_entries, dropped = fit(fixed, turns, entries, budget)
    text = ""
    if kept_turns:
        text += "Earlier in this conversation:\n" + "\n\n".join(kept_turns) + "\n\n"
    text += f"Question: {question}\n\nEvidence:\n" + "\n".join(kept_entries)
    ids = [f"E{n}" for n in range(1, len(kept_entries) + 1)]
    return text, ids, dropped


def anchor(doc: SourceText, quote: str, start: int, end: int) -> tuple[int, int, str] | None:
    """Find the quote in the source: exactly in its passage, exactly anywhere, then fuzzily in the passage."""
    text = doc.text
    quote = quote.strip().strip('"“”')
    if not quote:
        return None
    for lo, hi in ((start, end), (0, len(text))):
        at = text.find(quote, lo, hi)
        if at >= 0:
            return at, at + len(quote), "exact"
    # differences in whitespace only (line breaks of the source)
    pattern = r"\s+".join(re.escape(w) for w in quote.split())
    match = re.search(pattern, text[start:end])
    if match:
        return start + match.start(), start + match.end(), "exact"
    match = re.search(pattern, text)
    if match:
        return match.start(), match.end(), "exact"
    passage = text[start:end]
    best: tuple[float, int, int] | None = None
    for m in re.finditer(r"\S+", passage):
        lo = m.start()
        hi = min(len(passage), lo + len(quote))
        ratio = difflib.SequenceMatcher(None, quote, passage[lo:hi], autojunk=False).ratio()
        if best is None or ratio > best[0]:
            best = (ratio, lo, hi)
    if best and best[0] >= ANCHOR_MIN_RATIO:
        lo, hi = best[1], best[2]
        while hi < len(passage) and passage[hi].isalnum():  # end on a word boundary, not mid-word
            hi += 1
        while hi > lo and passage[hi - 1].isspace():
            hi -= 1
        return start + lo, start + hi, "fuzzy"
    return None


def to_answer(reply: ComposerReply, hits: list[dict[str, Any]], ids: list[str], get_document: Any) -> Answer:
    """Turn the composer's reply into an Answer with exact citations; what it needed is in ``Answer.notes``."""
    problems: list[str] = []
    by_id = {eid: hits[n] for n, eid in enumerate(ids)}
    citations: list[Citation] = []
    bullets: list[str] = []
    claims: list[str] = []
    failed: list[int] = []
    renumber: dict[str, int] = {}
    layouts: dict[str, Layout] = {}
    for k, finding in enumerate(reply.findings, start=1):
        eid = finding.evidence_id.strip().strip("[]").upper()
        hit = by_id.get(eid)
        if hit is None:
            problems.append(f"finding {k} cites {finding.evidence_id!r}, which was not given: rejected")
            continue
        doc = get_document(hit["source_id"])
        if doc is None:
            problems.append(f"finding {k}: source {hit['source_id']} is gone: rejected")
            continue
        n = len(citations) + 1
        placed = anchor(doc, finding.quote, hit["start"], hit["end"])
        if placed is None:
            start, end = hit["start"], hit["end"]
            failed.append(n)
            problems.append(f"finding {k}: its quote is not in {hit['source_id']}: failed citation [{n}]")
        else:
            start, end, how = placed
            if how == "fuzzy":
                problems.append(f"finding {k}: quote anchored fuzzily (≥ {ANCHOR_MIN_RATIO:.0%} similar) in {hit['source_id']}")
        layout = layouts.setdefault(doc.source_id, Layout(doc.text))
        citations.append(Citation(
            id=n, source_id=doc.source_id, title=hit.get("title") or doc.title, author=hit.get("author") or doc.author,
            year=hit.get("year"), locator=layout.locate(start, end), text=doc.text[start:end], start=start, end=end,
        ))
        renumber.setdefault(eid, n)
        claim = re.sub(r"\s*\[E?\d+\]", "", finding.claim).strip()
        claims.append(claim)
        bullets.append(f"{claim} [{n}]")

    def marker(match: re.Match[str]) -> str:
        n = renumber.get(match.group(1).upper())
        return f"[{n}]" if n else ""

    narrative = re.sub(r"\[(E\d+)\]", marker, reply.answer, flags=re.I).strip()
    return Answer(answer=narrative, bullets=bullets, citations=citations, claims=claims, failed_citations=failed,
                  notes=problems)


def claims_block(claims: list[ClaimVerdict]) -> str:
    return "\n".join(
        f"Claim {c.id}: {c.text}\n  Evidence ({c.evidence.source_id if c.evidence else 'none'}): "
        f"{c.evidence.text[:500] if c.evidence else '(none)'}\n  Floor verdict: {c.verdict}"
        for c in claims
    )


# ----------------------------------------------------------------------------- merging into the floor
def merge_challenge(floor: ChallengeReport, reply: ChallengerReply, claims: list[ClaimVerdict], caps: Caps) -> ChallengeReport:
    known = {c.id for c in claims}
    weaknesses = list(floor.weaknesses)
    added = 0.0
    for w in reply.weaknesses:
        if w.claim_id in known:
            weaknesses.append(Weakness(claim_id=w.claim_id, issue=f"(model) {w.issue}", severity=w.severity))
            added += SEVERITY_PENALTY[w.severity]
    critical = floor.critical or any(w.severity == "critical" for w in reply.weaknesses if w.claim_id in known)
    serious = {w.claim_id for w in reply.weaknesses if w.claim_id in known and w.severity in ("high", "critical")}
    unsupported = sorted(set(floor.unsupported_claims) | serious)
    return ChallengeReport(
        weaknesses=weaknesses, unsupported_claims=unsupported, critical=critical,
        penalty=round(min(caps.challenge, floor.penalty + added), 4),
        summary=f"{floor.summary}; the model adds {len(weaknesses) - len(floor.weaknesses)} weakness(es)",
    )


def merge_interrogation(floor: InterrogationReport, reply: InterrogatorReply, caps: Caps) -> InterrogationReport:
    theirs = {j.claim_id: j for j in reply.citations}
    merged = []
    for check in floor.citations:
        other = theirs.get(check.claim_id)
        if other and ASSESSMENT_ORDER.index(other.assessment) > ASSESSMENT_ORDER.index(check.assessment):
            check = CitationCheck(claim_id=check.claim_id, source_id=check.source_id, assessment=other.assessment,
                                  detail=f"(model) {other.detail}".strip())
        merged.append(check)
    good = sum(1 for c in merged if c.assessment in ("exact", "paraphrase"))
    integrity = min(floor.integrity, good / len(merged) if merged else 0.0)
    return InterrogationReport(
        citations=merged, integrity=round(integrity, 4),
        penalty=round(min(caps.interrogation, (1 - integrity) * caps.interrogation * 2), 4),
        summary=f"{good} of {len(merged)} citations say what their claims say (floor and model)",
    )


def merge_counter(floor: CounterReport, reply: CounterReply, hits: list[dict[str, Any]], caps: Caps) -> CounterReport:
    ids = {f"E{n}": h for n, h in enumerate(hits, start=1)}
    cited = [ids[e.strip("[]").upper()] for e in reply.evidence_ids if e.strip("[]").upper() in ids]
    if not reply.opposing_reading or not cited:  # an opposing reading must rest on a retrieved passage
        return floor
    evidence = floor.evidence + [{"source_id": h["source_id"], "text": h["text"][:400], "locator": h.get("locator")} for h in cited]
    return CounterReport(
        opposing_reading=" / ".join(r for r in (floor.opposing_reading, f"(model) {reply.opposing_reading}") if r),
        evidence=evidence, both_interpretations_valid=floor.both_interpretations_valid or reply.both_interpretations_valid,
        penalty=round(min(caps.counter, max(floor.penalty, caps.counter * reply.strength)), 4),
        summary="the model found an opposing reading in the retrieved passages",
    )


def merge_judge(floor: JudgeReport, reply: JudgeReply) -> JudgeReport:
    """The model may lower the status or the confidence, never raise what the floor decided."""
    status = max(floor.status, reply.status, key=STATUS_ORDER.index)
    confidence = min(floor.confidence, reply.confidence)
    return JudgeReport(
        base=floor.base, confidence=round(confidence, 4), status=status,
        required_revisions=list(dict.fromkeys(floor.required_revisions + reply.required_revisions)),
        safe_to_publish=status == "verified", disagreement=floor.disagreement,
        summary=f"{floor.summary}; model judge: {reply.status} ({reply.confidence:.2f}) → {status}",
    )


def failed_judge(floor: JudgeReport, failures: list[str]) -> JudgeReport:
    """A role failed: the answer is not verified, whatever the numbers say."""
    status = max(floor.status, "human_review", key=STATUS_ORDER.index)
    return floor.model_copy(update={
        "status": status, "safe_to_publish": False,
        "required_revisions": floor.required_revisions + [f"model role failed: {f}" for f in failures],
        "summary": f"{floor.summary}; not verified because a model role failed ({'; '.join(failures)})",
    })


def cap_for_rejections(report: JudgeReport, notes: list[str]) -> JudgeReport:
    """The composer cited evidence it was not given: what it wrote around those ids is unchecked, so at most flagged."""
    if STATUS_ORDER.index(report.status) >= STATUS_ORDER.index("flagged"):
        return report
    return report.model_copy(update={
        "status": "flagged", "safe_to_publish": False,
        "required_revisions": report.required_revisions + notes,
        "summary": f"{report.summary}; at most flagged: the composer cited evidence it was not given",
    })


def reply_json(value: BaseModel) -> str:
    return json.dumps(value.model_dump(), ensure_ascii=False)


__all__ = [
    "LLMEngine", "LLMError", "PlanReply", "ComposerReply", "ChallengerReply", "InterrogatorReply", "CounterReply",
    "JudgeReply", "anchor", "to_answer", "evidence_block", "claims_block", "merge_challenge", "merge_interrogation",
    "merge_counter", "merge_judge", "failed_judge",
]
