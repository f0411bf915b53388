"""The document a question asks about: a byline here and the year of that person's words ("Coolidge's 1927
message", "Lincoln in 1862", "Grant (1869)", "what did Taft say in 1912", "in his 1913 annual message ...
Woodrow Wilson"). A year that dates something else ("the 1878 yellow fever epidemic", "the Panic of 1893") scopes
nothing (so do "Harding died in 1923" and "Who wrote to Lincoln in 1864?": the year must date the person's own
words), and so does a question that reaches past that year ("... and what did he report a year later?"). A
follow-up that names no one and no year and goes on asking what he or she said keeps the document of its thread's
last turns ("So what did he ask the House to do about it?" after a question on Lincoln's December 1864 message).

A question whose document the collection holds is searched in that document; one whose document it lacks is told
so, with the years of that person's documents it holds ("the collection has no document by Franklin D Roosevelt of
1933 (it holds theirs of 1934–1945)"), instead of being answered from another year's words
(questions.premises).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from historian_blueprint.questions.shapes import names_and_dates
from historian_blueprint.text.words import QUOTES

# what a dated document is called: "his 1913 annual message", "FDR's 1933 State of the Union", "her 1937 interview"
_DOCUMENT = (r"(?:(?:annual|first|second|third|last|final|special)\s+)?(?:message|address|state\s+of\s+the\s+union|"
             r"speech|interview|narrative|account|report|letter)")
_MORE_YEARS = re.compile(r"\)?\s*(?:,|and|or|to|through|-|–)\s*(?:in\s+)?\(?\d{4}\b", re.I)
# a question that reaches past its document's year: "... and what did he report a year later?", "the next message"
_OTHER_TIME = re.compile(r"\b(?:years?|months?|decades?)\s+(?:later|after(?:wards?)?|before|earlier)\b|"
                         r"\b(?:next|following|previous|preceding|later|earlier|subsequent)\s+"
                         r"(?:years?|messages?|address(?:es)?|reports?)\b|\blater\s+on\b", re.I)
_MONTH = (r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
          r"(?:\s+\d{1,2},?)?\s+")  # "Lincoln's December 1864 message", "his January 11, 1944 message"
_HIS_YEAR = re.compile(rf"\b(?:his|her|their)\s+(?:{_MONTH})?(?P<year>1[5-9]\d\d|20\d\d)\s+{_DOCUMENT}\b", re.I)
# How a year dates a person's own words: "X's 1927 message", "X (1874)", "X in 1862" as the question's subject,
# "X said (to Congress) in 1912" with a verb of saying or asking ("renew", "request", "outline" a recommendation);
# not "Lincoln born in 1809", "Harding died in 1923".
_SAYS = (r"(?:say|says|said|tell|tells|told|report|reports|reported|write|writes|wrote|recommend|recommends|"
         r"recommended|propose|proposes|proposed|ask|asks|asked|urge|urges|urged|describe|describes|described|claim|claims|claimed|"
         r"argue|argues|argued|state|states|stated|announce|announces|announced|declare|declares|declared|promise|"
         r"promised|warn|warned|predict|predicted|call|called|explain|explained|admit|admitted|insist|insisted|"
         r"suggest|suggested|advise|advised|note|noted|mention|mentioned|estimate|estimated|express|expressed|renew|"
         r"renewed|repeat|repeated|reiterate|reiterated|request|requested|demand|demanded|outline|outlined|list|listed)")
_OWN_YEAR = re.compile(rf"'s\s+(?:{_MONTH})?|\s*\(|\s+in\s+(?:{_MONTH})?|"
                       rf"\s+{_SAYS}(?:\s+(?:Congress|the\s+\w+))?\s+in\s+(?:{_MONTH})?", re.I)
_DOCUMENT_AFTER = re.compile(rf"\s+{_DOCUMENT}\b", re.I)  # "X's 1927 message": the possessive dates a document
# a name the question asks about rather than whose words it asks for: "wrote to Lincoln", "the press on Wilson's"
_OBJECT = re.compile(r"(?:\b(?:to|about|for|against|with|at|towards?|on|over|of|the|and|or)\s+(?:President\s+|"
                     r"Mr\.?\s+|Mrs\.?\s+|General\s+)?)$", re.I)


@dataclass(frozen=True)
class Scope:
    """A question's document: whose words (a byline here) and the year they were written or spoken; ``years``
    are the years of that person's documents in the collection (empty when they were not read)."""

    name: str
    year: int
    years: tuple[int, ...] = ()

    @property
    def held(self) -> bool:
        """Does the collection hold a document by this person of this year."""
        return self.year in self.years

    def absent(self) -> str:
        """The sentence that says the document is not here (for a scope that is not ``held``)."""
        if not self.years:
            return f"the collection has no document by {self.name} of {self.year}"
        return f"the collection has no document by {self.name} of {self.year} (it holds theirs of {runs(self.years)})"


def runs(years: Sequence[int]) -> str:
    """Years as runs: (1934, 1935, 1936, 1939, 1941) -> "1934–1936, 1939, 1941"."""
    out: list[list[int]] = []
    for y in sorted(set(years)):
        if out and y == out[-1][-1] + 1:
            out[-1].append(y)
        else:
            out.append([y])
    return ", ".join(f"{r[0]}" if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in out)


def scope_of(question: str, bylines: Callable[[str], int],
             years_of: Callable[[str], Sequence[int]] | None = None) -> Scope | None:
    """The document the question asks about (see the module's docstring), or None: one byline of the question
    (``bylines``: how many documents a name is the author or narrator of) with a year joined to it ("X's 1927",
    "X in 1927", "X (1927)", "X said in 1927") or to a document of theirs ("in his 1927 message"); two bylines, or
    two such years, scope nothing. ``years_of``: the years of a name's documents here."""
    q = " ".join(question.translate(QUOTES).split())
    if _OTHER_TIME.search(q):
        return None
    named = [c for c in names_and_dates(q) if c.kind == "name" and bylines(_bare(c.text)) > 0]
    people = list(dict.fromkeys(_bare(c.text) for c in named))
    if len(people) != 1:
        return None
    name = people[0]
    years = set()
    for c in named:
        at = q.find(c.text)
        end = at + len(c.text)
        joined = re.match(r"(?P<gap>[^0-9]{0,40}?)(?P<year>1[5-9]\d\d|20\d\d)\b", q[end:]) if at >= 0 else None
        gap = joined.group("gap") if joined else ""
        if re.search(r"['’]s?$", c.text):  # the name read with its possessive: "Coolidge's"
            gap = "'s" + gap
        if not joined or not _OWN_YEAR.fullmatch(gap) or (
                gap.startswith("'s") and not _DOCUMENT_AFTER.match(q, end + joined.end())):
            continue  # "Lincoln born in 1809", "Harding's 1923 death": a year of the person, not of their words
        if not _words_of(q[:at]):
            continue  # "Who wrote to Lincoln in 1864?": his year, not his words
        if _MORE_YEARS.match(q, end + joined.end()):  # "Wilson in 1913 and in 1917": years, not one document
            return None
        years.add(int(joined.group("year")))
    if any(_words_of(q[:q.find(c.text)]) for c in named):  # "in his 1913 message ... Woodrow Wilson"
        years |= {int(m.group("year")) for m in _HIS_YEAR.finditer(q)}
    if len(years) != 1:
        return None
    return Scope(name, years.pop(), tuple(sorted(set(years_of(name)))) if years_of else ())


def carried_scope(question: str, history: Sequence[dict], bylines: Callable[[str], int],
                  years_of: Callable[[str], Sequence[int]] | None = None, turns: int = 2) -> Scope | None:
    """The document a question asks about, or a follow-up's: one that names no one and no year and goes on asking
    what "he" or "she" said or did ("So what did he ask the House to do about it?") keeps the document its thread's
    last turns asked about (the last ``turns``, most recent first: "... according to Lincoln's December 1864
    message?"); "How did the newspapers react to it?" does not."""
    own = scope_of(question, bylines, years_of)
    q = " ".join(question.translate(QUOTES).split())
    if own is not None or re.search(r"\b(?:1[5-9]\d\d|20\d\d)\b", q) \
            or any(c.kind == "name" for c in names_and_dates(q)) or not _HE_ASKS.search(q):
        return own  # a year or a name of its own, or a subject other than the person ("How did the papers react?")
    for turn in reversed(list(history)[-turns:]):
        earlier = scope_of(str(turn.get("question", "")), bylines, years_of)
        if earlier is not None:
            return earlier
    return None


# the follow-up goes on asking what the same person said or did: "what did he ask", "so he", "did she say"
_HE_ASKS = re.compile(r"\b(?:did|does|do|was|were|had|has|would|could)\s+(?:he|she)\b|"
                      r"^\W*(?:and\s+|so\s+)?(?:he|she)\b|"
                      r"\b(?:what|why|how|when|where|whom)\s+(?:he|she)\b", re.I)


def _words_of(before: str) -> bool:
    """Does a name after ``before`` stand for whose words the question asks for ("according to Coolidge's", "did
    Taft say"), not for whom it asks about ("wrote to Lincoln", "the press on Wilson's")."""
    return _OBJECT.search(before) is None or bool(re.search(r"\baccording\s+to\s+$", before, re.I))


def _bare(name: str) -> str:
    """A name without its possessive ("Coolidge's" -> "Coolidge")."""
    return re.sub(r"(?:'s|')$", "", name.strip())
