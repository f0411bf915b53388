"""The offline engine's craft: deterministic router, planner, extractor, extractive composer and reviser.

The roles of ``ask/roles/offline.py`` are these functions behind the role interfaces; the LLM engine falls
back on them when a model fails.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from historian_blueprint.schema import Answer, Fact
from historian_blueprint.questions.reading import Question
from historian_blueprint.ask.roles import choosing
from historian_blueprint.ask.roles.choosing import MIN_FACT_SCORE, MIN_OVERLAP
from historian_blueprint.ask.roles.sides import Embed
from historian_blueprint.ask.roles.written import answer, refusal
from historian_blueprint.text.dialect import standard_words
from historian_blueprint.text.markers import renumber_last
from historian_blueprint.text.spans import MAX_QUOTE, quote_spans
from historian_blueprint.text.words import content_words, tokenize
from historian_blueprint.verify.asked import holds_type
from historian_blueprint.verify.question import unmet
from historian_blueprint.verify.reader import default_reader, reader_in_use

MIN_CONTEXT_OVERLAP = 0.25  # supporting findings may share less, but must share something
_WORDLIKE = re.compile(r"^[A-Za-z][a-z]*[,.;:!?'\"”’)]*$|^[\d$][\d,.$%]*[,.;:]*$|"
                       r"^[“‘\"'(]?[A-Za-z][a-z]*[,.;:!?”’\"')]*$")


def text_quality(sentence: str) -> float:
    """Share of tokens that look like words (raw OCR debris scores low)."""
    tokens = sentence.split()
    if not tokens:
        return 0.0
    return sum(1 for t in tokens if _WORDLIKE.match(t)) / len(tokens)


def plan(question: str, kind: str, history: list[dict[str, Any]] | None = None) -> list[str]:
    """Sub-queries: the question itself, plus its parts for compare and multi-part questions.

    A follow-up ("and what did he say about silver?") also gets a query carrying the subject words of the
    last turns that the follow-up does not repeat (the last five turns, most recent first).
    """
    queries = [question]
    if history:
        own = set(tokenize(question))
        carried: list[str] = []
        for turn in reversed(history[-5:]):
            carried += [w for w in tokenize(turn.get("question", "")) if w not in own and w not in carried]
        if carried:
            queries.append(f"{question} {' '.join(carried[:8])}")
    if kind == "complex":
        parts = re.split(r"\?\s+|;\s+|\b(?:versus|vs\.?|compared (?:with|to)|and)\b", question)
        for part in parts:
            words = tokenize(part)
            if 2 <= len(words) and part.strip() and part.strip() != question:
                queries.append(part.strip(" ?,."))
    return list(dict.fromkeys(queries))[:4]


def expand(question: str, hits: list[dict[str, Any]], n_terms: int = 6) -> list[str]:
    """Pseudo-relevance feedback: add the terms most frequent in the best hits (or just the key terms)."""
    base = tokenize(question)
    if not hits:
        return [" ".join(base)] if base else [question]
    counts = Counter(t for h in hits[:5] for t in tokenize(h["text"]) if t not in base and len(t) > 3)
    extra = [t for t, _ in counts.most_common(n_terms)]
    return [f"{question} {' '.join(extra)}", " ".join(base)]


SIDE_FACTS = 12      # evidence sentences read for each side of a comparison, as a question of its own
THREAD_WEIGHT = 0.2  # how much a follow-up's evidence is pulled toward what the thread is about
TYPE_WEIGHT = 0.1    # a sentence holding the type the question asks for (a date for "when") ranks that much higher


def extract(q: Question, hits: list[dict[str, Any]], limit: int = 24,
            context: frozenset[str] | set[str] | None = None, embed: Embed | None = None) -> list[Fact]:
    """Split the retrieved chunks into sentences with exact offsets; score each against the question.

    ``context``: a follow-up's thread words (``Question.thread``); sentences of documents about them rank higher.
    ``embed``: the sentence encoder; a single answer's first findings are then re-ranked by meaning (``by_meaning``).
    """
    q_words, text = q.words, q.text
    context = context or set()
    kind = q.kind  # a sentence that matches the question but lacks the answer reads on into the next one
    facts: dict[tuple[str, int], Fact] = {}
    for rank, hit in enumerate(hits):
        # the document's title, author and year answer "who" and "when" parts of a question
        metadata = set(content_words(f"{hit['title']} {hit.get('author') or ''} {hit.get('year') or ''}"))
        spans = quote_spans(hit["text"])
        for n, (s, e) in enumerate(spans):
            sentence = hit["text"][s:e]
            own = content_words(sentence)
            words = set(own) | standard_words(sentence)  # "Marster tole us": master, tell
            if not q_words & words:
                continue
            typed = holds_type(kind, sentence, question=text)  # always, when the question asks for no type
            if not typed and n + 1 < len(spans):
                # "one cloud upon our horizon." "It hangs over Mexico."
                following = hit["text"][spans[n + 1][0]:spans[n + 1][1]]
                if holds_type(kind, following, question=text) and spans[n + 1][1] - s <= MAX_QUOTE:
                    e = spans[n + 1][1]
                    sentence, typed = hit["text"][s:e], True
                    own = content_words(sentence)
                    words = set(own) | standard_words(sentence)
            if len(words) < 4:
                continue
            overlap = len(q_words & (words | metadata)) / max(len(q_words), 1)
            if overlap < MIN_CONTEXT_OVERLAP:
                continue
            quality = text_quality(sentence)
            thread = len(context & (words | metadata)) / len(context) if context else 0.0
            asked = 0.0 if kind == "other" else TYPE_WEIGHT if typed else -TYPE_WEIGHT
            score = (0.65 * overlap + 0.35 * float(hit.get("score", 0)) + THREAD_WEIGHT * thread + asked
                     - 0.01 * rank) * quality
            start = hit["start"] + s
            key = (hit["source_id"], start)
            if key not in facts or facts[key].score < score:
                facts[key] = Fact(
                    source_id=hit["source_id"], title=hit["title"], author=hit.get("author"), year=hit.get("year"),
                    start=start, end=hit["start"] + e, text=sentence, locator=hit["locator"], score=round(score, 4),
                    overlap=round(overlap, 4), words=frozenset(own),
                )
    ranked = sorted(facts.values(), key=lambda f: -f.score)
    return by_reader(q, by_meaning(q, ranked, embed))[:limit]


MEANING_FACTS = 4     # the best findings by words that may be re-ranked by meaning (6 and 12 lead alike, cost more)
# how much a finding's nearness in meaning to the question (cosine, the bundled MiniLM) adds to its score (fit below)
QUESTION_MEANING_WEIGHT = 0.25
MEANING_MARGIN = 0.05  # ... among the findings within this of the leader by words (0.05-0.25 lead alike; fewest reads)


def by_meaning(question: Question, ranked: list[Fact], embed: Embed | None) -> list[Fact]:
    """A single answer's first findings (MEANING_FACTS) that words alone cannot tell from the leader (MEANING_MARGIN)
    re-ranked with QUESTION_MEANING_WEIGHT x their nearness in meaning to the question, so that the sentence that
    answers in other words can lead ("In the last year they have shown an increase" for "were lynchings rising or
    falling"); only a sentence that holds what the question asks
    for (a figure, a date, a name) is lifted. A comparison's sides and a list's items are chosen their own ways
    (ask.roles.sides, questions.lists); without the encoder the ranking by words stands. Fit on the fit half of the
    development questions (docs/verification.md, composer): the finding that leads holds the answer more often."""
    if embed is None or not ranked or question.shape.kind != "single":
        return ranked
    # only findings about as good by words as the leader (MEANING_MARGIN) are read again: the encoder is not asked when
    # the lead is clear
    head = [f for f in ranked[:MEANING_FACTS] if ranked[0].score - f.score <= MEANING_MARGIN]
    if len(head) < 2:
        return ranked
    try:
        vectors = embed([question.text] + [" ".join(f.text.split()) for f in head])
    except Exception:  # noqa: BLE001 - an encoder failing at run time: the ranking by words stands
        return ranked
    kind = question.kind
    near = [float(v) for v in vectors[1:] @ vectors[0]]
    read = [f.model_copy(update={"score": round(f.score + QUESTION_MEANING_WEIGHT * max(n, 0.0), 4)})
            if kind == "other" or holds_type(kind, f.text, question=question.text) else f for f, n in zip(head, near)]
    return sorted(read, key=lambda f: -f.score) + [f for f in ranked if f not in head]


READ_FACTS = 6        # the best findings by words the reader reads (6, 12 and 24 ranked alike on the development set)
# how much the reader's p(answers) adds to a finding's score (chosen on tests/data/questions.jsonl)
ANSWER_WEIGHT = 0.5


def by_reader(question: Question, ranked: list[Fact]) -> list[Fact]:
    """The first findings re-ranked with the reader's p(the sentence answers the question) (``verify/reader.py``),
    so that the sentence that answers comes before one that only repeats the question's words; only a sentence
    that holds what the question asks for (a figure, a date, a name) is lifted. Without the reader (off, or its
    files unreadable) the ranking by words stands."""
    if not reader_in_use() or not ranked:
        return ranked
    head = ranked[:READ_FACTS]
    try:
        p = default_reader().answers(question.text, [f.text for f in head])
    except Exception:  # noqa: BLE001 - unavailable or failing at run time: the ranking by words stands
        return ranked
    kind = question.kind  # a sentence without what the question asks for (a figure for "how many") is not lifted
    read = [f.model_copy(update={"score": round(f.score + ANSWER_WEIGHT * q, 4)})
            if kind == "other" or holds_type(kind, f.text, question=question.text) else f for f, q in zip(head, p)]
    return sorted(read, key=lambda f: -f.score) + ranked[READ_FACTS:]


def compose(q: Question, facts: list[Fact], searched: list[str], collection: tuple[int, Sequence[int]],
            passages: Sequence[str] = (), labels: dict[str, str] | None = None, embed: Embed | None = None) -> Answer:
    """Build the answer from the best non-redundant evidence sentences, each quoted once and cited, under a lead
    sentence of Historian's own that says who answers, where, and with which words (``written.answer``), or say
    why the collection does not answer (``written.refusal``). ``passages``: the retrieved passages the facts were
    read from (a constraint one of them mentions is no reason to refuse; whether the cited sentences carry it is the
    premise check's to flag). The findings are chosen by the question's shape (``ask.roles.choosing``). ``labels``: each
    document's name as a historian cites it (who, what, when; text.labels.source_label). ``embed``: the encoder a
    comparison's sides are read with (ask.roles.sides)."""
    missing = unheld(q, facts, passages)
    chosen, found = ([], 0) if missing is not None else choosing.choose(q, facts, embed)
    if missing is None and len(chosen) < (1 if found or q.shape.comparison else 3):
        missing = ""  # a list answers with the items it found, however few; a comparison with any side found
    if missing is not None:
        return refusal(q.text, facts, searched, collection, missing=missing or None)
    return answer(q, chosen, found, labels or {})


def unheld(q: Question, facts: Sequence[Fact], passages: Sequence[str]) -> str | None:
    """Why the findings cannot answer, or None: "" when none shares enough of the question (a comparison's sides
    are read on their own instead); a name or date of the question nothing retrieved mentions (its premise); what
    a "What was the X of ..." question asks for when no finding holds it."""
    shape = q.shape
    if not shape.comparison and not any(f.score >= MIN_FACT_SCORE and f.overlap >= MIN_OVERLAP for f in facts):
        return ""
    sides = {w for side in shape.sides for w in side.words} if shape.comparison else set()
    absent = [c for c in unmet(q.text,
                               [f"{f.text} {f.title} {f.author or ''} {f.year or ''}" for f in facts] + list(passages),
                               asked=q.constraints)
              if c.kind in ("name", "date") and not (c.words & sides)]  # a figure or qualifier nothing cited gives is
    # flagged, not refused: the passages may word it otherwise ("in bondage": "owned"), and "(1)" may be no figure at
    # all; a side of a comparison nothing mentions is "not found for this side", not a reason to refuse the rest
    if absent:
        return " or ".join(f"“{c.text}”" for c in absent)
    if q.focus.wanted and not any(q.focus.answered_by(f.words, f.text) for f in facts):
        return q.focus.missing()
    return None


def revise(draft: Answer, flagged_citations: set[int]) -> Answer:
    """Drop the findings whose claims failed; renumber the rest. Fewer than three left: qualify instead.

    Ids beyond the citations are sentences of the answer's prose (LLM drafts): when one failed, the prose
    is replaced by the findings that remain.
    """
    keep = [c for c in draft.citations if c.id not in flagged_citations]
    prose_failed = any(i > len(draft.citations) for i in flagged_citations)
    if len(keep) == len(draft.citations) and not prose_failed:
        return draft
    bullets_by_id = {c.id: b for c, b in zip(draft.citations, draft.bullets)}
    claims_by_id = {c.id: t for c, t in zip(draft.citations, draft.claims)}
    citations, bullets, claims = [], [], []
    for n, c in enumerate(keep, start=1):
        citations.append(c.model_copy(update={"id": n}))
        bullets.append(renumber_last(bullets_by_id[c.id], n))
        if c.id in claims_by_id:
            claims.append(claims_by_id[c.id])
    if not citations:
        if prose_failed:  # nothing of the model's prose stands either
            return draft.model_copy(update={"answer": "None of the findings could be verified.", "summary": True})
        note = " (None of these passages could be verified.)"
        return draft if draft.answer.endswith(note) else draft.model_copy(update={"answer": draft.answer + note})
    dropped = len(draft.citations) - len(keep)
    answer = (f"After verification, {len(citations)} finding{'s' if len(citations) != 1 else ''} remain"
              + (f" ({dropped} dropped: {'its claim' if dropped == 1 else 'their claims'} could not be confirmed)"
                 if dropped else "")
              + "; each is quoted below, under its source.")
    return Answer(answer=answer, bullets=bullets, citations=citations, claims=claims, notes=draft.notes, summary=True)
