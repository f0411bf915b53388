"""People named as a historian writes them: by some of their name's words ("Wilson", "Rachel Adams") or by their
initials ("FDR" for Franklin D. Roosevelt)."""

from __future__ import annotations

import re

_INITIALISM = re.compile(r"[A-Z]{3,4}")  # two letters ("US", "AL", "AM") name too much to stand for a person
_RUN = re.compile(r"(?<![\w.])(?:[A-Z][a-z]*\.?\s+)*[A-Z][a-z]*\.?")  # consecutive capitalized words
_NAME_WORD = re.compile(r"[A-Z][a-z]*\.?")  # "Franklin", "D.", "Roosevelt"
# A byline is a name followed by its document's title ("Franklin D. Roosevelt Annual Message to Congress"): a name
# may end where one of these words begins.
_TITLE_WORDS = frozenset("Annual Message Messages State Address Inaugural Speech Interview Narrative Letter "
                         "Proclamation Report Special Federal".split())
_IGNORED = frozenset({"d", "s", "jr", "sr"})  # a middle initial or a suffix a question leaves out


def is_initialism(name: str) -> bool:
    """"FDR": a name written as three or four capital letters."""
    return bool(_INITIALISM.fullmatch(name.strip()))


def initials(text: str) -> set[str]:
    """The initials of every whole run of capitalized words in ``text``, and of a run's leading words where a
    document's title begins ("Franklin D. Roosevelt Annual Message": FDRAM and FDR; "Fight Draws Record Crowd":
    FDRC only)."""
    out: set[str] = set()
    for run in _RUN.finditer(text):
        words = _NAME_WORD.findall(run.group())
        out.add("".join(w[0] for w in words))
        for k in range(1, len(words)):
            if words[k].rstrip(".") in _TITLE_WORDS:
                out.add("".join(w[0] for w in words[:k]))
                break
    return out


def name_words(name: str) -> set[str]:
    """A name's words as a byline must hold them, lowercased (a middle initial or a suffix aside)."""
    return set(re.findall(r"[a-z]+", name.lower())) - _IGNORED


def names(name: str, byline: str) -> bool:
    """Does ``byline`` (an author, a title, a passage) name this person: every word of the name, or its initials
    as a whole name ("FDR": "Franklin D. Roosevelt")."""
    if is_initialism(name):
        return name.strip() in initials(byline)
    wanted = name_words(name)
    return bool(wanted) and wanted <= set(re.findall(r"[a-z]+", byline.lower()))
