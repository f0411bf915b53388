"""Verifying a composed answer: each finding against the span it cites, each sentence of a model's prose
against the citations its ``[n]`` markers name."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from historian_blueprint.schema import Answer, ClaimVerdict, Cited, SourceText
from historian_blueprint.settings import Caps
from historian_blueprint.text.claims import sentence_claims
from historian_blueprint.text.markers import SPACED_MARKER, strip_markers
from historian_blueprint.text.words import content_words
from historian_blueprint.verify.draft import verify_claims
from historian_blueprint.verify.decision import Said, settle
from historian_blueprint.verify.findings import ClaimResult, Finding


def answer_claims(draft: Answer) -> list[tuple[str, list[Cited]]]:
    """Each bullet is a claim cited to its citation's exact span."""
    out = []
    for n, (bullet, citation) in enumerate(zip(draft.bullets, draft.citations)):
        if draft.claims:  # the model's own words, checked against the span it cites
            claim = draft.claims[n]
        else:
            quoted = re.search(r"“(.+)”", bullet, re.S)
            claim = quoted.group(1) if quoted else strip_markers(bullet)
        out.append((claim, [Cited(citation.source_id, citation.start, citation.end)]))
    return out


def narrative_claims(draft: Answer) -> list[tuple[str, list[Cited]]]:
    """The model's prose, sentence by sentence, each checked against the citations its ``[n]`` markers name.

    A sentence without a marker is checked against every source the answer cites (it may not rest on the
    model's memory). Findings repeated in the prose (however the prose's sentences split them), questions
    and sentences of fewer than three words are left out. Only LLM drafts have prose of their own: the
    offline narrative is built from the findings.
    """
    if not draft.claims or not draft.answer or draft.summary:
        return []
    by_id = {cit.id: cit for cit in draft.citations}
    every = [Cited(cit.source_id, cit.start, cit.end) for cit in draft.citations]
    prose = draft.answer
    for finding in draft.claims:  # a finding repeated in the prose is checked once, as the finding
        words = finding.strip().rstrip(".").split()
        if words:
            prose = re.sub(r"\s+".join(re.escape(w) for w in words) + r"\.?", " ", prose)
    out = []
    for claim, markers in sentence_claims(prose, SPACED_MARKER):
        if not content_words(claim):
            continue
        named = [by_id[int(n)] for n in markers if int(n) in by_id]
        out.append((claim, [Cited(c.source_id, c.start, c.end) for c in named] or every))
    return out


def verify_composed(
    draft: Answer, *, get_document: Callable[[str], SourceText | None],
    search: Callable[[str], Sequence[SourceText]] | None,
    caps: Caps, passages: list[dict[str, Any]], checker: Callable[..., ClaimResult] | None = None,
) -> list[ClaimVerdict]:
    """The floor's verdict on every finding and prose sentence; a quote that could not be anchored is a
    failed citation (misquote), never dropped."""
    findings = answer_claims(draft)
    claims = findings + narrative_claims(draft)  # each finding, then each sentence of a model's prose
    verification = verify_claims(claims, get_document=get_document, search=search, caps=caps, passages=passages,
                                 checker=checker)
    verdicts = [cl if cl.id <= len(findings) else cl.model_copy(update={"part": "narrative"})
                for cl in verification.claims]
    failed = set(draft.failed_citations)
    misquote = settle(misquote=Said(MISQUOTED, "quote")).finding
    return [
        cl.model_copy(update={"verdict": misquote.verdict, "type": misquote.type, "severity": misquote.severity,
                              "confidence": 0.0, "reason": misquote.reason}) if cl.id in failed else cl
        for cl in verdicts
    ]


# A finding whose quote could not be anchored in its source: a failed citation, never dropped.
MISQUOTED = Finding(verdict="misquote", type="misattribution", severity="high",
                    reason="the quote given for this claim is not in the cited source")
