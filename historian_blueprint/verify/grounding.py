"""The grounding floor every engine shares: one claim checked against its sources by the rules in order.

For one claim: build its context (its best evidence: the cited source first, then the other documents),
then run the rules of ``verify/rules`` until one fails. Every verdict carries its evidence span.
Answers to yes/no questions are read with their question (``verify_answer``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from historian_blueprint.schema import Cited, SourceText
from historian_blueprint.text.words import content_words, words
from historian_blueprint.verify.context import ClaimContext, Search, build_context
from historian_blueprint.verify.evidence import LOCAL_RADIUS, SUPPORT_THRESHOLD, Evidence, covered, sentences_of
from historian_blueprint.verify.findings import Check, ClaimResult, Finding, failed
from historian_blueprint.verify.rules import CARRIED_RULES, HARD_RULES, SOFT_RULES, Rule, details, polarity, quotation, support
from historian_blueprint.verify.support import Reading, default_combiner, features, read
from historian_blueprint.verify.windows import WINDOW_CHARS


def check_claim(
    claim: str,
    documents: Sequence[SourceText],
    cited: Sequence[Cited] = (),
    search: Search | None = None,
    rules: Sequence[Rule] | None = None,
    question: str | None = None,
) -> ClaimResult:
    """Verify one claim against its cited sources (first) and other documents.

    The hard rules run first and the first that fails decides. Otherwise the calibrated support probability
    (``verify/support.py``) decides, with the soft rules' findings among its features and their reason as
    the explanation of an unsupported verdict. ``rules`` runs a checklist alone, first failure deciding, as
    before the scorer existed (also the fallback when the scorer's files are missing).
    """
    ctx = build_context(claim, documents, cited, search)
    if rules is not None:
        return _checklist(ctx, rules)
    combiner = default_combiner()  # ScorerUnavailable propagates: verify_claim fails safe (not verified)
    focused = ctx.evidence is not None and ctx.evidence.coverage >= SUPPORT_THRESHOLD
    located = [(ctx.evidence.source_id, ctx.evidence.start, ctx.evidence.end)] if ctx.evidence is not None else []
    documents_first = sorted(ctx.primary, key=lambda d: d is not ctx.doc)  # the best evidence's document first
    reading = read(ctx.body if question is None else f"{question} {ctx.body}", documents_first,
                   located + [(c.source_id, c.start, c.end) for c in ctx.cited], focused=focused)
    result = ClaimResult(claim, "supported", None, "none", ctx.evidence, ctx.evidence.coverage if ctx.evidence else 0.0,
                         cited=ctx.cited)
    hard = _first_failure(ctx, _hard_rules(ctx), result)
    soft = [f for f in (rule(ctx) for rule in SOFT_RULES) if f is not None] if ctx.evidence is not None else []
    for f in soft:
        result.checks.extend(f.checks)
    soft_failed = [f for f in soft if f.verdict is not None]
    known = next((c for f in soft for c in f.checks if c.name == "novel_words"), None)
    n_sentences = sum(len(sentences_of(d.text)) for d in ctx.primary[:3])
    result.features = features(
        reading, ctx.evidence.coverage if ctx.evidence else 0.0, 1.0 if known is None or known.ok else 0.0, hard is not None,
        question is not None, n_sentences, len(ctx.words),
    )
    p = combiner.probability(result.features)
    carried = p >= combiner.threshold
    if hard is None and carried and not focused:  # carried by a window the hard rules have not read yet
        hard = _first_failure(_read_at(ctx, reading), CARRIED_RULES, result)
    if hard is not None:
        p = combiner.contradicted(p)
    result.probability = round(p, 4)
    result.checks.append(Check("support_model", p >= combiner.threshold,
                               f"p={p:.2f} (threshold {combiner.threshold:.2f}; scorer logit {reading.logit:.2f})"))
    if hard is not None:
        return _decide(result, hard, hard.checks[0].name if hard.checks else "rules")
    return _by_probability(ctx, result, carried, soft_failed, reading)


def _by_probability(ctx: ClaimContext, result: ClaimResult, carried: bool, soft_failed: list[Finding], reading: Reading) -> ClaimResult:
    """No hard rule failed: the support probability decides; the rules name an unsupported verdict."""
    p = result.probability
    result.decided_by = "support scorer"
    if carried:
        result.reason = f"the evidence carries the claim (support probability {p:.2f})"
        if (ctx.evidence is None or ctx.evidence.coverage < SUPPORT_THRESHOLD) and reading.window is not None:
            result.evidence = Evidence(reading.source_id or "", reading.window.start, reading.window.end, reading.window.text,
                                       result.support)
        return result
    note = f" (support probability {p:.2f})"
    reversed_ = polarity.reversed_opinion(ctx)
    if reversed_ is not None:  # names what the probability found: the claim reverses its source's judgement
        result.checks.extend(reversed_.checks)
        return _decide(result, reversed_, "support scorer", note)
    if soft_failed:
        return _decide(result, soft_failed[0], "support scorer", note)
    if ctx.evidence is None:
        why = support.evidence(ctx) or failed(Check("coverage", False), "unsupported", "fabrication", "high", "")
        return _decide(result, why, "support scorer", note)
    result.verdict, result.type, result.severity = "unsupported", "inference", "medium"
    result.reason = f"the evidence does not carry the claim{note}"
    return result


def _hard_rules(ctx: ClaimContext) -> Sequence[Rule]:
    """With evidence that holds the claim's words, every hard rule reads it. Where the cited region is weak,
    only what does not need that evidence: assertion, misattribution, quotations and their speaker (numbers,
    names and negation are checked against the window that carries the claim, ``CARRIED_RULES``)."""
    if ctx.evidence is None:
        return (HARD_RULES[0], _misattributed)
    if ctx.evidence.coverage < SUPPORT_THRESHOLD:
        weak = (HARD_RULES[0], _misattributed, quotation.quotation, quotation.speaker)
        # a claim that cites a passage is held to that passage's figures, however it rewords the rest
        return (*weak, details.numbers) if _cites_a_passage(ctx) else weak
    return HARD_RULES


def _cites_a_passage(ctx: ClaimContext) -> bool:
    """The claim cites a span (not a whole document) and its evidence is found there."""
    assert ctx.evidence is not None
    return any(c.source_id == ctx.evidence.source_id and c.end - c.start <= 2 * WINDOW_CHARS
               and c.start < ctx.evidence.end + LOCAL_RADIUS and c.end > ctx.evidence.start - LOCAL_RADIUS for c in ctx.cited)


def _read_at(ctx: ClaimContext, reading: Reading) -> ClaimContext:
    """The claim's context with the scorer's best window as its evidence."""
    if reading.window is None:
        return ctx
    doc = next((d for d in ctx.primary if d.source_id == reading.source_id), ctx.doc)
    window = Evidence(reading.source_id or "", reading.window.start, reading.window.end, reading.window.text,
                      covered(ctx.wordy, set(content_words(reading.window.text)), ctx.names))
    return replace(ctx, doc=doc, evidence=window)  # a new context: its cached alignment is computed afresh


def _misattributed(ctx: ClaimContext) -> Finding | None:
    share = ctx.evidence.coverage if ctx.evidence is not None else 0.0
    return support.misattribution(ctx, Check("misattribution", False, f"{share:.2f} of the claim's words in the cited source"))


def _first_failure(ctx: ClaimContext, rules: Sequence[Rule], result: ClaimResult) -> Finding | None:
    for rule in rules:
        finding = rule(ctx)
        if finding is None:
            continue
        result.checks.extend(finding.checks)
        if finding.verdict is not None:
            return finding
    return None


def _decide(result: ClaimResult, finding: Finding, by: str, note: str = "") -> ClaimResult:
    result.verdict, result.type, result.severity = finding.verdict, finding.type, finding.severity  # type: ignore[assignment]
    result.reason = finding.reason + note
    result.decided_by = by
    if finding.evidence is not None:
        result.evidence = finding.evidence
    if finding.support is not None:
        result.support = finding.support
    return result


def _checklist(ctx: ClaimContext, rules: Sequence[Rule]) -> ClaimResult:
    """The rules alone, in order, the first failure deciding."""
    result = ClaimResult(ctx.claim, "supported", None, "none", ctx.evidence, ctx.evidence.coverage if ctx.evidence else 0.0,
                         cited=ctx.cited)
    finding = _first_failure(ctx, rules, result)
    if finding is not None:
        return _decide(result, finding, finding.checks[0].name if finding.checks else "rules")
    result.reason = "the evidence contains the claim's words, numbers and names"
    result.decided_by = "rules"
    return result


def verify_claim(
    claim: str,
    documents: Sequence[SourceText],
    cited: Sequence[Cited] = (),
    search: Search | None = None,
    checker: Callable[..., ClaimResult] | None = None,
    question: str | None = None,
) -> ClaimResult:
    """check_claim that fails safe: an error in any check gives an unverified claim, never a supported one.
    ``question``: the claim answers it (the scorer reads the two together)."""
    try:
        if checker is None:
            result = check_claim(claim, documents, cited, search, question=question)
        else:  # a caller's own checker takes (claim, documents, cited, search)
            result = checker(claim, documents, cited, search)
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
        if result.verdict not in ("supported", "misattributed", "misquote", "contradicted"):  # not saying is not denying
            result.probability = min(result.probability, 1 - result.probability)
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
