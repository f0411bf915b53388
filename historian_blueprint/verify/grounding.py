"""The grounding floor every engine shares: one claim read against its sources, as a careful historian does.

The path reads as the decision does:
1. the claim's **context** (``verify/context.py``): its words and names, its best evidence (the cited passage
   first, then the rest of the cited document, then other documents);
2. the **conflict checks** (``verify/rules``, kind ``conflict``, in checklist order): the first that fails
   decides: contradicted, misquote, misattributed (or unconfirmed, when it finds something missing);
3. the **support reading** (``verify/support.py``): how much of the claim the evidence carries, as one calibrated
   probability; with ``HISTORIAN_READER=on``, the reader model reads what it leaves open (``verify/reader.py``);
4. one **decision** (``decide``, through ``verify/decision.settle``, which every writer of a verdict calls):
   ``supported`` only above a threshold chosen for precision and with no word
   of the claim the evidence does not carry, or (reader on) where the reader finds it said in other words above
   its own precision cut with every name and figure held; otherwise ``unconfirmed``: "not confirmed: read the
   source".

Answers to yes/no questions are read with their question (``verify/answers.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from historian_blueprint.schema import Cited, SourceText
from historian_blueprint.text.words import as_written, content_words
from historian_blueprint.verify.context import ClaimContext, Search, build_context
from historian_blueprint.verify.decision import Said, settle
from historian_blueprint.verify.evidence import SUPPORT_THRESHOLD, Evidence, covered
from historian_blueprint.verify.findings import Check, ClaimResult, Finding, failed
from historian_blueprint.verify.reader import (ClaimReading, ReaderUnavailable, Thresholds, contradicts, read_claim,
                                              reader_features, reader_in_use, supports, thresholds)
from historian_blueprint.verify.rules import polarity, registered
from historian_blueprint.verify.rules import support as measures
from historian_blueprint.verify.support import SupportReading, applicable, read_support
from historian_blueprint.verify.windows import Window


def check_claim(
    claim: str,
    documents: Sequence[SourceText],
    cited: Sequence[Cited] = (),
    search: Search | None = None,
    question: str | None = None,
) -> ClaimResult:
    """Verify one claim against its cited sources (first) and other documents.

    ``question``: the claim answers it (its words must be carried with the claim's).
    """
    ctx = build_context(claim, documents, cited, search)
    result = ClaimResult(claim, "unconfirmed", None, "none", ctx.evidence,  # undecided until decide
                         ctx.evidence.coverage if ctx.evidence else 0.0, cited=ctx.cited)
    conflict = conflict_checks(ctx, result)
    reading = read_support(ctx, question)
    result.checks.extend(reading.checks)
    read_by = None
    if conflict is None and reader_in_use() and open_to_reader(ctx, reading):
        read_by = _read_by_reader(ctx, result, reading, question)
    return decide(ctx, result, conflict, reading, read_by)


_QUOTES = ('"', "“", "”")


def open_to_reader(ctx: ClaimContext, reading: SupportReading) -> bool:
    """A claim the rules leave plainly unconfirmed: not carried, evidence found, no reversed opinion, no finding
    but "unconfirmed", no speaker, no quotation and no first person the source lacks (the rules' own checks of
    those are not to be read past)."""
    return (not reading.carried and ctx.evidence is not None and ctx.speaker is None and not reading.own_voice
            and not any(q in ctx.claim for q in _QUOTES)
            and all(f.verdict == "unconfirmed" for f in reading.soft_failed) and polarity.reversed_opinion(ctx) is None)


def _read_by_reader(ctx: ClaimContext, result: ClaimResult, reading: SupportReading,
                    question: str | None) -> ClaimReading | None:
    """The reader's reading of an open claim, with what the decision needs of it in ``reading.features``; a
    reader that cannot be loaded or fails is named on the claim, and the rules decide."""
    assert ctx.evidence is not None
    said = ctx.body[len(ctx.frame):] if ctx.frame and ctx.body.startswith(ctx.frame) else ctx.body
    try:
        read_by = read_claim(said if question is None else f"{question} {said}",
                             sorted(ctx.primary, key=lambda d: d is not ctx.doc),
                             [(ctx.evidence.source_id, ctx.evidence.start, ctx.evidence.end)]
                             + [(c.source_id, c.start, c.end) for c in ctx.cited])
    except ReaderUnavailable as exc:
        result.checks.append(Check("reader", False, f"the reader is unavailable: {exc}"))
        return None
    except Exception as exc:  # noqa: BLE001 - a failing reader never decides; the rules do
        result.checks.append(Check("reader", False, f"the reader failed ({type(exc).__name__}: {exc})"))
        return None
    reading.features.update(reader_features(ctx.frame, said, ctx.primary, read_by))
    clear = 0.0
    if read_by.entails_at is not None:  # the conflict checks read the reader's window too
        source_id, window = read_by.entails_at
        scratch = ClaimResult(ctx.claim, "unconfirmed", None, "none", None, 0.0)
        clear = float(conflict_checks(_read_at(ctx, source_id, window.start, window.end), scratch) is None)
    reading.features["reader_window_clear"] = clear
    return read_by


# ----------------------------------------------------------------------------- 2. conflict checks
def conflict_checks(ctx: ClaimContext, result: ClaimResult) -> Finding | None:
    """Run the conflict checks in order; the first that fails decides (its checks are kept on the result)."""
    for rule in registered("conflict"):
        if not applicable(ctx, rule):
            continue
        finding = rule.check(ctx)
        if finding is None:
            continue
        result.checks.extend(finding.checks)
        if finding.verdict is not None:
            return finding
    return None


def _read_at(ctx: ClaimContext, source_id: str, start: int, end: int) -> ClaimContext:
    """The claim's context with another window of its documents as its evidence."""
    doc = next((d for d in ctx.primary if d.source_id == source_id), ctx.doc)
    if doc is None:
        return ctx
    text = doc.text[start:end]
    window = Evidence(source_id, start, end, text, covered(ctx.wordy, set(content_words(text)), ctx.names))
    return replace(ctx, doc=doc, evidence=window)  # a new context: its cached alignment is computed afresh


# ----------------------------------------------------------------------------- 4. the decision
def decide(ctx: ClaimContext, result: ClaimResult, conflict: Finding | None, reading: SupportReading,
           read_by: ClaimReading | None = None) -> ClaimResult:
    """The claim's readings given to the one decision (``verify/decision.settle``): a conflict decides; else supported
    when the evidence carries the claim (probability above the precision cut, no word of it unexplained); else what
    the rest of the reading found (``_left_open``), read only then."""
    result.features = reading.features
    p = reading.probability
    result.probability = p if conflict is None and reading.carried else reading.combiner.below_cut(p)
    said = settle(
        conflict=Said(conflict, _named(conflict)) if conflict is not None else None,
        carried=Said(Finding(verdict="supported", severity="none",
                             reason=f"the evidence carries the claim (support {p:.2f})"), "support")
        if reading.carried else None,
        otherwise=None if conflict is not None or reading.carried else _left_open(ctx, result, reading, read_by),
    )
    return _apply(result, said.finding, said.by)


def _left_open(ctx: ClaimContext, result: ClaimResult, reading: SupportReading,
               read_by: ClaimReading | None) -> Said:
    """What a claim the conflict checks pass and the support does not carry is: a reversed opinion, or no evidence;
    else, for a claim the rules leave open, the reader's verdict above its cut (``_reader_decides``); else a soft
    check's finding; else unconfirmed, with what is missing named."""
    note = f" (support {reading.probability:.2f})"
    reversed_ = polarity.reversed_opinion(ctx)
    if reversed_ is not None:  # what the reading found is a reversal: the claim judges ill what the source judges well
        result.checks.extend(reversed_.checks)
        return Said(replace(reversed_, reason=reversed_.reason + note), "opinion")
    if ctx.evidence is None:
        why = measures.evidence(ctx) or failed(Check("coverage", False), "unconfirmed", "fabrication", "high",
                                             "nothing in the sources carries this claim")
        return Said(replace(why, reason=why.reason + note), "support")
    if read_by is not None and (cuts := thresholds()) is not None:  # only a claim open_to_reader was read
        by_reader = _reader_decides(ctx, result, reading, read_by, cuts)
        if by_reader is not None:
            return Said(by_reader, "reader")
    if reading.soft_failed:
        return Said(replace(reading.soft_failed[0], reason=reading.soft_failed[0].reason + note), "support")
    if reading.own_voice:
        return Said(Finding(verdict="unconfirmed", type="inference", severity="medium", reason=(
            f"the claim speaks for its writer ('{reading.own_voice[0]}') where the source does not: not confirmed, "
            f"read the source{note}")), "support")
    if reading.unexplained:
        shown = ", ".join(f"'{w}'" for w in as_written(reading.unexplained, ctx.body)[:4])  # as the claim writes them
        return Said(Finding(verdict="unconfirmed", type="unverified_detail", severity="medium",
                            reason=f"the cited passage does not say {shown}: not confirmed, read the source{note}"),
                    "support")
    short = [name for name, low in reading.combiner.minimums if reading.features.get(name, -1.0) < low]
    why = GATE_REASONS.get(short[0], "") if short else ""
    return Said(Finding(verdict="unconfirmed", type="inference", severity="medium", reason=(
        f"the cited passage does not clearly carry the claim{why}: not confirmed, read the source{note}")), "support")


def _reader_decides(ctx: ClaimContext, result: ClaimResult, reading: SupportReading, read_by: ClaimReading,
                    cuts: Thresholds) -> Finding | None:
    """The reader's verdict where it clears a cut fitted for precision, else None (the rules' reading stands):
    contradicted when p(contradicts) clears its cut, exceeds p(entails) and the window names whom the claim names;
    supported when p(entails) clears its cut, the window holds every name and figure and no conflict check fires
    on it (the conditions ``historian_lab.fitting.fit.fit_cuts`` fitted the cuts under). The window it read
    becomes the claim's evidence."""
    if read_by.contradicts_at is not None and contradicts(reading.features, cuts.contradicts):
        source_id, window = read_by.contradicts_at
        result.evidence = _window_evidence(ctx, source_id, window)
        result.support = result.evidence.coverage if result.evidence is not None else 0.0
        result.probability = reading.combiner.below_cut(1 - read_by.contradicts)
        result.checks.append(Check("reader", False,
                                   f"p(contradicts)={read_by.contradicts:.2f} (cut {cuts.contradicts:.2f})"))
        return Finding(verdict="contradicted", type="fabrication", severity="high", reason=(
            f"the cited passage says otherwise (Historian's reader model reads it as contradicting the claim, "
            f"{read_by.contradicts:.2f}): read the source"))
    if read_by.entails_at is None or not supports(reading.features, cuts.entails):
        return None
    source_id, window = read_by.entails_at
    result.evidence = _window_evidence(ctx, source_id, window)
    result.support = result.evidence.coverage if result.evidence is not None else 0.0
    result.probability = round(read_by.entails, 4)
    result.checks.append(Check("reader", True, f"p(entails)={read_by.entails:.2f} (cut {cuts.entails:.2f})"))
    return Finding(verdict="supported", severity="none", reason=(
        f"the passage says this in other words (Historian's reader model, {read_by.entails:.2f}; every name and "
        f"figure of the claim is in it)"))


def _window_evidence(ctx: ClaimContext, source_id: str, window: Window) -> Evidence | None:
    return _read_at(ctx, source_id, window.start, window.end).evidence


GATE_REASONS = {
    "coverage": " (it holds too few of the claim's words)",
    "local": " (its words are spread over the passage, not said together in one place)",
    "answered": " (the answer is not in the sentence that holds what the question asks)",
    "claim_size": " (the claim is too short to carry a checkable fact)",
}


def _named(finding: Finding) -> str:
    """The name of the check that gave a finding (what ``decided_by`` shows)."""
    return finding.checks[0].name if finding.checks else "rules"


def _apply(result: ClaimResult, finding: Finding, by: str, note: str = "") -> ClaimResult:
    result.verdict, result.type, result.severity = (  # type: ignore[assignment]
        finding.verdict, finding.type, finding.severity)
    result.reason = finding.reason + note
    result.decided_by = by
    if finding.evidence is not None:
        result.evidence = finding.evidence
    if finding.support is not None:
        result.support = finding.support
    return result


def confirm_by_quote(claim: str, doc: SourceText, start: int, end: int) -> ClaimResult:
    """A claim read against one exact span (a judge's quote, re-anchored in the cited source): supported only
    when every conflict check passes on it and the span carries every word of the claim (a related form or
    synonym counts), most of them within one sentence or two adjacent ones (a claim pieced together from a
    long quote is not carried by it); otherwise the verdict the checks give, or unconfirmed."""
    cite = Cited(doc.source_id, start, end)
    ctx = _read_at(build_context(claim, [doc], [cite]), doc.source_id, start, end)
    evidence = ctx.evidence
    assert evidence is not None
    result = ClaimResult(claim, "unconfirmed", None, "none", evidence, evidence.coverage, cited=[cite],
                         decided_by="quote")
    conflict = conflict_checks(ctx, result)
    if conflict is not None:
        said = settle(conflict=Said(conflict, _named(conflict)))
        return _apply(result, said.finding, said.by)
    missing = measures.unexplained(ctx)
    result.checks.append(Check("unexplained_words", not missing, ", ".join(as_written(missing, ctx.body)[:8])))
    local = measures.local_coverage(ctx)  # one sentence, or two adjacent ones, must hold the claim
    result.checks.append(Check("local", local >= SUPPORT_THRESHOLD,
                               f"{local:.2f} of the claim's words in one or two sentences"))
    carried = not missing and evidence.coverage >= SUPPORT_THRESHOLD and local >= SUPPORT_THRESHOLD
    shown = ", ".join(repr(w) for w in as_written(missing, ctx.body)[:4])
    said = settle(
        carried=Said(Finding(verdict="supported", severity="none", reason="the quoted words carry the claim and no "
                             "check finds a conflict"), "quote") if carried else None,
        otherwise=Said(Finding(verdict="unconfirmed", type="unverified_detail", severity="medium", reason=(
            f"the quoted words do not carry {shown}" if missing else
            "the quoted words do not carry the claim in one or two sentences"
            if evidence.coverage >= SUPPORT_THRESHOLD else "the quoted words do not carry the claim")), "quote"))
    return _apply(result, said.finding, said.by)


def verify_claim(
    claim: str,
    documents: Sequence[SourceText],
    cited: Sequence[Cited] = (),
    search: Search | None = None,
    checker: Callable[..., ClaimResult] | None = None,
    question: str | None = None,
) -> ClaimResult:
    """check_claim that fails safe: an error in any check gives an unconfirmed claim, never a supported one.
    ``question``: the claim answers it (its words are read with the claim's)."""
    try:
        if checker is None:
            result = check_claim(claim, documents, cited, search, question=question)
        else:  # a caller's own checker takes (claim, documents, cited, search)
            result = checker(claim, documents, cited, search)
        if not isinstance(result, ClaimResult):
            raise TypeError(f"checker returned {type(result).__name__}")
        return result
    except Exception as exc:  # fail safe: record why, never call it supported
        broke = Check("verifier", False, f"{type(exc).__name__}: {exc}")
        said = settle(unread=Said(failed(broke, "unconfirmed", "unverified_detail", "high",
                                         f"verification failed ({type(exc).__name__}); the claim is not verified")))
        return _apply(ClaimResult(claim, "unconfirmed", None, "none", None, 0.0, [broke], cited=list(cited),
                                  probability=0.0), said.finding, said.by)
