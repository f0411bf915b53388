"""Reading a source: its text cut into plain and highlighted pieces (in blocks of sentences when it has no
paragraphs of its own), and a cited passage's neighbouring sentences."""

from __future__ import annotations

from typing import Any

from historian_blueprint.text.spans import blocks, sentence_spans
from historian_blueprint.verify.reports import clip


def highlighted(text: str, spans: list[tuple[int | None, int, int]],
                focus: tuple[int, int] | None = None) -> list[dict[str, Any]]:
    """The text cut into plain and marked pieces (overlapping spans merge); the template escapes each piece.

    A span is (citation number, start, end); a span a link asked for without a citation of the run (a draft's
    evidence, a map's passage) has None for its number: it is marked, and numbered by nothing (``mark``: the
    citation numbers a marked piece holds, maybe none; unmarked pieces have None). The piece to scroll to and focus
    (``first``) is the one holding ``focus`` (the span a citation link asked for), else the first marked piece.
    """
    marks = sorted(((s, e, n) for n, s, e in spans if 0 <= s < e <= len(text)), key=lambda m: (m[0], m[1]))
    merged: list[list[Any]] = []
    for s, e, n in marks:
        numbers = [] if n is None else [n]
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
            merged[-1][2] = sorted(set(merged[-1][2]) | set(numbers))
        else:
            merged.append([s, e, numbers])
    target = next((k for k, (s, e, _) in enumerate(merged) if focus and s < focus[1] and focus[0] < e), 0)
    pieces, at = [], 0
    for k, (s, e, ids) in enumerate(merged):
        if at < s:
            pieces.append({"text": text[at:s], "mark": None})
        pieces.append({"text": text[s:e], "mark": ids, "first": k == target})
        at = e
    if at < len(text):
        pieces.append({"text": text[at:], "mark": None})
    return _in_blocks(pieces, blocks(text))


def _in_blocks(pieces: list[dict[str, Any]], breaks: list[tuple[int, str]]) -> list[dict[str, Any]]:
    """The pieces with a text without paragraphs broken into blocks of sentences (text.spans.blocks): a plain
    piece is cut where a block starts, and the piece that opens a block carries its label (``block``); a block
    that would start inside a highlighted span starts with it."""
    if not breaks:
        return pieces
    out: list[dict[str, Any]] = []
    at, queue = 0, list(breaks)
    for piece in pieces:
        end = at + len(piece["text"])
        label = None
        while queue and queue[0][0] <= at:  # a block starting here, or inside a mark just passed
            label = queue.pop(0)[1]
        if piece["mark"] is None:
            cursor = at
            while queue and queue[0][0] < end:
                cut, next_label = queue.pop(0)
                if cut > cursor:
                    out.append({"text": piece["text"][cursor - at:cut - at], "mark": None, "block": label})
                    label, cursor = None, cut
                label = next_label
            out.append({**piece, "text": piece["text"][cursor - at:], "block": label})
        else:  # blocks that start inside a highlighted span start with it (both labels when two do)
            inside = []
            while queue and queue[0][0] < end:
                inside.append(queue.pop(0)[1])
            out.append({**piece, "block": "; ".join(([label] if label else []) + inside) or None})
        at = end
    return out


CONTEXT_CHARS = 400  # at most this much of the sentence before and after a finding, for reading it in context


def around(text: str, start: int, end: int) -> dict[str, str]:
    """The sentence before a cited span and the sentence after it (``before``, ``after``; clipped at a word)."""
    if not text or not 0 <= start < end <= len(text):
        return {"before": "", "after": ""}
    lo, hi = max(0, start - 2 * CONTEXT_CHARS), min(len(text), end + 2 * CONTEXT_CHARS)
    spans = list(sentence_spans(text, lo, hi))
    before = [text[s:e] for s, e in spans if e <= start and (s > lo or lo == 0)][-1:]  # whole sentences only
    after = [text[s:e] for s, e in spans if s >= end and (e < hi or hi == len(text))][:1]
    tail = " ".join(" ".join(before).split())
    if len(tail) > CONTEXT_CHARS:  # the end of the sentence before, nearest the passage
        cut = tail.find(" ", len(tail) - CONTEXT_CHARS)
        tail = "…" + tail[cut + 1 if cut >= 0 else len(tail) - CONTEXT_CHARS:]
    return {"before": tail, "after": clip(" ".join(after), CONTEXT_CHARS)}
