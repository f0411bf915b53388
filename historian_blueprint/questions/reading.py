"""A question read once: the ``Question`` value a run builds when it starts and every role reads.

Its words (the content words, without instruction words and the requested count), the count a list asks for, the
type of thing asked for (a date for "when", a figure for "how many"), the focus of a "What was the X of ..."
question, its constraints (names, dates, figures, qualifiers), the shape (single, comparison with its sides, list),
the route, and a follow-up's carried subject (what the last turns were about and the follow-up does not repeat).
Nothing downstream derives these again from the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from historian_blueprint.questions.scope import Scope, carried_scope
from historian_blueprint.questions.shapes import Shape, shape_of, with_bylines
from historian_blueprint.text.words import NUMBER_WORDS, content_words, vstem
from historian_blueprint.verify.asked import Asked, Focus, asks, focus
from historian_blueprint.verify.question import Constraint, Premises, premises

_COMPLEX = re.compile(r"\b(compare|contrast|differ|difference|versus|vs\.?|causes?|reasons?|effects?|list|"
                      r"why|how did|and)\b",
                      re.I)
_COUNT = re.compile(r"\b(two|three|four|five|six|seven|eight|\d)\b", re.I)
# Words that say what to do with the answer rather than what it is about.
INSTRUCTION_WORDS = frozenset(
    "list name describe explain give tell identify summarize summarise discuss according document documents "
    "collection say said mention mentioned main major key".split()
)
_INSTRUCTION_STEMS = frozenset(vstem(w) for w in INSTRUCTION_WORDS) | INSTRUCTION_WORDS  # content words are stems


@dataclass(frozen=True)
class Question:
    """A question as read once (see the module's docstring)."""

    text: str
    words: frozenset[str]                  # content words without instruction words and the requested count
    content: frozenset[str]                # every content word (text.words.content_words)
    count: int | None                      # the number the question names (a list's "three causes")
    kind: Asked                            # the type asked for: date, number, person, place or other
    focus: Focus
    premises: Premises                     # what the premise check reads: constraints, things, the type wanted
    shape: Shape
    route: str                             # simple | complex
    thread: frozenset[str] = frozenset()   # a follow-up's carried subject (THREAD_TURNS)
    sides: tuple[Question, ...] = ()       # a comparison's sides, each read as a question of its own (its query)
    scope: Scope | None = None             # the document it asks about: a byline's words of one year (questions.scope)
    subject: str | None = None             # the author or narrator a follow-up goes on asking about (``carried``)

    @property
    def constraints(self) -> tuple[Constraint, ...]:
        """Names, dates, figures and qualifiers the answer must hold (the premise check's own)."""
        return self.premises.constraints

    @property
    def names(self) -> frozenset[str]:
        """The words of the names the question's constraints hold."""
        return frozenset(w for c in self.constraints if c.kind == "name" for w in c.words)


def read_question(text: str, history: Sequence[dict[str, Any]] | None = None,
                  bylines: Callable[[str], int] | None = None, sides: bool = True,
                  years_of: Callable[[str], Sequence[int]] | None = None) -> Question:
    """The question read once. ``bylines``: how many documents a name is the author or narrator of (a comparison's
    side that is a byline is read in its own documents; a single question's byline with the year of their words is
    its document, and a follow-up that goes on asking what he or she said keeps its thread's: questions.scope, with
    ``years_of``, the years of a name's documents). A comparison's sides are read too, each as the question of its
    own query (``sides``: False for a side itself)."""
    count, content, words, thread = _words(text, history or ())  # what is read of the text alone comes first
    routed = route(text)
    shape = shape_of(text)
    if bylines is not None:
        shape = with_bylines(shape, bylines)
    kind, wants = asks(text), focus(text)
    read = premises(text)
    return Question(
        text=text, words=frozenset(words), content=content, count=count, kind=kind, focus=wants,
        premises=read, shape=shape,
        subject=carried(read, shape, history or (), bylines) if history and bylines is not None else None,
        route="complex" if shape.kind != "single" else routed, thread=frozenset(thread),
        sides=tuple(read_question(side.query, sides=False) for side in shape.sides) if sides else (),
        scope=(carried_scope(text, history or (), bylines, years_of, THREAD_TURNS)
               if bylines is not None and not shape.comparison else None),
    )


def carried(read: Premises, shape: Shape, history: Sequence[dict[str, Any]],
            bylines: Callable[[str], int]) -> str | None:
    """The person a follow-up goes on asking about: the author or narrator (a byline here) the last turns named,
    the most recent first, when the follow-up names no one of its own and compares nothing ("Where did he settle
    after the war?" after a question on Arnold Gragston: Gragston); None otherwise. An answer none of whose passages
    is by or about that person does not answer the follow-up (questions.premises.lost_subject)."""
    if shape.comparison or any(c.kind == "name" for c in read.constraints):
        return None
    for turn in reversed(list(history)[-THREAD_TURNS:]):
        named = [c.text for c in premises(str(turn.get("question", ""))).constraints if c.kind == "name"]
        bylined = [name for name in named if bylines(name) > 0]
        if bylined:
            return bylined[0]
        if named:  # the last turn asked about someone who writes nothing here: nothing to hold the answer to
            return None
    return None


def requested_count(question: str) -> int | None:
    match = _COUNT.search(question)
    if not match:
        return None
    value = match.group(1).lower()
    number = NUMBER_WORDS.get(value) if not value.isdigit() else int(value)
    return number if number and 1 <= number <= 8 else None


def _words(question: str, history: Sequence[dict[str, Any]]) -> tuple[int | None, frozenset[str], set[str], set[str]]:
    """The requested count; every content word; those without instruction words and that count; and a follow-up's
    thread: the words of the last turns (THREAD_TURNS) that the question does not repeat."""
    texts = [question] + [str(turn.get("question", "")) for turn in list(history)[-THREAD_TURNS:]]
    counts = [requested_count(text) for text in texts]
    content = [frozenset(content_words(text)) for text in texts]
    read = [{w for w in words if w not in _INSTRUCTION_STEMS and w != str(count)}
            for words, count in zip(content, counts)]
    return counts[0], content[0], read[0], set().union(*read[1:]) - read[0]


# A follow-up's thread: what the last turns were about and the follow-up does not repeat ("what did he say about
# the banks?" after a question on Hoover carries "herbert", "hoover", "depression").
THREAD_TURNS = 2


def route(question: str) -> str:
    """simple: one fact-finding question; complex: compare / list / multi-part questions."""
    return "complex" if _COMPLEX.search(question) or question.count("?") > 1 or len(question.split()) > 22 else "simple"
