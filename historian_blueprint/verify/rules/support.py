"""Is the claim carried by its evidence at all: an assertion, evidence found, most of its words, nothing new,
and the support in the cited document rather than another one."""

from __future__ import annotations

from historian_blueprint.text.normalize import is_question
from historian_blueprint.text.words import content_words
from historian_blueprint.verify.context import ClaimContext
from historian_blueprint.verify.evidence import SUPPORT_THRESHOLD, covered, document_words, related_form
from historian_blueprint.verify.findings import Check, Finding, failed, passed

MISATTRIBUTION_MARGIN = 0.15  # support elsewhere must beat the cited source's by this much
DOCUMENT_THRESHOLD = 0.9      # share of the claim's content words found anywhere in the source document


def assertion(ctx: ClaimContext) -> Finding | None:
    """A question asserts nothing the sources could support."""
    if is_question(ctx.body):
        return failed(Check("assertion", False, "a question"), "unsupported", "inference", "low",
                      "a question asserts nothing the sources could support")
    return None


def evidence(ctx: ClaimContext) -> Finding | None:
    """No sentence of the sources shares a word with the claim: fabricated, or supported only elsewhere."""
    if ctx.evidence is not None:
        return None
    check = Check("coverage", False, "no sentence of the sources shares words with the claim")
    return misattribution(ctx, check) or failed(check, "unsupported", "fabrication", "high", "nothing in the sources supports this claim")


def coverage(ctx: ClaimContext) -> Finding:
    """The evidence holds most of the claim's words (numbers are checked on their own)."""
    share = covered(ctx.wordy, ctx.window_words, ctx.names)
    check = Check("coverage", share >= SUPPORT_THRESHOLD, f"{share:.2f} of the claim's words in the evidence")
    if check.ok:
        return passed(check)
    kind = "inference" if share >= 0.5 else "fabrication"
    return misattribution(ctx, check) or failed(
        check, "unsupported", kind, "high" if kind == "fabrication" else "medium", "the evidence does not contain most of the claim"
    )


def novel_words(ctx: ClaimContext) -> Finding:
    """What the evidence window lacks must at least be in the document (or its title and author)."""
    outside = ctx.wordy - ctx.window_words
    doc_words = (document_words(ctx.doc.text) | set(content_words(ctx.doc.byline))) if outside else ctx.wordy
    novel = sorted(w for w in ctx.wordy - doc_words if w in ctx.names or not related_form(w, doc_words))
    share = 1 - len(novel) / len(ctx.wordy)
    check = Check("novel_words", share >= DOCUMENT_THRESHOLD, ", ".join(novel[:8]))
    if not check.ok:
        return failed(check, "unsupported", "unverified_detail", "medium", f"the source never mentions {', '.join(novel[:3])}")
    return passed(check)


def misattribution(ctx: ClaimContext, check: Check) -> Finding | None:
    """The claim is carried by a document other than the one it cites (clearly better than by its own)."""
    if ctx.elsewhere is None:
        return None
    other, found = ctx.elsewhere
    own = ctx.evidence.coverage if ctx.evidence is not None else 0.0
    if found.coverage < SUPPORT_THRESHOLD or found.coverage <= own + MISATTRIBUTION_MARGIN:
        return None
    # support is the share the cited source's evidence had; with none there at all it stays 0
    return failed(check, "misattributed", "misattribution", "high", f"the support is in {other.source_id}, not the cited source",
                  evidence=found, support=found.coverage if ctx.evidence is not None else None)
