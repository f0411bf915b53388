"""What shape of answer a question asks for: a comparison of two or more sides, a list of a number of items,
or a single answer.

A comparison names its sides as coordinated names or years ("Theodore Roosevelt vs Wilson on the trusts",
"How did Lincoln's 1861 and 1864 messages differ on ...") and says it compares (compare, contrast, differ,
versus, between, both, or "did A and B" as the subjects of one question). Each side is then searched and
answered on its own, and the page shows a finding per side or "not found for this side".

A list asks for a number of items ("the four freedoms", "name three causes"): the answer says how many it
found of how many were asked, and an answer with fewer is never called verified.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from historian_blueprint.text.normalize import QUOTES
from historian_blueprint.text.words import NUMBER_WORDS, content_words
from historian_blueprint.verify.asked import GENERIC_NAMES
from historian_blueprint.verify.question import Constraint, constraints

_COMPARES = re.compile(r"\b(compar\w*|contrast\w*|differ\w*|versus|vs\.?|between|both|each|similar\w*|agree\w*|unlike|alike)\b|"
                       r"\b\d{4}\s+and\s+\d{4}\s+(?:annual\s+)?(?:messages|addresses|speeches)\b", re.I)  # "his 1925 and 1927 messages"
_DOC_WORDS = r"(?:messages?|address(?:es)?|speech(?:es)?|accounts?|interviews?|narratives?|views?|stance|positions?)"
# What may stand between two coordinated sides: "A and B", "A vs. B", "A, B and C", "A and in B", "A with that of B".
_JOIN = re.compile(rf"^\s*\)?\s*(?:'s)?\s*(?:{_DOC_WORDS}\s*)?(?:,\s*)?"
                   r"(?:(?:and|or|vs\.?|versus|(?:compared\s+|differ(?:ed)?\s+|as\s+against\s+)?(?:with|to|from)|against)\s+)?"
                   r"(?:(?:in|of|(?:that|those)\s+(?:of|in)|the|his|her|their|presidents?|mr\.?)\s+)?$", re.I)
# What joins a name to its year in one side: "Hoover in 1931", "Cleveland's 1887", "Harrison, 1889", "Wilson of 1914".
_DATED = re.compile(r"\s*(?:'s|,|\s+in|\s+of)?\s*\(?")
_AGAINST = r"(?:compared\s+|differ(?:ed|s)?\s+|as\s+against\s+)?(?:with|to|from)|against"  # "A compared with B"
MAX_SIDES = 4  # a comparison of more sides is read as a single question
_RANGE = re.compile(r"\b(?:between|from)\s+$", re.I)  # "between 1861 and 1865", "from 1861 to 1865": a span of years
_SUBJECTS = re.compile(r"\b(?:did|do|does|were|was|had)\s*$", re.I)
_LIST_COUNT = re.compile(r"\b(two|three|four|five|six|seven|eight|[2-8])\b(?!\s*(?:years?|months?|days?|weeks?|times?|"
                         r"dollars?|cents?|per\s*cent|percent|%|hundred|thousand|million|billion))", re.I)
# The count is what the question asks for: "what (were the) four ...", "which two ...", "name three ...", "list the
# five ...", "were the five ...", or a question that opens on it ("The four freedoms, 1941"); not "about the three
# branches of government".
_LIST_CUE = re.compile(r"(?:\b(?:what|which|name|list|give|identify|enumerate|summarize|summarise|describe|outline)\s+(?:were\s+|are\s+)?(?:the\s+)?|"
                       r"\b(?:were|are)\s+the\s+|^\s*(?:the\s+)?)$", re.I)


@dataclass(frozen=True)
class Side:
    """One side of a comparison: as the question writes it, and what its own search asks."""

    label: str
    kind: str                 # "name" or "date"
    words: frozenset[str]     # its content words (a date: the year)
    query: str                # the question with the other sides taken out
    byline: bool = False      # a name that is the author or narrator of documents here: its passages are theirs
    year: int | None = None   # a name's year ("Hoover in 1931"): its passages are of that year


@dataclass(frozen=True)
class Shape:
    kind: str = "single"      # single | comparison | list
    sides: tuple[Side, ...] = field(default=())
    asked: int | None = None  # a list's requested count

    @property
    def comparison(self) -> bool:
        return self.kind == "comparison"


def shape_of(question: str) -> Shape:
    """The shape a question asks for (see the module's docstring)."""
    q = " ".join(question.translate(QUOTES).split())  # one space between words: the patterns below assume it
    sides = _sides(q)
    if sides:
        return Shape("comparison", tuple(sides))
    asked = asked_count(q)
    return Shape("list", asked=asked) if asked else Shape()


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


def _sides(question: str) -> list[Side]:
    """The coordinated names or years of a question that compares (at least two), in the question's order; a
    name with its year is one side ("Hoover in 1931 vs. FDR in 1935", "Cleveland's 1887 message and Harrison's
    1889 message")."""
    if not _COMPARES.search(question) and not _subjects_pair(question):
        return []
    found = _placed(question, [c for c in _named(question) if c.kind in ("name", "date")])
    raw = []
    for at, c in found:
        if at >= 0:
            text = c.text[:-1] if re.search(r"[a-z]{2}\.$", c.text) else c.text  # "Hayes." ends the sentence, not the name
            raw.append((at, at + len(text), c))
    atoms: list[tuple[int, int, Constraint, int | None]] = []  # (start, end, constraint, a name's year)
    for k, (at, end, c) in enumerate(raw):
        prev = atoms[-1] if atoms else None
        more_years = k + 1 < len(raw) and raw[k + 1][2].kind == "date" and _JOIN.match(question[end:raw[k + 1][0]])
        if prev and c.kind == "date" and prev[2].kind == "name" and prev[3] is None and not more_years \
                and _DATED.fullmatch(question[prev[1]:at]):  # "Lincoln's 1861 and 1864 messages": the years are the sides
            close = end + 1 if question[end:end + 1] == ")" and "(" in question[prev[1]:at] else end  # "Wilson (1913)"
            atoms[-1] = (prev[0], close, prev[2], int(c.text))
            continue
        atoms.append((at, end, c, None))
    best: list[tuple[int, int, Constraint, int | None]] = []
    run: list[tuple[int, int, Constraint, int | None]] = []
    for atom in atoms:
        if run:
            prev = run[-1]
            if (prev[2].kind, prev[3] is None) == (atom[2].kind, atom[3] is None) and _JOIN.match(question[prev[1]:atom[0]]):
                run.append(atom)
                continue
        if len(run) > len(best):
            best = run
        run = [atom]
    if len(run) > len(best):
        best = run
    if not 2 <= len(best) <= MAX_SIDES or (best[0][2].kind == "date" and _RANGE.search(question[:best[0][0]])):
        return []  # more sides than a page can set side by side (and 8 findings hold): read as one question
    labels = [(start, _whole(question, start, question[start:end], c)) for start, end, c, _ in best]
    out = []
    for (at, label), (_, _, c, year) in zip(labels, best):
        query = question
        for other_at, other in labels:
            if other_at < at:    # "Hoover and Roosevelt": take out "Hoover and"
                query = re.sub(rf"\b{re.escape(other)}(?:'s)?(?:\s+{_DOC_WORDS})?(?:\s*,)?(?:\s+(?:and|or|vs\.?|versus|{_AGAINST})"
                               rf"(?:\s+(?:that|those)\b)?)?\s*", " ", query, count=1)
            elif other_at > at:  # "Hoover and Roosevelt": take out "and Roosevelt"
                query = re.sub(rf"(?:\s*,)?(?:\s+(?:and|or|vs\.?|versus|{_AGAINST})(?:\s+(?:that|those)\s+(?:of|in))?)?\s*"
                               rf"\b{re.escape(other)}(?:'s)?(?:\s+{_DOC_WORDS})?(?!\w)", " ", query, count=1)
        query = re.sub(r"\s+([?.,:])", r"\1", re.sub(r"\s+", " ", query)).strip()
        out.append(Side(label=label, kind=c.kind, words=frozenset(c.words), query=query, year=year))
    return out


def _whole(question: str, at: int, text: str, c: Constraint) -> str:
    """A side as the question writes it: a first name that opens the question belongs to it ("Theodore
    Roosevelt vs Wilson": constraints() drops a question's first word)."""
    head = question[:at]
    if c.kind == "name" and re.fullmatch(r"[A-Z][a-z]+\s+", head) and head.strip().lower() not in _OPENERS:
        return head + text
    return text


_OPENERS = frozenset("what when where who whom whose which why how did does do was were is are has have had can could "
                     "would will should tell name list describe explain give compare contrast in on according".split())


def _placed(question: str, named: list[Constraint]) -> list[tuple[int, Constraint]]:
    """Each name or date with its place in the question, in the question's order: each found after the one
    before it ("Kansas City and Kansas": the second "Kansas" is the one after "Kansas City"); -1 if not found."""
    out, cursor = [], 0
    for c in sorted(named, key=lambda c: question.find(c.text)):
        at = question.find(c.text, cursor)
        at = at if at >= 0 else question.find(c.text)
        out.append((at, c))
        if at >= 0:
            cursor = at + len(c.text)
    return sorted(out, key=lambda t: t[0])


def _named(question: str) -> list[Constraint]:
    """The question's names and dates (verify.question.constraints), without the titles before a name ("President
    Harding": Harding), with a name that opens the question ("Hoover in 1931 vs. ...": constraints() drops a
    question's first word)."""
    named = []
    for c in constraints(question):
        if c.kind == "name":
            bare = _TITLE.sub("", c.text)
            if bare != c.text and bare:
                c = Constraint(bare, "name", frozenset(content_words(bare)))
        named.append(c)
    first = re.match(r"\s*([A-Z][a-z]+)\b", question)
    if first and first.group(1).lower() not in _OPENERS and not any(question.find(c.text) == first.start(1) for c in named) \
            and content_words(first.group(1)) and not question[first.end(1):].lstrip().startswith(tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ")):
        named.append(Constraint(first.group(1), "name", frozenset(content_words(first.group(1)))))
    return named


_TITLE = re.compile(r"^(?:(?:President|Presidents|Mr\.?|Mrs\.?|General|Senator|Governor|Secretary)\s+)+")


def _subjects_pair(question: str) -> bool:
    """"What did Cleveland and McKinley say about silver?": two names as the subjects of one question; "Cleveland
    or Harrison: who favored ...?": two names to choose between."""
    names = sorted((c for c in _named(question) if c.kind == "name"), key=lambda c: question.find(c.text))
    for a, b in zip(names, names[1:]):
        at = question.find(a.text)
        then = question.find(b.text, at + len(a.text))
        between = question[at + len(a.text):then]
        if at >= 0 and then >= 0 and _SUBJECTS.search(question[:at]) and re.fullmatch(r"\s*(?:'s)?\s*and\s*", between):
            return True
        if at >= 0 and then >= 0 and re.fullmatch(r"\s*or\s*", between) and re.search(r"\b(?:who|which)\b", question, re.I):
            return True  # "Cleveland or Harrison: who favored tariff reduction?"
    return False


def with_bylines(shape: Shape, bylines: Callable[[str], int]) -> Shape:
    """Mark the sides that are some document's author or narrator (``bylines``: how many documents a name is)."""
    if not shape.comparison:
        return shape
    return replace(shape, sides=tuple(replace(s, byline=s.kind == "name" and bylines(name_of(s)) > 0) for s in shape.sides))


def name_of(side: Side) -> str:
    """A side's name without its year ("Grover Cleveland's 1887" -> "Grover Cleveland")."""
    if side.year is None:
        return side.label
    return re.sub(rf"(?:'s|,|\s+in|\s+of)?\s*\(?{side.year}\)?\s*$", "", side.label).strip()


def side_filters(side: Side) -> dict[str, object]:
    """What a side's own search is limited to: its author's or narrator's documents, or its year's."""
    dated = {"year_from": side.year, "year_to": side.year} if side.year else {}
    if side.byline:
        return {"author": name_of(side), **dated}
    if side.kind == "date":
        return {"year_from": int(side.label), "year_to": int(side.label)}
    return dated


def belongs(side: Side, shape: Shape, *, byline: str, text: str, year: int | None) -> bool:
    """Does a passage speak for this side: a byline side by its own documents only ("Wilson": Wilson's
    messages, not Roosevelt's mention of him); a year by the documents of that year, or by a document of no
    other side's year that names it; a place or a name that is nobody's byline by the passage naming it."""
    if side.year is not None and year != side.year:  # "Hoover in 1931": Hoover's passages of 1931
        return False
    if side.byline:
        return set(re.findall(r"[a-z]+", name_of(side).lower())) - {"d", "s", "jr", "sr"} <= set(re.findall(r"[a-z]+", byline.lower()))
    if side.kind == "date":
        years = {s.label for s in shape.sides if s.kind == "date"}
        return str(year) == side.label or (str(year) not in years and side.label in text)
    return side.words <= set(content_words(f"{text} {byline}"))


_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+(?:of\s+)?[A-Z][a-z]+)*")
_ENUMERATION = re.compile(rf"{_NAME.pattern}(?:\s*,\s*{_NAME.pattern})*,?\s+(?:and|or)\s+{_NAME.pattern}")


# A sentence that opens an item of an enumeration: "The second is ...", "Secondly, ...", "In the first place, ...",
# "First. That the States ...", "(2) ...", "2. ...", "II. ...".
_ORD = r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|last|next|another)"
ORDINAL_OPENING = re.compile(  # "Next morning we went ..." and "First, I ..." are no items
    rf"^\W*(?:(?:the\s+)?{_ORD}\s+(?:is|was|are|were|of\s+these)\b|in\s+the\s+{_ORD}\s+place\b|"
    r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth)(?:ly\b|[.:]\s)|lastly\b|\(?(?:[1-8]|[ivx]{1,4})[.)]\s)",
    re.I)
# A list a sentence introduces: "the following:", "these:", "namely:", "as follows:", "four questions:".
_INTRODUCED = re.compile(r"\b(?:following|these|namely|viz|as\s+follows|two|three|four|five|six|seven|eight)\b[^:;.]{0,40}?:", re.I)
# Numbered items inside one sentence: "(1) the repeal ...; (2) a tariff ...; (3) ..."
_NUMBERED = re.compile(r"(?<![^\s;:,])\((?:[1-8]|[a-h]|[ivx]{1,4})\)\s+([^;()]+)", re.I)
_BODIES = frozenset(content_words(" ".join(GENERIC_NAMES) + " representatives house senate congress fellow citizens"))
_ORDINAL_WORDS = frozenset("first second third fourth fifth sixth seventh eighth".split())


def list_items(question: str, text: str, asked: int) -> list[str]:
    """The items of a list question one finding holds (their keys):
    - an enumeration of names the question does not give ("Hayti and Liberia"): each name;
    - numbered parts of one sentence ("(1) ...; (2) ..."), or the parts of a list it introduces ("the
      following: ...; ...; and ...") set apart by semicolons: each part (a salutation's colon introduces none);
    - a sentence that opens on an ordinal or a number ("The second is freedom of every person to worship ...",
      "Secondly, ...", "First. That ...", "(2) ..."), unless it gives the count itself (the list's heading: "four
      essential human freedoms"): one;
    - anything else: none. A passage that shares the topic, or even names the counted noun, is not therefore
      an item: counting it would tell the historian an item was found that was not."""
    known = set(content_words(question))
    names = []
    for m in _ENUMERATION.finditer(text):
        for name in _NAME.findall(m.group()):
            key = " ".join(content_words(name))
            generic = set(content_words(name)) <= _BODIES  # "the Senate and House of Representatives": offices, not items
            if key and not generic and not set(content_words(name)) <= known and key not in names:
                names.append(key)
    if len(names) >= 2:
        return names
    numbered = [" ".join(content_words(m.group(1))) for m in _NUMBERED.finditer(text)]
    numbered = [k for k in dict.fromkeys(numbered) if k]
    if len(numbered) >= 2:  # "(1) ...; (2) ...": each numbered part
        return numbered
    introduced = _INTRODUCED.search(text)
    after = text[introduced.end():] if introduced else ""
    parts = [" ".join(content_words(p)) for p in re.split(r";\s*(?:and\s+)?", after) if len(content_words(p)) >= 2]
    if len(parts) >= 2:  # "... the following: the repeal of ...; a revision of ...; and ...": each part
        return list(dict.fromkeys(parts))
    if ORDINAL_OPENING.match(text) and not is_heading(text, asked):
        return [" ".join(content_words(text))]
    return []


def introduces(text: str) -> bool:
    """The sentence introduces a list ("... the questions which I deem of vital importance: ...", "as follows:")."""
    return text.rstrip().endswith(":") or bool(_INTRODUCED.search(text))


def is_heading(text: str, asked: int) -> bool:
    """The sentence gives the list's count itself ("four essential human freedoms"): the list's heading."""
    count_words = {w for w, n in NUMBER_WORDS.items() if n == asked and w not in _ORDINAL_WORDS} | {str(asked)}
    return bool(count_words & set(re.findall(r"[a-z0-9]+", text.lower())))


def list_found(question: str, texts: list[str], asked: int) -> int:
    """How many of a list's items these findings hold (list_items), at most ``asked``; an item two findings
    hold (the same names) is counted once."""
    seen: set[str] = set()
    for text in texts:
        seen.update(list_items(question, text, asked))
    return min(len(seen), asked)


def described(shape: Shape, question: str, citations: list[dict], claims: list[str] = ()) -> dict[str, object] | None:
    """The shape as the page shows it, from the answer's final citations: a comparison's sides with the
    citations that speak for each (``found`` false: nothing was found for it), or a list's found and asked
    counts. None for a single answer. ``claims``: a model's own words per finding (the LLM composer gives one
    finding per item asked), so each distinct one is an item; quoted findings are counted by list_items."""
    if shape.comparison:
        rows = []
        for side in shape.sides:
            ids = [c["id"] for c in citations
                   if belongs(side, shape, byline=f"{c.get('author') or ''} {c.get('title') or ''}", text=c["text"], year=c.get("year"))]
            rows.append({"label": side.label, "citations": ids, "found": bool(ids)})
        return {"kind": "comparison", "sides": rows}
    if shape.kind == "list" and shape.asked:
        if claims:
            distinct: list[set[str]] = []
            for claim in claims:  # a finding that rewords one already counted is the same item
                words = set(content_words(claim))
                if words and not any(len(words & d) > 0.6 * min(len(words), len(d)) for d in distinct):
                    distinct.append(words)
            found = min(len(distinct), shape.asked)
        else:
            found = list_found(question, [c["text"] for c in citations], shape.asked) if citations else 0
        return {"kind": "list", "asked": shape.asked, "found": found}
    return None


def side_words(side: Side) -> set[str]:
    """The words that name a side: its name's words and its year."""
    return (set(side.words) or set(content_words(side.label))) | ({str(side.year)} if side.year else set())
