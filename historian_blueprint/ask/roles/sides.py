"""Each side of a comparison answered on its own: which of a side's sentences speaks to the question's topic.

A side's sentences are every sentence of the passages that speak for it (questions.shapes.belongs), not only those
that share the question's words: a historian asks about "immigration" where the message says "aliens", about
"changing the antitrust law" where it says "this statute as construed by the Supreme Court must continue". Each is
weighed by

- the topic words it shares, each word weighted by how rare it is among all the sides' sentences (a word nearly
  every sentence carries, "slave" in the narratives, "government" in the messages, picks none out), and
- its nearness in meaning to the topic (the question without its sides, the bundled MiniLM encoder), so that a
  sentence in other words can still be found.

A side's two best sentences are quoted when they reach a minimum (MIN_SIDE) in words and meaning together; a side
with none is "not found for this side". The weights were fit on the fit half of a development set of comparisons
(docs/verification.md, "How a question becomes a verified answer", composer).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from historian_blueprint.questions.shapes import Shape, Side, belongs
from historian_blueprint.schema import Fact
from historian_blueprint.text.spans import quote_spans
from historian_blueprint.text.words import content_words

Embed = Callable[[list[str]], np.ndarray]  # texts -> normalized vectors (index.embedding.Embedder.encode)

PER_SIDE = 2          # findings a comparison quotes for each side
# how much nearness in meaning counts beside the shared topic words (fit: see docs/verification.md)
MEANING_WEIGHT = 0.5
MIN_SIDE = 0.35       # a side's sentence must reach this (words and meaning together) to be quoted

COMPARING = frozenset(content_words("compare compared comparison contrast contrasted differ differed difference "
                                    "differences versus between both each similar similarly agree agreed unlike "
                                    "view views position positions stance message messages address speech say said vs"))


def topic_words(question_words: set[str], shape: Shape) -> set[str]:
    """The question's words other than its sides' and the comparing ones ("Wilson vs Roosevelt on the trusts":
    trust)."""
    return question_words - shape.named - COMPARING


def topic_text(side: Side) -> str:
    """A side's question without the side itself, for comparing meanings ("Taft in 1911: should the antitrust
    law be changed?" -> "should the antitrust law be changed?")."""
    text = side.query.replace(side.label, " ")
    for word in re.findall(r"[A-Z][\w'.-]*|\b\d{4}\b", side.label):
        text = re.sub(rf"\b{re.escape(word)}(?:'s)?(?!\w)", " ", text)
    text = re.sub(r"^\W*(?:compare|contrast)\b", " ", text, flags=re.I)
    return " ".join(text.split()).strip(" :,;") or side.query


def per_side(question_words: set[str], facts: list[Fact], shape: Shape, names: set[str] = frozenset(),
             embed: Embed | None = None) -> list[Fact]:
    """For each side in turn, its best findings among the sentences that speak for it (see the module's
    docstring). A name of the question both sides share (``names``: "Wilson" in "Wilson's 1914 and 1915
    messages") may stand in the document's title or author instead of the sentence. Without ``embed`` the
    topic words alone decide."""
    topic = topic_words(question_words, shape)
    unique = list({(f.source_id, f.start): f for f in facts}.values())
    df = {w: sum(w in f.words for f in unique) for w in topic}
    idf = {w: math.log((len(unique) + 1) / (df[w] + 1)) + 0.1 for w in topic}
    total = sum(idf.values())

    def shared(f: Fact) -> float:
        if not total:
            return 0.0
        mine = f.words | ((topic & names) & set(content_words(f"{f.title} {f.author or ''}")))
        return sum(idf[w] for w in topic & mine) / total

    chosen: list[Fact] = []
    for side in shape.sides:
        pool = [f for f in unique if f not in chosen
                and belongs(side, shape, byline=f"{f.author or ''} {f.title}", text=f.text, year=f.year)]
        if not pool:
            continue
        if not topic:  # "Compare Wilson and Roosevelt.": no topic beyond the sides; each side's best passages
            score = {id(f): MIN_SIDE for f in pool}
        else:
            meaning = _meaning(side, pool, embed)
            score = {id(f): shared(f) + MEANING_WEIGHT * meaning[k] for k, f in enumerate(pool)}
        ranked = sorted(pool, key=lambda f: (-score[id(f)], -f.score))
        mine: list[Fact] = []
        for f in ranked:  # nothing reaching the minimum: "not found for this side"
            if len(mine) == PER_SIDE or score[id(f)] < MIN_SIDE:
                break
            if not f.repeats(mine):
                mine.append(f)
        chosen += mine
    return chosen


def _meaning(side: Side, pool: Sequence[Fact], embed: Embed | None) -> list[float]:
    """Each sentence's nearness in meaning to the side's topic (cosine, 0 below zero); zeros without an encoder."""
    if embed is None or not pool:
        return [0.0] * len(pool)
    vectors = embed([topic_text(side)] + [" ".join(f.text.split()) for f in pool])
    return [max(float(v), 0.0) for v in vectors[1:] @ vectors[0]]


def sentences_of(hits: Sequence[dict[str, Any]]) -> list[Fact]:
    """Every sentence of the passages (a comparison's sides are read whole, not only where they share the
    question's words), with its exact offsets; at least four content words; a long sentence by its clauses."""
    out = []
    for hit in hits:
        for s, e in quote_spans(hit["text"]):
            text = hit["text"][s:e]
            words = frozenset(content_words(text))
            if len(words) < 4:
                continue
            out.append(Fact(source_id=hit["source_id"], title=hit["title"], author=hit.get("author"),
                            year=hit.get("year"), start=hit["start"] + s, end=hit["start"] + e, text=text,
                            locator=hit["locator"], score=0.0, words=words))
    return out
