"""Words: normalizing, tokens, stems, numbers, names, and the word classes of the language the checks share.

Two tokenizers on purpose: ``tokenize`` is the index's (BM25: lowercase, stopwords out, plurals folded);
``words`` / ``content_words`` are the verifier's (contractions kept, irregular verbs folded, numbers as
digits, words that carry no checkable fact left out).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache


# ---------------------------------------------------------------- normalizing: what every reading of words starts from
QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'", "`": "'", "–": "-", "—": "-", "\u00a0": " "})
ABBREVIATIONS = {"u.s.a.": "usa", "u.s.": "usa", "u.k.": "uk", "&": " and "}
# Multi-word names with a common short form, compared as one token.
PHRASES = re.compile(
    r"\bunited states(?: of america)?\b|\busa\b|(?<=\bthe )us\b|"
    r"\bus(?= (?:army|navy|senate|congress|government|treasury|supreme court)\b)",
    re.IGNORECASE,  # normalize() sees lowercase text; capitalized_terms() sees the original case
)
PHRASE_FORM = "usa"

_DECADE = re.compile(r"\b(\d{2,4}0)'s\b")
_SPACES = re.compile(r"\s+")
_DOUBLE_SPACES = re.compile(r"  +")
_MAY_HOLD_PHRASE = re.compile(r"\bus|united states")  # what every one of PHRASES' forms starts with


def normalize(text: str) -> str:
    """Unify quotes, dashes and Unicode forms; collapse whitespace; lowercase; "1960's" is "1960s". (Each step
    runs only when the text holds what it changes: the same words, faster.)"""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    text = _SPACES.sub(" ", text.translate(QUOTES)).strip().lower()
    if "'s" in text:
        text = _DECADE.sub(r"\1s", text)
    for short, word in ABBREVIATIONS.items():
        if short in text:
            text = text.replace(short, word)
    if "  " in text:
        text = _DOUBLE_SPACES.sub(" ", text)
    return PHRASES.sub(PHRASE_FORM, text) if _MAY_HOLD_PHRASE.search(text) else text


@lru_cache(maxsize=512)
def normalized(text: str) -> str:
    """normalize(), cached: the same documents are compared with many claims."""
    return normalize(text)


_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most my
    myself no nor not now of off on once only or other our ours ourselves out over own same she should so
    some such than that the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom why will with would you your
    yours yourself yourselves""".split()
)


def stem(token: str) -> str:
    """A light plural stemmer: railroads -> railroad, companies -> company."""
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens without stopwords, lightly stemmed."""
    return [stem(t) for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


_WORD = re.compile(r"[^\W_]+(?:'(?:s|t|re|ve|ll|d|m)\b)?", re.UNICODE)  # "toys'leader" is two words, "he's" one
_NUMBER = re.compile(r"(?<![\w.])\$?\d[\d,]*(?:\.\d+)?%?(?![\w])|(?<![\w])\d+(?:st|nd|rd|th)\b")
_ORDINAL = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b")
_CONTRACTION = re.compile(r"'(?:s|re|ve|ll|d|m)$")

NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
    "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000,
    "million": 1_000_000, "billion": 1_000_000_000, "first": 1, "second": 2, "third": 3, "fourth": 4,
    "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "dozen": 12,
}
# Conversational words that carry no checkable fact ("well, ...", "yeah ...", "I think ...").
FILLERS = frozenset(
    "well yea yeah yes yep oh ok okay also actually really um uh hmm like pretty just think know guess "
    "believe lol interesting cool wow sure indeed though anyway maybe perhaps probably quite much lot lots "
    "thing things kind sort stuff agree true exactly absolutely".split()
)
# Light verbs and vague quantities, by surface form: paraphrase swaps them freely ("got 79%" for "rating:
# 79%", "several" for "multiple"), so they are neither evidence for a claim nor a reason to doubt it. Words
# that can carry the fact ("called for", "main", "needed", "common" against "rare") are not here.
LIGHT = frozenset(
    "get gets got getting gotten come comes came coming go goes going went even around actual several "
    "various multiple".split()
)
# Adverbs of frequency are light too, but must not flip: "usually" where the source says "rarely" is flagged
# by the frequency rule (verify/rules/polarity.py) ("never" is a negation, checked as one).
FREQUENT = frozenset("always usually normally commonly often frequently generally typically mostly every each".split())
INFREQUENT = frozenset("rarely seldom hardly occasionally sometimes".split())
# Words that say how much or how surely (the scope rule, verify/rules/polarity.py): "always", "every", "entire".
SCOPE_WORDS = frozenset(
    "all every always never none entire entirely completely totally wholly whole only sole solely "
    "universal universally everyone everybody everything everywhere invariably any each "
    "certainly definitely surely undoubtedly inevitably absolutely unquestionably".split()
)
_FREQUENCY_ADVERBS = (FREQUENT | INFREQUENT) - {"always", "every", "each"}  # scope words stay content words
# Irregular verb forms (and a few nouns) to their base, so "began" matches "begin" and "died" matches "dead".
IRREGULAR = {
    "was": "be", "were": "be", "been": "be", "is": "be", "are": "be", "began": "begin", "begun": "begin",
    "became": "become", "broke": "break", "broken": "break", "brought": "bring", "built": "build",
    "bought": "buy", "came": "come", "chose": "choose", "chosen": "choose", "did": "do", "done": "do",
    "drew": "draw", "drawn": "draw", "drove": "drive", "driven": "drive", "ate": "eat", "eaten": "eat",
    "fell": "fall", "fallen": "fall", "fought": "fight", "found": "find", "flew": "fly", "flown": "fly",
    "forgot": "forget", "forgotten": "forget", "gave": "give", "given": "give", "went": "go", "gone": "go",
    "got": "get", "gotten": "get", "grew": "grow", "grown": "grow", "had": "have", "has": "have",
    "held": "hold", "kept": "keep", "knew": "know", "known": "know", "led": "lead", "left": "leave",
    "lost": "lose", "made": "make", "meant": "mean", "met": "meet", "paid": "pay", "ran": "run",
    "said": "say", "saw": "see", "seen": "see", "sent": "send", "sold": "sell", "shot": "shoot",
    "sang": "sing", "sung": "sing", "spoke": "speak", "spoken": "speak", "spent": "spend", "stood": "stand",
    "stole": "steal", "stolen": "steal", "struck": "strike", "swore": "swear", "sworn": "swear",
    "taught": "teach", "took": "take", "taken": "take", "told": "tell", "thought": "think",
    "threw": "throw", "thrown": "throw", "understood": "understand", "won": "win", "wrote": "write",
    "written": "write", "goes": "go", "does": "do", "died": "die", "dies": "die", "dead": "die", "death": "die",
    "lives": "live",
    "lived": "live", "living": "live", "born": "birth", "bore": "bear", "borne": "bear", "overseen": "oversee",
    "oversaw": "oversee", "children": "child", "men": "man", "women": "woman", "people": "person",
}



def words(text: str) -> list[str]:
    """Lowercase word tokens (keeping contractions) of normalized text."""
    return _WORD.findall(normalize(text))


_NOT_CONTRACTED = {"can't": "can", "won't": "will", "shan't": "shall", "ain't": "be"}
_OPENED = {"cannot": ["can", "not"]}


def aligned_words(text: str) -> list[str]:
    """words() with negative contractions opened ("couldn't" -> could, not), so rewordings align."""
    out: list[str] = []
    for w in words(text):
        if w.endswith("n't"):
            out += [_NOT_CONTRACTED.get(w, w[:-3]), "not"]
        elif w in _OPENED:
            out += _OPENED[w]
        else:
            out.append(w)
    return out


@lru_cache(maxsize=65536)
def vstem(word: str) -> str:
    """A light verb and plural stemmer for matching claims to sources (recommended -> recommend)."""
    if word in IRREGULAR:
        return IRREGULAR[word]
    if len(word) > 4 and (word.endswith(("sses", "xes", "zzes", "shes", "tches", "nches", "rches", "eeches"))):
        return word[:-2]  # boxes -> box, marches -> march; niches, comes -> niche, come (below)
    for suffix, keep in (("ingly", 5), ("edly", 5), ("ing", 5), ("ed", 4), ("ly", 6)):
        if word.endswith(suffix) and len(word) - len(suffix) >= keep - 1:
            return word[: -len(suffix)]
    return stem(word)  # plurals: railroads -> railroad, varies -> vary


def _compound_numbers(text: str) -> str:
    """eighty-four -> 84, so that words and digits compare."""

    def repl(match: re.Match[str]) -> str:
        tens, unit = NUMBER_WORDS.get(match.group(1).lower()), NUMBER_WORDS.get(match.group(2).lower())
        if tens and unit and tens % 10 == 0 and 20 <= tens <= 90 and 1 <= unit <= 9:
            return str(tens + unit)
        return match.group(0)

    return _HYPHENATED.sub(repl, text) if "-" in text else text


_HYPHENATED = re.compile(r"\b([A-Za-z]+)-([A-Za-z]+)\b")


# A life span in parentheses, as reference works give it: "Elvis Aaron Presley (January 8, 1935 – August 16, 1977)"
_MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
_LIFESPAN = re.compile(  # full dates on both sides: "(1861–1865)" may be a war as well as a life
    rf"\(\s*(?:born\s+)?{_MONTH}\s+\d{{1,2}},?\s+\d{{3,4}}\s*[-–—]\s*{_MONTH}\s+\d{{1,2}},?\s+\d{{3,4}}\s*\)", re.I
)


def content_words(text: str) -> list[str]:
    """Stemmed words that carry meaning: no stopwords, number words as digits; a person's life span
    "Elvis Aaron Presley (January 8, 1935 – August 16, 1977)" says born and died. (The same sentences are read
    again and again, claim after claim and ask after ask: each text's words are kept, and a fresh list given.)"""
    return list(_content_words(text))


@lru_cache(maxsize=131072)
def _content_words(text: str) -> tuple[str, ...]:
    return tuple(stemmed for _, stemmed in _content_pairs(text))


def _content_pairs(text: str) -> list[tuple[str, str]]:
    """(word as the text has it, lowercased; its content stem) for each content word of a text."""
    lifespan = _LIFESPAN.search(text) if "(" in text else None
    out = [(lifespan.group(), "birth"), (lifespan.group(), "die")] if lifespan else []
    text = _compound_numbers(text)
    if _DIGIT.search(text):
        text = _ORDINAL.sub(r"\1", text)  # "June 7th" is June 7
    for w in words(text):
        said = w
        if "'" in w:
            if w.endswith("n't"):  # negations are compared by the negation check, not as content
                continue
            w = _CONTRACTION.sub("", w).replace("'", "")
        if w in NUMBER_WORDS:
            out.append((said, str(NUMBER_WORDS[w])))
        elif len(w) > 1 and w not in _NOT_CONTENT:
            out.append((said, vstem(w)))
    return out


# What normalize() writes for an abbreviation ("usa" for "U.S."), back to the ways a text may write it.
_ABBREVIATED = {word.strip(): re.compile("|".join(re.escape(short) for short, w in ABBREVIATIONS.items() if w == word),
                                         re.I) for word in set(ABBREVIATIONS.values())}
_SPELLED = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)?")
_DECADE_WRITTEN = re.compile(r"\d{3}0s")


def _where_written(said: str, text: str, flat: str) -> str | None:
    """Where ``text`` (``flat``: its NFKC form, quotes straightened) writes what its normal form calls ``said``
    ("usa": "U.S." or "United States"; "25": "twenty-five"; "1960s": "1960's"; "brien's": "O'Brien's"), as the text
    has it; None when it does not."""
    found = re.search(rf"(?<![\w']){re.escape(said)}(?!\w)", flat, re.I)
    if found is None and said in _ABBREVIATED:
        found = (PHRASES.search(flat) if said == PHRASE_FORM else None) or _ABBREVIATED[said].search(flat)
    if found is None and said.isdigit():
        found = next((m for m in _SPELLED.finditer(flat) if _compound_numbers(m.group()) == said
                      or str(NUMBER_WORDS.get(m.group().lower(), "")) == said), None)
    if found is None and _DECADE_WRITTEN.fullmatch(said):
        found = re.search(rf"\b{said[:-1]}'?s\b", flat)
    if found is None:
        found = re.search(rf"(?<!\w)(?:[A-Za-z]')?{re.escape(said)}(?!\w)", flat, re.I)  # "O'" of "O'Brien's"
    if found is None:
        return None
    start = found.start()
    while start >= 2 and flat[start - 1] in ",." and flat[start - 2].isdigit():  # "1,200": words() split the figure
        start -= 1
        while start >= 1 and flat[start - 1].isdigit():
            start -= 1
    # offsets into the normal form are offsets into the text when it kept its length (curly quotes kept)
    return text[start:found.end()] if len(flat) == len(text) else flat[start:found.end()]


def as_written(stems: Iterable[str], text: str) -> list[str]:
    """Content stems shown as the text writes them ("nam" of "the freedoms he named" -> "named"; "wilson" ->
    "Wilson"; "usa" -> "U.S."), in the text's order, each once; a stem the text does not hold is shown as it is."""
    wanted = list(dict.fromkeys(stems))
    if not wanted:
        return []
    first: dict[str, str] = {}  # each stem's first word, as words() reads it, in the text's order
    for said, stemmed in _content_pairs(text):
        first.setdefault(stemmed, said)
    flat = unicodedata.normalize("NFKC", text).translate(QUOTES)
    order = {stem: i for i, stem in enumerate(first)}
    shown = (_where_written(first[s], text, flat) or first[s] if s in first else s
             for s in sorted(wanted, key=lambda s: order.get(s, len(order))))
    return list(dict.fromkeys(shown))


_DIGIT = re.compile(r"\d")
_NOT_CONTENT = STOPWORDS | FILLERS | LIGHT | _FREQUENCY_ADVERBS  # words no content_words() keeps


def numbers(text: str) -> set[str]:
    """Numbers, amounts, percentages and ordinals, normalized (``$1,081,000`` -> ``1081000``)."""
    found = set()
    text = _compound_numbers(text)
    for match in _NUMBER.findall(unicodedata.normalize("NFKC", text)):
        value = re.sub(r"(st|nd|rd|th)$", "", match).replace("$", "").replace(",", "").rstrip("%")
        if value.endswith(".00"):
            value = value[:-3]
        if value:
            found.add(value.rstrip(".") or value)
    for w in words(text):
        if w in NUMBER_WORDS and w not in ("one", "first", "second"):
            found.add(str(NUMBER_WORDS[w]))
    return found


def number_vocabulary(text: str) -> set[str]:
    """Every number a text expresses, in digits or words."""
    out = numbers(text)
    out.update(str(NUMBER_WORDS[w]) for w in words(_compound_numbers(text)) if w in NUMBER_WORDS)
    return out


def capitalized_terms(text: str) -> list[str]:
    """Capitalized words that are not stopwords (names, places, institutions), lowercased."""
    raw = PHRASES.sub("USA", unicodedata.normalize("NFKC", text).translate(QUOTES))
    out = []
    for match in re.finditer(r"\b[A-Z][\w'-]*", raw):
        token = _CONTRACTION.sub("", match.group(0).lower().strip("'"))  # "He's" is "he", "Dylan's" is "dylan"
        if token in STOPWORDS or token in FILLERS or len(token) < 2 or token in NUMBER_WORDS:
            continue
        out.append(token)
    return out


def name_words(text: str) -> frozenset[str]:
    """Whole words without a possessive ("Dylan's" -> dylan), as names are compared."""
    return frozenset(w[:-2] if w.endswith("'s") else w for w in words(text))


def restates(words: frozenset[str] | set[str], others: Iterable[frozenset[str] | set[str]]) -> bool:
    """Do these content words say what one of ``others`` says: more than 0.6 of the shorter one's words shared
    (the redundancy of two findings, the sameness of two list items in other words)."""
    return any(len(words & other) / max(min(len(words), len(other)), 1) > 0.6 for other in others)


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance: the fewest letters added, dropped or changed to make one word the other (a misspelling
    the verifier names, a misread name the map merges)."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]
