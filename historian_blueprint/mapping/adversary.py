"""Counter-queries: short searches, as a historian would type them, aimed at evidence that would disconfirm
the map's weak claims.

A claim is weak when it is contested (one side of a conflict), stated by one source alone, or stated by a
source of low prior credibility. Each query is the topic as a historian types it (its first name, what happened,
the year: ``short_subject``) and the claim's point in a few words ("Ravensdyke Colliery explosion 1868 death toll
disputed", "Corisande wreck 1908 number of Americans disputed", "Carrowby fire 1874 spark locomotive denied"):
the point is what a figure counts (the dead, a date, a counted noun) or the claim's own content words in their
order, never a pasted sentence. Every query carries the claim it tests. No query runs twice in a map; at least
``MIN_PER_ROUND`` are asked per round while anything is left to ask.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from historian_blueprint.mapping.nlp import Statement
from historian_blueprint.mapping.topic import MONTH_NAMES, WORD, YEAR, Topic

MIN_PER_ROUND = 3
MAX_PER_ROUND = 6
POINT_WORDS = 4  # a point is at most this many of the claim's nouns and names
# Nouns that frame a claim rather than say what it is about ("the common talk is that ...", "the belief that").
FRAMING = frozenset("""belief rumour rumor talk story tale account report opinion view truth fact part matter case
time way manner honour honor servant sir""".split())
_IRREGULAR = {"man": "men", "woman": "women", "child": "children", "life": "lives", "foot": "feet", "person": "persons"}


def key(query: str) -> str:
    return " ".join(re.findall(r"\w+", query.lower()))


def _plural(noun: str) -> str:
    if noun in _IRREGULAR:
        return _IRREGULAR[noun]
    if noun in _IRREGULAR.values() or (noun.endswith("s") and not noun.endswith(("ss", "us", "is"))):
        return noun  # already plural ("americans", "territories"): never "americanses"
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + ("es" if noun.endswith(("s", "x", "ch", "sh")) else "s")


def point(st: Statement, topic: Topic) -> tuple[str, bool]:
    """What the claim is about, in a few words, and whether it is a figure (disputed) rather than a statement
    (denied): the dead, a date, what a count counts, or the first of its nouns and names in their order (the
    topic's own words and framing words left out); empty when it names fewer than two."""
    kinds = {("deaths" if f.key == "deaths" else f.kind) for f in st.figures}
    if "deaths" in kinds:
        return "death toll", True
    counted = [f.noun for f in st.figures if f.kind == "count" and f.noun.isalpha() and len(f.noun) > 2]
    if counted:
        return f"number of {_plural(counted[0])}", True
    if "money" in kinds:
        return "sum of money", True
    if "date" in kinds and any(f.month for f in st.figures):
        return "date", True
    words = [t for t in st.terms
             if t.lower() not in FRAMING and not {w.lower() for w in WORD.findall(t)} <= topic.words]
    return " ".join(words[:POINT_WORDS]) if len(words) >= 2 else "", False


_PREPOSITION = frozenset("of in at near on during off from by to".split())
_MONTH_WORDS = frozenset(MONTH_NAMES) | frozenset(m[:3] for m in MONTH_NAMES) | {"sept"}
SUBJECT_WORDS = 6  # a subject a historian types: its name, what happened, the year


def short_subject(topic: Topic) -> str:
    """The topic as a historian types it into a search box: its first name (with the noun that follows it), what
    happened and the year ("the wreck of the steamer Corisande in Lanyard Sound in November 1908" -> "Corisande
    wreck 1908", "the fall of the Fenwick Street bridge at Port Aldous in 1891" -> "Fenwick Street bridge fall
    1891"); the topic's own phrase when it names no one or that would be longer than SUBJECT_WORDS."""
    words = topic.phrase.split()
    head = next((w for n, w in enumerate(words) if w.islower() and w.isalpha()
                 and (n + 1 == len(words) or words[n + 1] in _PREPOSITION)), "")

    def month(w: str) -> bool:  # "in November 1908" names a month; "the Long March 1934" does not
        return topic.month is not None and w.strip(",.").lower() in _MONTH_WORDS

    # "Riots in Chicago in 1919": a capitalized first word before a preposition is what happened, not a name
    first = len(words) > 1 and words[0][:1].isupper() and words[1] in _PREPOSITION
    at = next((n for n, w in enumerate(words) if w[:1].isupper() and not month(w) and not (n == 0 and first)), None)
    if at is None:
        return topic.phrase
    head = (words[0].lower() if first else "") or head
    name: list[str] = []
    for n, w in enumerate(words[at:], start=at):
        if w == "of" and n + 1 < len(words) and words[n + 1][:1].isupper():
            name.append(w)  # "Great Fire of London"
            continue
        if w in _PREPOSITION or month(w) or YEAR.fullmatch(w.strip(",.")):
            break
        name.append(w.strip(","))
    parts = [*name, *([head] if head and head not in name else []), *([str(topic.year)] if topic.year else [])]
    return " ".join(parts) if len(parts) <= SUBJECT_WORDS else topic.phrase


def counter_queries(
    topic: Topic, weak: Iterable[tuple[str, Statement]], asked: set[str], round_: int,
) -> list[dict[str, object]]:
    """Up to MAX_PER_ROUND new queries against the weak statements ((why it is weak, statement) pairs, the
    weakest first): the claim's point with the topic, and its point disputed or denied; padded to MIN_PER_ROUND
    with searches for other kinds of accounts of the topic."""
    out: list[dict[str, object]] = []
    subject = short_subject(topic)

    def add(query: str, aimed_at: str) -> None:
        k = key(query)
        if k and k not in asked and len(out) < MAX_PER_ROUND:
            asked.add(k)
            out.append({"query": query.strip(), "round": round_, "aimed_at": aimed_at, "new_sources": []})

    for why, st in weak:
        what, figure = point(st, topic)
        if not what:
            continue
        add(f"{subject} {what} {'disputed' if figure else 'denied'}", f"{why}: {st.text}")
        add(f"{subject} {what}", f"{why}: {st.text}")
    for template in ("accounts disputing {t}", "testimony of witnesses to {t}", "official report on {t}",
                     "later recollections of {t}", "newspaper reports of {t}", "causes of {t} denied"):
        if len(out) >= MIN_PER_ROUND:
            break
        add(template.format(t=subject), "other kinds of account of the topic")
    return out
