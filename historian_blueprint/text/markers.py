"""Citation markers in prose: ``[3]`` (an answer's citation), ``[E3]`` (a passage the model was given) and
inline ``[source-id]`` (a draft's citation of a document)."""

from __future__ import annotations

import re

MARKER = re.compile(r"\[(\d+)\]")
SPACED_MARKER = re.compile(r"\s*\[(\d+)\]")  # a marker with the space before it, as it is cut out of prose
_LAST_MARKER = re.compile(r"\[\d+\]$")
EVIDENCE_MARKER = re.compile(r"\[(E\d+)\]", re.I)
_ANY_SPACED_MARKER = re.compile(r"\s*\[E?\d+\]")
SOURCE_MARKER = re.compile(r"\s*\[(?:source:\s*)?([A-Za-z0-9][\w.:-]*)\]")


def strip_markers(text: str) -> str:
    """The text without its ``[n]`` markers (and the space before each)."""
    return SPACED_MARKER.sub("", text).strip()


def strip_any_markers(text: str) -> str:
    """The text without ``[n]`` or ``[En]`` markers (a model's finding may carry either)."""
    return _ANY_SPACED_MARKER.sub("", text).strip()


def marker_ids(text: str) -> set[int]:
    """The numbers of the ``[n]`` markers in the text."""
    return {int(n) for n in MARKER.findall(text)}


def renumber_last(text: str, n: int) -> str:
    """The text with its final ``[k]`` marker made ``[n]`` (a bullet's citation after renumbering)."""
    return _LAST_MARKER.sub(f"[{n}]", text)


def split_at_markers(text: str) -> list[dict[str, object]]:
    """The text cut at its ``[n]`` markers: ``{"text", "n"}`` pieces, ``n`` None for plain text."""
    pieces: list[dict[str, object]] = []
    at = 0
    for m in MARKER.finditer(text):
        if m.start() > at:
            pieces.append({"text": text[at:m.start()], "n": None})
        pieces.append({"text": m.group(0), "n": int(m.group(1))})
        at = m.end()
    if at < len(text):
        pieces.append({"text": text[at:], "n": None})
    return pieces
