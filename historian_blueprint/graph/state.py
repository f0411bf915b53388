"""The graph's typed state and the output schema (one schema everywhere: API, CLI, stored run)."""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, TypedDict

from pydantic import BaseModel, Field

from historian_blueprint.verify.schema import ClaimVerdict

REFUSAL_PREFIX = "The documents in this collection do not answer"


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


class Output(BaseModel):
    answer: str
    bullets: list[str]
    citations: list[Citation]
    confidence: float = Field(ge=0, le=1)
    status: Literal["verified", "flagged", "needs_revision", "human_review"]
    claims: list[ClaimVerdict]
    verification: dict[str, Any]
    metadata: dict[str, Any]


def merge(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer for reports written by parallel nodes: later keys win."""
    return {**(left or {}), **(right or {})}


class InputState(TypedDict, total=False):
    question: str
    history: list[dict[str, Any]]  # earlier turns of the thread, oldest first: {"question", "answer"}


class State(TypedDict, total=False):
    question: str
    history: list[dict[str, Any]]
    route: Literal["simple", "complex"]
    sub_queries: list[str]
    expanded: bool
    hits: list[dict[str, Any]]
    facts: list[Fact]
    draft: Answer | None
    compose_attempts: int
    validation_errors: list[str]
    claims: list[ClaimVerdict]
    verification: Annotated[dict[str, Any], merge]
    confidence: float
    status: str
    revisions: int
    output: dict[str, Any]
    error: str | None
    llm_failures: Annotated[list[str], operator.add]
    trace: Annotated[list[dict[str, Any]], operator.add]


class OutputState(TypedDict):
    output: dict[str, Any]
