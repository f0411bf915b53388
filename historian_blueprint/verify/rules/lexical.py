"""Conflicts of single words, from a licensed lexicon (WordNet 3.0, ``verify/lexicon``): a negating affix
added or dropped (approved / disapproved), a word replaced by its antonym or a reversed direction word (rose /
fell, called for / warned against), and a near-spelling that is another English word (infant / infantry).

Each compares two words in the same place: the two sides of a one- or two-word edit of the claim's alignment
with its evidence, or, where the evidence holds most of the claim's words (``SUPPORT_THRESHOLD``), any word
of the claim the evidence lacks with any word of the evidence the claim lacks. Comparing a reworded claim
with a passage about something else would find conflicts that are not there, so nothing is read below
half the claim's words.
"""

from __future__ import annotations

from historian_blueprint.text.words import edit_distance, words
from historian_blueprint.verify.context import ClaimContext
from historian_blueprint.verify.evidence import SUPPORT_THRESHOLD
from historian_blueprint.verify.findings import Check, Finding, failed, passed
from historian_blueprint.verify.rules import lexicon
from historian_blueprint.verify.rules.polarity import FAVOURABLE, UNFAVOURABLE, NEGATIONS, is_negation
from historian_blueprint.verify.rules.registry import rule

NEGATING_PREFIXES = ("dis", "un", "in", "im", "il", "ir", "non", "mis")
# Direction words opposed in an edit of one or two words ("called for war" / "warned against war"): words no
# lexicon of content words holds, listed whole.
OPPOSED_DIRECTIONS = {
    "for": "against", "before": "after", "above": "below", "up": "down", "over": "under", "with": "without",
    "into": "out", "toward": "away", "towards": "away", "more": "less", "most": "least", "first": "last",
    "higher": "lower", "larger": "smaller", "greater": "lesser", "increase": "decrease", "rise": "fall",
}
OPPOSED = {**OPPOSED_DIRECTIONS, **{v: k for k, v in OPPOSED_DIRECTIONS.items()}}


MIN_SHARED = 0.5  # share of the claim's words the evidence must hold before two words are compared at all


def _tokens(text: str) -> list[str]:
    return [w for w in words(text) if w.isalpha()]


def _pairs(ctx: ClaimContext, strict_relation: bool = False) -> list[tuple[str, str, bool]]:
    """(claim word, evidence word, aligned) pairs to compare: the two sides of each small edit first, then,
    with close evidence, every word one side has and the other lacks. ``strict_relation``: the relation
    looked for is rare between unrelated words (an affix, a near-spelling), so half the claim's words suffice."""
    if ctx.evidence is None or ctx.evidence.coverage < MIN_SHARED:
        return []
    said, source = set(_tokens(ctx.body)), set(_tokens(ctx.evidence.text))
    out = [(m, t, True) for mine, theirs in ctx.alignment.gaps if mine and theirs for m in mine for t in theirs
           if m.isalpha() and t.isalpha()]
    if ctx.evidence.coverage >= (MIN_SHARED if strict_relation else SUPPORT_THRESHOLD):
        out += [(m, t, False) for m in sorted(said - source) for t in sorted(source - said)]
    return [(m, t, a) for m, t, a in out if m not in source and t not in said]


def _negated_near(tokens: list[str], i: int) -> bool:
    """A negation within two words before position ``i`` ("did not approve" says what "disapproved" says)."""
    return any(is_negation(t) for t in tokens[max(0, i - 3):i])


def affix_pair(a: str, b: str) -> bool:
    """``b`` is ``a`` with a negating affix (dis-, un-, in-, non-, mis-; -less for -ful) and WordNet lists the
    two as antonyms (discuss is not dis- + cuss, industry not in- + dust: only a true negation is opposed)."""
    affixed = any(b == prefix + a for prefix in NEGATING_PREFIXES) or (a.endswith("ful") and b == a[:-3] + "less")
    return affixed and len(a) >= 3 and lexicon.are_antonyms(a, b)


@rule("conflict", 62, needs="evidence")
def affix_negation(ctx: ClaimContext) -> Finding | None:
    """A word the claim shares with its source but for a negating affix (approved / disapproved), where no
    "not" nearby rewords the negation."""
    said, source = _tokens(ctx.body), _tokens(ctx.evidence.text)
    for w, other, _ in _pairs(ctx, strict_relation=True):
        if (affix_pair(w, other) and not _negated_near(said, said.index(w))) or \
                (affix_pair(other, w) and not _negated_near(source, source.index(other))):
            check = Check("affix_negation", False, f"{w} / {other}")
            return failed(check, "contradicted", "fabrication", "critical",
                          f"the claim says '{w}' where the source says '{other}': a negating affix reverses it")
    return passed(Check("affix_negation", True))


def opposed(a: str, b: str, aligned: bool) -> bool:
    """Antonyms by WordNet (indirect ones, through similar adjectives, only within one edit), or opposed
    judgements (favourable / unfavourable words), or opposed direction words within one edit."""
    if lexicon.are_antonyms(a, b):
        return True
    if not aligned:
        return False
    if lexicon.are_antonyms(a, b, indirect=True) or OPPOSED.get(a) == b:
        return True
    return (a in FAVOURABLE and b in UNFAVOURABLE) or (a in UNFAVOURABLE and b in FAVOURABLE)


@rule("conflict", 64, needs="evidence")
def antonym(ctx: ClaimContext) -> Finding | None:
    """A word of the source replaced by its opposite (rose / fell, victory / defeat, a minor / the main cause,
    called for / warned against), where the claim does not also say the source's word or negate its own."""
    said = _tokens(ctx.body)
    for mine, theirs, aligned in _pairs(ctx):
        if mine in NEGATIONS or theirs in NEGATIONS:
            continue
        if opposed(mine, theirs, aligned) and not _negated_near(said, said.index(mine)):
            check = Check("antonym", False, f"{mine} / {theirs}")
            return failed(check, "contradicted", "fabrication", "high",
                          f"the claim says '{mine}' where the source says '{theirs}', its opposite")
    return passed(Check("antonym", True))


def near_spelling(a: str, b: str) -> bool:
    """Two different English words one or two letters apart (infant / infantry, police / policy), neither an
    inflection or a related form of the other."""
    if a == b or min(len(a), len(b)) < 4 or abs(len(a) - len(b)) > 2:
        return False
    english = lexicon.english()
    fa, fb = lexicon.forms(a), lexicon.forms(b)
    if fa & fb or not (fa & english) or not (fb & english):  # one word inflected (changed / change), or not a word
        return False
    if any(y in lexicon.derivations(x) or y in lexicon.synonyms(x) for x in fa for y in fb):
        return False
    if lexicon.spelled_alike(a, b) or _derived(a, b) or _derived(b, a):
        return False
    return _distance_at_most_two(a, b) and a[:3] == b[:3]


# Endings that make another part of speech of the same word (nation / national, govern / governor); not -ry or
# -y, which make other words (infant / infantry, police / policy).
SAME_WORD_ENDINGS = ("al", "ial", "ic", "ical", "ly", "ness", "ment", "ion", "ation", "er", "or", "ist", "ism",
                     "ive", "ous", "an", "ian", "ese", "ish", "ed", "ing", "s", "es", "d")


def _derived(short: str, long_: str) -> bool:
    base = short[:-1] if short.endswith("e") else short
    return any(long_ == short + end or long_ == base + end for end in SAME_WORD_ENDINGS)


def _distance_at_most_two(a: str, b: str) -> bool:
    return abs(len(a) - len(b)) <= 2 and edit_distance(a, b) <= 2


@rule("conflict", 52, needs="evidence")
def near_spelled(ctx: ClaimContext) -> Finding | None:
    """A claim word the source lacks that is a near-spelling of a source word and another English word."""
    for w, other, _ in _pairs(ctx, strict_relation=True):
        if near_spelling(w, other):
            check = Check("near_spelling", False, f"{w} / {other}")
            return failed(check, "contradicted", "fabrication", "high",
                          f"the claim says '{w}' where the source says '{other}', another word")
    return passed(Check("near_spelling", True))
