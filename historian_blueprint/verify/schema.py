"""The per-claim verdict schema shared by the verifier, the graph, the API and the evaluation harness."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from historian_blueprint.verify.grounding import ClaimResult


class EvidenceSpan(BaseModel):
    source_id: str
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    text: str
    locator: str | None = None


class CheckOut(BaseModel):
    name: str
    ok: bool
    detail: str = ""


class ClaimVerdict(BaseModel):
    """One claim's verdict, with its type, severity, confidence and evidence span."""

    id: int
    text: str
    verdict: Literal["supported", "unsupported", "contradicted", "misquote", "misattributed"]
    type: Literal["fabrication", "exaggeration", "misattribution", "unverified_detail", "inference"] | None
    severity: Literal["none", "low", "medium", "high", "critical"]
    confidence: float = Field(ge=0, le=1, description="probability that the claim is supported")
    support: float = Field(ge=0, le=1, description="share of the claim's content words in the evidence")
    reason: str
    evidence: EvidenceSpan | None
    cited_source_ids: list[str] = []
    checks: list[CheckOut] = []
    part: Literal["finding", "narrative"] = "finding"  # narrative: a sentence of the answer's prose


def claim_confidence(result: ClaimResult) -> float:
    """Probability that the claim is supported, from the verdict and the evidence coverage."""
    if result.verdict == "supported":
        return round(0.6 + 0.4 * result.support, 4)
    if result.verdict in ("misquote", "contradicted"):
        return round(0.05 * result.support, 4)
    return round(0.3 * min(result.support, 1.0), 4)


def to_verdict(claim_id: int, result: ClaimResult, locate: dict[str, object] | None = None) -> ClaimVerdict:
    """Turn a grounding result into the schema (``locate`` maps source id -> Layout for locators)."""
    evidence = None
    if result.evidence is not None:
        layout = (locate or {}).get(result.evidence.source_id)
        locator = layout.locate(result.evidence.start, result.evidence.end) if layout is not None else None
        evidence = EvidenceSpan(
            source_id=result.evidence.source_id, start=result.evidence.start, end=result.evidence.end,
            text=result.evidence.text, locator=locator,
        )
    return ClaimVerdict(
        id=claim_id, text=result.claim, verdict=result.verdict, type=result.type, severity=result.severity,
        confidence=claim_confidence(result), support=min(max(result.support, 0.0), 1.0), reason=result.reason,
        evidence=evidence, cited_source_ids=[c.source_id for c in result.cited],
        checks=[CheckOut(name=c.name, ok=c.ok, detail=c.detail) for c in result.checks],
    )
