"""Details a paraphrase may not change: numbers and dates, names, and which names the source puts together."""

from __future__ import annotations

import re

from historian_blueprint.text.words import capitalized_terms, normalize, words
from historian_blueprint.text.quantities import quantities, rounds_to
from historian_blueprint.verify.context import ClaimContext
from historian_blueprint.verify.evidence import names_together as mentioned_together
from historian_blueprint.verify.findings import Check, Finding, failed, passed
from historian_blueprint.verify.rules.registry import rule

# Third-person names for the first-person voice of a document ("I recommend" -> "The President recommended").
VOICE_ROLES = frozenset("president author speaker narrator interviewee writer informant secretary governor".split())
FIRST_PERSON = frozenset("i we my our me us".split())


_THIS_YEAR = re.compile(r"\b(?:this|the present|the current) (?:fiscal )?year\b", re.I)
YEAR_RADIUS = 600  # characters around the evidence where a year that dates it may stand


@rule("conflict", 40, needs="passage")
def numbers(ctx: ClaimContext) -> Finding:
    """Every number, amount and date of the claim is in the evidence (a figure the claim says is approximate
    may be the evidence's, rounded); another number there contradicts it."""
    claimed = quantities(ctx.body)
    stated = [q.value for q in quantities(ctx.evidence.text)]
    missing = [q for q in claimed if not any(rounds_to(q, s) for s in stated)]
    # a year the passage's neighbourhood gives ("the fiscal year ending June 30, 1929") dates it
    if ctx.doc is not None:
        near = ctx.doc.text[max(0, ctx.evidence.start - YEAR_RADIUS): ctx.evidence.end + YEAR_RADIUS]
        years_near = {q.value for q in quantities(near) if q.year}
        # the document's own date: "June 30 this year" in a dated document is that year, and so is the year the
        # claim's frame gives the document ("In his 1864 annual message, ...")
        dated = {q.value for q in quantities(ctx.doc.byline) if q.year}
        framed = {q.value for q in quantities(ctx.frame) if q.year}
        years_near |= dated if _THIS_YEAR.search(ctx.evidence.text) else dated & framed
        missing = [q for q in missing if not (q.year and q.value in years_near)]
    shown = ", ".join(f"{q.value:.0f}" if q.year else f"{q.value:,.10g}" for q in missing)
    check = Check("numbers", not missing, shown)
    if missing:
        unused = [s for s in stated if not any(rounds_to(q, s) for q in claimed)]
        return failed(check, "contradicted" if unused else "unconfirmed", "unverified_detail", "high",
                      f"{shown} is not in the evidence")
    return passed(check)


@rule("conflict", 50, needs="close")
def names(ctx: ClaimContext) -> Finding:
    """Every name, place and institution of the claim is in the evidence or the source's title and author."""
    context = normalize(f"{ctx.evidence.text} {ctx.doc.byline}")
    context_words = set(words(context))
    first_person = bool(context_words & FIRST_PERSON)
    missing = [
        t for t in capitalized_terms(ctx.body)
        if t not in context_words and not re.search(rf"\b{re.escape(t)}", context)
        and not (first_person and t in VOICE_ROLES)
    ]
    check = Check("names", not missing, ", ".join(missing))
    if missing:  # named as the claim writes them ("Andrew Johnson"), not as compared
        written = list(dict.fromkeys(_as_written(t, ctx.body) for t in missing))
        return failed(check, "unconfirmed", "unverified_detail", "high",
                      f"{' '.join(written) if _adjacent(written, ctx.body) else ', '.join(written)} "
                      f"{'is' if len(written) == 1 or _adjacent(written, ctx.body) else 'are'} not in the evidence")
    return passed(check)


def _as_written(term: str, text: str) -> str:
    found = re.search(rf"\b{re.escape(term)}\b", text, re.I)
    return found.group() if found else term


def _adjacent(names: list[str], text: str) -> bool:
    """The names stand together as one name in the claim ("Andrew Johnson")."""
    return len(names) > 1 and bool(re.search(r"\s+".join(re.escape(n) for n in names), text))


@rule("conflict", 55, needs="close")
def names_together(ctx: ClaimContext) -> Finding:
    """Names the source mentions apart are not joined by the claim ("X is owned by Y" where X and Y never meet)."""
    metadata = normalize(ctx.doc.byline)
    named = list(dict.fromkeys(t for t in capitalized_terms(ctx.body) if t not in metadata and t not in VOICE_ROLES))
    together = len(named) < 2 or mentioned_together(named, ctx.doc, evidence=ctx.evidence)
    check = Check("names_together", together, ", ".join(named))
    if not together:
        return failed(check, "unconfirmed", "fabrication", "high",
                      f"the source never mentions {', '.join(named)} together")
    return passed(check)
