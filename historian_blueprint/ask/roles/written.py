"""The answer's own words, offline: the lead sentence that says who answers, where and with which words, and
the findings a list needs (an enumeration read on past the sentence found; each side of a comparison: ask.roles.sides).

``extractive.compose`` chooses the findings (``ask.roles.choosing``) and calls these (``answer``, or ``refusal``
with why); the whole passages follow the lead on the page, each quoted once under its source.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from historian_blueprint.questions.lists import ORDINAL_OPENING, introduces, is_heading, list_items
from historian_blueprint.questions.reading import Question
from historian_blueprint.questions.shapes import belongs, name_of
from historian_blueprint.schema import REFUSAL_PREFIX, Answer, Citation, Fact, SourceText
from historian_blueprint.text.quotations import display
from historian_blueprint.text.spans import Layouts, sentence_spans
from historian_blueprint.text.words import content_words


ENUMERATION_READ = 8  # sentences read on past the last item of an enumeration found, for the items that follow it


def enumeration(facts: list[Fact], get_document: Callable[[str], SourceText | None],
                asked: int | None = None) -> list[Fact]:
    """An enumeration goes on past the sentence retrieval found: after an item that opens on an ordinal ("The
    third is freedom from want ..."), or after the list's heading (a sentence that gives the count asked: "four
    essential human freedoms", or introduces a list: "... as follows:"), the next sentences of its document that are
    items (questions.lists.list_items) are read too ("The fourth is freedom from fear ..."), whether or not they share
    the question's words. They join the facts just below the sentence they follow."""
    out = list(facts)
    have = {(f.source_id, f.start) for f in facts}
    layouts = Layouts()
    for fact in facts:
        trailing = _TRAILING_ORDINAL.search(fact.text)  # "... may be legislated upon at this session: First."
        opens = ORDINAL_OPENING.match(fact.text) or trailing
        if not opens and not (asked and (is_heading(fact.text, asked) or introduces(fact.text))):
            continue
        doc = get_document(fact.source_id)
        if doc is None:
            continue
        following = list(sentence_spans(doc.text, fact.end,
                                        min(len(doc.text), fact.end + 12000)))[:6 * ENUMERATION_READ]
        headed = bool(trailing)
        read = 0
        for k, (s, e) in enumerate(following):
            text = doc.text[s:e]
            if _BARE_ORDINAL.fullmatch(text.strip()):  # "Second." heads the sentence that follows it
                headed = True
                continue
            read += 1
            item = headed or ORDINAL_OPENING.match(text) or (asked and list_items("", text, asked))
            if headed and k and _BARE_ORDINAL.fullmatch(doc.text[following[k - 1][0]:following[k - 1][1]].strip()):
                start = following[k - 1][0]  # "Second." + "No sectarian tenets ..."
            elif headed and not k and trailing:
                # "First." at the end of the sentence before, + "That the States ..."
                start = fact.start + trailing.start() + 1
                start += len(doc.text[start:]) - len(doc.text[start:].lstrip())
            else:
                start = s
            headed = False
            if item:
                read = 0  # an enumeration goes on while its items do: read on past the last one found
            if item and (fact.source_id, start) not in have and e - start <= 600:
                have.add((fact.source_id, start))
                out.append(fact.model_copy(update={"start": start, "end": e, "text": doc.text[start:e],
                                                   "score": fact.score - 0.001,  # a new sentence: its words anew
                                                   "locator": layouts.locate(doc.source_id, doc.text, start, e)}))
            if read == ENUMERATION_READ:
                break
    return sorted(out, key=lambda f: -f.score)


_ORDINALS = r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|[1-8]|[ivx]{1,4}|" \
            r"art(?:icle)?\.?\s*[-\u2013\u2014]+)"  # "ART.-"
_BARE_ORDINAL = re.compile(rf"\(?{_ORDINALS}[.):]?", re.I)          # a sentence that is only "Second." or "(2)"
_TRAILING_ORDINAL = re.compile(rf"[.:]\s+{_ORDINALS}[.:]\s*$", re.I)  # a sentence that ends on the first item's ordinal


def answer(question: Question, chosen: Sequence[Fact], found: int, labels: dict[str, str]) -> Answer:
    """The chosen findings as the answer: each quoted once and cited under its source, after the lead (``lead``;
    ``found``: how many of a list's items they hold)."""
    citations = [
        Citation(id=n, source_id=f.source_id, title=f.title, author=f.author, year=f.year, locator=f.locator,
                 text=f.text, start=f.start, end=f.end)
        for n, f in enumerate(chosen, start=1)
    ]
    bullets = [f"{f.author or f.title}{f' ({f.year})' if f.year else ''}, {f.locator}: “{display(f.text)}” [{n}]"
               for n, f in enumerate(chosen, start=1)]
    return Answer(answer=lead(question, citations, labels, found=found), bullets=bullets, citations=citations,
                  summary=True)


def refusal(question: str, facts: Sequence[Fact], searched: Sequence[str], collection: tuple[int, Sequence[int]],
            missing: str | None = None) -> Answer:
    """Say that the collection does not answer, what was searched (``collection``: how many documents, and the
    first and last year they span when known), and the closest passages (``missing``: what they lack, when it is one
    thing)."""
    n_documents, years = collection
    span = f" ({years[0]}–{years[-1]})" if years and years[0] != years[-1] else f" ({years[0]})" if years else ""
    closest = "; ".join(f"{f.title} ({f.locator})" for f in facts[:3]) or "none"
    why = f"mention the subject but not {missing}" if missing else "do not contain enough of the question to answer it"
    text = (
        f"{REFUSAL_PREFIX} “{question}”. Searched {n_documents} documents{span} for: "
        + "; ".join(f"“{q}”" for q in searched)
        + f". The closest passages ({closest}) {why}."
    )
    return Answer(answer=text, bullets=[], citations=[], refusal=True)


def lead(question: Question, citations: Sequence[Citation], labels: dict[str, str], *, found: int) -> str:
    """The answer's first sentences, in Historian's words: who answers, in what and when, with a short excerpt
    of what they said (the whole passages follow, each once, under their sources). A comparison says who
    speaks for each side and which side nothing was found for; a list how many of the items asked it found
    (``found``, as the findings were chosen: questions.lists.listed)."""
    if not citations:
        return ""
    words, shape = set(question.words), question.shape

    def who(c: Citation) -> str:
        return labels.get(c.source_id) or f"{c.author or c.title}{f' ({c.year})' if c.year else ''}"

    if shape.comparison:
        parts = []
        for side in shape.sides:
            mine = [c for c in citations
                    if belongs(side, shape, byline=f"{c.author or ''} {c.title}", text=c.text, year=c.year)]
            if mine:
                named = who(mine[0])
                by = named if name_of(side).lower() in named.lower() else f"for {side.label}, {named}"
                parts.append(f"{by}, {mine[0].locator}: “{excerpt(mine[0].text, words)}” [{mine[0].id}]")
            else:
                parts.append(f"for {side.label}, nothing in the collection was found")
        return "Side by side: " + "; ".join(parts) + "."
    first = citations[0]
    more = len(citations) - 1
    sources = len({c.source_id for c in citations})
    rest = (f" {more} more passage{'s' if more != 1 else ''}"
            + (f", from {sources - 1} other document{'s' if sources != 2 else ''}," if sources > 1 else " of it")
            + f" bear{'s' if more == 1 else ''} on the question.") if more else ""
    opening = f"{who(first)}, {first.locator}, answers most directly: “{excerpt(first.text, words)}” [1]."
    if shape.kind == "list" and shape.asked:
        if not found:
            return (f"None of the {shape.asked} asked for could be picked out in the passages found. The nearest is "
                    f"{who(first)}, {first.locator}: “{excerpt(first.text, words)}” [1].{rest}")
        opening = f"{found} of the {shape.asked} asked for {'were' if found != 1 else 'was'} found. " + opening
    return opening + rest


EXCERPT_WORDS = 16  # the lead quotes at most this many words of its passage


def excerpt(text: str, words: set[str], limit: int = EXCERPT_WORDS) -> str:
    """The part of a sentence that carries most of the question's words, at most ``limit`` words, with an
    ellipsis where it was cut."""
    tokens = display(text).split()
    if len(tokens) <= limit:
        return " ".join(tokens).rstrip(".;:,")
    hits = [len(words & set(content_words(t))) for t in tokens]
    best = max(range(len(tokens) - limit + 1), key=lambda i: (sum(hits[i:i + limit]), -i))
    piece = " ".join(tokens[best:best + limit]).rstrip(".;:,")
    return f"{'… ' if best else ''}{piece}{' …' if best + limit < len(tokens) else ''}"
