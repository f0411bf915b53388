"""The grounding floor every engine shares: one claim checked against its sources by the rules in order.

For one claim: build its context (its best evidence: the cited source first, then the other documents),
then run the rules of ``verify/rules`` until one fails. Every verdict carries its evidence span.
Answers to yes/no questions are read with their question (``verify_answer``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from historian_blueprint.schema import Cited, SourceText
from historian_blueprint.text.words import words
from historian_blueprint.verify.context import Search, build_context
from historian_blueprint.verify.findings import Check, ClaimResult
from historian_blueprint.verify.rules import RULES, Rule


def check_claim(
    claim: str,
    documents: Sequence[SourceText],
    cited: Sequence[Cited] = (),
    search: Search | None = None,
    rules: Sequence[Rule] = RULES,
) -> ClaimResult:
    """Verify one claim against its cited sources (first) and other documents: the first failing rule decides."""
    ctx = build_context(claim, documents, cited, search)
    result = ClaimResult(claim, "supported", None, "none", ctx.evidence, ctx.evidence.coverage if ctx.evidence else 0.0,
                         cited=ctx.cited)
    for rule in rules:
        finding = rule(ctx)
        if finding is None:
            continue
        result.checks.extend(finding.checks)
        if finding.verdict is not None:
            result.verdict, result.type, result.severity, result.reason = finding.verdict, finding.type, finding.severity, finding.reason
            if finding.evidence is not None:
                result.evidence = finding.evidence
            if finding.support is not None:
                result.support = finding.support
            return result
    result.reason = "the evidence contains the claim's words, numbers and names"
    return result


def verify_claim(
    claim: str,
    documents: Sequence[SourceText],
    cited: Sequence[Cited] = (),
    search: Search | None = None,
    checker: Callable[..., ClaimResult] | None = None,
) -> ClaimResult:
    """check_claim that fails safe: an error in any check gives an unverified claim, never a supported one."""
    try:
        result = (checker or check_claim)(claim, documents, cited, search)
        if not isinstance(result, ClaimResult):
            raise TypeError(f"checker returned {type(result).__name__}")
        return result
    except Exception as exc:  # fail safe: record why, never call it supported
        return ClaimResult(
            claim, "unsupported", "unverified_detail", "high", None, 0.0,
            [Check("verifier", False, f"{type(exc).__name__}: {exc}")],
            reason=f"verification failed ({type(exc).__name__}); the claim is not verified", cited=list(cited),
        )


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
        return verify_claim(answer, documents, cited, search, checker)
    result = verify_claim(statement, documents, cited, search, checker)
    result.claim = answer
    if polarity:
        result.reason = f"'yes' asserts that {statement}: {result.reason}"
        return result
    if any(c.name == "verifier" for c in result.checks):  # the check itself failed: never call it supported
        return result
    if result.verdict in ("supported", "misattributed", "misquote"):  # the statement is in the sources
        result.verdict, result.type, result.severity = "contradicted", "fabrication", "high"
        result.reason = f"'no' denies that {statement}, which the sources say"
        return result
    why = result.reason
    if result.verdict == "contradicted":
        result.verdict, result.type, result.severity = "supported", None, "none"
        result.reason = f"'no': the sources contradict that {statement} ({why})"
        return result
    result.verdict, result.type, result.severity = "unsupported", "unverified_detail", "medium"
    result.reason = f"'no' is not established: the sources do not contradict that {statement} ({why})"
    return result
