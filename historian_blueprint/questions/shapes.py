"""What shape of answer a question asks for: a comparison of two or more sides, a list of a number of items,
or a single answer.

A comparison names its sides as coordinated names or years ("Theodore Roosevelt vs Wilson on the trusts",
"How did Lincoln's 1861 and 1864 messages differ on ...") and says it compares (compare, contrast, differ,
versus, between, both, or "did A and B" as the subjects of one question). Each side is then searched and
answered on its own, and the page shows a finding per side or "not found for this side".

A list asks for a number of items ("the four freedoms", "name three causes"): the answer says how many it
found of how many were asked, and an answer with fewer is never called verified; a list that names no count
("Which countries ...") is an open list, never verified (questions.lists).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property

from historian_blueprint.questions.lists import asked_count, in_scope, list_found, open_list
from historian_blueprint.text.names import names
from historian_blueprint.text.words import QUOTES, content_words, restates
from historian_blueprint.verify.question import Constraint, constraints

_COMPARES = re.compile(r"\b(compar\w*|contrast\w*|differ\w*|versus|vs\.?|between|both|each|similar\w*|agree\w*|"
                       r"unlike|alike)\b|"
                       # "his 1925 and 1927 messages"
                       r"\b\d{4}\s+and\s+\d{4}\s+(?:annual\s+)?(?:messages|addresses|speeches)\b", re.I)
_DOC_WORDS = r"(?:messages?|address(?:es)?|speech(?:es)?|accounts?|interviews?|narratives?|views?|stance|positions?)"
# What may stand between two coordinated sides: "A and B", "A vs. B", "A, B and C", "A and in B", "A with that of B".
_JOIN = re.compile(rf"^\s*\)?\s*(?:'s)?\s*(?:{_DOC_WORDS}\s*)?(?:,\s*)?"
                   r"(?:(?:and|or|vs\.?|versus|"
                   r"(?:compared\s+|differ(?:ed)?\s+|as\s+against\s+)?(?:with|to|from)|against)\s+)?"
                   r"(?:(?:in|of|(?:that|those)\s+(?:of|in)|what|the|his|her|their|presidents?|mr\.?)\s+)?$", re.I)
# What joins a name to its year in one side: "Hoover in 1931", "Cleveland's 1887", "Harrison, 1889", "Wilson of 1914",
# a reporting verb between them: "Johnson said in 1867", "Grant told Congress in 1874".
_VERB = r"[a-z]+(?:\s+Congress)?"  # a reporting verb between a name and its year: "said", "told Congress"
_DATED = re.compile(rf"\s*(?:'s|,|(?:\s+{_VERB})?\s+in|\s+of)?\s*\(?")
_AGAINST = r"(?:compared\s+|differ(?:ed|s)?\s+|as\s+against\s+)?(?:with|to|from)|against"  # "A compared with B"
MAX_SIDES = 4  # a comparison of more sides is read as a single question
_RANGE = re.compile(r"\b(?:between|from)\s+$", re.I)  # "between 1861 and 1865", "from 1861 to 1865": a span of years
_SUBJECTS = re.compile(r"\b(?:did|do|does|were|was|had)\s*$", re.I)


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
    others: tuple[str, ...] = ()  # a comparison's names that are no side ("Wilson's 1916 and 1917 messages": Wilson)
    owned: tuple[str, ...] = ()   # those written as the sides' owner ("Wilson's", "of Wilson", "by Wilson")
    author: str | None = None     # the one of them that is a byline here: every side is read in its documents

    @cached_property
    def named(self) -> frozenset[str]:
        """The words that name the sides (``side_words`` of each), read once."""
        return frozenset(w for side in self.sides for w in side_words(side))

    @property
    def comparison(self) -> bool:
        return self.kind == "comparison"


def shape_of(question: str) -> Shape:
    """The shape a question asks for (see the module's docstring)."""
    q = " ".join(question.translate(QUOTES).split())  # one space between words: the patterns below assume it
    sides = _sides(q)
    if sides:
        named = {w for side in sides for w in side_words(side)}
        others = tuple(dict.fromkeys(bare for c in names_and_dates(q) if c.kind == "name" and not (set(c.words) & named)
                                     and (bare := re.sub(r"(?:'s)?\W*$", "", c.text))))
        return Shape("comparison", tuple(sides), others=others, owned=tuple(n for n in others if _owner(n).search(q)))
    asked = asked_count(q)
    return Shape("list", asked=asked) if asked or open_list(q) else Shape()



def _sides(question: str) -> list[Side]:
    """The coordinated names or years of a question that compares (at least two), in the question's order; a
    name with its year is one side ("Hoover in 1931 vs. FDR in 1935", "Cleveland's 1887 message and Harrison's
    1889 message")."""
    if not _COMPARES.search(question) and not _subjects_pair(question):
        return []
    found = _placed(question, [c for c in names_and_dates(question) if c.kind in ("name", "date")])
    raw = []
    for at, c in found:
        if at >= 0:
            # "Hayes." ends the sentence, not the name
            text = c.text[:-1] if re.search(r"[a-z]{2}\.$", c.text) else c.text
            raw.append((at, at + len(text), c))
    atoms: list[tuple[int, int, Constraint, int | None]] = []  # (start, end, constraint, a name's year)
    for k, (at, end, c) in enumerate(raw):
        prev = atoms[-1] if atoms else None
        more_years = k + 1 < len(raw) and raw[k + 1][2].kind == "date" and _JOIN.match(question[end:raw[k + 1][0]])
        # "Lincoln's 1861 and 1864 messages": the years are the sides
        if prev and c.kind == "date" and prev[2].kind == "name" and prev[3] is None and not more_years \
                and _DATED.fullmatch(question[prev[1]:at]):
            close = end + 1 if question[end:end + 1] == ")" and "(" in question[prev[1]:at] else end  # "Wilson (1913)"
            atoms[-1] = (prev[0], close, prev[2], int(c.text))
            continue
        atoms.append((at, end, c, None))
    best: list[tuple[int, int, Constraint, int | None]] = []
    run: list[tuple[int, int, Constraint, int | None]] = []
    for atom in atoms:
        if run:
            prev = run[-1]
            if (prev[2].kind, prev[3] is None) == (atom[2].kind, atom[3] is None) \
                    and _JOIN.match(question[prev[1]:atom[0]]):
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
                query = re.sub(rf"\b{re.escape(other)}"
                               rf"(?:'s)?(?:\s+{_DOC_WORDS})?(?:\s*,)?(?:\s+(?:and|or|vs\.?|versus|{_AGAINST})"
                               rf"(?:\s+(?:that|those|what)\b)?)?\s*", " ", query, count=1)
            elif other_at > at:  # "Hoover and Roosevelt": take out "and Roosevelt"
                query = re.sub(rf"(?:\s*,)?(?:\s+(?:and|or|vs\.?|versus|{_AGAINST})"
                               r"(?:\s+(?:(?:that|those)\s+(?:of|in)|what))?)?\s*"
                               rf"\b{re.escape(other)}(?:'s)?(?:\s+{_DOC_WORDS})?(?!\w)", " ", query, count=1)
        query = re.sub(r"\s+([?.,:])", r"\1", re.sub(r"\s+", " ", query)).strip()
        if year is not None:  # "Johnson said in 1867": the side is "Johnson in 1867"
            label = re.sub(rf"\s+{_VERB}\s+in\s+\(?{year}\)?$", f" in {year}", label)
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


def names_and_dates(question: str) -> list[Constraint]:
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
    if first and first.group(1).lower() not in _OPENERS \
            and not any(question.find(c.text) == first.start(1) for c in named) \
            and content_words(first.group(1)) \
            and not question[first.end(1):].lstrip().startswith(tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ")):
        named.append(Constraint(first.group(1), "name", frozenset(content_words(first.group(1)))))
    return named


_TITLE = re.compile(r"^(?:(?:President|Presidents|Mr\.?|Mrs\.?|General|Senator|Governor|Secretary)\s+)+")


def _subjects_pair(question: str) -> bool:
    """"What did Cleveland and McKinley say about silver?": two names as the subjects of one question; "Cleveland
    or Harrison: who favored ...?": two names to choose between."""
    names = sorted((c for c in names_and_dates(question) if c.kind == "name"), key=lambda c: question.find(c.text))
    for a, b in zip(names, names[1:]):
        at = question.find(a.text)
        then = question.find(b.text, at + len(a.text))
        between = question[at + len(a.text):then]
        if at < 0 or then < 0:
            continue
        # "did Harding in 1922 and Coolidge in 1923 ...", "did Lincoln say in 1862 and Johnson in 1866": with years
        joined = re.fullmatch(rf"\s*(?:'s)?\s*(?:(?:{_VERB}\s+)?(?:in\s+)?\(?\d{{4}}\)?\s*,?\s*)?(and|or)\s*", between)
        if joined and _SUBJECTS.search(question[:at]):
            return True  # "Did Dorsey or Mayes describe harsher punishment?": one of two subjects to choose
        if joined and joined.group(1) == "or" and re.search(r"\b(?:who|which)\b", question, re.I):
            return True  # "Cleveland or Harrison: who favored tariff reduction?"
    return False


def _owner(name: str) -> re.Pattern[str]:
    """The name as the sides' author: "Wilson's 1916 and 1917 messages", "the messages of Wilson", "... by Wilson"."""
    return re.compile(rf"\b{re.escape(name)}'s\b|\b(?:of|by)\s+(?:President\s+)?{re.escape(name)}\b")


def with_bylines(shape: Shape, bylines: Callable[[str], int]) -> Shape:
    """Mark the sides that are some document's author or narrator (``bylines``: how many documents a name is)."""
    if not shape.comparison:
        return shape
    sides = tuple(replace(s, byline=s.kind == "name" and bylines(name_of(s)) > 0) for s in shape.sides)
    bylined = [name for name in shape.others if bylines(name) > 0] if not any(s.byline for s in sides) else []
    # the one byline the question names, as the sides' owner ("Wilson's 1916 and 1917 messages"); two: neither
    author = bylined[0] if len(bylined) == 1 and bylined[0] in shape.owned else None
    return replace(shape, sides=sides, author=author)


def name_of(side: Side) -> str:
    """A side's name without its year ("Grover Cleveland's 1887" -> "Grover Cleveland")."""
    if side.year is None:
        return side.label
    return re.sub(rf"(?:'s|,|\s+in|\s+of)?\s*\(?{side.year}\)?\s*$", "", side.label).strip()


def side_filters(side: Side, shape: Shape | None = None) -> dict[str, object]:
    """What a side's own search is limited to: its author's or narrator's documents, or its year's (of the
    author the sides share: "Wilson's 1916 and 1917 messages")."""
    dated = {"year_from": side.year, "year_to": side.year} if side.year else {}
    shared = {"author": shape.author} if shape is not None and shape.author and not side.byline else {}
    if side.byline:
        return {"author": name_of(side), **dated}
    if side.kind == "date":
        return {"year_from": int(side.label), "year_to": int(side.label), **shared}
    return {**dated, **shared}


def belongs(side: Side, shape: Shape, *, byline: str, text: str, year: int | None) -> bool:
    """Does a passage speak for this side: a byline side by its own documents only ("Wilson": Wilson's
    messages, not Roosevelt's mention of him); a year by the documents of that year, or by a document of no
    other side's year that names it; a place or a name that is nobody's byline by the passage naming it."""
    if side.year is not None and year != side.year:  # "Hoover in 1931": Hoover's passages of 1931
        return False
    if shape.author and not side.byline and not names(shape.author, byline):
        return False  # "Wilson's 1916 and 1917 messages": Wilson's documents of each year
    if side.byline:
        return names(name_of(side), byline)
    if side.kind == "date":
        years = {s.label for s in shape.sides if s.kind == "date"}
        return str(year) == side.label or (str(year) not in years and side.label in text)
    return side.words <= set(content_words(f"{text} {byline}"))


def described(shape: Shape, question: str, citations: list[dict], claims: list[str] = ()) -> dict[str, object] | None:
    """The shape as the page shows it, from the answer's final citations: a comparison's sides with the
    citations that speak for each (``found`` false: nothing was found for it), or a list's found and asked
    counts (an open list: ``open``, no counts). None for a single answer. ``claims``: a model's own words per finding
    (the LLM composer gives one finding per item asked), so each distinct one is an item; quoted findings are counted by
    list_items."""
    if shape.comparison:
        rows = []
        for side in shape.sides:
            ids = [c["id"] for c in citations
                   if belongs(side, shape, byline=f"{c.get('author') or ''} {c.get('title') or ''}", text=c["text"],
                              year=c.get("year"))]
            rows.append({"label": side.label, "citations": ids, "found": bool(ids)})
        return {"kind": "comparison", "sides": rows}
    if shape.kind == "list" and shape.asked:
        if claims:
            distinct: list[set[str]] = []
            scoped = [claim for n, claim in enumerate(claims)  # another year's document holds no item of it
                      if n >= len(citations) or in_scope(question, citations[n]["text"], citations[n].get("year"))]
            for claim in scoped:  # a finding that rewords one already counted is the same item
                words = set(content_words(claim))
                if words and not restates(words, distinct):
                    distinct.append(words)
            found = min(len(distinct), shape.asked)
        else:
            found = list_found(question, [c["text"] for c in citations], shape.asked,
                               [c.get("year") for c in citations]) if citations else 0
        return {"kind": "list", "asked": shape.asked, "found": found}
    if shape.kind == "list":  # an open list: no count to say, and no claim that it is whole
        return {"kind": "list", "asked": None, "found": None, "open": True}
    return None


def side_words(side: Side) -> set[str]:
    """The words that name a side: its name's words and its year."""
    return (set(side.words) or set(content_words(side.label))) | ({str(side.year)} if side.year else set())
