"""What the rules report: a check each ran, the finding that decides a claim, the claim's result."""

from __future__ import annotations

from dataclasses import dataclass, field

from historian_blueprint.schema import ClaimType, Cited, Severity, Verdict
from historian_blueprint.verify.evidence import Evidence


@dataclass(frozen=True)
class Check:
    """One check a rule ran on a claim: its name, whether the claim passed, what it found."""

    name: str
    ok: bool
    detail: str = ""


@dataclass(frozen=True)
class Finding:
    """A rule's answer: the checks it ran and, when the claim fails it, the verdict it gives.

    ``evidence`` and ``support`` replace the claim's own when the rule found better evidence elsewhere
    (misattribution).
    """

    checks: tuple[Check, ...] = ()
    verdict: Verdict | None = None  # None: the claim passes this rule
    type: ClaimType | None = None
    severity: Severity = "none"
    reason: str = ""
    evidence: Evidence | None = None
    support: float | None = None


def passed(*checks: Check) -> Finding:
    return Finding(checks)


def failed(
    checks: Check | tuple[Check, ...], verdict: Verdict, kind: ClaimType, severity: Severity, reason: str,
    **better: object,
) -> Finding:
    return Finding(checks if isinstance(checks, tuple) else (checks,), verdict, kind, severity, reason, **better)


@dataclass
class ClaimResult:
    claim: str
    verdict: Verdict
    type: ClaimType | None
    severity: Severity
    evidence: Evidence | None
    support: float
    checks: list[Check] = field(default_factory=list)
    reason: str = ""
    cited: list[Cited] = field(default_factory=list)
    probability: float | None = None   # calibrated support probability (None: decided by the rules alone)
    decided_by: str = ""               # the rule, "support" or "reader", that gave the verdict
    features: dict[str, float] | None = None  # what the probability was computed from (the harness refits on them)

    @property
    def flagged(self) -> bool:
        return self.verdict != "supported"
