"""Quotations and questions in a text, and a quote as prose shows it (normalizing words is ``text.words``')."""

from __future__ import annotations

import re
import unicodedata

from historian_blueprint.text.words import QUOTES

_QUOTATION = re.compile(r'"([^"]*)"')  # quote marks pair in order: the text between two pairs is not a quotation
_INCHES = re.compile(r'(?<=\d)"(?=[\s,.;:)-]|$)')  # 12" guns

def quotations(text: str) -> list[str]:
    """Double-quoted passages of at least a few words."""
    text = unicodedata.normalize("NFKC", text).translate(QUOTES)
    if text.count('"') % 2:  # unpaired: a mark after a digit is an inch mark (12" guns), not a quote
        text = _INCHES.sub("″", text)
    found = _QUOTATION.findall(text)
    return [q.strip() for q in found if len(q) >= 12]


def is_question(text: str) -> bool:
    """True when the sentence asks rather than asserts (a question mark outside any quotation)."""
    outside = re.sub(r'"[^"]*"', "", unicodedata.normalize("NFKC", text).translate(QUOTES))
    return "?" in outside


def display(text: str) -> str:
    """A quote as shown in prose (line breaks of the source collapsed); the citation keeps it exact."""
    return re.sub(r"\s+", " ", text).strip()
