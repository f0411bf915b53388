"""Answers to questions read as claims: a statement is verified as a claim with its question; a bare "yes"
asserts the question's statement, a bare "no" denies it (``verify_answer``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from historian_blueprint.schema import Cited, SourceText
from historian_blueprint.text.words import words
from historian_blueprint.verify.context import Search
from historian_blueprint.verify.decision import Said, settle
from historian_blueprint.verify.findings import ClaimResult, Finding
from historian_blueprint.verify.grounding import verify_claim

_YES_NO_QUESTION = re.compile(
    r"^\s*(?:are|is|was|were|do|does|did|can|could|has|have|had|will|would)\s+(?P<rest>.+?)\s*\?\s*$", re.I | re.S,
)
YES_WORDS = frozenset("yes yeah yep correct true".split())
NO_WORDS = frozenset("no nope incorrect false".split())


def bare_answer(text: str) -> bool | None:
    """True for a bare "yes" (one or two words of it: "Yes.", "yes, correct"), False for a bare "no", else None."""
    said = words(text)
    if not 0 < len(said) <= 2:
        return None
    if all(w in YES_WORDS for w in said):
        return True
    if all(w in NO_WORDS for w in said):
        return False
    return None


def proposition(question: str) -> str | None:
    """The statement a yes/no question asks about ("Are A and B both P?" -> "A and B both P"); None otherwise."""
    match = _YES_NO_QUESTION.match(question)
    return match.group("rest") if match else None


def verify_answer(
    question: str,
    answer: str,
    documents: Sequence[SourceText],
    cited: Sequence[Cited] = (),
    search: Search | None = None,
    checker: Callable[..., ClaimResult] | None = None,
) -> ClaimResult:
    """Verify an answer to a question.

    An answer that is a statement is verified as a claim. A bare "yes" asserts the question's statement and
    takes its verdict. A bare "no" denies it: contradicted when the sources say the statement (in any given
    document), supported only when they contradict it, otherwise unsupported (not saying is not denying).
    """
    statement = proposition(question)
    polarity = bare_answer(answer)
    if polarity is None or statement is None:
        return verify_claim(answer, documents, cited, search, checker, question=question)
    result = verify_claim(statement, documents, cited, search, checker)
    result.claim = answer
    if polarity:
        result.reason = f"'yes' asserts that {statement}: {result.reason}"
        return result
    if any(c.name == "verifier" for c in result.checks):  # the check itself failed: never call it supported
        return result
    if result.probability is not None:  # "no" is right as often as the statement is wrong
        result.probability, result.features = round(1 - result.probability, 4), None
        # not saying is not denying
        if result.verdict not in ("supported", "misattributed", "misquote", "contradicted"):
            result.probability = min(result.probability, 1 - result.probability)
    why, by = result.reason, result.decided_by
    read_only = result.verdict == "contradicted" and by == "reader"  # the reader's reading is no denial
    said = settle(  # the one decision, on what the statement's verdict makes of "no"
        conflict=Said(Finding(verdict="contradicted", type="fabrication", severity="high",
                              reason=f"'no' denies that {statement}, which the sources say"), by)
        if result.verdict in ("supported", "misattributed", "misquote") else None,  # the statement is in the sources
        carried=Said(Finding(verdict="supported", severity="none",
                             reason=f"'no': the sources contradict that {statement} ({why})"), by)
        if result.verdict == "contradicted" and not read_only else None,
        otherwise=Said(Finding(verdict="unconfirmed", type="unverified_detail", severity="medium", reason=(
            f"'no' is not established: only Historian's reader model reads the sources as contradicting that "
            f"{statement}: read the source" if read_only else
            f"'no' is not established: the sources do not contradict that {statement} ({why})")), by),
    )
    result.verdict, result.type, result.severity = said.finding.verdict, said.finding.type, said.finding.severity
    result.reason = said.finding.reason
    return result
