"""The figures of a clause (digits and words, "about", "upwards of", "not fewer than"), each with what it
counts: a key read from the parse (the dead, a date's event, a counted noun and its verb) and its context, the
words it is said of, which the map compares by meaning when the keys say nothing."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from historian_blueprint.text.quantities import Quantity, quantities, rounds_to

MONTHS = frozenset("january february march april may june july august september october november december".split())
_UNITS = "first second third fourth fifth sixth seventh eighth ninth".split()
# Days of a month written as ordinal words ("the seventeenth day of November", "the twenty-first of May").
DAY_WORDS = {w: n for n, w in enumerate(_UNITS + """tenth eleventh twelfth thirteenth fourteenth fifteenth sixteenth
seventeenth eighteenth nineteenth twentieth""".split(), 1)} | {f"twenty-{w}": 21 + n for n, w in enumerate(_UNITS)} | {
    "thirtieth": 30, "thirty-first": 31}


# What a figure counts, as a key two sources' figures are compared by. People who die are one thing however
# they are named ("persons who died", "killed 141", "perished", "lost their lives"): the commonest figure in
# dispute in historical sources. Other figures are keyed by their counted noun and its verb, as lemmas.
PEOPLE = frozenset("""person people man woman child worker soldier life victim resident inhabitant citizen passenger
sailor miner girl boy casualty body soul""".split())
DEATH = frozenset("die kill perish drown lose burn murder slay drown bury".split())
TIME_UNITS = frozenset("year month week day hour minute second night morning evening century decade".split())


# A bound, not a figure: "upwards of 240" allows 250 and not 178; "not fewer than 41" allows 50 and not 29.
_LOWER_BOUND = re.compile(r"(?:at least|more than|over|above|upwards? of|(?:no|not) (?:fewer|less) than|in excess of|"
                          r"exceeding)\s*\$?$", re.I)
_UPPER_BOUND = re.compile(r"(?:at most|fewer than|less than|under|below|(?:no|not) more than|up to|"
                          r"not exceeding)\s*\$?$", re.I)


@dataclass(frozen=True)
class Figure:
    quantity: Quantity
    key: str     # "deaths", "date: rain begin", "building destroy" ...
    kind: str    # count, money, date
    bound: str = ""  # "min" for "at least 140", "max" for "fewer than 200": a bound, not the figure
    noun: str = ""   # the counted noun's lemma
    month: str = ""  # a date's month, when it names one ("May 31": 31 in May)
    # what the figure is said of: its clause around it, figures as "some" and named actors as "someone"
    context: str = ""
    aside: bool = False  # a date of a modifier's act ("the committee, appointed on the 7th"), not of the clause's
    high: float | None = None  # a range's upper end ("between 75 and 200", "200 to 300", "160 or 161"): from value

    @property
    def span(self) -> tuple[float, float]:
        """The values the figure allows at its ends: a range's two ends, or the figure itself."""
        return (self.quantity.value, self.high if self.high is not None else self.quantity.value)

    def allows(self, value: float) -> bool:
        """The figure is consistent with another source's value: the same figure rounded, within its bound, or
        within its range."""
        if self.high is not None:
            return self.quantity.value <= value <= self.high
        if self.bound == "min":
            return value >= self.quantity.value
        if self.bound == "max":
            return value <= self.quantity.value
        return rounds_to(self.quantity, value)


def figures_of(sent: Any, start: int, end: int) -> tuple[Figure, ...]:
    """The clause's figures (runs of number tokens), each keyed by what it counts."""
    doc = sent.doc
    out: list[Figure] = []
    tokens = [t for t in sent if start <= t.idx < end]
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if not t.like_num:
            i += 1
            continue
        j = i
        while j + 1 < len(tokens) and (tokens[j + 1].like_num
                                       or (tokens[j + 1].lower_ in ("and", "-") and j + 2 < len(tokens)
                                           and tokens[j + 2].like_num)):
            j += 1  # "one hundred and forty-six" is one figure
        run = tokens[i:j + 1]
        i = j + 1
        left = doc[max(sent.start, run[0].i - 3):run[0].i].text  # "about", "no fewer than", "$" before it
        high, i = _range_end(run, tokens, i, left)
        found = quantities(f"{left} {doc[run[0].i:run[-1].i + 1].text}")
        if high is not None:  # "between 75 and 200": the first end is the figure, the second its range's end
            found = quantities(high[0]) if high[0] else found
            found = [_scaled(found[-1], high[1])] if found else found  # "two or three hundred": 200 to 300
            high = high[1].value
        day = DAY_WORDS.get(doc[run[0].i:run[-1].i + 1].text.lower().replace(" ", ""))
        near = doc[max(sent.start, run[0].i - 3):min(sent.end, run[-1].i + 4)]  # "the 11th day of August"
        month = next((x.lower_ for x in near if x.lower_ in MONTHS), "")
        if day and not found and month:  # "the seventeenth day of November"
            found = [Quantity(float(day), 1.0, False, False, False)]
        if not found:
            continue
        head = max(run, key=lambda x: len(list(x.subtree)))  # the run's own head ("thousand" in "one thousand")
        key, kind = _counts(head, found[-1])
        bound = "min" if _LOWER_BOUND.search(left) else "max" if _UPPER_BOUND.search(left) else ""
        noun = head
        while noun.dep_ in ("nummod", "compound", "quantmod", "advmod", "npadvmod") and noun.head.i != noun.i:
            noun = noun.head
        if kind != "date" and month and not found[-1].year and 1 <= found[-1].value <= 31 \
                and found[-1].value == int(found[-1].value):
            key, kind = "", "date"  # "the 17th of March", "March 17": a day of the month, whatever the parser says
        month = month if kind == "date" else ""
        # unkeyed figures are kept too: compare.py reads what they count from their context, by meaning
        verb = _verb(head)
        aside = kind == "date" and verb is not None and verb.dep_ in ("acl", "relcl")
        low = found[-1]
        span = high if high is not None and kind == "count" and high > low.value and not low.year else None
        out.append(Figure(low, key, kind, "" if span is not None else bound,
                          noun.lemma_.lower() if noun.i != head.i else "", month, _context(run, tokens), aside, span))
    return tuple(out)


_JOINS = frozenset("to or".split())  # "200 to 300", "160 or 161"
# a change from one figure to another, not a range: "the toll rose from 75 to 200", "increased from 4 to 6"
_CHANGE = re.compile(r"\b(?:rose|rise|risen|fell|fall|fallen|grew|grown|increased?|decreased?|dropped|climbed|"
                     r"went|reduced|raised|doubled|jumped)\b", re.I)


def _scaled(low: Quantity, high: Quantity) -> Quantity:
    """A range's first end in the second's scale when it has none of its own: "two or three hundred", "between two
    and three thousand" (200 to 300, 2,000 to 3,000), not "75 to 200"."""
    if high.scaled and not low.scaled and high.precision > 1 and low.value * high.precision <= high.value:
        return Quantity(low.value * high.precision, high.precision, low.hedged, True, False)
    return low


def _range_end(run: list[Any], tokens: list[Any], after: int, left: str) -> tuple[tuple[str, Quantity] | None, int]:
    """A range the run opens ("between 75 and 200" read as one run; "200 to 300", "160 or 161", "from 75 to 200"
    as two): (the text of its first end, its second end's value) and where reading goes on, or (None, ``after``)."""
    text = " ".join(t.text for t in run)
    if re.search(r"\bbetween\s*$", left, re.I) and " and " in text:  # "between 75 and 200": split where both parse
        for at in [m.start() for m in re.finditer(r" and ", text)]:
            first, second = quantities(text[:at]), quantities(text[at + 5:])
            if len(first) == 1 and len(second) == 1 and second[0].value > first[0].value:
                return (text[:at], second[0]), after
        return None, after
    if after + 1 < len(tokens) and tokens[after].lower_ in _JOINS and tokens[after + 1].like_num:
        k = after + 1
        while k + 1 < len(tokens) and tokens[k + 1].like_num:
            k += 1
        second = quantities(" ".join(t.text for t in tokens[after + 1:k + 1]))
        first = quantities(text)
        if len(second) == 1 and first and second[0].value > first[-1].value and not second[0].year \
                and not _CHANGE.search(" ".join(t.text for t in tokens[max(0, after - len(run) - 4):after])):
            return ("", second[0]), k + 1
    return None, after


_ASIDE = frozenset("advcl parataxis conj cc punct appos".split())  # parts of a clause that say something else
_PARTICIPLE = frozenset("VBN VBG".split())
CONTEXT_TOKENS = 24


def _context(run: list[Any], tokens: list[Any]) -> str:
    """The words the figure is said of: the subtree of its verb (or of its noun when it has none) inside the
    clause, without the verb's other clauses and the noun's appositions, at most CONTEXT_TOKENS around the
    figure; figures read "some", named people and organisations "someone"."""
    inside = {t.i for t in tokens}
    top = _verb(run[0]) or run[0]
    keep = {t.i for t in top.subtree} & inside
    figure = {r.i for r in run}
    for t in list(top.subtree):
        # a participle after a comma (", as ascertained at the inquest") is an aside too
        aside = t.dep_ in _ASIDE or (t.dep_ == "acl" and t.tag_ in _PARTICIPLE
                                     and any(t.doc[k].is_punct for k in range(max(0, t.i - 2), t.i)))
        if t.i in inside and aside and t.head.i in keep:
            below = {x.i for x in t.subtree}
            if not below & figure:
                keep -= below
    ordered = [t for t in tokens if t.i in keep]
    at = next((n for n, t in enumerate(ordered) if t.i == run[0].i), 0)
    ordered = ordered[max(0, at - CONTEXT_TOKENS // 2):at + CONTEXT_TOKENS // 2]
    out: list[str] = []
    for t in ordered:
        word = "some" if t.like_num else "someone" if t.ent_type_ in ("PERSON", "ORG", "NORP") else t.text
        if not (out and out[-1] == word and word in ("some", "someone")) \
                and not (word == "and" and out and out[-1] == "some"):
            out.append(word)
    return re.sub(r"\s+([,.;:])", r"\1", " ".join(out))


_RANGE = re.compile(r"\b(?:between|since|until|till|from\b.*\bto)\b", re.I)


def _verb(token: Any) -> Any:
    while token.pos_ not in ("VERB", "AUX") and token.head.i != token.i:
        token = token.head
    return token if token.pos_ in ("VERB", "AUX") else None


def _counts(number: Any, quantity: Quantity) -> tuple[str, str]:
    """What a number counts: a date's event, money, the dead, or a counted noun with its verb."""
    noun = number
    while noun.dep_ in ("nummod", "compound", "quantmod", "advmod", "npadvmod") and noun.head.i != noun.i:
        noun = noun.head
    verb = _verb(noun)
    # a figure that counts a thing ("between 75 and 200 persons") is a count whatever the tagger calls it
    counts_a_thing = noun.i != number.i and noun.pos_ == "NOUN" and noun.lemma_.lower() not in TIME_UNITS
    if quantity.year or noun.lower_ in MONTHS or (
            (noun.ent_type_ == "DATE" or number.ent_type_ == "DATE") and not counts_a_thing):
        if verb is None:
            return "date", "date"
        subject = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        if subject is None and verb.dep_ in ("xcomp", "ccomp") and verb.head.i != verb.i:
            subject = next((c for c in verb.head.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        if subject is None or subject.pos_ == "PRON" or verb.lemma_.lower() in ("be", "have") \
                or _RANGE.search(number.sent.text):
            # "the year ending June 30": a period's name; "I was six years old": the speaker; "the amount was": no
            # event; "since 1878": a span. None of them dates an event two sources could disagree about.
            return "", "date"
        return f"date: {subject.lemma_.lower()} {verb.lemma_.lower()}", "date"
    if number.ent_type_ == "MONEY" or "$" in number.doc[max(0, number.i - 2):number.i + 1].text \
            or noun.lemma_.lower() in ("dollar", "pound"):
        if verb is None or verb.lemma_.lower() in ("be", "have"):
            return "", "money"  # "the amount was $X": too many different sums are "the amount"
        # what the sum is: the verb's subject or object that is not the sum itself ("the expenses were $X",
        # "the commission distributed $X"); without one the figure is not keyed (nothing to compare it by)
        what = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass", "dobj", "attr") and c.i != noun.i
                     and c.pos_ in ("NOUN", "PROPN")), None)
        return (f"money: {what.lemma_.lower()} {verb.lemma_.lower()}", "money") if what is not None else ("", "money")
    counted = noun.lemma_.lower()
    if noun.i == number.i and any(c.dep_ == "prep" and any(g.pos_ == "PRON" for g in c.children)
                                  for c in noun.children):
        counted = "person"  # the number stands for whom it counts ("One hundred and forty-six of us died")
    verbs = {c.lemma_.lower() for c in noun.children if c.dep_ in ("relcl", "acl")}  # "persons who died"
    if verb is not None:
        verbs.add(verb.lemma_.lower())
    if counted in PEOPLE and verbs & DEATH:
        return "deaths", "count"
    if verb is None or verb.lemma_.lower() in ("be", "have") or noun.i == number.i:
        return "", "count"  # "the increase was 11.5": a figure without a counted thing to compare it by
    return f"{counted} {verb.lemma_.lower()}", "count"
