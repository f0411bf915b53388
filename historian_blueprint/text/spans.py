"""Sentences with exact offsets, and locators ("para 12, lines 3–5") for spans of a text.

Invariant for every span returned here: it indexes the text it was computed on, ``text[start:end]``.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Sequence

# A sentence ends at . ! ? (optionally followed by closing quotes/brackets) before whitespace,
# or at a paragraph break (a blank line).
SENTENCE_END = re.compile(r"""[.!?]["'”’)\]]*(?=\s)|\n[ \t]*\n""")
# Where a window of text may be cut without splitting a sentence of prose: after a sentence end and the
# space that follows it, or at any line break (looser than SENTENCE_END: a hard-wrapped line is an edge).
CUT = re.compile(r"[.!?][\"'”’)]*\s+|\n")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
# A period that ends an abbreviation, not a sentence: an initial ("Eugene V. Debs", "J. P. Morgan", the "S." of
# "U.S.") or a capitalized title ("Gen. Lee", "St. Louis", "Supt. Ross") before a name or a number, or a short form
# before a number ("No. 3", "p. 12", "vol. 2", "Nov. 27"). "He said no. Then ..." ends a sentence.
_INITIAL = re.compile(r"(?:^|(?<=[\s.(\[\"'“‘]))[A-Z]\.$")
TITLES = frozenset("mr mrs messrs dr st ste mt ft gen col capt lt maj sgt adm cmdr gov sen rep hon rev prof pres "
                   "supt".split())
# Words that open sentences and no name: after "U.S." or "D.C." they begin the next sentence.
OPENERS = frozenset("the an he she it they we this that these those there his her its their our but and or yet so "
                    "after when then in on at as if for while however".split())
NUMBER_FORMS = frozenset("no nos vol vols pp p fig art sec ch jan feb mar apr jun jul aug sep sept oct nov dec".split())
_BEFORE_NAME = re.compile(r"\s+[\"'“‘(]?[A-Z0-9]")


class Layout:
    """Paragraph, line and page positions of one text, for turning offsets into locators."""

    def __init__(self, text: str, pages: Sequence[str] | None = None) -> None:
        self.text = text
        self.paragraph_starts = [0] + [m.end() for m in _PARAGRAPH_BREAK.finditer(text)]
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.page_starts = self._page_starts(text, pages) if pages else None
        self._sentence_starts: list[int] | None = None

    @staticmethod
    def _page_starts(text: str, pages: Sequence[str]) -> list[int] | None:
        starts, cursor = [], 0
        for page in pages:
            probe = str(page).strip()[:200]
            if not probe:
                starts.append(cursor)
                continue
            found = text.find(probe, cursor)
            if found < 0:
                return None  # pages do not line up with the text; fall back to paragraphs
            starts.append(found)
            cursor = found + len(probe)
        return starts

    def paragraph(self, offset: int) -> int:
        """1-based paragraph number of an offset."""
        return bisect.bisect_right(self.paragraph_starts, offset)

    def line_in_paragraph(self, offset: int) -> int:
        """1-based line number of an offset, counted from its paragraph's first line."""
        para_start = self.paragraph_starts[self.paragraph(offset) - 1]
        return bisect.bisect_right(self.line_starts, offset) - bisect.bisect_right(self.line_starts, para_start) + 1

    def locate(self, start: int, end: int) -> str:
        """Return "p. 4", "para 12, lines 3–5" or "paras 12–13" for the span [start, end)."""
        last = max(start, end - 1)
        if self.page_starts:
            first_page = bisect.bisect_right(self.page_starts, start)
            last_page = bisect.bisect_right(self.page_starts, last)
            return f"p. {first_page}" if first_page == last_page else f"pp. {first_page}–{last_page}"
        if len(self.paragraph_starts) == 1 and len(self.line_starts) == 1 and len(self.text) > 2000:
            # one long unbroken paragraph (many transcribed speeches): count sentences instead
            if self._sentence_starts is None:
                self._sentence_starts = [s for s, _ in sentence_spans(self.text)] or [0]
            s1 = bisect.bisect_right(self._sentence_starts, start)
            s2 = bisect.bisect_right(self._sentence_starts, last)
            return f"sentence {s1}" if s1 == s2 else f"sentences {s1}–{s2}"
        p1, p2 = self.paragraph(start), self.paragraph(last)
        if p1 != p2:
            return f"paras {p1}–{p2}"
        l1, l2 = self.line_in_paragraph(start), self.line_in_paragraph(last)
        return f"para {p1}, line {l1}" if l1 == l2 else f"para {p1}, lines {l1}–{l2}"


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int]]:
    """Yield (start, end) of each sentence-like unit in text[start:end], whitespace trimmed."""
    end = len(text) if end is None else end
    cuts = (m.end() for m in SENTENCE_END.finditer(text, start, end) if not _abbreviation(text, m, end))
    return pieces(text, start, cuts, end)


def _abbreviation(text: str, match: re.Match[str], end: int) -> bool:
    """True when the period matched ends an initial or a title before a name, or a short form before a number."""
    if match.group() != ".":
        return False
    at = match.start()
    following = _BEFORE_NAME.match(text, at + 1, end)
    if not following:
        return False
    nxt = re.match(r"[A-Za-z]+", text[following.end() - 1:following.end() + 12])
    if nxt and nxt.group().lower() in OPENERS:  # "... the U.S. The war ...": no name starts with "The"
        return False
    word = text[max(0, at - 12):at + 1].rsplit(None, 1)[-1].lstrip("\"'“‘([")
    if _INITIAL.search(word):  # "I." is the pronoun ("it was I. Then ...") unless a name stands before it
        return word[-2] != "I" or bool(re.search(r"[A-Z][\w.]*\s+$", text[max(0, at - 40):at - 1]))
    short = word[:-1]
    if following.group()[-1].isdigit() and short.lower() in NUMBER_FORMS:
        return True
    return short[:1].isupper() and short.lower() in TITLES


def pieces(text: str, start: int, cuts: Iterable[int], end: int) -> Iterator[tuple[int, int]]:
    """Yield the non-blank, whitespace-trimmed spans between consecutive cut points."""
    cursor = start
    for cut in [*cuts, end]:
        span = _trim(text, cursor, cut)
        if span:
            yield span
        cursor = cut


def _trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None


# A sentence end glued to the next sentence ("...the United States.Golf Magazine is..."), common in scraped text.
_GLUED = re.compile(r"(?<=[a-z0-9]{2}[.!?])(?=[A-Z][a-z])")


def claim_sentence_spans(text: str) -> list[tuple[int, int]]:
    """Sentence spans for checking claims: sentence_spans(), also split where a period has no space after it."""
    out = []
    for start, end in sentence_spans(text):
        cuts = [start] + [start + m.start() for m in _GLUED.finditer(text[start:end])] + [end]
        out.extend((a, b) for a, b in zip(cuts, cuts[1:]) if text[a:b].strip())
    return out


MAX_QUOTE = 600  # characters: the longest sentence quoted whole; a longer one is quoted by its clauses
# Where a long sentence may be cut into clauses: after a semicolon or colon, else after a comma.
_CLAUSE_BREAKS = (re.compile(r"[;:]\s+"), re.compile(r",\s+"))


def quote_spans(text: str, limit: int = MAX_QUOTE) -> list[tuple[int, int]]:
    """sentence_spans(), with each sentence longer than ``limit`` cut into clauses (at the semicolon or colon
    nearest its middle, else the comma) until every piece fits: period prose writes sentences of 600 characters
    and more, and the clause that answers is quotable on its own. A piece with no break to cut at is dropped."""
    out: list[tuple[int, int]] = []
    todo = list(sentence_spans(text))[::-1]
    while todo:
        start, end = todo.pop()
        if end - start <= limit:
            out.append((start, end))
            continue
        middle = (start + end) / 2
        for breaks in _CLAUSE_BREAKS:
            cuts = [m.end() for m in breaks.finditer(text, start, end) if start < m.start() and m.end() < end]
            if cuts:
                cut = min(cuts, key=lambda c: abs(c - middle))
                todo += [span for span in (_trim(text, cut, end), _trim(text, start, cut)) if span]
                break
    return out


def sentences(text: str) -> list[str]:
    """The text of each sentence."""
    return [text[s:e] for s, e in sentence_spans(text)]


SENTENCES_PER_BLOCK = 6  # an unbroken text is shown in blocks of this many sentences


def blocks(text: str) -> list[tuple[int, str]]:
    """Where to break a text that has no paragraphs of its own (one long unbroken block, as many transcribed
    speeches are) for reading: (offset, label) at every sixth sentence, labelled with the sentence numbers its
    locators use ("sentences 139–144"). Empty for a text with paragraphs or lines of its own."""
    if "\n" in text.strip() or len(text) <= 2000:
        return []
    starts = [s for s, _ in sentence_spans(text)]
    out = []
    for k in range(0, len(starts), SENTENCES_PER_BLOCK):
        last = min(k + SENTENCES_PER_BLOCK, len(starts))
        out.append((starts[k], f"sentence {k + 1}" if last == k + 1 else f"sentences {k + 1}–{last}"))
    return out


class Layouts:
    """One Layout per source, built on first use (locators for many spans of the same few sources)."""

    def __init__(self) -> None:
        self._by_id: dict[str, Layout] = {}

    def get(self, source_id: str, text: str | None) -> Layout | None:
        """The source's layout: the one built before, else one built from ``text`` (None without either)."""
        if source_id not in self._by_id and text is not None:
            self._by_id[source_id] = Layout(text)
        return self._by_id.get(source_id)

    def locate(self, source_id: str, text: str, start: int, end: int) -> str:
        return self.get(source_id, text).locate(start, end)

    def __contains__(self, source_id: str) -> bool:
        return source_id in self._by_id
