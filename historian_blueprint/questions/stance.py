"""A stance the question takes for granted and the cited passages reverse: "Why did Lincoln in 1862 oppose any plan
to free the slaves?" where the passages quoted say "I recommend the adoption of ... a plan of compensated
emancipation"; "Why did the delegate urge military drill?" where the page says he objected to it.

A question presupposes a stance when it uses words of one side only (oppose, object, reject, resist, refuse, veto,
condemn, denounce, disapprove, protest, deplore; or favor, support, urge, recommend, propose, advocate, endorse,
approve, advise). The passages reverse it when every cited sentence that takes a side on the same thing (it names the
head of what the question says was opposed or urged: "a federal dole for the unemployed" -> dole) takes the other
side, counting a stance word after a negation ("I would not advise their forced removal") as the other side's, and
at least one such sentence exists.
The answer then names it ("the passages say the opposite of “oppose”: ...") and is never verified
(questions.premises); the quotes themselves still stand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from historian_blueprint.schema import Citation
from historian_blueprint.text.words import STOPWORDS, content_words, vstem, words

AGAINST = frozenset(vstem(w) for w in (
    "oppose opposed opposes opposing opposition object objected objects objecting objection reject rejected rejects "
    "rejecting rejection resist resisted resisting resistance refuse refused refusing refusal veto vetoed vetoing "
    "condemn condemned condemning condemnation denounce denounced denouncing denunciation disapprove disapproved "
    "disapproving disapproval protest protested protesting deplore deplored deploring").split())
FOR = frozenset(vstem(w) for w in (
    "favor favored favors favoring favour favoured favouring support supported supports supporting urge urged urges "
    "urging recommend recommended recommends recommending recommendation propose proposed proposes proposing proposal "
    "advocate advocated advocating advocacy endorse endorsed endorsing endorsement approve approved approving "
    "approval advise advised advising").split())
NEGATIONS = frozenset("not no never nor cannot can't won't wouldn't don't didn't".split())
NEGATION_REACH = 3  # a negation this many words before a stance word turns it ("would not advise")


@dataclass(frozen=True)
class Reversal:
    """The question's stance word, and the cited sentence that takes the other side."""

    asked: str
    citation: Citation
    said: str


def stance_of(text: str) -> tuple[str | None, list[str]]:
    """The side a text's stance words take ("against", "for", or None for none or both), and the words that follow
    the first of them (what is opposed or urged)."""
    tokens = words(text)
    sides, after = set(), []
    for n, token in enumerate(tokens):
        side = _side(vstem(token))
        if side is None:
            continue
        if any(t in NEGATIONS for t in tokens[max(0, n - NEGATION_REACH):n]):
            side = "for" if side == "against" else "against"
        sides.add(side)
        if not after:
            after = tokens[n + 1:]
    return (sides.pop() if len(sides) == 1 else None), after


def reversed_stance(question: str, citations: Sequence[Citation]) -> Reversal | None:
    """The cited sentence that reverses the stance the question takes for granted (the module's docstring), or
    None: no stance asked, no cited sentence on the same thing with a stance, or one that agrees."""
    asked, after = stance_of(question)
    head = head_of(after)
    if asked is None or head is None:
        return None
    found = None
    for cit in citations:
        side, _ = stance_of(cit.text)
        if side is None or head not in content_words(cit.text):
            continue
        if side == asked:
            return None  # one cited sentence takes the question's side: nothing reversed
        found = found or cit
    if found is None:
        return None
    return Reversal(_first(question, None), found, _first(found.text, None))


def head_of(tokens: Sequence[str]) -> str | None:
    """The head of the phrase a stance word governs, as a content word: its last word before the first function word
    ("a federal dole for the unemployed" -> dole, "any plan to free the slaves" -> plan); None when a function word
    comes first ("that Congress declare war": a clause, no thing)."""
    phrase = []
    for n, token in enumerate(tokens):
        if token in STOPWORDS or not token.isalpha():
            if phrase or n >= 1 or token not in _DETERMINERS:
                break
            continue
        phrase.append(token)
    heads = content_words(phrase[-1]) if phrase else []
    return heads[0] if heads else None


_DETERMINERS = frozenset("a an the any all his her their its such this these those".split())


def _side(stem: str) -> str | None:
    return "against" if stem in AGAINST else "for" if stem in FOR else None


def _first(text: str, side: str | None) -> str:
    """The first stance word of a text as written (of ``side`` when given, before any negation)."""
    for token in words(text):
        mine = _side(vstem(token))
        if mine is not None and (side is None or mine == side):
            return token
    return ""
