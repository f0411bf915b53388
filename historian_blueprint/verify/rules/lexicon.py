"""Word relations from WordNet 3.0 (``verify/lexicon/``, derived by ``tools/build_lexicons.py``; licence beside
the files): antonyms, derivationally related forms, synonyms, and the words English has. Loaded once, read
by the lexical conflict checks and by the support reading (a synonym explains a reworded word)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

LEXICON_DIR = Path(__file__).resolve().parent.parent / "lexicon"


@lru_cache(maxsize=None)
def _load(name: str) -> object:
    path = LEXICON_DIR / name
    if not path.exists():
        return {} if name != "words.json" else []
    return json.loads(path.read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def _table(name: str) -> dict[str, frozenset[str]]:
    data = _load(name)
    return {k: frozenset(v) for k, v in data.items()} if isinstance(data, dict) else {}


def load_all() -> None:
    """Read every table now (a server's master does, before its workers fork and share them)."""
    for name in ("antonyms.json", "indirect_antonyms.json", "derivations.json", "synonyms.json"):
        _table(name)
    english(), nouns(), exceptions()


def antonyms(word: str) -> frozenset[str]:
    return _table("antonyms.json").get(word, frozenset())


def indirect_antonyms(word: str) -> frozenset[str]:
    return _table("indirect_antonyms.json").get(word, frozenset())


def derivations(word: str) -> frozenset[str]:
    return _table("derivations.json").get(word, frozenset())


def synonyms(word: str) -> frozenset[str]:
    return _table("synonyms.json").get(word, frozenset())


@lru_cache(maxsize=None)
def english() -> frozenset[str]:
    data = _load("words.json")
    return frozenset(data) if isinstance(data, list) else frozenset()


@lru_cache(maxsize=None)
def nouns() -> frozenset[str]:
    """Words that are mainly nouns in WordNet (only noun senses, or noun senses tagged most often)."""
    data = _load("nouns.json")
    return frozenset(data) if isinstance(data, list) else frozenset()


@lru_cache(maxsize=None)
def verb_nouns() -> frozenset[str]:
    """Words with noun and verb senses in WordNet that are not mainly nouns ("strike", "return", "purchase")."""
    data = _load("verb_nouns.json")
    return frozenset(data) if isinstance(data, list) else frozenset()


@lru_cache(maxsize=None)
def exceptions() -> dict[str, str]:
    data = _load("exceptions.json")
    if isinstance(data, dict) and "exceptions" in data:
        data = data["exceptions"]
    return {k: (v[0] if isinstance(v, list) else v) for k, v in data.items()} if isinstance(data, dict) else {}


def _stripped(word: str, endings: tuple[tuple[str, str], ...]):
    """(ending replaced, candidate base) for each inflectional ending ``word`` has, leaving at least 3 letters."""
    for suffix, repl in endings:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            yield repl, word[: len(word) - len(suffix)] + repl


_INFLECTIONS = (("ies", "y"), ("es", ""), ("s", ""), ("ied", "y"), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", ""))


def lemma(word: str) -> str:
    """The dictionary form of an inflected word, as far as WordNet's exceptions and plain endings tell."""
    found = exceptions().get(word)
    if found:
        return found
    known = english()
    if word in known:
        return word
    for repl, base in _stripped(word, (*_INFLECTIONS, ("er", ""), ("est", ""))):
        if base in known:
            return base
        if repl == "" and len(base) > 3 and base[-1] == base[-2] and base[:-1] in known:  # stopped -> stop
            return base[:-1]
    return word


@lru_cache(maxsize=65536)
def forms(word: str) -> frozenset[str]:
    """The word and every dictionary form it may be an inflection of ("approved": approved, approve)."""
    out = {word, lemma(word)}
    found = exceptions().get(word)
    if found:
        out.add(found)
    known = english()
    out |= {base for _, base in _stripped(word, (*_INFLECTIONS, ("ly", ""))) if base in known}
    return frozenset(out)


def are_antonyms(a: str, b: str, indirect: bool = False) -> bool:
    """WordNet lists some form of ``a`` as an antonym of some form of ``b`` (indirect: through a similar adjective)."""
    fb = forms(b)
    for fa in forms(a):
        if antonyms(fa) & fb or (indirect and indirect_antonyms(fa) & fb):
            return True
    return False


def kin(word: str) -> frozenset[str]:
    """The word's lemma, its derivationally related forms and synonyms: words that say the same thing."""
    base = lemma(word)
    return frozenset({word, base}) | derivations(base) | synonyms(base)


def spelled_alike(a: str, b: str) -> bool:
    """honor / honour, defense / defence, connexion / connection, center / centre, civilize / civilise: one
    word in two spellings (American and British, or the 19th century's)."""
    if a == b:
        return False
    for x, y in ((a, b), (b, a)):
        for old, new in (("our", "or"), ("ence", "ense"), ("xion", "ction"), ("ise", "ize"), ("yse", "yze"),
                         ("tre", "ter"), ("ll", "l"), ("ogue", "og")):
            if old in x and x.replace(old, new) == y:
                return True
    return False
