"""Quotations: the quoted words are in the source as written, and the source is by the one said to say them."""

from __future__ import annotations

from historian_blueprint.text.words import capitalized_terms, normalize, normalized
from historian_blueprint.text.quotations import quotations
from historian_blueprint.verify.context import ClaimContext
from historian_blueprint.verify.findings import Check, Finding, failed, passed
from historian_blueprint.verify.rules.registry import rule


@rule("conflict", 30, needs="evidence")
def quotation(ctx: ClaimContext) -> Finding | None:
    """Every quotation of the claim (the whole quoted body of 'X said "..."') is verbatim in the source."""
    quotes = quotations(ctx.claim) or ([ctx.body] if ctx.speaker else [])
    source = normalized(ctx.doc.text)
    checks: list[Check] = []
    for quote in quotes:
        checks.append(Check("quotation", normalize(quote).strip(" .") in source, quote[:80]))
        if not checks[-1].ok:
            return failed(tuple(checks), "misquote", "misattribution", "high",
                          "the quoted words are not in the source as written")
    return passed(*checks) if checks else None


@rule("conflict", 35, needs="evidence")
def speaker(ctx: ClaimContext) -> Finding | None:
    """'X said ...': X is named by the source's title or author or in the evidence."""
    if not ctx.speaker:
        return None
    owner = normalize(f"{ctx.doc.byline} {ctx.evidence.text}")
    compact = owner.replace(" ", "")
    missing = [t for t in capitalized_terms(ctx.speaker) if t not in owner and t not in compact]
    check = Check("speaker", not missing, ", ".join(missing))
    if missing:
        return failed(check, "misattributed", "misattribution", "high", f"the source is not by {ctx.speaker}")
    return passed(check)
