"""Sentence-aware chunks with exact character offsets and human-readable locators.

Invariant: for every chunk, ``text[chunk.start:chunk.end] == chunk.text``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from historian_blueprint.text.spans import Layout, pieces, sentence_spans


@dataclass(frozen=True)
class Chunk:
    source_id: str
    ordinal: int
    start: int
    end: int
    text: str
    locator: str


def _long_cuts(text: str, start: int, end: int, size: int) -> Iterator[int]:
    """Cut points for a unit longer than size: at whitespace, or hard for text without spaces."""
    while end - start > size:
        cut = text.rfind(" ", start + size // 2, start + size)
        start = cut if cut > start else start + size
        yield start


def units(text: str, size: int) -> list[tuple[int, int]]:
    """Sentence spans, with any sentence longer than ``size`` split further."""
    out: list[tuple[int, int]] = []
    for s, e in sentence_spans(text):
        if e - s > size:
            out.extend(pieces(text, s, _long_cuts(text, s, e, size), e))
        else:
            out.append((s, e))
    return out


def chunk_text(text: str, size: int = 700, overlap: int = 150) -> list[tuple[int, int]]:
    """Pack sentences into spans of at most ``size`` characters, overlapping by up to ``overlap``."""
    spans = units(text, size)
    chunks: list[tuple[int, int]] = []
    i = 0
    while i < len(spans):
        first = i
        end_index = i
        while end_index + 1 < len(spans) and spans[end_index + 1][1] - spans[first][0] <= size:
            end_index += 1
        chunks.append((spans[first][0], spans[end_index][1]))
        if end_index + 1 >= len(spans):
            break
        # start the next chunk with the trailing sentences that fit in the overlap
        nxt = end_index + 1
        while nxt - 1 > first and spans[end_index][1] - spans[nxt - 1][0] <= overlap:
            nxt -= 1
        i = nxt
    return chunks


def chunk_document(
    source_id: str, text: str, size: int = 700, overlap: int = 150, pages: Sequence[str] | None = None
) -> list[Chunk]:
    """Chunk one document; each chunk carries its offsets and locator."""
    layout = Layout(text, pages)
    return [
        Chunk(source_id, n, s, e, text[s:e], layout.locate(s, e))
        for n, (s, e) in enumerate(chunk_text(text, size, overlap))
    ]
