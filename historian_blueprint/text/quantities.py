"""Quantities: a figure's value and the precision it is written to ("54 million", "$1,081,000", "about two
thirds"), and whether a claimed figure rounds to a stated one."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import NamedTuple

from historian_blueprint.text.words import NUMBER_WORDS, QUOTES

# ---------------------------------------------------------------- quantities: values, scale words, rounding

_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
# Phrases that say a figure is approximate, right before it ("about 54 million", "more than 2,000").
_HEDGE = re.compile(
    r"(?:about|around|roughly|nearly|almost|approximately|some|over|under|more than|less than|close to|upwards of|"
    r"well over|just over|just under|an estimated|estimated at)\s*\$?$", re.I)
_ORDINAL_WORDS = {"third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10}
_NOT_QUANTITIES = frozenset("one a an first second".split())  # "one of the", "a hundred" is read with its scale
_FRACTIONS = frozenset("half quarter third thirds fourths quarters".split())


class Quantity(NamedTuple):
    value: float
    precision: float   # the unit of the last significant digit as written (54 million: 1e6; 45.5 million: 1e5)
    hedged: bool       # "about", "nearly", ... right before it
    scaled: bool       # written with a scale word (million, thousand, ...): a rounded figure by nature
    year: bool         # four digits 1500-2099 without separators: a date, never rounded


def _word_number(phrase: list[str]) -> float | None:
    """'five hundred', 'twenty-three thousand', 'two hundred and fifty' -> value; None otherwise."""
    total, current, seen = 0.0, 0.0, False
    for i, w in enumerate(phrase):
        if w == "and":
            if not (i and phrase[i - 1] in _SCALES):  # "two and three" is two numbers, not five
                return None
            continue
        if w not in NUMBER_WORDS or w in ("first", "second") or w in _ORDINAL_WORDS:
            return None
        value = NUMBER_WORDS[w]
        seen = True
        if w in _SCALES:
            current = (current or 1.0) * value
            if value >= 1000:
                total, current = total + current, 0.0
        else:
            current += value
    return total + current if seen else None


def quantities(text: str) -> list[Quantity]:
    """Every quantity a text states: "about 54 million" -> 54e6 (precision 1e6, hedged, scaled);
    "$45,531,374.53" -> exact; "five hundred" -> 500; "the fourth" -> 4. Figures next to a fraction word
    ("half a million", "two and a half") are left out rather than misread. (Each text's are kept: the same
    evidence is read by several checks; a fresh list is given.)"""
    return list(_quantities(text))


@lru_cache(maxsize=32768)
def _quantities(text: str) -> tuple[Quantity, ...]:
    out: list[Quantity] = []
    plain = unicodedata.normalize("NFKC", text).translate(QUOTES)
    tokens = list(re.finditer(r"\$?\d[\d,]*(?:\.\d+)?|[A-Za-z]+(?:-[A-Za-z]+)*", plain))
    lower = [t.group().lower() for t in tokens]
    i = 0
    while i < len(tokens):
        raw, j = tokens[i].group().lstrip("$"), i + 1
        value: float | None = None
        precision, year, word = 1.0, False, False
        if raw[:1].isdigit():
            digits = raw.replace(",", "").rstrip(".")
            try:
                value = float(digits)
            except ValueError:
                value = None
            if value is not None and "." in digits:
                precision = 10.0 ** -len(digits.split(".")[1])
            bare = raw.rstrip(",.")  # "June 1929, against ...": the comma ends the phrase, it is no separator
            year = value is not None and len(bare) == 4 and bare.isdigit() and 1500 <= value <= 2099
        elif lower[i] in _ORDINAL_WORDS:
            value, word = float(_ORDINAL_WORDS[lower[i]]), True
        elif lower[i] not in _NOT_QUANTITIES:
            k = i
            while k < len(tokens) and all(p in NUMBER_WORDS or p == "and" for p in lower[k].split("-")) \
                    and not (k == i and lower[k] == "and"):
                k += 1
            while k > i and lower[k - 1] == "and":
                k -= 1
            if k > i:
                value = _word_number([p for t in lower[i:k] for p in t.split("-")])
                word = True
                if value is not None:
                    precision = float(_SCALES.get(lower[k - 1].split("-")[-1], 1))
                    j = k
        if value is None:
            i += 1
            continue
        scaled = False
        while j < len(tokens) and lower[j] in _SCALES:
            value, precision, scaled = value * _SCALES[lower[j]], precision * _SCALES[lower[j]], True
            j += 1
        scaled = scaled or (word and precision >= 100)
        near = lower[max(0, i - 2):j + 3]
        if not any(w in _FRACTIONS for w in near):
            hedged = not year and bool(_HEDGE.search(plain[max(0, tokens[i].start() - 20):tokens[i].start()]))
            out.append(Quantity(value, precision, hedged, scaled, year))
        i = j
    return tuple(out)


def rounds_to(claimed: Quantity, stated: float) -> bool:
    """A claimed figure is the stated one, or - when the claim says it is approximate ("about ...") or writes it
    with a scale word ("54 million") - the stated one rounded at the claim's own precision. Years and plain
    digits must match exactly."""
    if abs(claimed.value - stated) <= 1e-9 * max(1.0, abs(claimed.value)):
        return True
    if claimed.year or not (claimed.hedged or claimed.scaled):
        return False
    step = claimed.precision
    if claimed.hedged and claimed.value == int(claimed.value):  # "about 500": its trailing zeros are rounding
        digits = str(int(abs(claimed.value)))
        step = max(step, 10.0 ** (len(digits) - len(digits.rstrip("0"))) if digits.rstrip("0") else 1.0)
    return stated != 0 and abs(stated - claimed.value) <= step / 2 + 1e-9
