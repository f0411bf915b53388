"""A claim read through once, before anything is decided: what the decision (``verify/decision.decide``) reads.

In the order a careful historian reads:
1. the **conflict checks** (``verify/rules``, kind ``conflict``, in checklist order): the first that fails stands
   (contradicted, misquote, misattributed; or unconfirmed, when it finds something missing);
2. the **support reading** (``verify/support.py``): how much of the claim the evidence carries, as one calibrated
   probability, with its findings;
3. what else the reading found when neither decides: an opinion the claim reverses (``rules/polarity``), or no
   evidence at all (misattributed, or nothing in the sources);
4. with ``HISTORIAN_READER=on``, the **reader model** (``verify/reader.py``) on a claim the rules leave plainly
   unconfirmed (``open_to_reader``), with the windows it read as evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from historian_blueprint.text.words import content_words
from historian_blueprint.verify.context import ClaimContext
from historian_blueprint.verify.evidence import Evidence, covered
from historian_blueprint.verify.findings import Check, ClaimResult, Finding
from historian_blueprint.verify.reader import (ClaimReading, ReaderUnavailable, Thresholds, read_claim,
                                              reader_features, reader_in_use, thresholds)
from historian_blueprint.verify.rules import polarity, registered
from historian_blueprint.verify.rules import measures
from historian_blueprint.verify.support import SupportReading, applicable, read_support


@dataclass
class ClaimReadings:
    """Everything read of one claim (see the module's docstring); the checks each ran are on the claim's result."""

    conflict: Finding | None               # the first conflict check that failed
    support: SupportReading
    reversed: Finding | None = None        # read when no conflict stands and the support does not carry the claim
    absent: Finding | None = None          # no evidence: misattributed, or nothing in the sources carries it
    reader: ClaimReading | None = None     # only a claim open_to_reader, with the reader on
    cuts: Thresholds | None = None         # the reader's fitted cuts (None: the reader decides nothing)
    entailed: Evidence | None = None       # the window the reader found "entails" in, as evidence
    contradicted: Evidence | None = None   # the window it found "contradicts" in


def read(ctx: ClaimContext, result: ClaimResult, question: str | None) -> ClaimReadings:
    """Read the claim (``question``: the claim answers it; its words are read with the claim's). The checks each
    reading ran are added to ``result.checks``, conflict checks first."""
    conflict = conflict_checks(ctx, result)
    support = read_support(ctx, question)
    result.checks.extend(support.checks)
    readings = ClaimReadings(conflict, support)
    if conflict is not None or support.carried:
        return readings
    readings.reversed = polarity.reversed_opinion(ctx)
    if readings.reversed is not None:  # the decision gives it: the claim judges ill what the source judges well
        result.checks.extend(readings.reversed.checks)
    if ctx.evidence is None:  # misattributed, or nothing in the sources carries it
        readings.absent = measures.evidence(ctx)
    if reader_in_use() and open_to_reader(ctx, support, readings.reversed):
        _read_by_reader(ctx, result, readings, question)
    return readings


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


_QUOTES = ('"', "“", "”")


def open_to_reader(ctx: ClaimContext, reading: SupportReading, reversed_: Finding | None) -> bool:
    """A claim the rules leave plainly unconfirmed: not carried, evidence found, no reversed opinion, no finding
    but "unconfirmed", no speaker, no quotation and no first person the source lacks (the rules' own checks of
    those are not to be read past)."""
    return (not reading.carried and ctx.evidence is not None and ctx.speaker is None and not reading.own_voice
            and not any(q in ctx.claim for q in _QUOTES)
            and all(f.verdict == "unconfirmed" for f in reading.soft_failed) and reversed_ is None)


def _read_by_reader(ctx: ClaimContext, result: ClaimResult, readings: ClaimReadings, question: str | None) -> None:
    """The reader's reading of an open claim, with what the decision needs of it in the support's features and the
    windows it read as evidence; a reader that cannot be loaded or fails is named on the claim, and the rules
    decide."""
    assert ctx.evidence is not None
    said = ctx.body[len(ctx.frame):] if ctx.frame and ctx.body.startswith(ctx.frame) else ctx.body
    try:
        read_by = read_claim(said if question is None else f"{question} {said}",
                             sorted(ctx.primary, key=lambda d: d is not ctx.doc),
                             [(ctx.evidence.source_id, ctx.evidence.start, ctx.evidence.end)]
                             + [(c.source_id, c.start, c.end) for c in ctx.cited])
    except ReaderUnavailable as exc:
        result.checks.append(Check("reader", False, f"the reader is unavailable: {exc}"))
        return
    except Exception as exc:  # noqa: BLE001 - a failing reader never decides; the rules do
        result.checks.append(Check("reader", False, f"the reader failed ({type(exc).__name__}: {exc})"))
        return
    features = readings.support.features
    features.update(reader_features(ctx.frame, said, ctx.primary, read_by))
    clear = 0.0
    if read_by.entails_at is not None:  # the conflict checks read the reader's window too
        source_id, window = read_by.entails_at
        at = read_at(ctx, source_id, window.start, window.end)
        scratch = ClaimResult(ctx.claim, "unconfirmed", None, "none", None, 0.0)
        clear = float(conflict_checks(at, scratch) is None)
        readings.entailed = at.evidence
    if read_by.contradicts_at is not None:
        source_id, window = read_by.contradicts_at
        readings.contradicted = read_at(ctx, source_id, window.start, window.end).evidence
    features["reader_window_clear"] = clear
    readings.reader, readings.cuts = read_by, thresholds()


def read_at(ctx: ClaimContext, source_id: str, start: int, end: int) -> ClaimContext:
    """The claim's context with another window of its documents as its evidence."""
    doc = next((d for d in ctx.primary if d.source_id == source_id), ctx.doc)
    if doc is None:
        return ctx
    text = doc.text[start:end]
    window = Evidence(source_id, start, end, text, covered(ctx.wordy, set(content_words(text)), ctx.names))
    return replace(ctx, doc=doc, evidence=window)  # a new context: its cached alignment is computed afresh
