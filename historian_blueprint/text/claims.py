"""A text cut into checkable claims: its sentences, each with the citation markers it carries."""

from __future__ import annotations

import re

from historian_blueprint.text.markers import SOURCE_MARKER
from historian_blueprint.text.quotations import is_question
from historian_blueprint.text.spans import sentence_spans

MIN_CLAIM_WORDS = 3


def sentence_claims(text: str, marker: re.Pattern[str]) -> list[tuple[str, list[str]]]:
    """(sentence without its markers, what the markers name) for each sentence that asserts something:
    questions and sentences of fewer than three words are left out."""
    out = []
    for start, end in sentence_spans(text):
        sentence = text[start:end]
        claim = marker.sub("", sentence).strip()
        if len(claim.split()) >= MIN_CLAIM_WORDS and not is_question(claim):
            out.append((claim, marker.findall(sentence)))
    return out


def split_claims(text: str) -> list[tuple[str, list[str]]]:
    """A draft's sentence claims, each with the source ids cited inline as ``[source-id]``."""
    return sentence_claims(text, SOURCE_MARKER)
