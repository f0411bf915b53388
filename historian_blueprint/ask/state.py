"""The graph's typed state, with its input and output schemas (the artifacts' types are in ``schema``)."""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, TypedDict

from historian_blueprint.questions.reading import Question
from historian_blueprint.schema import Answer, ClaimVerdict, Fact



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
    asked: Question  # the question read once, by the route node (questions.reading)
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
