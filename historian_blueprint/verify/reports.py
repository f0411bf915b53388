"""The floor's verification reports (challenger, interrogator, counter-arguer, judge), from the per-claim verdicts.

The offline engine's verifier roles are these reports; the LLM engine's merge a model's findings into them,
so the floor and the reports can never disagree upward: a claim the floor flags is a weakness in every report.
"""

from __future__ import annotations

import re

from collections import Counter

from historian_blueprint.schema import (
    STATUS_LABELS, ChallengeReport, CitationCheck, ClaimVerdict, CounterReport, InterrogationReport, JudgeReport,
    Status, Weakness, outcome_group,
)
from historian_blueprint.settings import Caps
from historian_blueprint.text.words import content_words, normalize, words
from historian_blueprint.text.spans import sentences
from historian_blueprint.verify.confidence import answer_confidence, challenge_penalty, interrogation_penalty
from historian_blueprint.verify.rules.polarity import is_negation


def challenge(claims: list[ClaimVerdict], caps: Caps) -> ChallengeReport:
    """List the claims the evidence does not carry, with their severity."""
    weaknesses = [
        Weakness(claim_id=c.id, issue=f"{c.verdict}: {c.reason}",
                 severity=c.severity if c.severity != "none" else "low")
        for c in claims if c.verdict != "supported"
    ]
    share = len(weaknesses) / len(claims) if claims else 1.0
    critical = any(w.severity == "critical" for w in weaknesses) or share >= 0.5
    return ChallengeReport(
        weaknesses=weaknesses,
        unsupported_claims=[w.claim_id for w in weaknesses],
        critical=critical,
        penalty=challenge_penalty([w.severity for w in weaknesses], len(claims), caps),
        summary=_outcomes(claims) if claims else "no claims to check",
    )


def _outcomes(claims: list[ClaimVerdict]) -> str:
    """"4 of 6 claims supported, 1 not confirmed (read the source), 1 contradicted by a check"."""
    n = Counter(outcome_group(c.verdict) for c in claims)
    return (f"{n['supported']} of {len(claims)} claims supported, {n['unconfirmed']} not confirmed "
            f"(read the source), {n['conflict']} contradicted by a check")


def interrogate(claims: list[ClaimVerdict], caps: Caps) -> InterrogationReport:
    """For each claim: does its citation say what the claim says (exact, paraphrase, misquote, out of context)?"""
    checks = []
    for c in claims:
        if c.evidence is None:
            checks.append(CitationCheck(claim_id=c.id, source_id=None, assessment="missing", detail=c.reason))
            continue
        if c.verdict == "misquote":
            assessment = "misquote"
        elif c.verdict != "supported" or (c.cited_source_ids and c.evidence.source_id not in c.cited_source_ids):
            assessment = "out_of_context"
        elif normalize(c.text).strip(" .") in normalize(c.evidence.text):
            assessment = "exact"
        else:
            assessment = "paraphrase"
        checks.append(CitationCheck(claim_id=c.id, source_id=c.evidence.source_id, assessment=assessment,
                                    detail=c.reason))
    good = sum(1 for ch in checks if ch.assessment in ("exact", "paraphrase"))
    integrity = good / len(checks) if checks else 0.0
    return InterrogationReport(
        citations=checks,
        integrity=round(integrity, 4),
        penalty=interrogation_penalty(integrity, caps),
        summary=f"{good} of {len(checks)} citations say what their claims say",
    )


_CONTRAST = frozenset("but however although though yet nevertheless nonetheless whereas despite contrary".split())


def counter_argue(claims: list[ClaimVerdict], passages: list[dict], caps: Caps) -> CounterReport:
    """Find the strongest opposing reading in the retrieved passages: same subject, opposite polarity."""
    best: tuple[float, dict, ClaimVerdict] | None = None
    read: dict[int, list[tuple[str, frozenset[str], bool, bool]]] = {}  # each passage's sentences, read once

    def sentences_read(k: int, text: str) -> list[tuple[str, frozenset[str], bool, bool]]:
        """(sentence, its content words, whether it negates, whether it contrasts) for each sentence."""
        if k not in read:
            read[k] = []
            for sentence in sentences(text):
                said = words(sentence)
                read[k].append((sentence, frozenset(content_words(sentence)), any(is_negation(w) for w in said),
                                bool(_CONTRAST.intersection(said))))
        return read[k]

    for c in claims:
        if c.verdict != "supported":
            continue
        claim_words = set(content_words(c.text))
        claim_neg = any(is_negation(w) for w in words(c.text))
        for k, p in enumerate(passages):
            if c.evidence and p.get("source_id") == c.evidence.source_id \
                    and p.get("start", -1) <= c.evidence.start < p.get("end", -1):
                continue  # the claim's own evidence
            for sentence, sentence_words, negates, contrasts in sentences_read(k, p.get("text", "")):
                overlap = len(claim_words & sentence_words) / max(len(claim_words), 1)
                opposite = negates != claim_neg or contrasts
                if overlap >= 0.45 and opposite and (best is None or overlap > best[0]):
                    best = (overlap,
                            {"source_id": p.get("source_id"), "text": sentence, "locator": p.get("locator")}, c)
    if best is None:
        return CounterReport(summary="no opposing reading found in the retrieved passages")
    overlap, evidence, claim = best
    return CounterReport(
        opposing_reading=f"Claim {claim.id} may be read differently: {clip(evidence['text'], 600)}",
        evidence=[evidence],
        both_interpretations_valid=True,
        penalty=round(min(caps.counter, 0.1 * overlap), 4),
        summary="an opposing passage shares the claim's subject; both readings should be weighed",
    )


def clip(text: str, limit: int) -> str:
    """The text whole when it fits, else cut at the last word boundary before ``limit`` with an ellipsis
    (never mid-word)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > 0 else limit].rstrip(" ,;:") + "…"


def judge(
    claims: list[ClaimVerdict],
    ch: ChallengeReport,
    it: InterrogationReport,
    co: CounterReport,
    caps: Caps,
    revisions_left: bool = True,
    failed_checks: bool = False,
) -> JudgeReport:
    """final = max(0, base − min(0.5, penalties)); the status follows the thresholds and the floor."""
    base, penalty, confidence = answer_confidence(claims, ch.penalty + it.penalty + co.penalty)
    flagged_claims = [c for c in claims if c.verdict != "supported"]
    # reports disagree when the challenger finds nothing but the interrogator doubts citations, or the reverse
    disagreement = (not ch.weaknesses and it.integrity < 0.8) or (ch.critical and it.integrity >= 0.99)
    if failed_checks or not claims:
        status: Status = "human_review"
    elif confidence < caps.human_review or disagreement:
        status = "human_review"
    elif confidence < caps.flagged or flagged_claims and confidence < caps.verified:
        status = "needs_revision" if revisions_left else "human_review"
    elif confidence < caps.verified or flagged_claims:
        status = "flagged"
    else:
        status = "verified"
    if status == "verified" and (flagged_claims or ch.critical):
        status = "flagged"  # the floor caps the status whatever the numbers say
    required = [f"claim {c.id}: {c.reason}" for c in flagged_claims]
    return JudgeReport(
        base=round(base, 4), confidence=confidence, status=status, required_revisions=required,
        safe_to_publish=status == "verified", disagreement=disagreement,
        summary=f"confidence {confidence:.2f} ({base:.2f} − {penalty:.2f} in penalties): {STATUS_LABELS[status]}",
    )


def premise_summary(summary: str, status: str, finding: str) -> str:
    """The judge's summary with the status the premise check leaves and why: "confidence 0.99 (...): check before
    use, the question's “password” is not mentioned by any cited evidence ..." (not "verified; check before use")."""
    return restated(summary, status, finding)


_LABEL_AT = re.compile(r"in penalties\): ")


def restated(summary: str, status: str, why: str = "") -> str:
    """The judge's summary saying ``status`` in its words, once, where it said the judge's own ("confidence 0.99
    (0.99 − 0.00 in penalties): check before use[, why]"); what later steps added after a ";" is kept."""
    label = STATUS_LABELS.get(status, status) + (f", {why}" if why else "")
    at = _LABEL_AT.search(summary)
    if at is None:
        return f"{summary}: {label}"
    tail = summary[at.end():]
    return summary[:at.end()] + label + (tail[tail.index(";"):] if ";" in tail else "")
