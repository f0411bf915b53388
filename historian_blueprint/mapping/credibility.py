"""Credibility for archives (the judge): not web domains but what a historian weighs in a source.

Each factor is a value in [0, 1] (higher: more credible) with a weight; ``HISTORIAN_MAP_CREDIBILITY_WEIGHTS``
changes the weights and ``HISTORIAN_MAP_DOCUMENT_TYPES`` the value of a document type. The credibility is the
weighted mean of the factors that could be read, so a missing date does not count against a source.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

WEIGHTS: dict[str, float] = {
    "document_type": 0.25,     # an official report or sworn testimony over hearsay
    "distance": 0.20,          # years between the document and the events it describes
    "corroboration": 0.25,     # its statements that an independent source also makes
    "contradictions": 0.15,    # its statements that another source contradicts
    "interested_party": 0.10,  # a party to the events speaking about itself
    "ocr_noise": 0.05,         # how much of its text is unreadable
}
DOCUMENT_TYPES: dict[str, float] = {
    "official report": 0.85, "report": 0.8, "court record": 0.85, "testimony": 0.75, "census": 0.85,
    "diary": 0.7, "letter": 0.65, "interview": 0.6, "speech": 0.6, "address": 0.6, "newspaper": 0.55,
    "memoir": 0.5, "statement": 0.45, "pamphlet": 0.4, "advertisement": 0.3,
}
UNKNOWN_TYPE = 0.5
DISTANCE_SPAN = 40  # years after which distance counts fully against a source


@dataclass(frozen=True)
class Profile:
    """What the judge knows of one source."""

    source_id: str
    title: str
    author: str | None
    year: int | None
    doc_type: str | None
    text: str


def document_type(doc_type: str | None, types: Mapping[str, float]) -> tuple[float | None, str]:
    if not doc_type:
        return None, "no document type recorded"
    key = doc_type.strip().lower()
    for name, value in sorted(types.items(), key=lambda kv: -len(kv[0])):
        if name in key:
            return value, doc_type
    return UNKNOWN_TYPE, f"{doc_type} (no value set for this type)"


def distance(year: int | None, event_year: int | None) -> tuple[float | None, str]:
    if year is None or event_year is None:
        return None, "the document's or the events' year is unknown"
    gap = max(0, year - event_year)
    return round(max(0.0, 1.0 - gap / DISTANCE_SPAN), 3), f"written {gap} years after the events ({event_year})"


def ocr_noise(text: str) -> tuple[float, str]:
    """The share of tokens that look like OCR debris (no letters, or letters mixed with digits and symbols)."""
    tokens = text.split()
    if not tokens:
        return 1.0, "empty"
    junk = sum(1 for t in tokens
               if not re.fullmatch(r"[\"'(\[]*[A-Za-z][A-Za-z'’.-]*[\"'),.;:!?\]]*|[$]?\d[\d,.]*%?[,.;:]?|[-–—&]", t))
    share = junk / len(tokens)
    return round(max(0.0, 1.0 - 3 * share), 3), f"{share:.0%} of tokens unreadable"


def interested(profile: Profile, mentioned_by_others: bool) -> tuple[float, str]:
    """A party to the events: its author is named in the sources, or it is a statement in its own defence."""
    if profile.doc_type and profile.doc_type.strip().lower() in ("statement", "press release", "petition",
                                                                 "defence", "defense"):
        return 0.0, f"a {profile.doc_type} by a party to the events"
    if mentioned_by_others:
        return 0.0, f"{profile.author} is named in the sources about these events"
    return 1.0, "no sign that the author was a party"


def score(
    profile: Profile, *, event_year: int | None, corroborated: float | None, contradicted: float | None,
    mentioned: bool, weights: Mapping[str, float] | None = None, types: Mapping[str, float] | None = None,
) -> tuple[float, dict[str, dict[str, Any]]]:
    """The credibility and its factors ({value, weight, note}); factors that cannot be read are left out."""
    weights = {**WEIGHTS, **(weights or {})}
    types = {**DOCUMENT_TYPES, **{k.lower(): v for k, v in (types or {}).items()}}
    readings: dict[str, tuple[float | None, str]] = {
        "document_type": document_type(profile.doc_type, types),
        "distance": distance(profile.year, event_year),
        "corroboration": (corroborated, "share of its compared statements another source also makes")
        if corroborated is not None else (None, "none of its statements was compared"),
        "contradictions": (None if contradicted is None else round(1.0 - contradicted, 3),
                           "share of its compared statements another source contradicts"),
        "interested_party": interested(profile, mentioned),
        "ocr_noise": ocr_noise(profile.text),
    }
    factors = {name: {"value": value, "weight": float(weights.get(name, 0.0)), "note": note}
               for name, (value, note) in readings.items() if value is not None}
    total = sum(f["weight"] for f in factors.values())
    value = sum(f["value"] * f["weight"] for f in factors.values()) / total if total > 0 else 0.5
    return round(value, 3), factors
