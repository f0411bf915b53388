"""What the LLM engine's roles ask their models for (reply schemas), and how a verifier's reply is merged into
the floor's report: a model can only add doubt, never remove it (a judge's quote settles only the floor's own
doubt, ``refresh_reports``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from historian_blueprint.ask.roles.base import Reports
from historian_blueprint.schema import (
    Assessment, ASSESSMENT_ORDER, ChallengeReport, CitationCheck, ClaimVerdict, CounterReport, InterrogationReport,
    IssueSeverity, JudgeReport, STATUS_LABELS, Status, Weakness, worse,
)
from historian_blueprint.settings import Caps
from historian_blueprint.verify import reports as floor_reports
from historian_blueprint.verify.reports import restated
from historian_blueprint.verify.confidence import interrogation_penalty, model_challenge_penalty

MODEL = "(model)"  # marks what a model added to a floor's report


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
    severity: IssueSeverity


class ChallengerReply(BaseModel):
    weaknesses: list[ChallengeFinding] = []


class CitationJudgement(BaseModel):
    claim_id: int
    assessment: Assessment
    detail: str = ""


class InterrogatorReply(BaseModel):
    citations: list[CitationJudgement] = []


class CounterReply(BaseModel):
    opposing_reading: str | None = None
    evidence_ids: list[str] = []
    both_interpretations_valid: bool = False
    strength: float = Field(0.0, ge=0, le=1)


class Confirmation(BaseModel):
    """The words of a claim's cited source that carry it, quoted verbatim (they confirm an unconfirmed claim)."""

    claim_id: int
    source_id: str
    quote: str


class JudgeReply(BaseModel):
    status: Status
    confidence: float = Field(ge=0, le=1)
    required_revisions: list[str] = []
    reasoning: str = ""
    confirmations: list[Confirmation] = []


# ----------------------------------------------------------------------------- merging into the floor
def merge_challenge(floor: ChallengeReport, reply: ChallengerReply, claims: list[ClaimVerdict],
                    caps: Caps) -> ChallengeReport:
    known = {c.id for c in claims}
    added = [w for w in reply.weaknesses if w.claim_id in known]
    weaknesses = floor.weaknesses + [Weakness(claim_id=w.claim_id, issue=f"{MODEL} {w.issue}", severity=w.severity)
                                     for w in added]
    critical = floor.critical or any(w.severity == "critical" for w in reply.weaknesses if w.claim_id in known)
    serious = {w.claim_id for w in reply.weaknesses if w.claim_id in known and w.severity in ("high", "critical")}
    unsupported = sorted(set(floor.unsupported_claims) | serious)
    return ChallengeReport(
        weaknesses=weaknesses, unsupported_claims=unsupported, critical=critical,
        penalty=model_challenge_penalty(floor.penalty, [w.severity for w in added], caps),
        summary=f"{floor.summary}; the model adds {len(weaknesses) - len(floor.weaknesses)} weakness(es)",
    )


def merge_interrogation(floor: InterrogationReport, reply: InterrogatorReply, caps: Caps) -> InterrogationReport:
    theirs = {j.claim_id: j for j in reply.citations}
    merged = []
    for check in floor.citations:
        other = theirs.get(check.claim_id)
        if other and ASSESSMENT_ORDER.index(other.assessment) > ASSESSMENT_ORDER.index(check.assessment):
            check = CitationCheck(claim_id=check.claim_id, source_id=check.source_id, assessment=other.assessment,
                                  detail=f"{MODEL} {other.detail}".strip())
        merged.append(check)
    good = sum(1 for c in merged if c.assessment in ("exact", "paraphrase"))
    integrity = min(floor.integrity, good / len(merged) if merged else 0.0)
    return InterrogationReport(
        citations=merged, integrity=round(integrity, 4),
        penalty=interrogation_penalty(integrity, caps),
        summary=f"{good} of {len(merged)} citations say what their claims say (floor and model)",
    )


def merge_counter(floor: CounterReport, reply: CounterReply, hits: list[dict[str, Any]], caps: Caps) -> CounterReport:
    ids = {f"E{n}": h for n, h in enumerate(hits, start=1)}
    cited = [ids[e.strip("[]").upper()] for e in reply.evidence_ids if e.strip("[]").upper() in ids]
    if not reply.opposing_reading or not cited:  # an opposing reading must rest on a retrieved passage
        return floor
    evidence = floor.evidence + [{"source_id": h["source_id"], "text": h["text"][:400], "locator": h.get("locator")}
                                 for h in cited]
    return CounterReport(
        opposing_reading=" / ".join(r for r in (floor.opposing_reading, f"{MODEL} {reply.opposing_reading}") if r),
        evidence=evidence,
        both_interpretations_valid=floor.both_interpretations_valid or reply.both_interpretations_valid,
        penalty=round(min(caps.counter, max(floor.penalty, caps.counter * reply.strength)), 4),
        summary="the model found an opposing reading in the retrieved passages",
    )


def refresh_reports(reports: Reports, claims: list[ClaimVerdict], hits: list[dict[str, Any]], caps: Caps) -> Reports:
    """The reports over claims a judge's quote confirmed: the floor's anew, the models' findings merged in again,
    and any opposing reading of the newly supported claims added to the counter-arguer's."""
    challenger = ChallengerReply(weaknesses=[
        ChallengeFinding(claim_id=w.claim_id, issue=w.issue.removeprefix(MODEL).strip(), severity=w.severity)
        for w in reports.challenge.weaknesses if w.issue.startswith(MODEL)
    ])
    interrogator = InterrogatorReply(citations=[
        CitationJudgement(claim_id=c.claim_id, assessment=c.assessment, detail=c.detail.removeprefix(MODEL).strip())
        for c in reports.interrogation.citations if c.detail.startswith(MODEL)
    ])
    counter, fresh = reports.counter, floor_reports.counter_argue(claims, hits, caps)
    if fresh.opposing_reading and fresh.opposing_reading not in (counter.opposing_reading or ""):
        counter = CounterReport(
            opposing_reading=" / ".join(r for r in (counter.opposing_reading, fresh.opposing_reading) if r),
            evidence=counter.evidence + fresh.evidence,
            both_interpretations_valid=counter.both_interpretations_valid or fresh.both_interpretations_valid,
            penalty=max(counter.penalty, fresh.penalty), summary=fresh.summary,
        )
    return Reports(
        merge_challenge(floor_reports.challenge(claims, caps), challenger, claims, caps),
        merge_interrogation(floor_reports.interrogate(claims, caps), interrogator, caps),
        counter,
    )


def merge_judge(floor: JudgeReport, reply: JudgeReply) -> JudgeReport:
    """The model may lower the status or the confidence, never raise what the floor decided."""
    status = worse(floor.status, reply.status)
    confidence = min(floor.confidence, reply.confidence)
    return JudgeReport(
        base=floor.base, confidence=round(confidence, 4), status=status,
        required_revisions=list(dict.fromkeys(floor.required_revisions + reply.required_revisions)),
        safe_to_publish=status == "verified", disagreement=floor.disagreement,
        summary=(f"{restated(floor.summary, status)}; the model judge said {STATUS_LABELS[reply.status]} "
                 f"({reply.confidence:.2f})"),
    )


def failed_judge(floor: JudgeReport, failures: list[str]) -> JudgeReport:
    """A role failed: the answer is not verified, whatever the numbers say."""
    status = worse(floor.status, "human_review")
    return floor.model_copy(update={
        "status": status, "safe_to_publish": False,
        "required_revisions": floor.required_revisions + [f"model role failed: {f}" for f in failures],
        "summary": f"{restated(floor.summary, status)}; because a model role failed ({'; '.join(failures)})",
    })


def cap_for_rejections(report: JudgeReport, notes: list[str]) -> JudgeReport:
    """The composer cited evidence it was not given: what it wrote around those ids is unchecked, so at most flagged."""
    if worse(report.status, "flagged") == report.status:
        return report
    return report.model_copy(update={
        "status": "flagged", "safe_to_publish": False,
        "required_revisions": report.required_revisions + notes,
        "summary": f"{restated(report.summary, 'flagged')}; the composer cited evidence it was not given",
    })
