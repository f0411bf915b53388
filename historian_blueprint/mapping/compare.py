"""Statements of different sources compared: where they agree, and where they disagree about the same point.

Two statements are about the same point when their *skeletons* (the statement with its figures, negations
and names taken out) are close in the bundled MiniLM's embedding space, or, for figures, when what the figures
count (the counted noun and its verb, read from the parse) is. Then the grounding floor's own tests decide:
a figure that does not round to the other's (``text/words.rounds_to``: "some three hundred" agrees with
"about 300", "five thousand" does not with "2,209"), a negation one side has and the other lacks (the floor's
``flips`` over the aligned words), or different people or organisations doing the same thing (attribution).
The map compares only sources linked through shared named entities (the same events).

The thresholds are fixed here, chosen before the hidden corpus was seen; ``historian map`` reports what each
conflict was found by, so a wrong one can be traced.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from historian_blueprint.mapping.nlp import Figure, Statement
from historian_blueprint.verify.alignment import align, flips
from historian_blueprint.verify.rules.polarity import NEGATIONS

DENIALS = NEGATIONS | frozenset("deny denies denied false untrue".split())

SAME_POINT = 0.80   # skeletons this close say the same thing but for figures, names or a negation
TOPICAL = 0.30      # below this, two statements are not about the same matter (whatever their figures count)
SAME_NOUN = 0.60    # how close two statements must be to compare figures keyed by anything but the dead
RELATIVE_TIME = re.compile(r"\b(?:last|past|present|current|this|next|preceding)\s+(?:fiscal\s+)?(?:year|month|session|quarter)\b|"
                           r"\bduring the (?:fiscal )?year\b|\bat present\b|\bto-?day\b|\bnow\b", re.I)
AGREE = 0.75        # statements this close (whole text), with nothing in conflict, agree
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


def skeleton(st: Statement) -> str:
    """What the statement says without its figures, negations and named actors (read from the parse)."""
    return st.skeleton or st.text


def compare(statements: list[Statement], embed: Embed, years: dict[str, int | None] | None = None) -> Comparison:
    """Every pair of statements from different sources (the caller passes sources about the same events): an
    agreement, a conflict, or nothing (they are about different points). ``years``: each source's year; a
    figure dated relative to its document ("last year", "during the fiscal year", "now") is compared only
    with figures of a document of the same year."""
    out = Comparison(statements)
    if len(statements) < 2:
        return out
    whole = embed([s.text for s in statements])
    bones = embed([skeleton(s) for s in statements])
    sims, bone_sims = whole @ whole.T, bones @ bones.T  # every pair at once; Python looks only at candidates
    source = np.array([hash(s.source_id) for s in statements])
    figured = np.array([bool(s.figures) for s in statements])
    denied = np.array([s.denied for s in statements])
    candidate = ((sims >= TOPICAL) & figured[:, None] & figured[None, :]) | (bone_sims >= SAME_POINT)
    candidate |= (denied[:, None] != denied[None, :]) & (sims >= TOPICAL)  # a denial and what it may deny
    candidate &= source[:, None] != source[None, :]
    for i, j in zip(*np.nonzero(np.triu(candidate, k=1))):
        i, j = int(i), int(j)
        a, b = statements[i], statements[j]
        similar = float(sims[i, j])
        edge = _figures_differ(i, j, a, b, similar) if similar >= TOPICAL and _same_time(a, b, years or {}) else None
        if edge is None and a.denied != b.denied and _denies(a, b):
            denial = a if a.denied else b
            edge = Edge(i, j, "assertion", f"one denies what the other states: {denial.text[:80]}")
        if edge is None and float(bone_sims[i, j]) >= SAME_POINT:
            edge = _same_point(i, j, a, b)
            if edge is None and similar >= AGREE:
                edge = Edge(i, j, "agree", f"similarity {similar:.2f}")
        shared = _same_figures(a, b) if edge is None and similar >= TOPICAL else ""
        if shared:
            edge = Edge(i, j, "agree", f"the same figure for {shared}")
        if edge is None and similar >= SAME_NOUN and _same_full_date(a, b):
            edge = Edge(i, j, "agree", "the same day, month and year in close statements")
        if edge is not None:
            (out.agreements if edge.kind == "agree" else out.conflicts).append(edge)
    return out


DENIED_WORDS = 2  # a denial names at least this many content words, every one of them in what it denies


def _denies(a: Statement, b: Statement) -> bool:
    """One statement denies the other: the denial's own content lemmas (names and its frame aside) are all in the
    assertion ("did not cause the collision" / "caused the collision by steering across ...")."""
    denial, claim = (a, b) if a.denied else (b, a)
    return len(denial.words) >= DENIED_WORDS and denial.words <= claim.words


def _by_key(st: Statement) -> dict[str, list[Figure]]:
    out: dict[str, list[Figure]] = {}
    for f in st.figures:
        if f.key:
            out.setdefault(f.key, []).append(f)
    return out


def _matches(xs: list[Figure], ys: list[Figure]) -> bool:
    """Two sources' figures for one thing agree: a date when every part both state (year, month, day) is the
    same; a count or a sum when one rounds to the other or lies within its bound."""
    if xs[0].kind == "date" and ys[0].kind == "date":
        parts = [({int(f.quantity.value) for f in fs if f.quantity.year}, {f.month for f in fs if f.month},
                  {int(f.quantity.value) for f in fs if not f.quantity.year}) for fs in (xs, ys)]
        return all(not (a and b) or bool(a & b) for a, b in zip(*parts))
    return any(x.allows(y.quantity.value) or y.allows(x.quantity.value) for x in xs for y in ys)


def _figures_differ(i: int, j: int, a: Statement, b: Statement, similar: float) -> Edge | None:
    """A figure both count the same thing with (the dead; the day an event happened, a counted noun and its verb
    in two close statements) that does not round to the other's or lie within its bound."""
    ka, kb = _by_key(a), _by_key(b)
    pairs = [(key, ka[key], kb[key]) for key in ka.keys() & kb.keys() if key == "deaths" or similar >= SAME_NOUN]
    years_a, years_b = _years(a), _years(b)
    for key, xs, ys in pairs:
        if xs[0].kind != "date" and years_a and years_b and not years_a & years_b:
            continue  # "on November 1, 1893, ... $X" / "on November 1, 1894, ... $Y": two times, not two accounts
        if not _matches(xs, ys):
            kind = "date" if xs[0].kind == "date" else "number"
            return Edge(i, j, kind, f"{key}: {_show(xs)} / {_show(ys)}")
    return None


def _years(st: Statement) -> set[int]:
    return {int(f.quantity.value) for f in st.figures if f.quantity.year}


def _same_full_date(a: Statement, b: Statement) -> bool:
    """Both name one full date (day, month and year) and it is the same: the same event, however worded."""
    def full(st: Statement) -> set[tuple[int, str, int]]:
        dates = [f for f in st.figures if f.kind == "date"]
        years = {int(f.quantity.value) for f in dates if f.quantity.year}
        return {(y, f.month, int(f.quantity.value)) for f in dates if f.month and not f.quantity.year for y in years}
    x, y = full(a), full(b)
    return bool(x) and x == y


def _same_time(a: Statement, b: Statement, years: dict[str, int | None]) -> bool:
    """Figures dated relative to their documents are about the same time only in documents of one year."""
    if RELATIVE_TIME.search(a.text) or RELATIVE_TIME.search(b.text):
        ya, yb = years.get(a.source_id), years.get(b.source_id)
        return ya is not None and ya == yb
    return True


def _same_figures(a: Statement, b: Statement) -> str:
    ka, kb = _by_key(a), _by_key(b)
    shared = [k for k in ka.keys() & kb.keys() if _matches(ka[k], kb[k])]
    return ", ".join(sorted(shared))


def _show(figures: list[Figure]) -> str:
    return ", ".join(f"{f.quantity.value:,.10g}" for f in figures)


def _same_point(i: int, j: int, a: Statement, b: Statement) -> Edge | None:
    """Two statements that say the same but for a date or a figure ("began on October 8" / "started on
    October 9"), a negation or denial (an assertion and its denial), or who did it."""
    for kind in ("date", "count", "money"):
        xs = [f for f in a.figures if f.kind == kind and f.key]
        ys = [f for f in b.figures if f.kind == kind and f.key]
        if xs and ys and not _matches(xs, ys):
            return Edge(i, j, "date" if kind == "date" else "number", f"{xs[0].key}: {_show(xs)} / {_show(ys)}")
    if a.denied != b.denied:  # read from the parse: a negated main verb, or a clause under "denied that"
        denial = a if a.denied else b
        return Edge(i, j, "assertion", f"one denies it: {denial.text[:80]}")
    flipped = flips(align(a.text, b.text), DENIALS) or flips(align(b.text, a.text), DENIALS)
    if flipped:
        return Edge(i, j, "assertion", f"one says '{flipped[0]}'")
    if a.names and b.names and not (a.names & b.names) and not _alias(a.names, b.names):
        return Edge(i, j, "attribution", f"{', '.join(sorted(a.names))} / {', '.join(sorted(b.names))}")
    return None


def _alias(x: frozenset[str], y: frozenset[str]) -> bool:
    """One name is the end of the other ("o'leary" / "catherine o'leary")."""
    return any(p.endswith(" " + q) or q.endswith(" " + p) for p in x for q in y)
