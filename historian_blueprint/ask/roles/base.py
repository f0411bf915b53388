"""One interface per role, two engines behind them (``offline.py`` and ``llm.py``), chosen once per run.

A graph node asks its role and stores what comes back; it never asks which engine it runs. A role answers
with an ``Outcome``: its value and the failures it met on the way (a model that timed out, say); a role
that fails falls back on the floor's answer and reports the failure, so the judge never calls the run
verified.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from historian_blueprint.questions.reading import Question
from historian_blueprint.questions.shapes import Shape
from historian_blueprint.schema import (
    Answer, ChallengeReport, ClaimVerdict, CounterReport, Fact, InterrogationReport, JudgeReport, SourceText,
)

T = TypeVar("T")


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """What a role answers: its value, and the failures it fell back from (``"role: reason"``)."""

    value: T
    failures: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Task:
    """What a role is asked about: the question and its thread, what retrieval found, the sources."""

    question: str
    asked: Question  # the question read once where the run started (questions.reading)
    get_document: Callable[[str], SourceText | None]
    history: list[dict[str, Any]] = field(default_factory=list)
    route: str = "simple"
    sub_queries: list[str] = field(default_factory=list)
    hits: list[dict[str, Any]] = field(default_factory=list)
    n_documents: int = 0
    years: tuple[int, ...] = ()  # the first and last year of what is searched, when known
    embed: Callable[[list[str]], Any] | None = None  # the sentence encoder (normalized vectors), to weigh meanings

    @property
    def shape(self) -> Shape:
        """A comparison's sides, a list's count (questions.shapes): the question's, as read once."""
        return self.asked.shape


@dataclass(frozen=True)
class Reports:
    """The three verifiers' reports, as the judge weighs them."""

    challenge: ChallengeReport
    interrogation: InterrogationReport
    counter: CounterReport

    def as_dict(self) -> dict[str, Any]:
        return {"challenge": self.challenge.model_dump(), "interrogation": self.interrogation.model_dump(),
                "counter": self.counter.model_dump()}


@dataclass(frozen=True)
class Judgement:
    """The judge's report, with the claims and reports it weighed: the ones it was given, unless a quote it
    gave confirmed a claim (the LLM judge), and then the claims and reports that quote changed."""

    report: JudgeReport
    claims: list[ClaimVerdict]
    reports: Reports


class Planner(Protocol):
    def plan(self, task: Task) -> Outcome[list[str]]:
        """The sub-queries to retrieve with (the question first)."""


class Composer(Protocol):
    def extract(self, task: Task) -> list[Fact] | None:
        """The evidence sentences it composes from (None: it composes from the passages themselves)."""

    def compose(self, task: Task, facts: list[Fact] | None) -> Outcome[Answer]:
        """The answer with its citations, or a refusal naming what was searched."""


class Challenger(Protocol):
    def challenge(self, task: Task, draft: Answer, claims: list[ClaimVerdict]) -> Outcome[ChallengeReport]:
        """The claims the evidence does not carry, with their severity."""


class Interrogator(Protocol):
    def interrogate(self, task: Task, draft: Answer, claims: list[ClaimVerdict]) -> Outcome[InterrogationReport]:
        """Whether each citation says what its claim says."""


class CounterArguer(Protocol):
    def counter_argue(self, task: Task, draft: Answer, claims: list[ClaimVerdict]) -> Outcome[CounterReport]:
        """The strongest opposing reading in the retrieved passages."""


class Judge(Protocol):
    def judge(
        self, task: Task, draft: Answer | None, claims: list[ClaimVerdict], reports: Reports, *,
        revisions_left: bool, failures: list[str],
    ) -> Outcome[Judgement]:
        """The final confidence and status; ``failures``: what failed earlier in the run (fail safe)."""


class Refiner(Protocol):
    def revise(self, task: Task, draft: Answer, claims: list[ClaimVerdict]) -> Outcome[Answer]:
        """The answer without (or with qualified) findings that failed verification."""


@dataclass
class Engine:
    """The roles of one run, all from one engine."""

    name: str  # "embedded" (offline) or "llm"
    planner: Planner
    composer: Composer
    challenger: Challenger
    interrogator: Interrogator
    counter_arguer: CounterArguer
    judge: Judge
    refiner: Refiner
    describe: Callable[[], Mapping[str, Any]] = dict  # models per role, tokens, prompt version (run metadata)
