"""Conflicts of structure: the two sides of "X rather than Y" (or of a comparison, "A larger than B") swapped,
and two named parties exchanging their roles around the same verb ("Smith sued Jones" / "Jones sued Smith")."""

from __future__ import annotations

import re

from historian_blueprint.text.words import capitalized_terms, content_words, words
from historian_blueprint.verify.context import ClaimContext
from historian_blueprint.verify.evidence import sentences_of
from historian_blueprint.verify.findings import Check, Finding, failed, passed
from historian_blueprint.verify.rules import lexicon
from historian_blueprint.verify.rules.lexical import OPPOSED
from historian_blueprint.verify.rules.registry import rule

CONNECTIVES = ("rather than", "instead of", "more than", "less than", "than", "not", "preceded", "followed", "before", "after")
_SIDE_WORDS = 5  # words each side of a connective that make up its sides


def _sides(text: str, connective: str) -> list[tuple[frozenset[str], frozenset[str], frozenset[str]]]:
    """(words before, words after, the comparison word) around each use of ``connective`` in ``text``."""
    tokens = words(text)
    parts = connective.split()
    out = []
    for i in range(len(tokens) - len(parts) + 1):
        if tokens[i:i + len(parts)] != parts:
            continue
        before = tokens[max(0, i - _SIDE_WORDS):i]
        after = tokens[i + len(parts): i + len(parts) + _SIDE_WORDS]
        left = frozenset(content_words(" ".join(before)))
        right = frozenset(content_words(" ".join(after)))
        out.append((left - right, right - left, frozenset(before[-1:])))  # what tells the sides apart
    return out


def _reversed_too(mine: frozenset[str], theirs: frozenset[str]) -> bool:
    """The comparison word itself turned to its opposite (larger / smaller): both sides swapped say the same."""
    return any(lexicon.are_antonyms(a, b) or OPPOSED.get(a) == b for a in mine for b in theirs)


@rule("conflict", 66, needs="close")
def rather_than(ctx: ClaimContext) -> Finding | None:
    """"X rather than Y" (instead of, not, than, before ...) where the source says "Y rather than X"."""
    for connective in CONNECTIVES:
        if connective not in ctx.body.lower() or connective not in ctx.evidence.text.lower():
            continue
        for left, right, word in _sides(ctx.body, connective):
            for s_left, s_right, s_word in _sides(ctx.evidence.text, connective):
                swapped = (right & s_left) and (left & s_right) and not (right & s_right)
                if swapped and not (left - s_left and _reversed_too(left | word, s_left | s_word)):
                    check = Check("order", False, f"{connective}: {' '.join(sorted(left))} / {' '.join(sorted(right))}")
                    return failed(check, "contradicted", "fabrication", "high",
                                  f"the claim puts the two sides of '{connective}' the other way round from the source")
        break  # the longest connective both use decides ("rather than" before "than")
    return passed(Check("order", True))


_NAME = re.compile(r"[A-Z][\w'-]*(?:\s+(?:of\s+|de\s+|van\s+)?[A-Z][\w'-]*)*")


def _ordered_names(sentence: str, names: list[str]) -> list[tuple[int, str]]:
    lowered = sentence.lower()
    return sorted((lowered.find(n.lower()), n) for n in names if n.lower() in lowered)


@rule("conflict", 68, needs="close")
def role_swap(ctx: ClaimContext) -> Finding | None:
    """Two parties the claim names around a verb appear the other way round around that verb in one
    sentence of the source ("Jones sued Smith" for "Smith sued Jones"), with no passive "by" turning it back."""
    names = [t for t in dict.fromkeys(capitalized_terms(ctx.body)) if len(t) > 1]
    if len(names) < 2:
        return None
    claim_order = _ordered_names(ctx.body, names)
    if len(claim_order) < 2:
        return None
    (p1, first), (p2, second) = claim_order[0], claim_order[1]
    between = ctx.body[p1 + len(first):p2]
    verbs = set(content_words(between))
    if not verbs:
        return None
    passive = "by" in words(between)
    for s, e, _ in sentences_of(ctx.evidence.text):
        sentence = ctx.evidence.text[s:e]
        order = _ordered_names(sentence, [first, second])
        if len(order) < 2 or order[0][1] != second:
            continue
        gap = sentence[order[0][0] + len(second):order[1][0]]
        if verbs & set(content_words(gap)) and ("by" in words(gap)) == passive:
            check = Check("roles", False, f"{first} / {second}")
            return failed(check, "contradicted", "fabrication", "high",
                          f"the source has {second} and {first} the other way round")
    return passed(Check("roles", True))
