"""The one decision: which of what was found about a claim gives its verdict, in the order a careful historian
weighs it: ``settle``, a pure function of its inputs (``decide`` and ``apply`` write its outcome on the claim's
result); every writer of a verdict goes through it:

- the grounding service (``decide``, on a claim's readings: ``verify/reading.py``: the conflict checks, the support
  reading, what else the reading found: a reversed opinion, no evidence, the reader's verdict, a soft check);
- the fail-safe (a check that raised) and the time limit (a claim not reached), as ``unread``;
- the judge's quotes (``grounding.confirm_by_quote``, read by ``ask/roles/anchoring.py``);
- a finding whose quote is not in its source (``composed.py``), as ``misquote``;
- the evaluation harness's rescoring under another support combination (``historian_lab``).

Order: a claim not read through is never supported; a misquote stands; a conflict decides; the support carrying
the claim makes it supported; else what else was found; else unconfirmed ("not confirmed: read the source").
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from historian_blueprint.verify.findings import Check, ClaimResult, Finding
from historian_blueprint.verify.reader import contradicts, supports
from historian_blueprint.verify.reading import ClaimReadings


@dataclass(frozen=True)
class Said:
    """One input to the decision: what was found (``finding.verdict`` None: nothing) and who found it (a rule's
    name, "support", "reader", "quote", "time limit"; "" for the fail-safe)."""

    finding: Finding
    by: str = ""


NOT_CONFIRMED = Finding(verdict="unconfirmed", type="inference", severity="medium",
                        reason="not confirmed: read the source")


def settle(*, unread: Said | None = None, misquote: Said | None = None, conflict: Said | None = None,
           carried: Said | None = None, otherwise: Said | None = None) -> Said:
    """The verdict's source among the inputs, in the decision's order (the module's docstring). A claim not read
    through, or misquoted, is never supported whatever was passed; with nothing found, unconfirmed."""
    for stop in (unread, misquote):
        if stop is not None:
            if stop.finding.verdict in (None, "supported"):  # fail safe: an input that says otherwise is mistaken
                return Said(replace(NOT_CONFIRMED, reason=stop.finding.reason or NOT_CONFIRMED.reason), stop.by)
            return stop
    for said in (conflict, carried, otherwise):
        if said is not None and said.finding.verdict is not None:
            return said
    return Said(NOT_CONFIRMED, "support")


def decide(result: ClaimResult, read: ClaimReadings) -> ClaimResult:
    """A claim's readings given to the decision (``settle``): a conflict decides; else supported when the evidence
    carries the claim (probability above the precision cut, no word of it unexplained); else what else the reading
    found (``_left_open``). Written on the claim's result (its verdict, reason, who decided, its evidence)."""
    reading = read.support
    result.features = reading.features
    p = reading.probability
    result.probability = p if read.conflict is None and reading.carried else reading.combiner.below_cut(p)
    said = settle(
        conflict=Said(read.conflict, named(read.conflict)) if read.conflict is not None else None,
        carried=Said(Finding(verdict="supported", severity="none",
                             reason=f"the evidence carries the claim (support {p:.2f})"), "support")
        if reading.carried else None,
        otherwise=None if read.conflict is not None or reading.carried else _left_open(result, read),
    )
    return apply(result, said)


def _left_open(result: ClaimResult, read: ClaimReadings) -> Said:
    """What a claim the conflict checks pass and the support does not carry is: a reversed opinion, or no evidence;
    else, for a claim the rules leave open, the reader's verdict above its cut (``_reader_decides``); else a soft
    check's finding; else unconfirmed, with what is missing named."""
    reading = read.support
    note = f" (support {reading.probability:.2f})"
    if read.reversed is not None:  # a reversal: the claim judges ill what the source judges well
        return Said(replace(read.reversed, reason=read.reversed.reason + note), "opinion")
    if read.absent is not None:
        return Said(replace(read.absent, reason=read.absent.reason + note), "support")
    if read.reader is not None and read.cuts is not None:  # only a claim open to the reader was read
        by_reader = _reader_decides(result, read)
        if by_reader is not None:
            return Said(by_reader, "reader")
    if reading.soft_failed:
        return Said(replace(reading.soft_failed[0], reason=reading.soft_failed[0].reason + note), "support")
    if reading.own_voice:
        return Said(Finding(verdict="unconfirmed", type="inference", severity="medium", reason=(
            f"the claim speaks for its writer ('{reading.own_voice[0]}') where the source does not: not confirmed, "
            f"read the source{note}")), "support")
    if reading.unexplained:
        shown = ", ".join(f"'{w}'" for w in reading.unexplained_shown[:4])  # as the claim writes them
        return Said(Finding(verdict="unconfirmed", type="unverified_detail", severity="medium",
                            reason=f"the cited passage does not say {shown}: not confirmed, read the source{note}"),
                    "support")
    short = [name for name, low in reading.combiner.minimums if reading.features.get(name, -1.0) < low]
    why = GATE_REASONS.get(short[0], "") if short else ""
    return Said(Finding(verdict="unconfirmed", type="inference", severity="medium", reason=(
        f"the cited passage does not clearly carry the claim{why}: not confirmed, read the source{note}")), "support")


def _reader_decides(result: ClaimResult, read: ClaimReadings) -> Finding | None:
    """The reader's verdict where it clears a cut fitted for precision, else None (the rules' reading stands):
    contradicted when p(contradicts) clears its cut, exceeds p(entails) and the window names whom the claim names;
    supported when p(entails) clears its cut, the window holds every name and figure and no conflict check fires
    on it (the conditions ``historian_lab.fitting.fit.fit_cuts`` fitted the cuts under). The window it read
    becomes the claim's evidence."""
    reading, read_by, cuts = read.support, read.reader, read.cuts
    assert read_by is not None and cuts is not None
    if read_by.contradicts_at is not None and contradicts(reading.features, cuts.contradicts):
        result.evidence = read.contradicted
        result.support = result.evidence.coverage if result.evidence is not None else 0.0
        result.probability = reading.combiner.below_cut(1 - read_by.contradicts)
        result.checks.append(Check("reader", False,
                                   f"p(contradicts)={read_by.contradicts:.2f} (cut {cuts.contradicts:.2f})"))
        return Finding(verdict="contradicted", type="fabrication", severity="high", reason=(
            f"the cited passage says otherwise (Historian's reader model reads it as contradicting the claim, "
            f"{read_by.contradicts:.2f}): read the source"))
    if read_by.entails_at is None or not supports(reading.features, cuts.entails):
        return None
    result.evidence = read.entailed
    result.support = result.evidence.coverage if result.evidence is not None else 0.0
    result.probability = round(read_by.entails, 4)
    result.checks.append(Check("reader", True, f"p(entails)={read_by.entails:.2f} (cut {cuts.entails:.2f})"))
    return Finding(verdict="supported", severity="none", reason=(
        f"the passage says this in other words (Historian's reader model, {read_by.entails:.2f}; every name and "
        f"figure of the claim is in it)"))


GATE_REASONS = {
    "coverage": " (it holds too few of the claim's words)",
    "local": " (its words are spread over the passage, not said together in one place)",
    "answered": " (the answer is not in the sentence that holds what the question asks)",
    "claim_size": " (the claim is too short to carry a checkable fact)",
}


def named(finding: Finding) -> str:
    """The name of the check that gave a finding (what ``decided_by`` shows)."""
    return finding.checks[0].name if finding.checks else "rules"


def apply(result: ClaimResult, said: Said) -> ClaimResult:
    """The decision written on the claim's result: its verdict, type, severity, reason, who decided, and the
    evidence or support a finding brings (a misattribution's better evidence elsewhere)."""
    finding = said.finding
    result.verdict, result.type, result.severity = (  # type: ignore[assignment]
        finding.verdict, finding.type, finding.severity)
    result.reason = finding.reason
    result.decided_by = said.by
    if finding.evidence is not None:
        result.evidence = finding.evidence
    if finding.support is not None:
        result.support = finding.support
    return result
