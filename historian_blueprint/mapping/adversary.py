"""Counter-queries: searches aimed at evidence that would disconfirm the map's weak claims.

A claim is weak when it is contested (one side of a conflict), stated by one source alone, or stated by a
source of low prior credibility. Its counter-queries are written as a historian types a search: the event,
the point the claim makes, and what would disconfirm it ("Chicago fire death toll", "Chicago fire O'Leary
cow started denied", "Chicago fire number of buildings destroyed"), each with the claim it tests. No query
runs twice in a map; at least ``MIN_PER_ROUND`` are asked per round while anything is left to ask.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from historian_blueprint.mapping.nlp import Statement

MIN_PER_ROUND = 3
MAX_PER_ROUND = 6
def key(query: str) -> str:
    return " ".join(re.findall(r"\w+", query.lower()))


_TITLES = frozenset("mr mrs miss ms dr sir lady lord rev gen general col colonel capt captain maj major judge "
                    "governor mayor president senator".split())
_DEATHS = frozenset("death deaths dead die died perish perished drown drowned lose lost kill killed lives life souls".split())
_WHEN = frozenset("january february march april may june july august september october november december monday tuesday "
                  "wednesday thursday friday saturday sunday morning evening night noon midnight day days week "
                  "month year o'clock".split())
MAX_POINT_WORDS = 3


def event(topic: str) -> str:
    """The topic as the head of a search: without a leading article, its year without "of" ("the Great Chicago
    Fire of 1871": Great Chicago Fire 1871)."""
    head = re.sub(r"^(?:the|a|an)\s+", "", topic.strip(), flags=re.I).rstrip(" ?.")
    return re.sub(r"\s+(?:of|in)\s+(\d{4})$", r" \1", head)


MAX_QUERY_WORDS = 9


def point(statement: Statement, topic: str, room: int = MAX_QUERY_WORDS) -> str:
    """What the statement is about, as search words: its names and nouns (with their modifiers) and then its
    main verb, in the statement's order, without function words, figures, dates, titles or the topic's words;
    at most ``room`` words."""
    from historian_blueprint.text.parse import parsed

    own = {w.lower() for w in re.findall(r"[\w'’]+", topic)}
    nouns, verbs = [], []
    last = -2  # the index of the last name word kept: a name of several words stays whole ("South Fork")
    for token in parsed(statement.text):
        word = token.text.strip("'’")
        low = word.lower()
        if (token.is_stop or token.like_num or token.is_punct or not word or low in own or low.rstrip(".") in _TITLES
                or low in _WHEN
                or token.pos_ not in ("NOUN", "PROPN", "ADJ", "VERB")):
            continue
        if token.pos_ == "PROPN" and last == token.i - 1 and nouns:
            nouns[-1] = f"{nouns[-1]} {word}"
        else:
            (verbs if token.pos_ == "VERB" else nouns).append(word if token.pos_ == "PROPN" else low)
        last = token.i if token.pos_ == "PROPN" else -2
    verb = list(dict.fromkeys(verbs))[:1]
    room = max(room - len(verb), 1)
    kept: list[str] = []
    for noun in list(dict.fromkeys(nouns))[:MAX_POINT_WORDS - 1]:
        if len(" ".join(kept + [noun]).split()) <= room:
            kept.append(noun)
    return " ".join(kept + verb)


def phrase(why: str, statement: Statement, topic: str) -> str | None:
    """One search against the statement: the event, then the point with what would disconfirm it: a toll
    for deaths, "number of ..." for another count, "date" for a date, "denied" for what a source asserts,
    "confirmed" for what it denies or what one source alone says."""
    head = event(topic)
    room = MAX_QUERY_WORDS - len(head.split()) - 1  # the event's words, and one for what would disconfirm it
    figure = statement.figures[0] if statement.figures else None
    if figure is not None and figure.kind == "count":
        if figure.key == "deaths" or set(statement.words) & _DEATHS:
            return f"{head} death toll"
        counted = point(statement, topic, room - 1)
        return f"{head} number of {counted}" if counted else None
    about = point(statement, topic, room)
    if not about:
        return None
    if figure is not None and figure.kind == "date":
        return f"{head} {about} date"
    cue = "confirmed" if statement.denied or why != "contested" else "denied"
    return f"{head} {about} {cue}"


def counter_queries(
    topic: str, weak: Iterable[tuple[str, Statement]], asked: set[str], round_: int,
) -> list[dict[str, object]]:
    """Up to MAX_PER_ROUND new queries against the weak statements ((why it is weak, statement) pairs, the
    weakest first), padded to MIN_PER_ROUND with searches for other kinds of accounts of the topic."""
    out: list[dict[str, object]] = []

    def add(query: str | None, aimed_at: str) -> None:
        k = key(query or "")
        if k and k not in asked and len(out) < MAX_PER_ROUND:
            asked.add(k)
            out.append({"query": " ".join(query.split()), "round": round_, "aimed_at": aimed_at, "new_sources": []})

    for why, st in weak:
        add(phrase(why, st, topic), f"{why}: {st.text}")
    head = event(topic)
    for template in ("{t} accounts disputed", "{t} witnesses testimony", "{t} official report",
                     "{t} later recollections", "{t} newspaper reports", "{t} cause denied"):
        if len(out) >= MIN_PER_ROUND:
            break
        add(template.format(t=head), "other kinds of account of the topic")
    return out
