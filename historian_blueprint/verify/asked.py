"""What a question asks for: the type of its answer (a date for "when", a number for "how many", a person for
"who", a place for "where") read from its question word and the noun after it, and whether a cited span holds an
answer of that type the question does not itself give. Names are found by a capitalization heuristic (a
dependency parse, about 10 ms a sentence here, would be paid on every sentence an answer is read from).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from historian_blueprint.text.words import NUMBER_WORDS, QUOTES, STOPWORDS, content_words
from historian_blueprint.text.quantities import quantities
from historian_blueprint.verify.evidence import related_form

# Words of a qualifier that point at the document itself, not at the world ("in his message", "in the interview").
DOCUMENT_WORDS = frozenset(
    "message address speech report interview narrative paper article document documents text collection page "
    "source sources congress annual year years time way view opinion words account story ending".split()
)
# Words of a qualifier that place it in time rather than in the world ("at the start of 1916", "in the course of").
FRAME_WORDS = frozenset("start beginning end close course middle midst outset opening times days".split())
_MONTHS = frozenset("january february march april may june july august september october november december".split())
# Capitalized words that name an office or a body rather than someone in particular ("the President").
GENERIC_NAMES = frozenset(
    "president congress government secretary treasury union states state nation senate house court army navy "
    "department governor mayor council legislature administration constitution republic federal national".split()
)


# ------------------------------------------------------------------ what the question asks for: its answer's type

Asked = Literal["date", "number", "person", "place", "other"]
# The head noun after "what" / "which" ("in what year", "which president") names the type of the answer.
DATE_NOUNS = frozenset("year years date dates day days month months decade".split())
NUMBER_NOUNS = frozenset("number amount sum total percentage percent proportion figure count quantity population "
                         "cost price salary wages wage pay fee".split())
PERSON_NOUNS = frozenset("""president presidents person persons man men woman women official officer general
secretary senator leader leaders owner master mistress mother father wife husband son daughter sister brother
child children parent parents grandmother grandfather""".split())
PLACE_NOUNS = frozenset("state states city cities country countries town towns county place places territory port "
                        "region island river".split())
# "how large was the loan": a figure, like "how many" and "how much".
_HOW_NUMBER = frozenset("many much large old far".split())
_YES_NO = frozenset("did does do was were is are has have had can could would will should shall may might must".split())
_ASK_WORDS = frozenset("when where who whom whose what which how why".split())
_HEADS = (("date", DATE_NOUNS), ("number", NUMBER_NOUNS), ("person", PERSON_NOUNS), ("place", PLACE_NOUNS))
_BE = frozenset("was were is are the a an".split())


@dataclass(frozen=True)
class Wanted:
    kind: Asked
    text: str = ""       # the question's words that ask it ("When", "how many acres")
    noun: str = ""       # what a number counts or whose name is asked ("acres", "mother"), as written


_NAME_OF = re.compile(r"\bnames?\s+of\s+(?:the\s+|a\s+|an\s+|his\s+|her\s+|their\s+)?(?P<np>[\w' -]+?)"
                      r"(?=\s*[,?;:]|\s+(?:who|whom|that|which|where|when|was|were|is|are|did|does|had|has|of|in|on|at|"
                      r"for|with|by|from|to|during|\w+ed)\b|\s*$)", re.I)  # the noun phrase ends before "named in"
_TOKEN = re.compile(r"[A-Za-z][\w'-]*|\d[\d,.]*|[,?;:]")


def named_noun(match: re.Match[str]) -> str:
    """The head of "the name of ...", as written: "mother" in "the name of Julia Malone's mother"."""
    return re.sub(r"'s?$", "", match.group("np").split()[-1])


def name_asked(question: str) -> str | None:
    """The noun whose name a "What was the name of ...?" question asks for, as the question writes it."""
    q = question.translate(QUOTES)
    match = re.match(r"\s*(?:what|which)\s+(?:was|were|is|are)\s+the\s+(?=names?\s+of\b)", q, re.I)
    named = _NAME_OF.match(q, match.end()) if match else None
    return named_noun(named) if named else None


_FOCUS = re.compile(
    r"^\s*(?:what|which)\s+(?:was|were|is|are)\s+the\s+(?P<phrase>[\w' -]+?)\s+"
    r"(?:of|on|in|for|with|to|by|at|during|that|from)\b",
    re.I,
)
_PARTICIPLES = frozenset("given known called chosen taken written spoken shown seen made done held told built paid "
                         "sent kept brought sung sold bought won lost found left put set".split())


@dataclass(frozen=True)
class Focus:
    """What a "What was the X of ..." question asks for: X's head word (its stems, and as the question writes it),
    and whether it asks for a name."""

    wanted: frozenset[str] = frozenset()
    noun: str = ""
    name: bool = False

    def answered_by(self, words: frozenset[str], text: str) -> bool:
        """Does a finding (its content words and text) hold what is asked for: the noun, and a name if one is
        asked (a proper name after the sentence's first word; quotes and brackets before it do not count)."""
        if not self.wanted <= words:
            return False
        opened = text.strip().lstrip("\"'“‘([—- ")
        return not self.name or bool(re.search(r"(?<!^)(?<![.!?]\s)\b[A-Z][a-z]{2,}", opened))

    def missing(self) -> str:
        """What a refusal says is missing when no finding holds it."""
        if not self.name:
            return f"the {self.noun}"
        return f"the name of the {self.noun}" if self.noun not in ("name", "names") else f"the {self.noun}"


def focus(question: str) -> Focus:
    """What a "What was the X of ..." question asks for.

    "What was the Senate vote on the repeal?" asks for a vote; "What was the name of Julia Malone's mother?"
    asks for a name, of a mother. Evidence that never mentions the vote (or names the mother) does not answer,
    however much of the rest of the question it shares.
    """
    noun = name_asked(question)
    if noun:
        return Focus(frozenset(content_words(noun)), noun, True)
    match = _FOCUS.match(question)
    written = []
    for w in (match.group("phrase").split() if match else []):
        if w[:1].isupper() and written:  # "the four freedoms Roosevelt named": a name after the phrase opens
            break                        # the clause that follows it ("the Senate vote" is one phrase)
        if content_words(w) and w.lower() not in NUMBER_WORDS:
            written.append(w)
    while len(written) > 1 and (written[-1].endswith("ed") or written[-1].lower() in _PARTICIPLES):
        written.pop()  # "the ship named in 1898" asks about a ship, "the name given to it" for a name
    if not written:
        return Focus()
    if written[-1].lower() in ("name", "names"):  # "What was the name given to the plantation?"
        return Focus(frozenset(), written[-1], True)
    return Focus(frozenset(content_words(written[-1])), written[-1], False)


def wanted(question: str) -> Wanted:
    """What the question asks for, read from its first question word and the noun after it."""
    q = question.translate(QUOTES)
    tokens = [(m.group(), m.start()) for m in _TOKEN.finditer(q)]
    lower = [t.lower() for t, _ in tokens]
    if not lower or lower[0] in _YES_NO:
        return Wanted("other")
    i = next((n for n, w in enumerate(lower) if w in _ASK_WORDS), None)
    if i is None:
        return Wanted("other")
    word, at = tokens[i]
    simple = {"when": "date", "where": "place", "who": "person", "whom": "person", "whose": "person"}
    if lower[i] in simple:
        return Wanted(simple[lower[i]], word)  # type: ignore[arg-type]
    nxt = lower[i + 1] if i + 1 < len(lower) else ""
    if lower[i] == "how":
        if nxt not in _HOW_NUMBER:
            return Wanted("other")
        noun = []  # what is counted, up to the first function word: "how many national banks suspended during"
        for t, w in zip(tokens[i + 2:], lower[i + 2:]):
            if w in STOPWORDS or w in _YES_NO or not w[0].isalpha():
                break
            noun.append(t[0])
        text = q[at:tokens[i + 1 + len(noun)][1] + len(tokens[i + 1 + len(noun)][0])]
        return Wanted("number", text, " ".join(noun) if nxt in ("many", "much") else "")
    if lower[i] not in ("what", "which"):
        return Wanted("other")
    j = i + 1
    while j < len(lower) and lower[j] in _BE:
        j += 1
    rest = []  # the head noun, after at most one number or adjective: "which two presidents", "what yearly salary"
    for t, w in zip(tokens[j:j + 2], lower[j:j + 2]):
        if w in STOPWORDS or w in _YES_NO or not w[0].isalpha():
            break
        rest.append((w, t[1]))
    named = _NAME_OF.match(q, rest[0][1]) if rest and rest[0][0] in ("name", "names") else None
    if named:  # "the name of Julia Malone's mother": a person's name when a person is named
        head = named_noun(named)
        if head.lower() in PERSON_NOUNS:
            return Wanted("person", q[at:named.end()], head)
        return Wanted("place", q[at:named.end()]) if head.lower() in PLACE_NOUNS else Wanted("other")
    for w, start in rest:
        for kind, nouns in _HEADS:
            if w in nouns:
                return Wanted(kind, q[at:start + len(w)])  # type: ignore[arg-type]
    return Wanted("other")


def asks(question: str) -> Asked:
    """The type of answer the question asks for: a date, a number, a person, a place, or other."""
    return wanted(question).kind


_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sept?(?:ember)?|"
          r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)")
_ORDINALS = "|".join(f"{w}th" for w in "four fif six seven eigh nin ten eleven twelf thirteen fourteen fifteen "
                                          "sixteen seventeen eighteen nineteen twentie thirtie".split())
# A date: a year, "May 6", "the 15th of February", "the first day of November".
_DATES = (
    re.compile(r"(?<![\d,.$])(?:1[5-9]\d\d|20\d\d)(?:'?s)?(?![\d,]\d)"),
    re.compile(rf"\b{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b"),
    re.compile(rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)?|(?:(?:twenty|thirty)-)?(?:first|second|third|{_ORDINALS}))\s+"
               rf"(?:day\s+)?of\s+{_MONTH}\b", re.I),
)
# Figures without digits: "hundreds of slaves", "half the debt".
_FIGURE_WORDS = frozenset("hundreds thousands millions billions dozens scores half quarter".split())
_DAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday christmas easter".split())
# Capitalized words that are not a person's name: offices and bodies, months and days, places, peoples, things.
NOT_PERSON = GENERIC_NAMES | _MONTHS | _DAYS | DOCUMENT_WORDS | frozenset("""god city county co river island islands
bay territory ocean sea gulf harbor canal mountain mountains valley street avenue road fort port lake cape district
parish new north south east west great san los mount company railroad railway bank act bill treaty war church hall
college university school society party committee commission bureau office conference exposition association
federation club league corporation union american americans english british french german germans spanish chinese
japanese mexican mexicans indian indians negro negroes african european cuban russian italian irish austrian
hungarian catholic catholics protestant christian democratic republican democrats republicans world fellow
citizens gentlemen""".split())
# Words before a name that make it a person's ("Judge Ellison", "Marse Alec", "Rear-Admiral John G. Walker").
PERSON_TITLES = frozenset("""mr mrs miss ms dr sir lady lord rev reverend gen general col colonel capt captain maj
major lt lieutenant sgt sergeant admiral rear-admiral commodore mayor governor gov president senator judge jedge
justice secretary marse massa marster missus mistress uncle aunt king queen prince emperor""".split())
_FIRST_PERSON = re.compile(r"\bI\b|\b(?i:me|my|mine|myself|we|us|our|ours)\b")
# Capitalized words after "in", "at", "to" ... that are not a place ("in January", "to President Taft", "in the War").
NOT_PLACE = _MONTHS | _DAYS | DOCUMENT_WORDS | PERSON_TITLES | frozenset("god war act bill treaty law".split())
_LOCATIVE = re.compile(r"\b(?:in|at|near|over|from|to|into|across|through|toward|towards|within|on|outside|around)\s+"
                       r"(?:the\s+|de\s+)?(?=[A-Z])")
_CAPS = re.compile(r"(?<![\w'])[A-Z][\w'.-]*(?:\s+(?:of\s+|de\s+|van\s+)?[A-Z][\w'.-]*)*")


def _bare(token: str) -> str:
    return re.sub(r"'s?$", "", token.strip(".,;:")).lower()


@lru_cache(maxsize=256)
def _question_gives(question: str) -> tuple[frozenset[str], frozenset[str], frozenset[float]]:
    """What the question itself gives, read once per question (a composer asks it of every sentence): its
    words, its dates as written and its figures' values."""
    words = frozenset(_bare(w) for w in question.translate(QUOTES).split())
    dates = frozenset(m.group().lower() for p in _DATES for m in p.finditer(question))
    return words, dates, frozenset(q.value for q in quantities(question))


def _given(words: Sequence[str], question: str) -> bool:
    """Every word of a name is the question's own (the answer is not the subject it asks about)."""
    asked = _question_gives(question)[0]
    return bool(words) and all(w in asked for w in words)


def names_in(text: str) -> list[list[str]]:
    """Runs of capitalized words that read as a person's name (a title and a name, or two or more name words),
    each as its lowercased name words."""
    out = []
    for m in _CAPS.finditer(text.translate(QUOTES)):
        raw = [_bare(t) for t in m.group().split()]
        while raw and raw[0] in STOPWORDS:
            raw = raw[1:]
        if any(a in PERSON_TITLES and b == "of" for a, b in zip(raw, raw[1:])):
            continue  # an office, not a name: "Mayor of Cincinnati"
        tokens = [t for t in raw if t not in ("of", "de", "van")]
        titled = [n for n, t in enumerate(tokens) if t in PERSON_TITLES]
        if titled and titled[-1] + 1 < len(tokens):
            rest = [t for t in tokens[titled[-1] + 1:] if t not in NOT_PERSON]
            if rest:
                out.append(rest)
        elif len(tokens) >= 2 and not any(t in NOT_PERSON for t in tokens) and not m.group().isupper():
            out.append(tokens)  # (no title among them: a title is handled above)
    return out


def holds_type(kind: Asked, text: str, *, byline: str = "", question: str = "") -> bool:
    """The span holds an answer of this kind that the question does not itself give: a date (a year or a month
    and day), a number (a figure or number words, not a year), a person (a name, or the document's author or
    speaker when the span speaks in the first person), a place (a name after in, at, near, over ...)."""
    if kind == "other":
        return True
    plain = text.translate(QUOTES)
    if kind == "date":
        given = _question_gives(question)[1]
        return any(m.group().lower() not in given for p in _DATES for m in p.finditer(plain))
    if kind == "number":
        given = _question_gives(question)[2]
        return (any(not q.year and q.value not in given for q in quantities(plain))
                or bool(_FIGURE_WORDS & {w.lower() for w in re.findall(r"[A-Za-z]+", plain)}))
    if kind == "person":
        found = names_in(plain) + (names_in(byline) if _FIRST_PERSON.search(plain) else [])
        return any(not _given(name, question) for name in found)
    for m in _LOCATIVE.finditer(plain):
        run = _CAPS.match(plain, m.end())
        words = [_bare(t) for t in run.group().split()] if run else []
        if words and not (len(words) == 1 and words[0] in GENERIC_NAMES) and not _given(words, question) and not any(
                w in NOT_PLACE for w in words):
            return True
    return False


def answers(want: Wanted, question: str, cited: Sequence[tuple[str, str]]) -> bool:
    """Some cited (span, byline) holds the asked type, with what a number counts or whose name is asked beside it."""
    noun = set(content_words(want.noun))
    for text, byline in cited:
        words = set(content_words(text))
        if holds_type(want.kind, text, byline=byline, question=question) and all(
                w in words or related_form(w, words) for w in noun):
            return True
    return False


_TYPE_NAMES = {"date": "date", "number": "number", "person": "person's name", "place": "place"}


def describe_type(want: Wanted) -> str:
    """One sentence naming the answer the cited passages do not hold, for a finding."""
    what = _TYPE_NAMES[want.kind]
    if want.noun:
        what = f"{what} of {want.noun}" if want.kind == "number" else f"{what} for the {want.noun}"
    return f"the cited passages hold no {what}, which the question asks for (“{want.text}”)"
