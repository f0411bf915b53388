"""The support reading: how far a claim's evidence carries it, as one calibrated probability and the findings
beside it, in one place: the support measurements (``verify/rules/measures.py``, registered as rules of kind
``support``) read where the evidence allows (``applicable``), combined by the fitted combination
(``verify/combination.py``). A claim's reading holds it (``verify/reading.py``); the decision reads it
(``verify/decision.decide``).
"""

from __future__ import annotations

from dataclasses import dataclass

from historian_blueprint.text.words import as_written, content_words
from historian_blueprint.verify.combination import Combiner, default_combiner, features
from historian_blueprint.verify.context import ClaimContext
from historian_blueprint.verify.evidence import LOCAL_RADIUS, SUPPORT_THRESHOLD, sentence_count
from historian_blueprint.verify.findings import Check, Finding
from historian_blueprint.verify.rules import Registered, registered
from historian_blueprint.verify.rules import measures
from historian_blueprint.verify.windows import WINDOW_CHARS


def applicable(ctx: ClaimContext, rule: Registered) -> bool:
    """Whether the evidence is good enough for this check to be read at all (``Registered.needs``)."""
    if rule.needs == "nothing":
        return True
    if ctx.evidence is None or ctx.doc is None:
        return False
    close = ctx.window_share >= SUPPORT_THRESHOLD  # numbers are checked on their own
    return rule.needs == "evidence" or close or (rule.needs == "passage" and _cites_a_passage(ctx))


def _cites_a_passage(ctx: ClaimContext) -> bool:
    """The claim cites a span (not a whole document) and its evidence is found there."""
    assert ctx.evidence is not None
    return any(c.source_id == ctx.evidence.source_id and c.end - c.start <= 2 * WINDOW_CHARS
               and c.start < ctx.evidence.end + LOCAL_RADIUS and c.end > ctx.evidence.start - LOCAL_RADIUS
               for c in ctx.cited)


@dataclass
class SupportReading:
    """How far the evidence carries the claim: the features, the calibrated probability and its cut."""

    features: dict[str, float]
    probability: float
    combiner: Combiner
    unexplained: list[str]
    unexplained_shown: list[str]   # those words as the claim writes them ("named", not the stem "nam")
    own_voice: list[str]
    soft_failed: list[Finding]
    checks: list[Check]

    @property
    def carried(self) -> bool:
        return self.combiner.carries(self.features)  # its unexplained words and own voice are in the features


def read_support(ctx: ClaimContext, question: str | None) -> SupportReading:
    """Measure the claim against its evidence."""
    combiner = default_combiner()  # CombinerUnavailable propagates: verify_claim fails safe (not verified)
    soft = [f for f in (r.check(ctx) for r in registered("support") if applicable(ctx, r)) if f is not None]
    checks = [c for f in soft for c in f.checks]
    known = next((c for c in checks if c.name == "novel_words"), None)
    missing = measures.unexplained(ctx)
    asked = frozenset(content_words(question)) - frozenset(content_words(ctx.body)) if question else frozenset()
    local = measures.local_coverage(ctx)
    answered = measures.local_coverage(ctx, asked, span=1) if question else 1.0
    n_sentences = sum(sentence_count(d.text) for d in ctx.primary[:3])
    f = features(ctx.evidence.coverage if ctx.evidence else 0.0, local, answered, len(missing),
                 1.0 if known is None or known.ok else 0.0, question is not None, n_sentences, len(ctx.words))
    p = combiner.probability(f)
    voice = measures.own_voice(ctx)
    f["own_voice"] = 0.0 if voice else 1.0  # read by the decision as a rule, not weighed
    shown = as_written(missing, ctx.body)
    checks.append(Check("unexplained_words", not missing, ", ".join(shown[:8])))
    if voice:
        checks.append(Check("own_voice", False, ", ".join(voice)))
    checks.append(Check("support", p >= combiner.threshold, f"p={p:.2f} (threshold {combiner.threshold:.2f})"))
    return SupportReading(f, round(p, 4), combiner, missing, shown, voice, [x for x in soft if x.verdict is not None],
                          checks)
