"""Eye dialect: the spellings in which the WPA narratives were transcribed ("us was free", "Marster",
"chillun"), by the standard words they stand for (``text/data/dialect.tsv``).

A question in standard English is searched in the narratives' spellings too (``dialect_query``), and a sentence
written in eye dialect (two spellings that are no standard word) is read with its standard words as well
(``standard_words``), so that "How did she learn that the slaves were free?" finds and ranks "Marster tole us
us wuz free".
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from historian_blueprint.text.words import content_words

LEXICON = Path(__file__).with_name("data") / "dialect.tsv"
_TOKEN = re.compile(r"[a-z]+")
MARKERS_NEEDED = 2  # dialect spellings that are no standard word, for a sentence to be read as eye dialect


@lru_cache(maxsize=1)
def lexicon() -> tuple[dict[str, tuple[str, ...]], dict[str, str], frozenset[str]]:
    """(standard word -> its dialect spellings, dialect spelling -> standard word, the marker spellings)."""
    forms: dict[str, tuple[str, ...]] = {}
    standard: dict[str, str] = {}
    markers: frozenset[str] = frozenset()
    for line in LEXICON.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        head, _, spellings = line.partition("\t")
        if head == "!":
            markers = frozenset(spellings.split())
            continue
        forms[head] = forms.get(head, ()) + tuple(spellings.split())
        for spelling in spellings.split():
            standard.setdefault(spelling, head)
    return forms, standard, markers


def dialect_query(question: str) -> str | None:
    """The question with the dialect spellings of its words added ("... the master told them ..." + "marse marster
    massa ... tole tol"), or None when no word of it has one."""
    forms, _, _ = lexicon()
    words = re.findall(r"[a-z]+", question.lower())
    # not "was", "with"
    extra = [spelling for w in dict.fromkeys(words) if content_words(w) for spelling in forms.get(w, ())]
    return f"{question} {' '.join(extra)}" if extra else None


def in_dialect(text: str) -> bool:
    """The text is written in eye dialect: it has two spellings that are no standard word."""
    _, _, markers = lexicon()
    return sum(t in markers for t in _TOKEN.findall(text.lower())) >= MARKERS_NEEDED


def standard_words(sentence: str) -> set[str]:
    """The content words of the standard words a sentence in eye dialect spells its own way (empty for a
    sentence that is not in eye dialect)."""
    _, standard, _ = lexicon()
    if not in_dialect(sentence):
        return set()
    tokens = _TOKEN.findall(sentence.lower())
    return set(content_words(" ".join(standard[t] for t in tokens if t in standard)))
