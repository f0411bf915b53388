"""Normalizing text for comparison: quotes, dashes and Unicode forms, common short forms, quotations."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'", "`": "'", "–": "-", "—": "-", "\u00a0": " "})
ABBREVIATIONS = {"u.s.a.": "usa", "u.s.": "usa", "u.k.": "uk", "&": " and "}
# Multi-word names with a common short form, compared as one token.
PHRASES = re.compile(
    r"\bunited states(?: of america)?\b|\busa\b|(?<=\bthe )us\b|"
    r"\bus(?= (?:army|navy|senate|congress|government|treasury|supreme court)\b)",
    re.IGNORECASE,  # normalize() sees lowercase text; capitalized_terms() sees the original case
)
PHRASE_FORM = "usa"

_DECADE = re.compile(r"\b(\d{2,4}0)'s\b")
_SPACES = re.compile(r"\s+")
_DOUBLE_SPACES = re.compile(r"  +")
_MAY_HOLD_PHRASE = re.compile(r"\bus|united states")  # what every one of PHRASES' forms starts with


def normalize(text: str) -> str:
    """Unify quotes, dashes and Unicode forms; collapse whitespace; lowercase; "1960's" is "1960s". (Each step
    runs only when the text holds what it changes: the same words, faster.)"""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    text = _SPACES.sub(" ", text.translate(QUOTES)).strip().lower()
    if "'s" in text:
        text = _DECADE.sub(r"\1s", text)
    for short, word in ABBREVIATIONS.items():
        if short in text:
            text = text.replace(short, word)
    if "  " in text:
        text = _DOUBLE_SPACES.sub(" ", text)
    return PHRASES.sub(PHRASE_FORM, text) if _MAY_HOLD_PHRASE.search(text) else text


@lru_cache(maxsize=512)
def normalized(text: str) -> str:
    """normalize(), cached: the same documents are compared with many claims."""
    return normalize(text)


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
