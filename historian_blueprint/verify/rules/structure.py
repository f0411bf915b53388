"""Conflicts of structure: the two sides of "X rather than Y" (or of a comparison, "A larger than B") swapped,
and two named parties exchanging their roles around the same verb ("Smith sued Jones" / "Jones sued Smith")."""

from __future__ import annotations

from historian_blueprint.text import parse
from historian_blueprint.text.words import capitalized_terms, content_words, words
from historian_blueprint.verify.context import ClaimContext
from historian_blueprint.verify.evidence import sentences_of
from historian_blueprint.verify.findings import Check, Finding, failed, passed
from historian_blueprint.verify.rules import lexicon
from historian_blueprint.verify.rules.lexical import OPPOSED
from historian_blueprint.verify.rules.registry import rule

CONNECTIVES = ("rather than", "instead of", "more than", "less than", "than", "not", "preceded", "followed",
               "before", "after")
_SIDE_WORDS = 5  # words each side of a connective that make up its sides


def _sides(text: str, connective: str) -> list[tuple[frozenset[str], frozenset[str], frozenset[str]]]:
    """(words before, words after, the comparison word) around each use of ``connective`` in ``text``."""
    tokens = words(text)
    parts = connective.split()
    out = []
    for i in range(len(tokens) - len(parts) + 1):
        if tokens[i:i + len(parts)] != parts:
            continue
        before = tokens[max(0, i - _SIDE_WORDS):i]
        after = tokens[i + len(parts): i + len(parts) + _SIDE_WORDS]
        left = frozenset(content_words(" ".join(before)))
        right = frozenset(content_words(" ".join(after)))
        out.append((left - right, right - left, frozenset(before[-1:])))  # what tells the sides apart
    return out


def _reversed_too(mine: frozenset[str], theirs: frozenset[str]) -> bool:
    """The comparison word itself turned to its opposite (larger / smaller): both sides swapped say the same."""
    return any(lexicon.are_antonyms(a, b) or OPPOSED.get(a) == b for a in mine for b in theirs)


@rule("conflict", 66, needs="close")
def rather_than(ctx: ClaimContext) -> Finding | None:
    """"X rather than Y" (instead of, not, than, before ...) where the source says "Y rather than X"."""
    for connective in CONNECTIVES:
        if connective not in ctx.body.lower() or connective not in ctx.evidence.text.lower():
            continue
        for left, right, word in _sides(ctx.body, connective):
            for s_left, s_right, s_word in _sides(ctx.evidence.text, connective):
                swapped = (right & s_left) and (left & s_right) and not (right & s_right)
                if swapped and not (left - s_left and _reversed_too(left | word, s_left | s_word)):
                    check = Check("order", False, f"{connective}: {' '.join(sorted(left))} / {' '.join(sorted(right))}")
                    return failed(check, "contradicted", "fabrication", "high",
                                  f"the claim puts the two sides of '{connective}' the other way round from the source")
        break  # the longest connective both use decides ("rather than" before "than")
    return passed(Check("order", True))


# Who acts and who is acted on, read from spaCy's dependency parse: the agent is the active subject or the
# passive's "by" phrase; the other parties are the object, the passive subject, the dative and the objects of
# the verb's prepositions ("sold the ships to Spain", "was defeated by the Germans").
_AGENT, _OTHERS = ("nsubj",), ("dobj", "nsubjpass", "dative", "attr", "oprd")
_PARTY_PREPS = frozenset("to from against over with into upon on at for of".split())


def _party(token) -> str | None:
    """The key of a named party a token heads (a proper noun, or a common noun spaCy tags as an entity):
    its last name word, lowercased ("President Wilson", "Wilson": wilson)."""
    if token.pos_ == "PROPN" or token.ent_type_ in ("PERSON", "ORG", "GPE", "NORP"):
        return token.text.lower().strip(".'")
    return None


def _prepositional(token) -> set[str]:
    """Named parties in the prepositional phrases a token heads ("to Spain", "from England")."""
    return {k for prep in token.children if prep.dep_ == "prep" and prep.lower_ in _PARTY_PREPS
            for g in prep.children if g.dep_ == "pobj" and (k := _party(g))}


def relations(text: str) -> list[tuple[str, str, frozenset[str]]]:
    """(verb lemma, agent, other parties) for each verb of ``text`` that has a named agent and at least one
    other named party."""
    out = []
    for sent in parse.parsed(text).sents:
        for verb in sent:
            if verb.pos_ not in ("VERB", "AUX") and verb.dep_ != "ROOT":
                continue
            agent, others = None, _prepositional(verb)
            for child in verb.children:
                if child.dep_ in _AGENT:
                    agent = _party(child) or agent
                elif child.dep_ == "agent":  # "by the Germans"
                    agent = next((k for g in child.children if g.dep_ == "pobj" and (k := _party(g))), agent)
                elif child.dep_ in _OTHERS:  # the party itself, or the object of a dative "to"
                    others |= {k for g in (child, *child.children)
                               if (g is child or g.dep_ == "pobj") and (k := _party(g))}
                    others |= _prepositional(child)  # "sold Florida to Spain": "to" may hang on the object
            if agent and others - {agent}:
                out.append((verb.lemma_.lower(), agent, frozenset(others - {agent})))
    return out


@rule("conflict", 68, needs="close")
def role_swap(ctx: ClaimContext) -> Finding | None:
    """Two named parties exchange roles around the same verb: the claim's agent is acted on, and one it acts
    on is the agent, in a sentence of the evidence ("Jones sued Smith", "Smith was sued by Jones" for "Smith
    sued Jones"). Read from the dependency parse, so the passive voice is no swap ("Jones was sued by Smith")."""
    if len([t for t in dict.fromkeys(capitalized_terms(ctx.body)) if len(t) > 1]) < 2:
        return None  # fewer than two names: nothing to swap (and no parse to pay for)
    claimed = relations(ctx.body)
    if not claimed:
        return None
    for verb, agent, others in claimed:
        kin = lexicon.kin(verb)
        for s, e, _ in sentences_of(ctx.evidence.text):
            sentence = ctx.evidence.text[s:e]
            lowered = sentence.lower()
            if agent not in lowered or not any(party in lowered for party in others):
                continue  # a swap needs the agent and one it acts on named in the sentence: no parse to pay for
            for s_verb, s_agent, s_others in relations(sentence):
                if s_verb != verb and s_verb not in kin:
                    continue
                if s_agent in others and agent in s_others:
                    check = Check("roles", False, f"{verb}: {agent} / {s_agent}")
                    return failed(check, "contradicted", "fabrication", "high",
                                  f"the source has {s_agent.title()} as the one who {verb}s {agent.title()}, "
                                  "not the other way round")
    return passed(Check("roles", True))
