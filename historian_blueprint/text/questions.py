"""A question (or a search query) as Historian takes it in: the one check every door uses (the pages, the API, the
CLI, the graph's first node, the verifier)."""

from __future__ import annotations

import re

CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # control characters (tab and line breaks kept)
_SPACES = re.compile(r"\s+")


def tidy(raw: object) -> str:
    """The text without control characters, its spaces collapsed."""
    return _SPACES.sub(" ", CONTROL.sub("", str(raw or ""))).strip()


# The longest topic a map takes (the pages cut what they show at it; the map refuses a longer one).
MAX_TOPIC_CHARS = 300


def clean_question(raw: object, limit: int, what: str = "the question") -> str:
    """The question tidied (``tidy``); ``ValueError`` naming what is wrong when it is empty or longer than ``limit``
    characters."""
    question = tidy(raw)
    if not question:
        raise ValueError(f"{what} is empty")
    if len(question) > limit:
        raise ValueError(f"{what} is longer than {limit} characters")
    return question
