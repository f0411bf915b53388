"""A list question's items: how many it asks for ("the four freedoms", "name three causes"), a list that names
no count ("Which countries ..."), and which passages hold an item of it (an ordinal or a number opens it, an
enumeration of names, the numbered parts of one sentence, the parts a colon introduces).

An answer counts only what it can show: a passage that shares the topic, or even names the counted noun, is not
therefore an item; another document's numbered points are not the items of the one the question names.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from historian_blueprint.schema import Fact
from historian_blueprint.text.words import NUMBER_WORDS, content_words
from historian_blueprint.verify.asked import GENERIC_NAMES
from historian_blueprint.verify.question import constraints

_LIST_COUNT = re.compile(r"\b(two|three|four|five|six|seven|eight|[2-8])\b(?!\s*(?:years?|months?|days?|weeks?|times?|"
                         r"dollars?|cents?|per\s*cent|percent|%|hundred|thousand|million|billion))", re.I)
# The count is what the question asks for: "what (were the) four ...", "which two ...", "name three ...", "list the
# five ...", "were the five ...", or a question that opens on it ("The four freedoms, 1941"); not "about the three
# branches of government".
_LIST_CUE = re.compile(r"(?:\b(?:what|which|name|list|give|identify|enumerate|summarize|summarise|describe|"
                       r"outline)\s+(?:were\s+|are\s+)?(?:the\s+)?|"
                       r"\b(?:were|are)\s+the\s+|^\s*(?:the\s+)?)$", re.I)


# A list that names no count: "Which countries did Harrison's message name ...", "What steps did Hoover recommend ...",
# "What kinds of wild game did he trap ...", "List the measures ...": a plural asked for, then its verb's auxiliary.
# "steps", "countries"; not "surplus", "class", "news", nor a name ("What Adams did"): a lowercase plural noun. A
# preposition may come first ("To which officials did ...", "In which states were ...").
_PLURAL = r"(?-i:(?!(?:is|was|has|does|this|his|its|thus|as|news|gas)\b)[a-z-]+[^suiw\W]s)"
_FILLER = r"(?-i:(?!(?:his|her|their|its|my|our|your|the|a|an)\b)[a-z-]+)\s+"  # "what (other) steps"
_OPEN_LIST = re.compile(
    r"^\W*(?:(?:(?:to|for|from|with|in|on|at|by|against|among|into)\s+)?(?:what|which)\s+"  # "To which officials ..."
    r"(?:of\s+(?:his|her|their|the)\s+)?"
    r"(?:(?:kinds?|sorts?|types?)\s+of\s+[\w-]+(?:\s+[\w-]+)?|"
    rf"(?:{_FILLER}){{0,3}}{_PLURAL})\s+(?:did|do|does|were|are|had|have|has|could|would|will|should)\b|"
    rf"(?:list|name|enumerate|identify)\s+(?:the|all|each|every)\s+(?:[\w-]+\s+){{0,2}}{_PLURAL}\b)", re.I)


def open_list(question: str) -> bool:
    """The question asks for several items without saying how many (see _OPEN_LIST): the page cannot say how
    many of them it found, and the checks confirm each passage quoted, never that the list is whole. "By what means",
    "on what grounds", "on what terms" ask for one thing."""
    return bool(_OPEN_LIST.search(question)) and not _ONE_THING.search(question)


# a plural that asks for one thing after its preposition: "By what means did ...", "On what grounds did ..."
_ONE_THING = re.compile(r"^\W*(?:by|on|upon|under|in)\s+(?:what|which)\s+(?:means|grounds|terms|basis|conditions)\b",
                        re.I)


def asked_count(question: str) -> int | None:
    """How many items a list question asks for: "the four freedoms", "name three reasons" (2 to 8); not a
    figure of the topic ("two years", "five million")."""
    for m in _LIST_COUNT.finditer(question):
        if not _LIST_CUE.search(question[:m.start()]):
            continue
        value = m.group(1).lower()
        number = int(value) if value.isdigit() else NUMBER_WORDS.get(value)
        if number and 2 <= number <= 8:
            return number
    return None


_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+(?:of\s+)?[A-Z][a-z]+)*")
_ENUMERATION = re.compile(rf"{_NAME.pattern}(?:\s*,\s*{_NAME.pattern})*,?\s+(?:and|or)\s+{_NAME.pattern}")


# A sentence that opens an item of an enumeration: "The second is ...", "Secondly, ...", "In the first place, ...",
# "First. That the States ...", "(2) ...", "2. ...", "II. ...".
_ORD = r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|last|next|another)"
# "ART.-All slaves", "Article 2."
_ARTICLE = r"(?:art(?:icle)?|sec(?:tion)?)\.?\s*(?:[-\u2013\u2014]+|(?:[1-8]|[ivx]{1,4})\b\.?)"
ORDINAL_OPENING = re.compile(  # "Next morning we went ..." and "First, I ..." are no items
    rf"^\W*(?:(?:the\s+)?{_ORD}\s+(?:is|was|are|were|of\s+these)\b|in\s+the\s+{_ORD}\s+place\b|{_ARTICLE}|"
    r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth)(?:ly\b|[.:]\s)|lastly\b|\(?(?:[1-8]|[ivx]{1,4})[.)]\s)",
    re.I)
# A list a sentence introduces: "the following:", "these:", "namely:", "as follows:", "four questions:".
_INTRODUCED = re.compile(r"\b(?:following|these|namely|viz|as\s+follows|two|three|four|five|six|seven|"
                         r"eight)\b[^:;.]{0,40}?:", re.I)
# A list's first item after the colon that introduces it: "... adopt: (1) A realistic tax law", "viz: Art. 1. Every".
# not "said: A. Lincoln"
_FIRST_ITEM = re.compile(r":\s*(?:\(1\)|1[.)]|\((?:a|i)\)|(?i:art(?:icle)?)\.?\s*(?:1|I)\b\.?)\s+\S")
# Numbered items inside one sentence: "(1) the repeal ...; (2) a tariff ...; (3) ..."
_NUMBERED = re.compile(r"(?<![^\s;:,])\((?:[1-8]|[a-h]|[ivx]{1,4})\)\s+([^;()]+)", re.I)
_BODIES = frozenset(content_words(" ".join(GENERIC_NAMES) + " representatives house senate congress fellow citizens"))
_ORDINAL_WORDS = frozenset("first second third fourth fifth sixth seventh eighth".split())


def list_items(question: str, text: str, asked: int) -> list[str]:
    """The items of a list question one finding holds (their keys):
    - an enumeration of names the question does not give ("Hayti and Liberia"): each name;
    - numbered parts of one sentence ("(1) ...; (2) ..."; lettered parts of a sentence that is itself an item
      are its parts: "(3) A cost of food law ... (a) ...; and (b) ..."), or the parts of a list it introduces ("the
      following: ...; ...; and ...") set apart by semicolons: each part (a salutation's colon introduces none);
    - a sentence that opens on an ordinal or a number ("The second is freedom of every person to worship ...",
      "Secondly, ...", "First. That ...", "(2) ..."), unless it gives the count itself (the list's heading: "four
      essential human freedoms"): one;
    - anything else: none. A passage that shares the topic, or even names the counted noun, is not therefore
      an item: counting it would tell the historian an item was found that was not."""
    return _items(text, asked, frozenset(content_words(question)))


def _items(text: str, asked: int, known: frozenset[str]) -> list[str]:
    """list_items, with the question's content words (``known``) read once for all its findings."""
    heading = is_heading(text, asked)
    names = []
    for m in _ENUMERATION.finditer(text):
        for name in _NAME.findall(m.group()):
            key = " ".join(content_words(name))
            # "the Senate and House of Representatives": offices, not items
            generic = set(content_words(name)) <= _BODIES
            if key and not generic and not set(content_words(name)) <= known and key not in names:
                names.append(key)
    if len(names) >= 2:
        return names
    opens = ORDINAL_OPENING.match(text)  # "(3) A cost of food law ... (a) ...; and (b) ...": one item and its parts
    numbered = [" ".join(content_words(m.group(1))) for m in _NUMBERED.finditer(text)
                if not (opens and re.match(r"\([a-h]\)", m.group(), re.I))]
    numbered = [k for k in dict.fromkeys(numbered) if k]
    if len(numbered) >= 2:  # "(1) ...; (2) ...": each numbered part
        return numbered
    introduced = _INTRODUCED.search(text)
    after = text[introduced.end():] if introduced else ""
    parts = [" ".join(content_words(p)) for p in re.split(r";\s*(?:and\s+)?", after) if len(content_words(p)) >= 2]
    if len(parts) >= 2:  # "... the following: the repeal of ...; a revision of ...; and ...": each part
        return list(dict.fromkeys(parts))
    if opens and not heading:
        return [" ".join(content_words(text))]
    first = _FIRST_ITEM.search(text)
    if first:  # "... I recommend that the Congress adopt: (1) A realistic tax law ...": the first item, the rest follow
        key = " ".join(content_words(text[first.end() - 1:]))
        return [key] if key else []
    return []


def introduces(text: str) -> bool:
    """The sentence introduces a list ("... the questions which I deem of vital importance: ...", "as follows:",
    "... adopt: (1) A realistic tax law ...")."""
    return text.rstrip().endswith(":") or bool(_INTRODUCED.search(text) or _FIRST_ITEM.search(text))


def is_heading(text: str, asked: int) -> bool:
    """The sentence gives the list's count itself ("four essential human freedoms"): the list's heading."""
    count_words = {w for w, n in NUMBER_WORDS.items() if n == asked and w not in _ORDINAL_WORDS} | {str(asked)}
    return bool(count_words & set(re.findall(r"[a-z0-9]+", text.lower())))


def listed(question: str, asked: int, facts: Sequence[Fact], heading_overlap: float,
           known: frozenset[str]) -> tuple[list[Fact], int]:
    """The findings that hold a list's items (list_items; in_scope), taken by score until as many items as asked
    are found (at most 8), after the list's heading when the best finding is one (it holds no item and shares
    ``heading_overlap`` of the question's words); an item two findings hold in other words is still distinct. They
    come back in their documents' order (an enumeration in its own order), with how many items they hold (at most
    ``asked``); none, and 0, when no finding is recognisably an item. ``known``: the question's content words (a
    name the question gives is no item)."""
    chosen: list[Fact] = []
    seen: set[str] = set()  # the items the chosen findings hold (list_items' keys)
    scope = _scope(question)
    for fact in facts:
        items = set()
        if _within(scope, fact.text, fact.year):
            items = set(_items(fact.text, asked, known))
        heading = not chosen and not items and fact.overlap >= heading_overlap and fact is facts[0]
        if items - seen or heading:
            chosen.append(fact)
            seen |= items
        if len(seen) >= asked or len(chosen) == 8:
            break
    if not seen:
        return [], 0
    first = {f.source_id: n for n, f in reversed(list(enumerate(chosen)))}
    return sorted(chosen, key=lambda f: (first[f.source_id], f.start)), min(len(seen), asked)


def list_found(question: str, texts: list[str], asked: int, years: Sequence[int | None] = ()) -> int:
    """How many of a list's items these findings hold (list_items), at most ``asked``; an item two findings
    hold (the same names) is counted once; a finding of another year than the question names holds none
    (``years``: each finding's document's year; in_scope)."""
    seen: set[str] = set()
    scope, known = _scope(question), frozenset(content_words(question))
    for n, text in enumerate(texts):
        if _within(scope, text, years[n] if n < len(years) else None):
            seen.update(_items(text, asked, known))
    return min(len(seen), asked)


def in_scope(question: str, text: str, year: int | None) -> bool:
    """A passage can hold an item of a list whose question names a year ("his 1862 annual message") only if its
    document is of that year or it names the year itself: another message's numbered points are not its items; a
    span ("between 1889 and 1907") keeps to its years; several years named keep to none. A passage whose document
    has no year is not ruled out."""
    return _within(_scope(question), text, year)


def _within(scope: tuple[tuple[int, int] | None, frozenset[str]], text: str, year: int | None) -> bool:
    """in_scope, with the question's span or years (``_scope``) read once for all its findings."""
    span, years = scope
    if span:  # "between 1889 and 1907", "from 1933 to 1936": any year of the span
        low, high = span
        return year is None or low <= year <= high or any(low <= int(y) <= high for y in re.findall(r"\b\d{4}\b", text))
    if len(years) != 1:  # no year named, or several: no one document's year to keep to
        return True
    return year is None or str(year) in years or any(y in text for y in years)


_SPAN = re.compile(r"\b(?:between|from)\s+(\d{4})\s+(?:and|to|until|through)\s+(\d{4})\b", re.I)


@lru_cache(maxsize=256)
def _scope(question: str) -> tuple[tuple[int, int] | None, frozenset[str]]:
    """A question's span of years, or the years it names (read once per question, not once per passage)."""
    span = _SPAN.search(question)
    if span:
        low, high = sorted((int(span.group(1)), int(span.group(2))))
        return (low, high), frozenset()
    return None, frozenset(c.text for c in constraints(question) if c.kind == "date" and re.fullmatch(r"\d{4}", c.text))
