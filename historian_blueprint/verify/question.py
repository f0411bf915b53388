"""Does the answer address its question: the question's key constraints (names, dates, numbers, places and
qualifiers such as "on the moon", "in 1893", "the first") must each be mentioned by some cited evidence or by
the cited document's title and author. A constraint nothing cited mentions is named: either the question's
premise is false or the sources do not give that detail (docs/design.md: an answer must address its question).

Seeded from the design's completeness check: a multi-part question whose part is not addressed fails the same
way, by that part's constraints.

The question's type is a constraint too (``asked.py``): a "when" question needs a cited span that holds a date, a
"how many acres" question a span that holds a number beside "acres", a "who" question a person's name the question
does not itself give. And so are the things it names with common nouns ("what password", "the postponement of the
conference"): some cited passage must mention each (``things``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

from historian_blueprint.schema import SourceText
from historian_blueprint.text.names import is_initialism, names
from historian_blueprint.text.words import QUOTES, STOPWORDS, content_words, normalize
from historian_blueprint.text.quantities import quantities, rounds_to
from historian_blueprint.verify.asked import (
    _DAYS, _MONTHS, DOCUMENT_WORDS, FRAME_WORDS, GENERIC_NAMES, NOT_PERSON, PERSON_TITLES, answers,
    Wanted, describe_type, wanted,
)
from historian_blueprint.verify.evidence import related_form
from historian_blueprint.verify.rules.lexicon import kin, lemma, nouns, spelled_alike, verb_nouns

_QUALIFIER = re.compile(
    r"\b(?P<prep>on|in|at|aboard|inside|near|during)\s+(?:the\s+|a\s+|an\s+|his\s+|her\s+|their\s+|its\s+)?"
    r"(?P<phrase>[a-z][a-z'-]+(?:\s+[a-z][a-z'-]+)?)\b",
)
_RANKS = frozenset("first last only earliest latest".split())
_NAME_RUN = re.compile(r"(?<![\w'])(?:[A-Z][\w'.-]*)(?:\s+(?:of\s+|de\s+|van\s+)?[A-Z][\w'.-]*)*")
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
# A figure as a question writes it: digits (with $, commas, a decimal point or a per cent) or number words.
_NUMBER_WORD = r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|" \
               r"sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|" \
               r"thousand|million|billion)"
_FIGURE = re.compile(rf"(?<![\w.,$])(?:\$?(?:\d{{1,3}}(?:,\d{{3}})+|\d+)"
                     rf"(?:\.\d+)?%?(?:\s+(?:million|billion|thousand))?|{_NUMBER_WORD}"
                     rf"(?:[\s-]+(?:and\s+)?{_NUMBER_WORD})*)(?![\w,]*\d)", re.I)
_ASKED_COUNT = re.compile(r"\b(?:what|which|name|list|give)\s+(?:the\s+)?$", re.I)
_WH = frozenset("what when where who whom whose which why how did does do was were is are has have had can could "
                "would will should tell name list describe explain give".split())


@dataclass(frozen=True)
class Constraint:
    text: str        # as the question writes it
    kind: str        # name | date | number | qualifier | rank
    words: frozenset[str]


def constraints(question: str) -> list[Constraint]:
    """The question's constraints, in the order it states them."""
    q = question.translate(QUOTES).strip()
    found: list[tuple[int, Constraint]] = []
    for m in _NAME_RUN.finditer(q):
        tokens = [t for t in m.group().split() if t.lower().strip(".'") not in STOPWORDS and t.lower() not in _WH
                  and t.lower().strip(".'") not in _MONTHS]
        if m.start() == 0:  # a question's first word is capitalized whatever it is ("According to ...")
            tokens = tokens[1:] if tokens and tokens[0] == m.group().split()[0] else tokens
        tokens = [t for t in tokens if t.lower().strip(".'") not in GENERIC_NAMES] if len(tokens) == 1 else tokens
        words = frozenset(w for w in content_words(" ".join(tokens)) if not w.isdigit())  # "United States": usa
        if words:
            found.append((m.start(), Constraint(" ".join(tokens), "name", words)))
    for m in _YEAR.finditer(q):
        found.append((m.start(), Constraint(m.group(), "date", frozenset({m.group()}))))
    # "within twenty years", "the $7,200,000": not "what three steps" (the answer's count)
    for m in _FIGURE.finditer(q):
        before = q[:m.start()].split()[-1:]
        dated = bool(before) and before[0].lower().strip(".,") in _MONTHS  # "June 30": part of a date
        if not dated and not _ASKED_COUNT.search(q[:m.start()]) and any(not x.year for x in quantities(m.group())):
            found.append((m.start(), Constraint(m.group().strip(), "number", frozenset({m.group().strip().lower()}))))
    for m in _QUALIFIER.finditer(q):
        phrase = []
        for w in m.group("phrase").split():  # the noun phrase ends at the first function word
            if w in STOPWORDS or w in _WH:
                break
            phrase.append(w)
        if not phrase or any(w in DOCUMENT_WORDS or w in FRAME_WORDS for w in phrase):
            continue
        head = content_words(phrase[-1])
        if head:
            found.append((m.start(), Constraint(f"{m.group('prep')} "
                                                f"{m.group().split(None, 1)[1].split(phrase[-1])[0]}{phrase[-1]}",
                                                "qualifier", frozenset(head[-1:]))))
    for m in re.finditer(r"\b(?:the\s+)(" + "|".join(_RANKS) + r")\b", q, re.I):
        found.append((m.start(), Constraint(m.group(), "rank", frozenset({m.group(1).lower()}))))
    seen: set[frozenset[str]] = set()
    out = []
    for _, c in sorted(found, key=lambda x: x[0]):
        if c.words not in seen:
            seen.add(c.words)
            out.append(c)
    return out


# Words of a name that say what kind of place, body or person it is, not which one ("Fort", "County", "Sir").
_KIND_WORDS = frozenset(content_words(" ".join(NOT_PERSON | PERSON_TITLES)))


class _Evidence:
    """Texts read once for all of a question's constraints: joined and normalized, their words, their figures."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = texts
        self.joined = normalize(" ".join(texts))

    @cached_property
    def vocabulary(self) -> set[str]:
        return set(content_words(self.joined))

    @cached_property
    def stated(self) -> list[float]:
        return [q.value for q in quantities(self.joined)]


def mentioned(constraint: Constraint, texts: Sequence[str] | _Evidence) -> bool:
    """Some text mentions the constraint: a name by any of its words, a date or a number as written or
    rounded, a qualifier or rank by its word (or a related form)."""
    read = texts if isinstance(texts, _Evidence) else _Evidence(texts)
    if constraint.kind == "date":
        return constraint.text in read.joined
    vocabulary = read.vocabulary
    # by a word of its own: "Fort Sumter" by "Sumter", "Sir Julian Pauncefote" not by "Sir"
    if constraint.kind == "name":
        if is_initialism(constraint.text):  # "FDR": by "Franklin D. Roosevelt"
            return any(names(constraint.text, text) for text in read.texts)
        own = constraint.words - _KIND_WORDS or constraint.words
        return bool(own & vocabulary) or any(related_form(w, vocabulary) for w in own)
    if constraint.kind == "number":
        return any(rounds_to(q, s) for q in quantities(constraint.text) for s in read.stated)
    return all(w in vocabulary or related_form(w, vocabulary) for w in constraint.words)


def unmet(question: str, evidence: Sequence[str], asked: Sequence[Constraint] | None = None) -> list[Constraint]:
    """The question's constraints that none of ``evidence`` (cited spans, cited documents' titles and authors)
    mentions; ``asked``: the constraints already read (``questions.reading.Question.constraints``)."""
    asked = constraints(question) if asked is None else asked
    if not asked:
        return []
    read = _Evidence(evidence)
    return [c for c in asked if not mentioned(c, read)]


def describe(missing: Sequence[Constraint]) -> str:
    """One sentence naming the unsupported constraints, for a finding."""
    named = ", ".join(f"“{c.text}”" for c in missing)
    return (f"the question's {named} {'is' if len(missing) == 1 else 'are'} not mentioned by any cited evidence: "
            "a false premise, or a detail the sources do not give")


# ------------------------------------------------------------------ the things the question names

# Nouns that say how a question asks, or point at the documents, not at what it asks about.
ASKING_NOUNS = frozenset("""name names kind kinds sort sorts type types part parts thing things way ways manner
means reason reasons example examples instance instances detail details fact facts subject subjects matter matters
question questions answer answers respect regard terms""".split())
_LOWER_WORD = re.compile(r"(?<![\w'-])[a-z][a-z'-]*[a-z]")


def things(question: str) -> list[Constraint]:
    """The things a question names with common nouns ("what password", "the postponement of the conference",
    "how many acres"): words WordNet gives mainly as nouns, written in lowercase (capitalized words are names,
    constraints already), not a verb form ("-ed", "-ing", after "to"), nor a word that says how the question asks
    (``ASKING_NOUNS``), points at the documents (``DOCUMENT_WORDS``, ``FRAME_WORDS``) or names the type asked
    for ("what year", "which president": the asked type is checked by ``answers``)."""
    q = question.translate(QUOTES)
    want = wanted(question)
    typed = {w.lower() for w in want.text.split()[1:]} if want.kind in ("date", "person", "place") else set()
    out, seen = [], set()
    verb = _do_verb(q)
    for m in _LOWER_WORD.finditer(q):
        token = re.sub(r"'s?$", "", m.group())
        base = lemma(token)
        noun = base in nouns() or (base in verb_nouns() and m.start() != verb and _noun_place(q[:m.start()])
                                   and not _before_noun(q[m.end():]))
        if (token in STOPWORDS or token in _WH or token.endswith(("ed", "ing")) or not noun
                or base in ASKING_NOUNS | DOCUMENT_WORDS | FRAME_WORDS | GENERIC_NAMES | _MONTHS | _DAYS
                or token in typed or base in typed or q[:m.start()].rstrip().lower().endswith(" to")):
            continue
        if base not in seen:
            seen.add(base)
            out.append(Constraint(token, "thing", frozenset({base})))
    return out


# What makes the next word a noun: an article, a possessive or a demonstrative ("the strike", "his return").
_DETERMINERS = frozenset("the a an this that these those his her its their our your my".split())
_PREVIOUS = re.compile(r"(?:^|[^\w'-])([A-Za-z][\w'-]*)\s+$")


_DO = re.compile(r"\b(?:did|does|do)\s+", re.I)
_WORD = re.compile(r"[\w'-]+")


def _do_verb(question: str) -> int | None:
    """Where the main verb of a question with "did", "does" or "do" stands: the last word of the run after it
    that ends at a function word or a mark ("did Luke Hadnot's plantation cover?", "did the miners return to
    work"); its subject comes before it. None without one."""
    do = _DO.search(question)
    if not do:
        return None
    last = None
    for m in _WORD.finditer(question, do.end()):
        if question[last.end() if last else do.end():m.start()].strip():
            break  # a comma, a question mark: the run ended
        if m.group().lower() in STOPWORDS and m.group().lower() not in _DETERMINERS:
            break
        last = m
    return last.start() if last else None


def _before_noun(after: str) -> bool:
    """The next word is a noun: the word before it modifies it ("Malone's second husband"), it does not name the
    thing ("the railroad strike," names a strike)."""
    m = re.match(r"\s+([a-z][a-z'-]*)", after)
    return bool(m) and lemma(m.group(1)) in nouns()


def _noun_place(before: str) -> bool:
    """A word used as a verb or a noun ("strike", "return") is a noun after a determiner, a possessive or a noun
    it completes ("the railroad strike", "Cleveland's return"), also with up to two modifiers between ("the great
    strike"); a plural noun before it is its subject ("when did the miners return")."""
    for _ in range(3):  # the word before, then past at most two modifiers
        m = _PREVIOUS.search(before)
        if not m:
            return False
        word = m.group(1)
        if word.lower() in _DETERMINERS or word.endswith("'s"):
            return True
        if not (word.islower() and word not in STOPWORDS and word not in nouns() and word not in verb_nouns()):
            return word.islower() and lemma(word) == word and word in nouns() and word not in STOPWORDS
        before = before[:m.start(1)]  # a modifier: look past it
    return False


def thing_mentioned(constraint: Constraint, texts: Sequence[str]) -> bool:
    """Some text mentions the thing: the word in any inflection, a related form, a WordNet derivation or
    synonym, another spelling, or written as two words ("battle ship")."""
    (base,) = constraint.words
    raw = [w.lower() for t in texts for w in re.findall(r"[A-Za-z]+", t.translate(QUOTES))]
    written = set(raw) | {a + b for a, b in zip(raw, raw[1:])}
    lemmas = written | {lemma(w) for w in written}
    if base in lemmas or kin(base) & lemmas:
        return True
    stems = set(content_words(" ".join(texts)))
    return any(related_form(s, stems) for s in content_words(base)) or any(spelled_alike(base, w) for w in lemmas)


def _apart(asked: Sequence[Constraint], cited: Sequence[tuple[str, str]]) -> list[Constraint]:
    """The constraints that no one cited document (its cited spans with its title and author) mentions along with
    the others, fewest first: [] when one document mentions them all. "His 1942 message" and a passage on a
    bill of rights cited from his 1945 one do not make an answer about 1942."""
    by_document: dict[str, list[str]] = {}
    for text, byline in cited:
        by_document.setdefault(byline, [byline]).append(text)
    best: list[Constraint] | None = None
    for texts in by_document.values():
        lacking = [c for c in asked if not (thing_mentioned(c, texts) if c.kind == "thing" else mentioned(c, texts))]
        if best is None or len(lacking) < len(best):
            best = lacking
    return best or []


def _about(asked: Sequence[Constraint], cited: tuple[str, str]) -> bool:
    """A cited span can hold the answer only if it is about whom or what the question names: it mentions one of
    the question's names that its document's byline does not already give ("What salary did Anton J. Cermak
    draw": a figure beside another man's salary on the same front page is not his)."""
    text, byline = cited
    subjects = [c for c in asked if c.kind == "name" and not mentioned(c, [byline])]
    return not subjects or any(mentioned(c, [text]) for c in subjects)


@dataclass(frozen=True)
class Premises:
    """What the premise check reads from a question: its constraints, the things it is about, the type asked for
    (read once with the question: ``questions.reading.Question.premises``)."""

    constraints: tuple[Constraint, ...]
    things: tuple[Constraint, ...]
    wanted: Wanted


def premises(question: str) -> Premises:
    return Premises(tuple(constraints(question)), tuple(things(question)), wanted(question))


def premise(question: str, cited: Sequence[tuple[str, str]], documents: Sequence[str] = (),
            read: Premises | None = None) -> dict[str, object] | None:
    """The premise report of an answer whose citations are (span text, document title and author) pairs:
    None when every constraint is mentioned and some span holds the asked type; else the unmet constraints
    (the asked type among them, as kind "answer"), the finding, and ``refuse`` when no name the question asks
    about is mentioned by the citations nor anywhere in the cited ``documents`` (nothing relevant remains).
    ``read``: the question's premises as already read (else read here)."""
    if not question or not cited:
        return None
    read = read or premises(question)
    asked, topics = list(read.constraints), list(read.things)
    evidence = [f"{text} {byline}" for text, byline in cited]
    missing = [c for c in asked if not mentioned(c, evidence)]
    missing += [c for c in topics if not thing_mentioned(c, evidence)]
    apart = _apart([c for c in asked + topics if c not in missing], cited)  # what is met, by one document?
    want = read.wanted
    untyped = want.kind != "other" and not answers(want, question, [c for c in cited if _about(asked, c)])
    if not missing and not apart and not untyped:
        return None
    names = [c for c in asked if c.kind == "name"]
    refuse = bool(names) and all(c in missing for c in names) and not any(mentioned(c, documents) for c in names)
    unmet = ([{"text": c.text, "kind": c.kind} for c in missing]
             + [{"text": c.text, "kind": c.kind, "apart": True} for c in apart])
    findings = [describe(missing)] if missing else []
    if apart:
        named = ", ".join(f"“{c.text}”" for c in apart)
        findings.append(f"no cited document mentions the question's {named} together with the rest of it: "
                        "a premise joined from different documents")
    if untyped:
        unmet.append({"text": want.text, "kind": "answer", "asks": want.kind})
        findings.append(describe_type(want))
    return {"unmet": unmet, "finding": "; ".join(findings), "refuse": refuse, "asks": want.kind}


def premise_of(
    question: str, spans: Iterable[tuple[str, str, str]], get_document: Callable[[str], SourceText | None],
    read: Premises | None = None,
) -> dict[str, object] | None:
    """``premise`` of cited spans given as (source id, span text, byline to use when the document is unknown)."""
    cited, texts = [], {}
    for source_id, text, fallback in spans:
        doc = get_document(source_id)
        cited.append((text, doc.byline if doc is not None else fallback))
        if doc is not None:
            texts[doc.source_id] = doc.text
    return premise(question, cited or [("", "")], list(texts.values()), read)
