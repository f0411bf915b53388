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

from historian_blueprint.questions.shapes import Shape, shape_of, with_bylines
from historian_blueprint.text.words import NUMBER_WORDS, content_words, vstem
from historian_blueprint.verify.asked import Asked, asks, name_asked
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
_FOCUS = re.compile(
    r"^\s*(?:what|which)\s+(?:was|were|is|are)\s+the\s+(?P<phrase>[\w' -]+?)\s+"
    r"(?:of|on|in|for|with|to|by|at|during|that|from)\b",
    re.I,
)
_PARTICIPLES = frozenset("given known called chosen taken written spoken shown seen made done held told built paid "
                         "sent kept brought sung sold bought won lost found left put set".split())


@dataclass(frozen=True)
class Focus:
    """What a "What was the X of ..." question asks for: X's head word (its stems, and as the question writes it),
    and whether it asks for a name."""

    wanted: frozenset[str] = frozenset()
    noun: str = ""
    name: bool = False


@dataclass(frozen=True)
class Question:
    """A question as read once (see the module's docstring)."""

    text: str
    words: frozenset[str]                  # content words without instruction words and the requested count
    count: int | None                      # the number the question names (a list's "three causes")
    kind: Asked                            # the type asked for: date, number, person, place or other
    focus: Focus
    premises: Premises                     # what the premise check reads: constraints, things, the type wanted
    shape: Shape
    route: str                             # simple | complex
    thread: frozenset[str] = frozenset()   # a follow-up's carried subject (THREAD_TURNS)
    sides: tuple[Question, ...] = ()       # a comparison's sides, each read as a question of its own (its query)

    @property
    def constraints(self) -> tuple[Constraint, ...]:
        """Names, dates, figures and qualifiers the answer must hold (the premise check's own)."""
        return self.premises.constraints

    @property
    def names(self) -> frozenset[str]:
        """The words of the names the question's constraints hold."""
        return frozenset(w for c in self.constraints if c.kind == "name" for w in c.words)


def read_question(text: str, history: Sequence[dict[str, Any]] | None = None,
                  bylines: Callable[[str], int] | None = None, sides: bool = True) -> Question:
    """The question read once. ``bylines``: how many documents a name is the author or narrator of (a comparison's
    side that is a byline is read in its own documents). A comparison's sides are read too, each as the question
    of its own query (``sides``: False for a side itself)."""
    shape = shape_of(text)
    if bylines is not None:
        shape = with_bylines(shape, bylines)
    count = requested_count(text)
    words = _words(text, count)
    read = premises(text)  # its constraints among them
    carried = {w for turn in list(history or [])[-THREAD_TURNS:] for w in question_words(str(turn.get("question", "")))}
    return Question(
        text=text, words=frozenset(words), count=count, kind=asks(text), focus=focus(text),
        premises=read, shape=shape,
        route="complex" if shape.kind != "single" else route(text), thread=frozenset(carried - words),
        sides=tuple(read_question(side.query, sides=False) for side in shape.sides) if sides else (),
    )


def requested_count(question: str) -> int | None:
    match = _COUNT.search(question)
    if not match:
        return None
    value = match.group(1).lower()
    number = NUMBER_WORDS.get(value) if not value.isdigit() else int(value)
    return number if number and 1 <= number <= 8 else None


def question_words(question: str) -> set[str]:
    """The question's content words, without instruction words and the requested count."""
    return _words(question, requested_count(question))


def _words(question: str, count: int | None) -> set[str]:
    return {w for w in content_words(question) if w not in _INSTRUCTION_STEMS and w != str(count)}


# A follow-up's thread: what the last turns were about and the follow-up does not repeat ("what did he say about
# the banks?" after a question on Hoover carries "herbert", "hoover", "depression").
THREAD_TURNS = 2


def focus(question: str) -> Focus:
    """What a "What was the X of ..." question asks for.

    "What was the Senate vote on the repeal?" asks for a vote; "What was the name of Julia Malone's mother?"
    asks for a name, of a mother. Evidence that never mentions the vote (or names the mother) does not answer,
    however much of the rest of the question it shares.
    """
    noun = name_asked(question)
    if noun:
        return Focus(frozenset(content_words(noun)), noun, True)
    match = _FOCUS.match(question)
    written = []
    for w in (match.group("phrase").split() if match else []):
        if w[:1].isupper() and written:  # "the four freedoms Roosevelt named": a name after the phrase opens
            break                        # the clause that follows it ("the Senate vote" is one phrase)
        if content_words(w) and w.lower() not in NUMBER_WORDS:
            written.append(w)
    while len(written) > 1 and (written[-1].endswith("ed") or written[-1].lower() in _PARTICIPLES):
        written.pop()  # "the ship named in 1898" asks about a ship, "the name given to it" for a name
    if not written:
        return Focus()
    if written[-1].lower() in ("name", "names"):  # "What was the name given to the plantation?"
        return Focus(frozenset(), written[-1], True)
    return Focus(frozenset(content_words(written[-1])), written[-1], False)


def route(question: str) -> str:
    """simple: one fact-finding question; complex: compare / list / multi-part questions."""
    return "complex" if _COMPLEX.search(question) or question.count("?") > 1 or len(question.split()) > 22 else "simple"
