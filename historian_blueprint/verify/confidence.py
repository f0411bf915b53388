"""Confidence, in one place: a claim's from its verdict and evidence, an answer's from its claims minus the
reports' penalties (docs/design.md: final = max(0, base − min(0.5, challenge + interrogation + counter)))."""

from __future__ import annotations

from collections.abc import Callable

from historian_blueprint.schema import SEVERITY_COST, CheckOut, ClaimVerdict, EvidenceSpan
from historian_blueprint.settings import Caps
from historian_blueprint.text.spans import Layouts
from historian_blueprint.verify.findings import ClaimResult

MAX_PENALTY = 0.5  # the reports together take at most this much off the base


def claim_confidence(result: ClaimResult) -> float:
    """Probability that the claim is supported: the probability the verifier gave it (the calibrated support
    reading, or the reader's), else from the verdict and the evidence coverage."""
    if result.probability is not None:
        return round(min(max(result.probability, 0.0), 1.0), 4)
    if result.verdict == "supported":
        return round(0.6 + 0.4 * result.support, 4)
    if result.verdict in ("misquote", "contradicted"):
        return round(0.05 * result.support, 4)
    return round(0.3 * min(result.support, 1.0), 4)


def challenge_penalty(severities: list[str], n_claims: int, caps: Caps) -> float:
    """The floor's weaknesses, weighed by severity per claim, plus 0.3 × the share of claims that fail."""
    share = len(severities) / n_claims if n_claims else 1.0
    raw = sum(SEVERITY_COST[s][0] for s in severities) / max(n_claims, 1) + 0.3 * share
    return round(min(caps.challenge, raw), 4)


def model_challenge_penalty(floor_penalty: float, severities: list[str], caps: Caps) -> float:
    """The floor's penalty plus what each weakness a model adds costs."""
    return round(min(caps.challenge, floor_penalty + sum(SEVERITY_COST[s][1] for s in severities)), 4)


def interrogation_penalty(integrity: float, caps: Caps) -> float:
    """Twice the share of citations that do not say what their claims say, capped."""
    return round(min(caps.interrogation, (1 - integrity) * caps.interrogation * 2), 4)


def answer_confidence(claims: list[ClaimVerdict], penalties: float) -> tuple[float, float, float]:
    """(base, penalty, final): the mean claim confidence minus the capped sum of the reports' penalties."""
    base = sum(c.confidence for c in claims) / len(claims) if claims else 0.0
    penalty = min(MAX_PENALTY, penalties)
    return base, penalty, round(max(0.0, base - penalty), 4)


def to_verdict(
    claim_id: int, result: ClaimResult, layouts: Layouts | None = None,
    text_of: Callable[[str], str | None] | None = None,
) -> ClaimVerdict:
    """Turn a grounding result into the schema; ``layouts`` (built from ``text_of``: source id -> text, when a
    source is new to it) gives locators."""
    evidence = None
    if result.evidence is not None:
        source_id = result.evidence.source_id
        layout = None
        if layouts is not None:
            layout = layouts.get(source_id, None if source_id in layouts or text_of is None else text_of(source_id))
        locator = layout.locate(result.evidence.start, result.evidence.end) if layout is not None else None
        evidence = EvidenceSpan(
            source_id=source_id, start=result.evidence.start, end=result.evidence.end, text=result.evidence.text,
            locator=locator,
        )
    return ClaimVerdict(
        id=claim_id, text=result.claim, verdict=result.verdict, type=result.type, severity=result.severity,
        confidence=claim_confidence(result), support=min(max(result.support, 0.0), 1.0), reason=result.reason,
        evidence=evidence, cited_source_ids=[c.source_id for c in result.cited],
        checks=[CheckOut(name=c.name, ok=c.ok, detail=c.detail) for c in result.checks], decided_by=result.decided_by,
    )
