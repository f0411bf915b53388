"""Which findings an answer quotes, by the question's shape: a comparison's best for each side, a list's findings
that hold its items, else the best findings that do not repeat one another.

``extractive.compose`` calls ``choose`` once the findings can answer at all (``extractive.unheld``); the answer's
words are ``written``'s.
"""

from __future__ import annotations

from historian_blueprint.ask.roles.sides import Embed, per_side
from historian_blueprint.questions.lists import listed
from historian_blueprint.questions.reading import Question
from historian_blueprint.schema import Fact

MIN_FACT_SCORE = 0.34   # below this the best evidence shares too little with the question: refuse
# an answering fact holds a third of the question's content words (a question may reword the rest)
MIN_OVERLAP = 0.34
MOST = 8                # findings an answer quotes at most (a list of eight items)


def choose(q: Question, facts: list[Fact], embed: Embed | None = None) -> tuple[list[Fact], int]:
    """The findings the answer quotes, and how many items of a list they hold: a comparison's best for each side
    (ask.roles.sides.per_side); a list's findings that hold its items (questions.lists.listed); else the best
    non-redundant findings by score (a sentence that words the question differently may hold the answer): four, or
    as many as a list asks for when none of its passages is recognisably an item (the page says so)."""
    shape = q.shape
    if shape.comparison:
        return per_side(set(q.words), facts, shape, set(q.names), embed=embed), 0
    if shape.kind == "list" and shape.asked:
        items, found = listed(q.text, shape.asked, facts, MIN_OVERLAP, q.content)
        if found:
            return items, found
    chosen: list[Fact] = []
    for fact in facts:
        if not fact.repeats(chosen):
            chosen.append(fact)
        if len(chosen) == min(max(shape.asked or 4, 3), MOST):
            break
    return chosen, 0
