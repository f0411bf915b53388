"""The grounding floor every engine shares: one claim read against its sources, as a careful historian does.

1. the claim's **context** (``verify/context.py``): its words and names, its best evidence (the cited passage
   first, then the rest of the cited document, then other documents);
2. its **readings** (``verify/reading.py``): the conflict checks, the support reading (one calibrated
   probability), what else the reading found, and, with ``HISTORIAN_READER=on``, the reader model on what the rules
   leave open;
3. one **decision** (``verify/decision.decide``, through ``settle``, which every writer of a verdict calls):
   ``supported`` only above a threshold chosen for precision and with no word of the claim the evidence does not
   carry, or (reader on) where the reader finds it said in other words above its own precision cut with every name
   and figure held; otherwise ``unconfirmed``: "not confirmed: read the source".

Answers to yes/no questions are read with their question (``verify/answers.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from historian_blueprint.schema import Cited, SourceText
from historian_blueprint.text.words import as_written
from historian_blueprint.verify.context import Search, build_context
from historian_blueprint.verify.decision import Said, apply, decide, named, settle
from historian_blueprint.verify.evidence import SUPPORT_THRESHOLD
from historian_blueprint.verify.findings import Check, ClaimResult, Finding, failed
from historian_blueprint.verify.reading import conflict_checks, read, read_at
from historian_blueprint.verify.rules import measures


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
    return decide(result, read(ctx, result, question))


def confirm_by_quote(claim: str, doc: SourceText, start: int, end: int) -> ClaimResult:
    """A claim read against one exact span (a judge's quote, re-anchored in the cited source): supported only
    when every conflict check passes on it and the span carries every word of the claim (a related form or
    synonym counts), most of them within one sentence or two adjacent ones (a claim pieced together from a
    long quote is not carried by it); otherwise the verdict the checks give, or unconfirmed."""
    cite = Cited(doc.source_id, start, end)
    ctx = read_at(build_context(claim, [doc], [cite]), doc.source_id, start, end)
    evidence = ctx.evidence
    assert evidence is not None
    result = ClaimResult(claim, "unconfirmed", None, "none", evidence, evidence.coverage, cited=[cite],
                         decided_by="quote")
    conflict = conflict_checks(ctx, result)
    if conflict is not None:
        return apply(result, settle(conflict=Said(conflict, named(conflict))))
    missing = measures.unexplained(ctx)
    written = as_written(missing, ctx.body)  # as the claim writes them
    result.checks.append(Check("unexplained_words", not missing, ", ".join(written[:8])))
    local = measures.local_coverage(ctx)  # one sentence, or two adjacent ones, must hold the claim
    result.checks.append(Check("local", local >= SUPPORT_THRESHOLD,
                               f"{local:.2f} of the claim's words in one or two sentences"))
    carried = not missing and evidence.coverage >= SUPPORT_THRESHOLD and local >= SUPPORT_THRESHOLD
    shown = ", ".join(repr(w) for w in written[:4])
    said = settle(
        carried=Said(Finding(verdict="supported", severity="none", reason="the quoted words carry the claim and no "
                             "check finds a conflict"), "quote") if carried else None,
        otherwise=Said(Finding(verdict="unconfirmed", type="unverified_detail", severity="medium", reason=(
            f"the quoted words do not carry {shown}" if missing else
            "the quoted words do not carry the claim in one or two sentences"
            if evidence.coverage >= SUPPORT_THRESHOLD else "the quoted words do not carry the claim")), "quote"))
    return apply(result, said)


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
        return apply(ClaimResult(claim, "unconfirmed", None, "none", None, 0.0, [broke], cited=list(cited),
                                 probability=0.0), said)
