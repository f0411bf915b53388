"""Statements of different sources compared: where they agree, and where they disagree about the same point.

Candidates are found by meaning, in the bundled MiniLM: statements whose *skeletons* (figures, negations and
names taken out) are close, and figures whose *contexts* (the words a figure is said of) are close, a count
close to a death toll counting the dead. Then structure decides: a figure that does not agree with the other's
(bounds, a hedged figure good to a tenth, a day of a month), an assertion and its denial (a negated main verb,
a denial frame, words calling the claim false, an affix-negated word: the verifier's ``affix_pair``; or the
floor's ``flips`` over the aligned words of two near-identical statements), or different people or
organisations doing the same thing (attribution). The caller passes only sources about the topic's event.

The thresholds are fixed here, fitted on the development corpus only; ``historian map`` reports what each
conflict was found by, so a wrong one can be traced.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from historian_blueprint.mapping.figures import Figure
from historian_blueprint.mapping.nlp import Statement
from historian_blueprint.text.quantities import rounds_to
from historian_blueprint.verify.alignment import align, flips
from historian_blueprint.verify.rules.lexical import affix_pair
from historian_blueprint.verify.rules.polarity import NEGATIONS

DENIALS = NEGATIONS | frozenset("deny denies denied false untrue".split())

SAME_POINT = 0.80   # skeletons this close say the same thing but for figures, names or a negation
SAME_NOUN = 0.60    # how close two statements must be to compare figures keyed by anything but the dead
RELATIVE_TIME = re.compile(r"\b(?:last|past|present|current|this|next|preceding)\s+(?:fiscal\s+)?"
                           r"(?:year|month|session|quarter)\b|"
                           r"\bduring the (?:fiscal )?year\b|\bat present\b|\bto-?day\b|\bnow\b", re.I)
AGREE = 0.75        # statements this close (whole text), with nothing in conflict, agree
AGREE_NAMED = 0.55  # ... or this close when they name the same proper noun ("the Arley seam" / "in the Arley")
# By meaning (the bundled MiniLM), fitted on the development corpus (tests/data/map_dev_corpus.jsonl) only:
DEATH_LIKE = 0.55   # a figure whose context is this close to a death toll counts the dead ("souls were lost")
SAME_FIGURE = 0.70  # two figures whose contexts are this close count the same thing
# an assertion and a denial of an account ("no ground for the belief that") this close are about one claim ...
SAME_CLAIM = 0.45
# ... a plain negation ("have not been realized") must be this close: expository prose negates everywhere
PLAIN_DENIAL = 0.65
SHARED_WORDS = 2    # ... when they also share this many content words (or one and an affix-negated pair)
SAME_ACT = 0.70     # two statements this close (skeletons) with different agents name different doers of one act ...
ATTRIBUTED = 0.35   # ... or this close, sharing a content word, when one of them corrects who did it ("It was X who")
# A statement that corrects who did something: a cleft ("it was the crew ... who took us off"), a name set against
# another ("Whitcomb and not Dunleavy"), or a correction of the received account ("the truth is", "the credit").
CORRECTION = re.compile(r"\b[Ii]t was\b[^.;]{0,80}?\b(?:who|that)\b|\band not\b|,\s*not\b|\b[Tt]he truth is\b|"
                        r"\b[Tt]he credit\b|"
                        r"\bnot\s+(?:the\s+)?[A-Z]")
TOLERANCE = 0.10    # "about 200" agrees with 190 and 210, not with 160: a hedged figure is good to a tenth
SAME_HAPPENING = 0.35  # two statements this close (skeletons), sharing a content word, date the same happening
# The phenomenon, in a few plain wordings: the number of people who died.
DEATH_TOLL = ("some persons were killed", "some lives were lost", "the dead numbered some", "some people died",
              "some were drowned", "the loss of life was some", "some perished")
Embed = Callable[[list[str]], np.ndarray]


@dataclass
class Edge:
    a: int
    b: int
    kind: str       # agree, number, date, assertion, attribution
    detail: str = ""


@dataclass
class Comparison:
    statements: list[Statement]
    agreements: list[Edge] = field(default_factory=list)
    conflicts: list[Edge] = field(default_factory=list)


MIN_WORDS = 2  # a clause names at least this many content words, and is mostly words, to be compared


def is_prose(st: Statement) -> bool:
    """A clause worth comparing: not a header, a list of figures or OCR debris ("13, 14 10. APRIL. 22.",
    "Associated I'resn Service"): enough content words, and words make most of its tokens."""
    tokens = st.text.split()
    words = [t for t in tokens if re.fullmatch(r"[A-Za-z][a-z'’-]*[.,;:!?]?", t)]
    return len(st.words) >= MIN_WORDS and len(words) >= 0.7 * len(tokens) and st.text[:1] not in "0123456789"


def skeleton(st: Statement) -> str:
    """What the statement says without its figures, negations and named actors (read from the parse)."""
    return st.skeleton or st.text


def compare(statements: list[Statement], embed: Embed, years: dict[str, int | None] | None = None) -> Comparison:
    """Every pair of statements from different sources (the caller passes sources about the same event): an
    agreement, a conflict, or nothing (they are about different points). Candidates are found by meaning
    (statements, and each figure's context, in the bundled encoder with figures and names masked); structure
    decides: figures that do not agree, an assertion and its denial, different doers of one act. ``years``:
    each source's year; a figure dated relative to its document ("last year", "now") is compared only with
    figures of a document of the same year."""
    out = Comparison(statements)
    if len(statements) < 2:
        return out
    years = years or {}
    whole = embed([s.text for s in statements])
    bones = embed([skeleton(s) for s in statements])
    sims, bone_sims = whole @ whole.T, bones @ bones.T  # every pair at once; Python looks only at candidates
    figures = _read_figures(statements, embed)
    source = np.array([hash(s.source_id) for s in statements])
    figured = np.array([bool(s.figures) for s in statements])
    denied = np.array([s.denied for s in statements])
    candidate = ((figured[:, None] & figured[None, :]) | (bone_sims >= min(SAME_CLAIM, ATTRIBUTED, SAME_HAPPENING))
                 | (sims >= AGREE_NAMED))
    candidate &= source[:, None] != source[None, :]
    prose = np.array([is_prose(s) for s in statements])
    candidate &= prose[:, None] & prose[None, :]
    for i, j in zip(*np.nonzero(np.triu(candidate, k=1))):
        i, j = int(i), int(j)
        a, b = statements[i], statements[j]
        similar, bone = float(sims[i, j]), float(bone_sims[i, j])
        edge = _figures_differ(i, j, figures[i], figures[j], _apart(a, b, years)) if _same_time(a, b, years) else None
        if edge is None and ((bone >= ATTRIBUTED and (corrects(a) or corrects(b)) and _shared(a, b))
                             or bone >= SAME_ACT):
            edge = _different_doers(i, j, a, b, frozenset({a.agent} - {""}), frozenset({b.agent} - {""}))
        opposed = bool(denied[i]) != bool(denied[j])
        claim = SAME_CLAIM if disputes(a) or disputes(b) else PLAIN_DENIAL
        if edge is None and ((bone >= claim and (opposed or _opposed_words(a, b)) and _shared(a, b, 3))
                             or (opposed and bone >= DENIES_FLOOR and _denies(a, b))):
            denial = a if a.denied else b
            edge = Edge(i, j, "assertion", f"one denies what the other states: {denial.text[:80]}")
        if edge is None and bone >= SAME_HAPPENING and a.words & b.words:
            edge = _days_differ(i, j, a, b)
        if edge is None and bone >= SAME_POINT:  # the same statement but for a word: a negation, or who did it
            flipped = flips(align(a.text, b.text), DENIALS) or flips(align(b.text, a.text), DENIALS)
            edge = (Edge(i, j, "assertion", f"one says '{flipped[0]}'") if flipped
                    else _different_doers(i, j, a, b, a.names, b.names))
        if edge is None and (similar >= AGREE or (similar >= AGREE_NAMED and _same_names(a, b))):
            edge = Edge(i, j, "agree", f"similarity {similar:.2f}")
        shared = _same_figures(figures[i], figures[j]) if edge is None else ""
        if shared:
            edge = Edge(i, j, "agree", f"the same figure for {shared}")
        if edge is not None:
            (out.agreements if edge.kind == "agree" else out.conflicts).append(edge)
    return out


@dataclass(frozen=True)
class Read:
    """A figure of a statement with what it counts: its key ("deaths" when its context reads as a death toll)
    and its context's vector."""

    figure: Figure
    key: str
    vector: np.ndarray


def _read_figures(statements: list[Statement], embed: Embed) -> list[list[Read]]:
    found = [(n, f) for n, s in enumerate(statements) for f in s.figures if f.context]
    out: list[list[Read]] = [[] for _ in statements]
    if not found:
        return out
    vectors = embed([f.context for _, f in found])
    toll = (vectors @ embed(list(DEATH_TOLL)).T).max(axis=1)
    for (n, f), v, t in zip(found, vectors, toll):
        key = "deaths" if f.kind == "count" and (f.key == "deaths" or t >= DEATH_LIKE) else f.key
        out[n].append(Read(f, key, v))
    return out


def _comparable(x: Read, y: Read) -> bool:
    """Two figures count the same thing: both the dead, or the same kind said of the same thing (their
    contexts close in meaning, or the same counted noun and verb in close contexts)."""
    if x.figure.kind != y.figure.kind or (x.figure.kind == "date") != (y.figure.kind == "date"):
        return False
    if x.key == "deaths" or y.key == "deaths":
        return x.key == y.key
    if x.figure.kind == "date" and (x.figure.quantity.year or y.figure.quantity.year
                                    or not (x.figure.month and y.figure.month)):
        return False  # days are compared (with their months); a year alone dates too much to be one point
    close = float(x.vector @ y.vector)
    same_noun = bool(x.figure.noun) and x.figure.noun == y.figure.noun  # "seven engineers" is not "ten days"
    return ((close >= SAME_FIGURE and (same_noun or x.figure.kind == "date"))
            or (bool(x.key) and x.key == y.key and close >= SAME_NOUN))


def agree(x: Figure, y: Figure) -> bool:
    """Two sources' figures for one thing agree: a day when its month and day are the same; a count or a sum
    when they are equal, lie within each other's bound, or one is hedged or round ("about", "some", written
    in words) and the other lies within a tenth of it."""
    if x.kind == "date":
        return x.quantity.value == y.quantity.value and (x.month == y.month or not (x.month and y.month))
    if x.high is not None or y.high is not None:
        return _spans_agree(x, y)
    if x.bound or y.bound:
        return (x.allows(y.quantity.value) if x.bound else True) and (y.allows(x.quantity.value) if y.bound else True)
    a, b = x.quantity.value, y.quantity.value
    if a == b or rounds_to(x.quantity, b) and not x.quantity.hedged \
            or rounds_to(y.quantity, a) and not y.quantity.hedged:
        return True
    loose = x.quantity.hedged or y.quantity.hedged
    return loose and abs(a - b) <= TOLERANCE * max(abs(a), abs(b))


def _spans_agree(x: Figure, y: Figure) -> bool:
    """A range ("between 75 and 200") and another figure agree when they share more than an end: a figure within
    the range ("about" one within a tenth of it), two ranges that overlap, a bound the range reaches past ("more
    than 200" and "200 to 300"); "75 to 200" and "200 to 300" meet only at 200 and disagree."""
    (a, b), (c, d) = x.span, y.span
    bound, other = (x, y) if x.bound else (y, x) if y.bound else (None, None)
    if bound is not None:
        lo, hi = other.span
        return hi > bound.quantity.value if bound.bound == "min" else lo < bound.quantity.value
    if a == b or c == d:  # a figure and a range
        point, (lo, hi) = ((x, (c, d)) if a == b else (y, (a, b)))
        slack = TOLERANCE * point.quantity.value if point.quantity.hedged else 0.0
        return lo - slack <= point.quantity.value <= hi + slack
    return min(b, d) > max(a, c)


def _apart(a: Statement, b: Statement, years: dict[str, int | None]) -> bool:
    """Two statements about different times: they name different years, or their documents were written
    more than a year apart (figures of a report of 1890 and one of 1910 are two times, not two accounts)."""
    ya, yb = _years(a), _years(b)
    if ya and yb:
        return not ya & yb
    da, db = years.get(a.source_id), years.get(b.source_id)
    return da is not None and db is not None and abs(da - db) > 1


def _years(st: Statement) -> set[int]:
    return {int(f.quantity.value) for f in st.figures if f.quantity.year}


def _figures_differ(i: int, j: int, xs: list[Read], ys: list[Read], apart: bool) -> Edge | None:
    """A figure both count the same thing with that does not agree with the other's, when no figure of the
    one agrees with a figure of the other for that thing. Statements about different times (``apart``) are
    compared only on the dead of the event and on dates."""
    for x in xs:
        if apart and x.figure.kind != "date" and x.key != "deaths":
            continue
        same = [y for y in ys if _comparable(x, y)]
        if same and not any(agree(x.figure, y.figure) or agree(y.figure, x.figure) for y in same):
            kind = "date" if x.figure.kind == "date" else "number"
            what = x.key or (f"the {x.figure.month} day" if kind == "date" else x.figure.noun or "a figure")
            return Edge(i, j, kind, f"{what}: {_show([x.figure])} / {_show([y.figure for y in same])}")
    return None


# A dateline ("MAYSVILLE, Ky., April 14.", "Quarles Ferry, March 8th, 1848.") dates the writing, not the events.
DATELINE = re.compile(r"^\s*[A-Z][A-Za-z.' -]+,(?:\s*[A-Z][A-Za-z.]+,)?\s+(?P<month>January|February|March|April|"
                      r"May|June|July|August|September|October|November|December)\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?\b")


def event_days(st: Statement) -> list[Figure]:
    """The days of a month a statement dates its own act on: not its dateline's day, not a modifier's."""
    days = [f for f in st.figures
            if f.kind == "date" and f.month and not f.quantity.year and f.quantity.value <= 31 and not f.aside]
    line = DATELINE.match(st.text)
    if line:
        days = [f for f in days if not (f.month == line["month"].lower() and f.quantity.value == int(line["day"]))]
    return days


def _days_differ(i: int, j: int, a: Statement, b: Statement) -> Edge | None:
    """Two accounts of one happening put it on different days of the same month (and on no common day)."""
    xs, ys = event_days(a), event_days(b)
    same_month = [(x, y) for x in xs for y in ys if x.month == y.month]
    if same_month and not any(x.quantity.value == y.quantity.value for x, y in same_month):
        x, y = same_month[0]
        return Edge(i, j, "date", f"the day: {_show([x])} / {_show([y])}")
    return None


def _same_figures(xs: list[Read], ys: list[Read]) -> str:
    shared = {x.key for x in xs for y in ys if x.key and _comparable(x, y) and agree(x.figure, y.figure)}
    return ", ".join(sorted(shared))


def _show(figures: list[Figure]) -> str:
    return ", ".join(f"{f.month + ' ' if f.month else ''}{f.quantity.value:,.10g}" for f in figures)


def _shared(a: Statement, b: Statement, words: int = SHARED_WORDS) -> bool:
    """An assertion and a denial share enough of what they are about: SHARED_WORDS content words, or one and
    a word the other negates by an affix (sufficient / insufficient)."""
    common = len(a.words & b.words)
    return common >= words or (common >= 1 and _opposed_words(a, b))


def _opposed_words(a: Statement, b: Statement) -> bool:
    """A word of one negated by an affix in the other (WordNet antonyms: sufficient / insufficient)."""
    return any(affix_pair(x, y) or affix_pair(y, x) for x in a.words - b.words for y in b.words - a.words)


DENIED_WORDS = 2  # a denial names at least this many content words, every one of them in what it denies ...
DENIES_FLOOR = 0.40  # ... and is this close to it (skeletons): a short denial is not a denial of every long sentence


def _denies(a: Statement, b: Statement) -> bool:
    """One statement denies the other: the denial's own content lemmas (names and its frame aside) are all in the
    assertion ("did not cause the collision" / "caused the collision by steering across ...")."""
    denial, claim = (a, b) if a.denied else (b, a)
    return len(denial.words) >= DENIED_WORDS and denial.words <= claim.words


def _different_doers(i: int, j: int, a: Statement, b: Statement, x: frozenset[str], y: frozenset[str]) -> Edge | None:
    """Close statements that name different people or organisations (``x``, ``y``) as doing it."""
    if x and y and not (x & y) and not _alias(x, y):
        return Edge(i, j, "attribution", f"{', '.join(sorted(x))} / {', '.join(sorted(y))}")
    return None


# A denial of someone's account, not a plain negation: it names the account ("the belief", "the story", "the
# view", "the charge") or the denier's disbelief ("I do not believe", "cannot credit").
DISPUTE = re.compile(r"\b(?:belief|view|story|stories|rumou?rs?|tale|charge|notion|assertion|"
                     r"fable|myth|invention)\b|\b(?:do|did|does|can|could)\s*(?:not|n't)\s+(?:believe|credit|accept)\b|"
                     r"\b(?:cannot|can't)\s+(?:believe|credit|accept)\b", re.I)


def disputes(st: Statement) -> bool:
    return st.denied and bool(DISPUTE.search(st.text))


def corrects(st: Statement) -> bool:
    return bool(CORRECTION.search(st.text))


_CAPITALIZED = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]{2,}\b")


def _same_names(a: Statement, b: Statement) -> bool:
    """Both name the same proper noun (not at a sentence's start): the same thing, however worded."""
    return bool(set(_CAPITALIZED.findall(a.text)) & set(_CAPITALIZED.findall(b.text)))


def _same_time(a: Statement, b: Statement, years: dict[str, int | None]) -> bool:
    """Figures dated relative to their documents are about the same time only in documents of one year."""
    if RELATIVE_TIME.search(a.text) or RELATIVE_TIME.search(b.text):
        ya, yb = years.get(a.source_id), years.get(b.source_id)
        return ya is not None and ya == yb
    return True


def _alias(x: frozenset[str], y: frozenset[str]) -> bool:
    """One name is the end of the other ("o'leary" / "catherine o'leary")."""
    return any(p.endswith(" " + q) or q.endswith(" " + p) for p in x for q in y)
