"""The grounding rules, in the order a careful historian checks a claim against its source.

Each rule is a function of the claim's context (``verify/context.py``) that returns its finding (the
checks it ran, and a verdict when the claim fails it) or None when it does not apply. The first failing
rule decides the claim. Adding a rule is adding one function here and its tests (one where it fires, one
near miss where it does not).
"""

from __future__ import annotations

from collections.abc import Callable

from historian_blueprint.verify.context import ClaimContext
from historian_blueprint.verify.findings import Finding
from historian_blueprint.verify.rules import comparison, details, polarity, quotation, support

Rule = Callable[[ClaimContext], Finding | None]

RULES: tuple[Rule, ...] = (
    support.assertion,        # a question asserts nothing
    support.evidence,         # some sentence of the sources shares the claim's words (else: elsewhere, or fabricated)
    quotation.quotation,      # quoted words are in the source as written
    quotation.speaker,        # 'X said ...': the source is by X or names X
    support.coverage,         # the evidence holds most of the claim's words (else: elsewhere, or not carried)
    support.novel_words,      # what the evidence lacks is at least in the document
    details.numbers,          # numbers, amounts and dates are the source's
    details.names,            # names, places and institutions are the source's
    details.names_together,   # names the source keeps apart are not joined
    polarity.negation,        # no "not" added or dropped
    polarity.scope,           # no "all", "every", "certainly" the source does not say
    polarity.frequency,       # no "usually" for "rarely"
    comparison.each_named,    # "both A and B are P": P is said of each
    comparison.chronology,    # "A before B": the sources' years agree
)

# With the support scorer (verify/support.py) the rules split in two. Hard rules are precise by construction
# and contradict a claim whatever the scorer says; the first that fails decides. Soft rules only measure: what
# they find is a feature of the calibrated support probability, and their reason explains an unsupported
# verdict. Misattribution (support.misattribution) is hard too; it is checked where the cited source is weak.
HARD_RULES: tuple[Rule, ...] = (
    support.assertion,
    quotation.quotation,
    quotation.speaker,
    details.numbers,
    details.names,
    details.names_together,
    polarity.negation,
    polarity.frequency,
    polarity.scope,           # hard since the fit halves showed it precise (1.3% of supported claims, none in historian's)
    comparison.each_named,
    comparison.chronology,
)
SOFT_RULES: tuple[Rule, ...] = (
    support.coverage,
    support.novel_words,
)
# What a claim the scorer carries must still agree on with the window that carries it (when that window is
# not the cited region the hard rules already read).
CARRIED_RULES: tuple[Rule, ...] = (details.numbers, details.names, polarity.negation)
