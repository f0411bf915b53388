"""Does the answer address its question: the question's key constraints (names, dates, numbers, places and
qualifiers such as "on the moon", "in 1893", "the first") must each be mentioned by some cited evidence or by
the cited document's title and author. A constraint nothing cited mentions is named: either the question's
premise is false or the sources do not give that detail (DESIGN.md: an answer must address its question).

Seeded from the design's completeness check: a multi-part question whose part is not addressed fails the same
way, by that part's constraints.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from historian_blueprint.schema import SourceText
from historian_blueprint.text.normalize import QUOTES, normalize
from historian_blueprint.text.words import STOPWORDS, content_words, quantities, rounds_to
from historian_blueprint.verify.evidence import related_form

# Words of a qualifier that point at the document itself, not at the world ("in his message", "in the interview").
DOCUMENT_WORDS = frozenset(
    "message address speech report interview narrative paper article document documents text collection page "
    "source sources congress annual year years time way view opinion words account story ending".split()
)
_QUALIFIER = re.compile(
    r"\b(?P<prep>on|in|at|aboard|inside|near|during)\s+(?:the\s+|a\s+|an\s+|his\s+|her\s+|their\s+|its\s+)?"
    r"(?P<phrase>[a-z][a-z'-]+(?:\s+[a-z][a-z'-]+)?)\b",
)
_MONTHS = frozenset("january february march april may june july august september october november december".split())
# Capitalized words that name an office or a body rather than someone in particular ("the President").
GENERIC_NAMES = frozenset(
    "president congress government secretary treasury union states state nation senate house court army navy "
    "department governor mayor council legislature administration constitution republic federal national".split()
)
_RANKS = frozenset("first last only earliest latest".split())
_NAME_RUN = re.compile(r"(?<![\w'])(?:[A-Z][\w'.-]*)(?:\s+(?:of\s+|de\s+|van\s+)?[A-Z][\w'.-]*)*")
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
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
        words = frozenset(w for t in tokens for w in content_words(t) if not w.isdigit())
        if words:
            found.append((m.start(), Constraint(" ".join(tokens), "name", words)))
    for m in _YEAR.finditer(q):
        found.append((m.start(), Constraint(m.group(), "date", frozenset({m.group()}))))
    for m in _QUALIFIER.finditer(q):
        phrase = []
        for w in m.group("phrase").split():  # the noun phrase ends at the first function word
            if w in STOPWORDS or w in _WH:
                break
            phrase.append(w)
        if not phrase or any(w in DOCUMENT_WORDS for w in phrase):
            continue
        head = content_words(phrase[-1])
        if head:
            found.append((m.start(), Constraint(f"{m.group('prep')} {m.group().split(None, 1)[1].split(phrase[-1])[0]}{phrase[-1]}",
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


def mentioned(constraint: Constraint, texts: Sequence[str]) -> bool:
    """Some text mentions the constraint: a name by any of its words, a date or a number as written or
    rounded, a qualifier or rank by its word (or a related form)."""
    joined = normalize(" ".join(texts))
    if constraint.kind == "date":
        return constraint.text in joined
    vocabulary = set(content_words(joined))
    if constraint.kind == "name":
        return bool(constraint.words & vocabulary) or any(related_form(w, vocabulary) for w in constraint.words)
    if constraint.kind == "number":
        stated = [q.value for q in quantities(joined)]
        return any(rounds_to(q, s) for q in quantities(constraint.text) for s in stated)
    return all(w in vocabulary or related_form(w, vocabulary) for w in constraint.words)


def unmet(question: str, evidence: Sequence[str]) -> list[Constraint]:
    """The question's constraints that none of ``evidence`` (cited spans, cited documents' titles and authors)
    mentions."""
    return [c for c in constraints(question) if not mentioned(c, evidence)]


def describe(missing: Sequence[Constraint]) -> str:
    """One sentence naming the unsupported constraints, for a finding."""
    named = ", ".join(f"“{c.text}”" for c in missing)
    return (f"the question's {named} {'is' if len(missing) == 1 else 'are'} not mentioned by any cited evidence: "
            "a false premise, or a detail the sources do not give")


def premise(question: str, cited: Sequence[tuple[str, str]], documents: Sequence[str] = ()) -> dict[str, object] | None:
    """The premise report of an answer whose citations are (span text, document title and author) pairs:
    None when every constraint is mentioned; else the unmet constraints, the finding, and ``refuse`` when no
    name the question asks about is mentioned by the citations nor anywhere in the cited ``documents``
    (nothing relevant remains)."""
    if not question or not cited:
        return None
    asked = constraints(question)
    evidence = [f"{text} {byline}" for text, byline in cited]
    missing = [c for c in asked if not mentioned(c, evidence)]
    if not missing:
        return None
    names = [c for c in asked if c.kind == "name"]
    refuse = bool(names) and all(c in missing for c in names) and not any(mentioned(c, documents) for c in names)
    return {"unmet": [{"text": c.text, "kind": c.kind} for c in missing], "finding": describe(missing), "refuse": refuse}


def premise_of(
    question: str, spans: Iterable[tuple[str, str, str]], get_document: Callable[[str], SourceText | None],
) -> dict[str, object] | None:
    """``premise`` of cited spans given as (source id, span text, byline to use when the document is unknown)."""
    cited, texts = [], {}
    for source_id, text, fallback in spans:
        doc = get_document(source_id)
        cited.append((text, doc.byline if doc is not None else fallback))
        if doc is not None:
            texts[doc.source_id] = doc.text
    return premise(question, cited or [("", "")], list(texts.values()))
