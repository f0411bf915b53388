"""A map's topic read once: the ``Topic`` value a map builds where it starts (the page, the API, the CLI) and
every step of the map reads: the text as asked (validated once), the phrase its searches use, its words (a
claim's point leaves them out), the year it names (with its month, or the last year of a span it names). Nothing
downstream derives these again from the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from historian_blueprint.text.questions import MAX_TOPIC_CHARS, clean_question

YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
WORD = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]|[A-Za-z]")  # a word of a topic or of a claim's point


@dataclass(frozen=True)
class Topic:
    """A topic as read once (see the module's docstring)."""

    text: str                # as asked: control characters dropped, spaces collapsed
    phrase: str              # as a search: without a leading article ("Ravensdyke explosion of 1868")
    words: frozenset[str]    # its words, lowercased
    year: int | None         # the year it names (the first, when it names several); None when it names none
    last: int | None = None  # the last year it names, when it names a span ("from 1874 to 1879"): its events run on
    month: int | None = None  # the month it names with its year ("in November 1908", "Nov. 13, 1908")


def read_topic(raw: object) -> Topic:
    """The topic read once; ``ValueError`` naming what is wrong when it is not text, empty or longer than
    MAX_TOPIC_CHARS. Control characters are dropped and spaces collapsed at every door (page, API, CLI)."""
    if isinstance(raw, Topic):
        return raw
    if not isinstance(raw, str):
        raise ValueError("the topic must be text")
    text = clean_question(raw, MAX_TOPIC_CHARS, "the topic")
    named = [int(y) for y in YEAR.findall(text)]
    dated = next((m for m in MONTH_YEAR.finditer(text) if m.group("day") or _BEFORE_MONTH.search(text[:m.start()])),
                 None)  # "in November 1908", "Nov. 13, 1908", "13 November 1908"; not "the Long March 1934"
    return Topic(text=text, phrase=re.sub(r"^(?:the|a|an)\s+", "", text, flags=re.I),
                 words=frozenset(w.lower() for w in WORD.findall(text)), year=named[0] if named else None,
                 last=max(named) if len(set(named)) > 1 else None,
                 month=MONTHS[dated.group(1).lower()[:3]] if dated and len(set(named)) == 1 else None)


MONTH_NAMES = ("january february march april may june july august september october november "
               "december").split()
MONTHS = {m[:3]: n for n, m in enumerate(MONTH_NAMES, 1)}
# a month with its year: "November 1908", "Nov. 13, 1908", "13 November 1908", "November, 1908"
MONTH_YEAR = re.compile(r"\b(January|February|March|April|May|June|July|August|September|October|November|December|"
                        r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\.?,?\s+(?P<day>\d{1,2}(?:st|nd|rd|th)?,?\s+)?"
                        r"(?:1[5-9]\d\d|20\d\d)\b", re.I)
_BEFORE_MONTH = re.compile(r"\b(?:in|of|on|during|early|late|mid|by|until|from)\s+$|\b\d{1,2}(?:st|nd|rd|th)?\s+$",
                           re.I)
