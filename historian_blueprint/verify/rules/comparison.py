"""Comparisons a claim makes between two named things: "both A and B are P" (P must be said of each), and
"A came before B" (the years the sources give must be in that order)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from historian_blueprint.schema import SourceText
from historian_blueprint.text.words import content_words, normalized, words
from historian_blueprint.verify.context import ClaimContext
from historian_blueprint.verify.evidence import SUPPORT_THRESHOLD, naming, sentences_of
from historian_blueprint.verify.findings import Check, Finding, failed, passed
from historian_blueprint.verify.rules.registry import rule


@rule("conflict", 80, needs="close")
def each_named(ctx: ClaimContext) -> Finding | None:
    """"both A and B are P": P is said of each of them, not of one beside the other."""
    checks: list[Check] = []
    for name, predicate in conjuncts(ctx.body, ctx.documents):
        checks.append(Check("each_named", attribute_said(name, predicate, ctx.primary), f"{name}: {predicate}"))
        if checks[-1].ok:
            continue
        other = attribute_replaced(name, predicate, ctx.primary)
        if other:
            return failed(tuple(checks), "contradicted", "fabrication", "high",
                          f"the source calls {name} {other}, not {predicate}")
        return failed(tuple(checks), "unconfirmed", "unverified_detail", "high",
                      f"the source does not say of {name}: {predicate}")
    return passed(*checks) if checks else None


@rule("conflict", 85, needs="close")
def chronology(ctx: ClaimContext) -> Finding | None:
    """"A ... before B": the years the sources give each of them are in that order."""
    order = claimed_order(ctx.body, ctx.primary)
    if order is None:
        return None
    (first, first_year), (second, second_year) = order
    ok = first_year is not None and second_year is not None and first_year < second_year
    check = Check("chronology", ok, f"{first} {first_year}, {second} {second_year}")
    if first_year is not None and second_year is not None and first_year > second_year:
        return failed(check, "contradicted", "fabrication", "high",
                      f"the sources date {first} to {first_year}, after {second} ({second_year})")
    if not ok:  # an order the sources' dates cannot settle is not verified
        return failed(check, "unconfirmed", "inference", "medium",
                      f"the sources do not date {first} and {second} apart, so the order is not checked")
    return passed(check)


MAX_COMPARATIVE_CLAIM = 300  # longer clauses are not read as both-A-and-B or A-before-B (bounded regex work)
_BOTH = (  # (pattern, whether the second name is delimited by the pattern)
    (re.compile(r"\bboth\s+(?P<a>[^,;]+?)\s+and\s+(?P<b>[^,;]+?)\s+(?:are|were|have|had|did)\s+(?P<p>[^;]+)$",
                re.I), True),
    (re.compile(r"^(?:\W*\w+\W+)?(?P<a>[A-Z][^,;]*?)\s+and\s+(?P<b>[^,;]+?)\s+(?:are|were|have|had|did)"
                r"\s+both\s+(?P<p>[^;]+)$"), True),
    (re.compile(r"^(?P<a>[A-Z][^,;]*?)\s+and\s+(?P<b>[^,;]+?)\s+both\s+(?P<p>[^;]+)$"), True),
    (re.compile(r"^both\s+(?P<a>[^,;]+?)\s+and\s+(?P<b>[^;]+)$", re.I), False),
)
_CONNECTORS = frozenset("of the and de van von da del la le du st".split())
MAX_NAME_WORDS = 6


def name_in_sources(phrase: str, documents: Sequence[SourceText]) -> str | None:
    """The longest leading run of capitalized words (and connectors: "Kings of Leon") of ``phrase`` that some
    source spells out as a name, whole words; None when the phrase does not start with one."""
    tokens = []
    for token in phrase.split()[:MAX_NAME_WORDS]:
        if not (token[:1].isupper() or token[:1].isdigit() or token.lower() in _CONNECTORS):
            break
        tokens.append(token)
    for n in range(len(tokens), 0, -1):
        candidate = " ".join(tokens[:n]).strip(" ,")
        wanted = words(candidate)
        if not wanted or not candidate[:1].isupper() or wanted[-1] in _CONNECTORS:
            continue
        pattern = re.compile(r"\b" + r"\W+".join(re.escape(w) for w in wanted) + r"\b")
        if any(pattern.search(normalized(d.text)) for d in documents):
            return candidate
    return None


_CLAUSE_BREAK = re.compile(r";\s*|,\s+")


def clauses(body: str) -> list[str]:
    """The claim, then its parts between semicolons and commas, each short enough to read as a comparison."""
    text = body.strip().rstrip(".?! ")
    parts = [text] + [p.strip() for p in _CLAUSE_BREAK.split(text) if p.strip()]
    return [p for p in dict.fromkeys(parts) if len(p) <= MAX_COMPARATIVE_CLAIM]


def conjuncts(body: str, documents: Sequence[SourceText]) -> list[tuple[str, str]]:
    """(name, predicate) for each of two names a claim joins with "both" ("both A and B are P" -> A P, B P).

    Names run over capitalized words and connectors as far as the sources spell them ("Kings of Leon
    American rock bands" -> "Kings of Leon"); nothing is returned unless both names are found in the sources
    and something is said of them.
    """
    for text, (pattern, delimited) in ((t, pd) for t in clauses(body) for pd in _BOTH):
        match = pattern.search(text)
        if not match:
            continue
        a = name_in_sources(match.group("a"), documents)
        if not a or a != match.group("a").strip(" ,"):
            continue
        b = name_in_sources(match.group("b"), documents)
        if delimited:
            if not b or b != match.group("b").strip(" ,"):
                continue
            predicate = match.group("p")
        else:
            if not b:
                continue
            predicate = match.group("b")[len(b):].strip(" ,")
        if predicate and content_words(predicate):
            return [(a, predicate), (b, predicate)]
    return []


_ORDER = re.compile(
    r"^(?P<a>[^,;]+?)\s+(?:was|were|is|are|came|happened|took place|appeared)?\s*(?:\w+\s+)?"
    r"(?P<rel>before|earlier than|prior to|after|later than)\s+(?P<b>[^,;]+)$",
)
_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")


def year_of(name: str, documents: Sequence[SourceText]) -> int | None:
    """The year of the first sentence naming ``name``, when that sentence gives exactly one year; else None
    (a sentence with a birth year and an election year does not say which one a claim's order is about)."""
    for doc, i in naming(name, documents):
        start, end, _ = sentences_of(doc.text)[i]
        years = set(_YEAR.findall(doc.text[start:end]))
        return int(years.pop()) if len(years) == 1 else None
    return None


def claimed_order(body: str,
                  documents: Sequence[SourceText]) -> tuple[tuple[str, int | None], tuple[str, int | None]] | None:
    """((earlier, year), (later, year)) as a clause of the claim orders two named things, with the year the
    sources give each (None when the first sentence naming it gives no single year).

    None when no clause orders two names the sources spell out.
    """
    for text in clauses(body):
        match = _ORDER.match(text)
        if not match:
            continue
        a = name_in_sources(match.group("a"), documents)
        b = name_in_sources(match.group("b"), documents)
        if not a or not b or set(words(a)) == set(words(b)):
            continue
        year_a, year_b = year_of(a, documents), year_of(b, documents)
        if match.group("rel") in ("after", "later than"):
            return (b, year_b), (a, year_a)
        return (a, year_a), (b, year_b)
    return None


_PRONOUN_START = re.compile(r"^\W*(?:he|she|it|they|his|her|its|their|the (?:band|group|company|city|film|town))\b",
                            re.I)


def attribute_said(name: str, predicate: str, documents: Sequence[SourceText]) -> bool:
    """True when a sentence naming ``name`` (or the next one, when it goes on with a pronoun) carries ``predicate``."""
    predicate_words = set(content_words(predicate))
    if not predicate_words:
        return True
    for doc, i in naming(name, documents):
        sentences = sentences_of(doc.text)
        seen = set(sentences[i][2])
        if i + 1 < len(sentences) and _PRONOUN_START.match(doc.text[sentences[i + 1][0]: sentences[i + 1][1]]):
            seen |= sentences[i + 1][2]
        if len(predicate_words & seen) / len(predicate_words) >= SUPPORT_THRESHOLD:
            return True
    return False


_CAPITALIZED_WORD = re.compile(r"\b[A-Z][a-z]+(?:-[A-Z][a-z]+)?\b")


def attribute_replaced(name: str, predicate: str, documents: Sequence[SourceText]) -> str | None:
    """The word a source gives ``name`` where ``predicate`` has a capitalized one ("a Canadian indie rock band"
    against "American rock bands" -> "Canadian"); None when no sentence naming ``name`` says otherwise."""
    heads = {w for w in content_words(_CAPITALIZED_WORD.sub(" ", predicate))}
    said = re.findall(r"[\w'-]+", predicate)
    claimed = [  # a capitalized word that modifies a noun of the predicate ("American rock bands")
        t for k, t in enumerate(said)
        if _CAPITALIZED_WORD.fullmatch(t) and any(w in heads for w in content_words(" ".join(said[k + 1:k + 4])))
    ]
    if not claimed or not heads:
        return None
    name_tokens = {w.lower() for w in re.findall(r"[\w'-]+", name)}
    for doc, i in naming(name, documents):
        start, end, _ = sentences_of(doc.text)[i]
        tokens = re.findall(r"[\w'-]+", doc.text[start:end])
        for k, token in enumerate(tokens[1:], start=1):  # not the sentence's first word
            if not _CAPITALIZED_WORD.fullmatch(token) or token.lower() in name_tokens:
                continue
            if any(c.lower() in token.lower() or token.lower() in c.lower() for c in claimed):
                continue
            if any(w in heads for w in content_words(" ".join(tokens[k + 1:k + 4]))):
                return token
    return None
