"""People named as a historian writes them: by some of their name's words ("Wilson", "Rachel Adams") or by their
initials ("FDR" for Franklin D. Roosevelt, "TR" for Theodore Roosevelt)."""

from __future__ import annotations

import re

_INITIALISM = re.compile(r"[A-Z]{2,4}")
_NAME_WORD = re.compile(r"[A-Z][a-z]*\.?")  # "Franklin", "D.", "Roosevelt"
_IGNORED = frozenset({"d", "s", "jr", "sr"})  # a middle initial or a suffix a question leaves out


def is_initialism(name: str) -> bool:
    """"FDR", "TR": a name written as two to four capital letters."""
    return bool(_INITIALISM.fullmatch(name.strip()))


def initials(text: str) -> set[str]:
    """Every run of two to four consecutive capitalized words' initials in ``text`` ("Franklin D. Roosevelt":
    FD, DR, FDR)."""
    out: set[str] = set()
    for run in re.finditer(r"(?:[A-Z][a-z]*\.?\s+)*[A-Z][a-z]*\.?", text):
        letters = "".join(w[0] for w in _NAME_WORD.findall(run.group()))
        for n in range(2, 5):
            out.update(letters[k:k + n] for k in range(len(letters) - n + 1))
    return out


def name_words(name: str) -> set[str]:
    """A name's words as a byline must hold them, lowercased (a middle initial or a suffix aside)."""
    return set(re.findall(r"[a-z]+", name.lower())) - _IGNORED


def names(name: str, byline: str) -> bool:
    """Does ``byline`` (an author, a title, a passage) name this person: every word of the name, or its initials
    ("FDR": "Franklin D. Roosevelt")."""
    if is_initialism(name):
        return name.strip() in initials(byline)
    wanted = name_words(name)
    return bool(wanted) and wanted <= set(re.findall(r"[a-z]+", byline.lower()))
