"""The vocabulary and the data shapes every layer shares (of the project, it imports only ``text``).

One definition each: the status, verdict, claim type, severity and assessment literals, the severity
table, the source and citation types, the answer and output schema (one schema everywhere: API, CLI,
stored run), the per-claim verdict and the four verification reports.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field, computed_field, field_validator, model_validator

from historian_blueprint.text.markers import marker_ids
from historian_blueprint.text.words import content_words, restates

# ----------------------------------------------------------------------------- vocabulary
Status = Literal["verified", "flagged", "needs_revision", "human_review"]
STATUS_ORDER: tuple[Status, ...] = ("verified", "flagged", "needs_revision", "human_review")  # better first
# A status in the words every place shows it (the badge, the history, the reports' summaries, the progress, the
# exports): one vocabulary; why a run is not verified is said beside it, never by another label.
STATUS_LABELS: dict[str, str] = {"verified": "verified", "flagged": "check before use",
                                 "needs_revision": "not verified", "human_review": "not verified"}
# Three outcomes for a claim: supported (the evidence carries it); a conflict a check found (contradicted,
# misquote, misattributed), shown with the conflicting span; unconfirmed (the cited passage does not clearly
# carry it and nothing contradicts it: "not confirmed, read the source"). Only "supported" counts toward verified.
Verdict = Literal["supported", "unconfirmed", "contradicted", "misquote", "misattributed"]
CONFLICTS: tuple[Verdict, ...] = ("contradicted", "misquote", "misattributed")
OUTCOME_LABELS: dict[str, str] = {
    "supported": "supported",
    "unconfirmed": "not confirmed: read the source",
    "contradicted": "contradicted by the source",
    "misquote": "misquoted",
    "misattributed": "misattributed",
}


def outcome_group(verdict: str) -> Literal["supported", "unconfirmed", "conflict"]:
    """How a verdict is counted and shown: supported, a conflict a check found, or unconfirmed (anything else,
    the "unsupported" of runs stored before the three outcomes included: never verified, never a contradiction)."""
    return "supported" if verdict == "supported" else "conflict" if verdict in CONFLICTS else "unconfirmed"
ClaimType = Literal["fabrication", "exaggeration", "misattribution", "unverified_detail", "inference"]
# What kind of trouble a claim has, in the words the pages and reports show (the code stays in the JSON).
CLAIM_TYPE_LABELS: dict[str, str] = {"fabrication": "not what the sources say", "exaggeration": "overstated",
                                     "misattribution": "quoted or attributed wrongly",
                                     "unverified_detail": "a detail not found", "inference": "an inference"}
IssueSeverity = Literal["low", "medium", "high", "critical"]  # a weakness always has one
Severity = Literal["none", IssueSeverity]                      # a supported claim has none
Assessment = Literal["exact", "paraphrase", "misquote", "out_of_context", "missing"]
# better first
ASSESSMENT_ORDER: tuple[Assessment, ...] = ("exact", "paraphrase", "out_of_context", "misquote", "missing")

# What a weakness of each severity costs the answer's confidence: (floor, model). A weakness the floor
# finds is weighed per claim (averaged over the answer's claims); one a model adds is an opinion, added
# per weakness at a lower rate (but a critical one costs as much as the floor's).
SEVERITY_COST: dict[str, tuple[float, float]] = {
    "none": (0.0, 0.0), "low": (0.05, 0.02), "medium": (0.12, 0.05), "high": (0.2, 0.1), "critical": (0.3, 0.3),
}

REFUSAL_PREFIX = "The documents in this collection do not answer"


# ----------------------------------------------------------------------------- sources
@dataclass(frozen=True)
class SourceText:
    """A document the checks can read."""

    source_id: str
    text: str
    title: str = ""
    author: str | None = None
    interviewee: str | None = None  # an interview's narrator (the host's field), for citing who speaks

    @property
    def byline(self) -> str:
        """Title and author, as the checks read a document's metadata ("who wrote it, what is it")."""
        return f"{self.title} {self.author or ''}"


@dataclass(frozen=True)
class Cited:
    """A span of a source that a claim cites."""

    source_id: str
    start: int
    end: int


# ----------------------------------------------------------------------------- the answer
class Fact(BaseModel):
    """A sentence of a source with its exact offsets (the unit the composer quotes)."""

    source_id: str
    title: str
    author: str | None = None
    year: int | None = None
    start: int
    end: int
    text: str
    locator: str
    score: float
    overlap: float = 0.0
    # its content words (text.words.content_words), read once when the finding is made: every choice among
    # findings (redundancy, a comparison's sides, the focus asked for) compares these; not part of a stored run
    words: frozenset[str] = Field(default=frozenset(), exclude=True, repr=False)

    @model_validator(mode="after")
    def _read_words(self) -> Fact:
        if not self.words:
            self.words = frozenset(content_words(self.text))
        return self

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> Fact:
        """A copy; one given another text reads that text's words (a copy never carries another sentence's)."""
        if update and "text" in update and "words" not in update:
            update = {**update, "words": frozenset(content_words(update["text"]))}
        return super().model_copy(update=update, deep=deep)

    def repeats(self, chosen: Sequence[Fact]) -> bool:
        """It says what a finding already chosen says (``text.words.restates``: their content words)."""
        return restates(self.words, (other.words for other in chosen))


class Citation(BaseModel):
    id: int
    source_id: str
    title: str
    author: str | None = None
    year: int | None = None
    locator: str
    text: str
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    url: str | None = None


class Answer(BaseModel):
    """What the composer produces: a narrative with [n] markers, bullets and their citations."""

    answer: str
    bullets: list[str]
    citations: list[Citation]
    refusal: bool = False
    claims: list[str] = []            # per bullet, the claim to verify (LLM findings); empty: the quoted text
    failed_citations: list[int] = []  # citation ids whose quote could not be anchored in the source
    notes: list[str] = []             # what the composer's output needed (rejected ids, fuzzy anchors)
    summary: bool = False             # the answer text is Historian's own summary of the findings, not prose to check

    def form_problems(self, fewest: int, get_document: Callable[[str], SourceText | None]) -> list[str]:
        """What is wrong with the draft's form: its schema; then, unless it refuses, ``fewest`` to 8 bullets, a
        citation for every [n] marker, and each citation's text exactly its document's at its offsets."""
        errors = []
        try:
            Answer.model_validate(self.model_dump())
        except Exception as exc:  # noqa: BLE001 - any failure to validate is a problem of the draft's form
            errors.append(f"schema: {exc}")
        if self.refusal:
            return errors
        if not fewest <= len(self.bullets) <= 8:
            errors.append(f"{len(self.bullets)} bullets (need {fewest}–8)")
        ids = {cit.id for cit in self.citations}
        markers = marker_ids(self.answer + " ".join(self.bullets))
        if markers - ids:
            errors.append(f"markers without citations: {sorted(markers - ids)}")
        for cit in self.citations:
            doc = get_document(cit.source_id)
            if doc is None or doc.text[cit.start:cit.end] != cit.text:
                errors.append(f"citation [{cit.id}] is not the text at its offsets")
        return errors


# ----------------------------------------------------------------------------- per-claim verdicts
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
    verdict: Verdict
    type: ClaimType | None
    severity: Severity
    confidence: float = Field(ge=0, le=1, description="probability that the claim is supported")
    support: float = Field(ge=0, le=1, description="share of the claim's content words in the evidence")
    reason: str
    evidence: EvidenceSpan | None
    cited_source_ids: list[str] = []
    checks: list[CheckOut] = []
    part: Literal["finding", "narrative"] = "finding"  # narrative: a sentence of the answer's prose
    decided_by: str = ""  # the rule, "support" or "reader", that gave the verdict

    @field_validator("verdict", mode="before")
    @classmethod
    def _older_name(cls, value: object) -> object:
        """Runs stored before the three outcomes said "unsupported" for what is now "unconfirmed"."""
        return "unconfirmed" if value == "unsupported" else value

    @computed_field  # type: ignore[prop-decorator]
    @property
    def outcome(self) -> str:
        """The verdict in plain words, as pages and exports show it ("not confirmed: read the source")."""
        return OUTCOME_LABELS[self.verdict]


# ----------------------------------------------------------------------------- the four reports
class Weakness(BaseModel):
    claim_id: int
    issue: str
    severity: IssueSeverity


class ChallengeReport(BaseModel):
    weaknesses: list[Weakness] = []
    unsupported_claims: list[int] = []
    critical: bool = False
    penalty: float = 0.0
    summary: str = ""


class CitationCheck(BaseModel):
    claim_id: int
    source_id: str | None
    assessment: Assessment
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


class Verification(BaseModel):
    """The verification of a set of claims: per-claim verdicts, the four reports, confidence and status."""

    claims: list[ClaimVerdict]
    challenge: ChallengeReport
    interrogation: InterrogationReport
    counter: CounterReport
    judge: JudgeReport
    confidence: float
    status: str
    latency_ms: float = 0.0
    # the question's constraints no cited evidence mentions (verify/question.py): {"unmet", "finding", "refuse"}
    premise: dict[str, Any] | None = None


# ----------------------------------------------------------------------------- the output
class Output(BaseModel):
    answer: str
    bullets: list[str]
    citations: list[Citation]
    confidence: float = Field(ge=0, le=1)
    status: Status
    claims: list[ClaimVerdict]
    verification: dict[str, Any]
    metadata: dict[str, Any]
    shape: dict[str, Any] | None = None  # a comparison's sides or a list's count (questions.shapes.described)


def worse(a: Status, b: Status) -> Status:
    """The less trusted of two statuses (a model may lower a status, never raise it)."""
    return max(a, b, key=STATUS_ORDER.index)
