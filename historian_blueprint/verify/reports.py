"""The adversarial reports (challenger, interrogator, counter-arguer, judge) and the confidence formula.

The offline engine builds every report from the deterministic grounding results, so the floor and
the reports can never disagree upward: a claim the floor flags is a weakness in every report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from historian_blueprint.verify import text as tx
from historian_blueprint.verify.schema import ClaimVerdict

Status = Literal["verified", "flagged", "needs_revision", "human_review"]


class Weakness(BaseModel):
    claim_id: int
    issue: str
    severity: Literal["low", "medium", "high", "critical"]


class ChallengeReport(BaseModel):
    weaknesses: list[Weakness] = []
    unsupported_claims: list[int] = []
    critical: bool = False
    penalty: float = 0.0
    summary: str = ""


class CitationCheck(BaseModel):
    claim_id: int
    source_id: str | None
    assessment: Literal["exact", "paraphrase", "misquote", "out_of_context", "missing"]
    detail: str = ""


class InterrogationReport(BaseModel):
    citations: list[CitationCheck] = []
    integrity: float = Field(1.0, ge=0, le=1)
    penalty: float = 0.0
    summary: str = ""


class CounterReport(BaseModel):
    opposing_reading: str | None = None
    evidence: list[dict] = []
    both_interpretations_valid: bool = False
    penalty: float = 0.0
    summary: str = ""


class JudgeReport(BaseModel):
    base: float
    confidence: float = Field(ge=0, le=1)
    status: Status
    required_revisions: list[str] = []
    safe_to_publish: bool
    disagreement: bool = False
    summary: str = ""


@dataclass(frozen=True)
class Caps:
    challenge: float = 0.30
    interrogation: float = 0.20
    counter: float = 0.25
    verified: float = 0.80
    flagged: float = 0.60
    human_review: float = 0.40

    @classmethod
    def from_config(cls, config) -> Caps:
        return cls(
            challenge=config["HISTORIAN_VERIFY_CHALLENGE_CAP"],
            interrogation=config["HISTORIAN_VERIFY_INTERROGATION_CAP"],
            counter=config["HISTORIAN_VERIFY_COUNTER_CAP"],
            verified=config["HISTORIAN_VERIFY_VERIFIED_THRESHOLD"],
            flagged=config["HISTORIAN_VERIFY_FLAGGED_THRESHOLD"],
            human_review=config["HISTORIAN_VERIFY_HUMAN_REVIEW_THRESHOLD"],
        )


SEVERITY_WEIGHT = {"none": 0.0, "low": 0.05, "medium": 0.12, "high": 0.2, "critical": 0.3}


def challenge(claims: list[ClaimVerdict], caps: Caps) -> ChallengeReport:
    """List the claims the evidence does not carry, with their severity."""
    weaknesses = [
        Weakness(claim_id=c.id, issue=f"{c.verdict}: {c.reason}", severity=c.severity if c.severity != "none" else "low")
        for c in claims if c.verdict != "supported"
    ]
    share = len(weaknesses) / len(claims) if claims else 1.0
    raw = sum(SEVERITY_WEIGHT[w.severity] for w in weaknesses) / max(len(claims), 1) + 0.3 * share
    critical = any(w.severity == "critical" for w in weaknesses) or share >= 0.5
    return ChallengeReport(
        weaknesses=weaknesses,
        unsupported_claims=[w.claim_id for w in weaknesses],
        critical=critical,
        penalty=round(min(caps.challenge, raw), 4),
        summary=f"{len(weaknesses)} of {len(claims)} claims are not carried by their evidence" if claims else "no claims to check",
    )


def interrogate(claims: list[ClaimVerdict], caps: Caps) -> InterrogationReport:
    """For each claim: does its citation say what the claim says (exact, paraphrase, misquote, out of context)?"""
    checks = []
    for c in claims:
        if c.evidence is None:
            checks.append(CitationCheck(claim_id=c.id, source_id=None, assessment="missing", detail=c.reason))
            continue
        if c.verdict == "misquote":
            assessment = "misquote"
        elif c.verdict != "supported" or (c.cited_source_ids and c.evidence.source_id not in c.cited_source_ids):
            assessment = "out_of_context"
        elif tx.normalize(c.text).strip(" .") in tx.normalize(c.evidence.text):
            assessment = "exact"
        else:
            assessment = "paraphrase"
        checks.append(CitationCheck(claim_id=c.id, source_id=c.evidence.source_id, assessment=assessment, detail=c.reason))
    good = sum(1 for ch in checks if ch.assessment in ("exact", "paraphrase"))
    integrity = good / len(checks) if checks else 0.0
    return InterrogationReport(
        citations=checks,
        integrity=round(integrity, 4),
        penalty=round(min(caps.interrogation, (1 - integrity) * caps.interrogation * 2), 4),
        summary=f"{good} of {len(checks)} citations say what their claims say",
    )


_CONTRAST = frozenset("but however although though yet nevertheless nonetheless whereas despite contrary".split())


def counter_argue(claims: list[ClaimVerdict], passages: list[dict], caps: Caps) -> CounterReport:
    """Find the strongest opposing reading in the retrieved passages: same subject, opposite polarity."""
    best: tuple[float, dict, ClaimVerdict] | None = None
    for c in claims:
        if c.verdict != "supported":
            continue
        claim_words = set(tx.content_words(c.text))
        claim_neg = any(tx.is_negation(w) for w in tx.words(c.text))
        for p in passages:
            if c.evidence and p.get("source_id") == c.evidence.source_id and p.get("start", -1) <= c.evidence.start < p.get("end", -1):
                continue  # the claim's own evidence
            for sentence in _sentences(p.get("text", "")):
                words = tx.words(sentence)
                overlap = len(claim_words & set(tx.content_words(sentence))) / max(len(claim_words), 1)
                opposite = any(tx.is_negation(w) for w in words) != claim_neg or bool(_CONTRAST & set(words))
                if overlap >= 0.45 and opposite and (best is None or overlap > best[0]):
                    best = (overlap, {"source_id": p.get("source_id"), "text": sentence, "locator": p.get("locator")}, c)
    if best is None:
        return CounterReport(summary="no opposing reading found in the retrieved passages")
    overlap, evidence, claim = best
    return CounterReport(
        opposing_reading=f"Claim {claim.id} may be read differently: {evidence['text'][:300]}",
        evidence=[evidence],
        both_interpretations_valid=True,
        penalty=round(min(caps.counter, 0.1 * overlap), 4),
        summary="an opposing passage shares the claim's subject; both readings should be weighed",
    )


def _sentences(text: str) -> list[str]:
    from historian_blueprint.index.chunking import sentence_spans

    return [text[s:e] for s, e in sentence_spans(text)]


def judge(
    claims: list[ClaimVerdict],
    ch: ChallengeReport,
    it: InterrogationReport,
    co: CounterReport,
    caps: Caps,
    revisions_left: bool = True,
    failed_checks: bool = False,
) -> JudgeReport:
    """final = max(0, base − min(0.5, penalties)); the status follows the thresholds and the floor."""
    base = sum(c.confidence for c in claims) / len(claims) if claims else 0.0
    penalty = min(0.5, ch.penalty + it.penalty + co.penalty)
    confidence = round(max(0.0, base - penalty), 4)
    flagged_claims = [c for c in claims if c.verdict != "supported"]
    # reports disagree when the challenger finds nothing but the interrogator doubts citations, or the reverse
    disagreement = (not ch.weaknesses and it.integrity < 0.8) or (ch.critical and it.integrity >= 0.99)
    if failed_checks or not claims:
        status: Status = "human_review"
    elif confidence < caps.human_review or disagreement:
        status = "human_review"
    elif confidence < caps.flagged or flagged_claims and confidence < caps.verified:
        status = "needs_revision" if revisions_left else "human_review"
    elif confidence < caps.verified or flagged_claims:
        status = "flagged"
    else:
        status = "verified"
    if status == "verified" and (flagged_claims or ch.critical):
        status = "flagged"  # the floor caps the status whatever the numbers say
    required = [f"claim {c.id}: {c.reason}" for c in flagged_claims]
    return JudgeReport(
        base=round(base, 4), confidence=confidence, status=status, required_revisions=required,
        safe_to_publish=status == "verified", disagreement=disagreement,
        summary=f"confidence {confidence:.2f} ({base:.2f} − {penalty:.2f} in penalties): {status}",
    )
