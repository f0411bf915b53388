"""Counter-queries: searches aimed at evidence that would disconfirm the map's weak claims.

A claim is weak when it is contested (one side of a conflict), stated by one source alone, or stated by a
source of low prior credibility. Its counter-queries are its denial (the negation flipped), the point stated
without the claim's figures or names (who else counts or names it), and its actors with the topic. No query
runs twice in a map; at least ``MIN_PER_ROUND`` are asked per round while anything is left to ask.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from historian_blueprint.mapping.nlp import Statement

MIN_PER_ROUND = 3
MAX_PER_ROUND = 6
_AUX = re.compile(r"\b(was|were|is|are|had|has|have|did|does|do|will|would|could)\b(\s+not\b|n't)?", re.I)


def denial(text: str) -> str:
    """The statement with its first auxiliary negated, or its negation removed."""
    m = _AUX.search(text)
    if m is None:
        return f"not {text}"
    if m.group(2):
        return text[:m.start()] + m.group(1) + text[m.end():]
    return text[:m.end()] + " not" + text[m.end():]


def key(query: str) -> str:
    return " ".join(re.findall(r"\w+", query.lower()))


def counter_queries(
    topic: str, weak: Iterable[tuple[str, Statement]], asked: set[str], round_: int,
) -> list[dict[str, object]]:
    """Up to MAX_PER_ROUND new queries against the weak statements ((why it is weak, statement) pairs, the
    weakest first), padded to MIN_PER_ROUND with searches for other kinds of accounts of the topic."""
    out: list[dict[str, object]] = []

    def add(query: str, aimed_at: str) -> None:
        k = key(query)
        if k and k not in asked and len(out) < MAX_PER_ROUND:
            asked.add(k)
            out.append({"query": query.strip(), "round": round_, "aimed_at": aimed_at, "new_sources": []})

    for why, st in weak:
        text = st.text.rstrip(".")
        add(denial(text), f"{why}: {st.text}")
        bare = st.skeleton.replace("someone", "who").replace(" some ", " how many ").rstrip(".,")
        if bare and key(bare) != key(text):
            add(f"{bare} {topic}", f"{why}: {st.text}")
    for template in ("accounts disputing {t}", "testimony of witnesses to {t}", "official report on {t}",
                     "later recollections of {t}", "newspaper reports of {t}", "causes of {t} denied"):
        if len(out) >= MIN_PER_ROUND:
            break
        add(template.format(t=topic), "other kinds of account of the topic")
    return out
