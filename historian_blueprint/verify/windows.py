"""Evidence windows for the reader model: a few short stretches of a document, each a sentence and its
neighbours, chosen so that a long document costs a bounded number of model calls.

The cited region comes first; then the sentences that share the most content words with the claim. The
same choice is used when the cuts are fitted (``historian train-checker --stage reader``) and when it runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from historian_blueprint.text.words import content_words
from historian_blueprint.verify.evidence import sentences_of

MAX_WINDOWS = 3        # model calls per claim and document
WINDOW_CHARS = 700     # a window is cut to about this many characters (the model reads ~192 tokens)


@dataclass(frozen=True)
class Window:
    """``text == document[start:end]``."""

    start: int
    end: int
    text: str


def windows(claim: str, text: str, cited: Sequence[tuple[int, int]] = (), limit: int = MAX_WINDOWS) -> list[Window]:
    """Up to ``limit`` windows of ``text`` for ``claim``: around each cited span first, then around the
    sentences sharing the most content words with the claim (each with its neighbours)."""
    table = sentences_of(text)
    if not table:
        return []
    spans = [(a, b) for a, b, _ in table]
    claim_words = set(content_words(claim))
    chosen: list[int] = []
    anchors: dict[int, int] = {}
    for start, end in cited:
        if end - start > 2 * WINDOW_CHARS:  # a whole document cited: no place to start from
            continue
        hits = [i for i, (a, b) in enumerate(spans) if a < end and b > start]
        if hits:
            chosen.append(hits[0])
            anchors.setdefault(hits[0], start)
    scored = sorted(
        range(len(spans)),
        key=lambda i: (-len(claim_words & table[i][2]), i),
    )
    for i in scored:
        if len(chosen) >= limit:
            break
        chosen.append(i)
    out: list[Window] = []
    seen: set[tuple[int, int]] = set()
    for i in chosen:
        window = _around(text, spans, i, anchors.get(i))
        if (window.start, window.end) not in seen:
            seen.add((window.start, window.end))
            out.append(window)
        if len(out) >= limit:
            break
    return out


def _around(text: str, spans: list[tuple[int, int]], i: int, anchor: int | None = None) -> Window:
    """Sentence ``i`` with its neighbours on both sides while the window stays under WINDOW_CHARS; a sentence
    longer than that (OCR without stops) is cut around ``anchor`` (a cited offset), else from its start."""
    lo = hi = i
    while True:
        grew = False
        for j in (lo - 1, hi + 1):
            if 0 <= j < len(spans):
                a, b = spans[min(lo, j)][0], spans[max(hi, j)][1]
                if b - a <= WINDOW_CHARS:
                    lo, hi = min(lo, j), max(hi, j)
                    grew = True
        if not grew:
            break
    start, end = spans[lo][0], spans[hi][1]
    if end - start > WINDOW_CHARS:  # one long sentence (or OCR without stops)
        if anchor is not None and start < anchor < end:
            start = max(start, min(anchor - WINDOW_CHARS // 4, end - WINDOW_CHARS))
        end = start + WINDOW_CHARS
    return Window(start, end, text[start:end])
