"""Where a close paraphrase reverses or stretches its source: a negation flipped, the scope widened, how
often something happened changed."""

from __future__ import annotations

from historian_blueprint.text.words import FREQUENT, INFREQUENT, SCOPE_WORDS, words
from historian_blueprint.verify.alignment import flips
from historian_blueprint.verify.context import ClaimContext
from historian_blueprint.verify.findings import Check, Finding, failed, passed
from historian_blueprint.verify.rules.registry import rule

NEGATIONS = frozenset(
    "not no never none nothing neither nor nobody nowhere cannot without n't hardly scarcely".split()
)


def is_negation(token: str) -> bool:
    return token in NEGATIONS or token.endswith("n't")


@rule("conflict", 60, needs="close")
def negation(ctx: ClaimContext) -> Finding:
    """A "not" added or dropped where the claim otherwise follows the source."""
    flipped = flips(ctx.alignment, NEGATIONS)
    check = Check("negation", not flipped, " ".join(flipped))
    if flipped:
        what = f"adds '{flipped[0]}'" if flipped[0] in ctx.alignment.claim_only else f"drops '{flipped[0]}'"
        return failed(check, "contradicted", "fabrication", "critical", f"the claim {what} and so reverses the source")
    return passed(check)


@rule("conflict", 75, needs="close")
def scope(ctx: ClaimContext) -> Finding:
    """A scope word (all, every, never, certainly ...) the source's words around the evidence do not have."""
    region = set(ctx.alignment.region)
    widened = sorted(
        ({t for t in words(ctx.body) if t in SCOPE_WORDS} - region)
        | {t for t in ctx.alignment.claim_only if t in SCOPE_WORDS}
    )
    check = Check("scope", not widened, ", ".join(widened))
    if widened:
        return failed(check, "unconfirmed", "exaggeration", "medium",
                      f"'{widened[0]}' claims more than the source says")
    return passed(check)


@rule("conflict", 70, needs="close")
def frequency(ctx: ClaimContext) -> Finding:
    """"usually" where the source says "rarely" (or the reverse) is not a paraphrase."""
    said, given = set(words(ctx.body)), set(words(ctx.evidence.text))
    flipped = sorted((said & FREQUENT) - given if (given & INFREQUENT) - said else set()) + sorted(
        (said & INFREQUENT) - given if (given & FREQUENT) - said else set()
    )
    check = Check("frequency", not flipped, ", ".join(flipped))
    if flipped:
        return failed(check, "contradicted", "exaggeration", "high",
                      f"'{flipped[0]}' is not how often the source says it happened")
    return passed(check)


# Words that judge something well or ill. Used only to *name* a claim the support probability already found
# unsupported: when the claim judges ill what its evidence judges well (or the reverse), it is a reversed
# opinion, "contradicted" rather than merely "unconfirmed". It never turns a supported claim into a flagged one.
FAVOURABLE = frozenset(
    "salutary beneficial benefit good wise improve improved improvement prosper prosperous prosperity success "
    "successful strengthen strengthened favorable favourable help helpful restore restored gain sound advantage "
    "advantageous healthy confident confidence progress satisfactory encourage encouraging welcome approve "
    "approved praise praised excellent relief hopeful".split()
)
UNFAVOURABLE = frozenset(
    "damage damaged damaging harm harmful hurt injure injured injurious weaken weakened ruin ruinous danger "
    "dangerous threaten threatened fail failed failure bad unwise loss worse worsen disastrous disaster evil "
    "destroy destroyed undermine undermined unsatisfactory discourage condemn condemned deplore deplorable "
    "distress alarming mischievous".split()
)


def reversed_opinion(ctx: ClaimContext) -> Finding | None:
    """The claim judges ill what its evidence judges well, or well what it judges ill."""
    if ctx.evidence is None:
        return None
    said, source = set(words(ctx.body)), set(words(ctx.evidence.text))
    for mine, theirs in ((UNFAVOURABLE, FAVOURABLE), (FAVOURABLE, UNFAVOURABLE)):
        claimed, stated = said & mine, source & theirs
        if claimed and stated and not said & theirs and not source & mine:
            check = Check("opinion", False, f"{', '.join(sorted(claimed))} against {', '.join(sorted(stated))}")
            return failed(check, "contradicted", "fabrication", "high",
                          f"the claim says {sorted(claimed)[0]} where the source says {sorted(stated)[0]}: "
                          "a reversed opinion")
    return None
