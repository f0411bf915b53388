"""Where a close paraphrase reverses or stretches its source: a negation flipped, the scope widened, how
often something happened changed."""

from __future__ import annotations

from historian_blueprint.text.words import FREQUENT, INFREQUENT, words
from historian_blueprint.verify.alignment import flips
from historian_blueprint.verify.context import ClaimContext
from historian_blueprint.verify.findings import Check, Finding, failed, passed

NEGATIONS = frozenset(
    "not no never none nothing neither nor nobody nowhere cannot without n't hardly scarcely".split()
)
SCOPE_WORDS = frozenset(
    "all every always never none entire entirely completely totally wholly whole only sole solely "
    "universal universally everyone everybody everything everywhere invariably any each "
    "certainly definitely surely undoubtedly inevitably absolutely unquestionably".split()
)


def is_negation(token: str) -> bool:
    return token in NEGATIONS or token.endswith("n't")


def negation(ctx: ClaimContext) -> Finding:
    """A "not" added or dropped where the claim otherwise follows the source."""
    flipped = flips(ctx.alignment, NEGATIONS)
    check = Check("negation", not flipped, " ".join(flipped))
    if flipped:
        what = f"adds '{flipped[0]}'" if flipped[0] in ctx.alignment.claim_only else f"drops '{flipped[0]}'"
        return failed(check, "contradicted", "fabrication", "critical", f"the claim {what} and so reverses the source")
    return passed(check)


def scope(ctx: ClaimContext) -> Finding:
    """A scope word (all, every, never, certainly ...) the source's words around the evidence do not have."""
    region = set(ctx.alignment.region)
    widened = sorted(
        ({t for t in words(ctx.body) if t in SCOPE_WORDS} - region)
        | {t for t in ctx.alignment.claim_only if t in SCOPE_WORDS}
    )
    check = Check("scope", not widened, ", ".join(widened))
    if widened:
        return failed(check, "unsupported", "exaggeration", "medium", f"'{widened[0]}' claims more than the source says")
    return passed(check)


def frequency(ctx: ClaimContext) -> Finding:
    """"usually" where the source says "rarely" (or the reverse) is not a paraphrase."""
    said, given = set(words(ctx.body)), set(words(ctx.evidence.text))
    flipped = sorted((said & FREQUENT) - given if (given & INFREQUENT) - said else set()) + sorted(
        (said & INFREQUENT) - given if (given & FREQUENT) - said else set()
    )
    check = Check("frequency", not flipped, ", ".join(flipped))
    if flipped:
        return failed(check, "contradicted", "exaggeration", "high", f"'{flipped[0]}' is not how often the source says it happened")
    return passed(check)
