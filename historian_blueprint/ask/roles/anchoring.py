"""Between the LLM roles and the sources: the numbered evidence the composer is shown, its quotes anchored back
to exact offsets (a quote that cannot be anchored is a failed citation, never dropped silently), and the
judge's quotes, which confirm an unconfirmed claim only when anchored exactly and checked there."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from typing import Any

from historian_blueprint.llm import prompts
from historian_blueprint.llm.budget import fit
from historian_blueprint.ask.roles.replies import ComposerReply, Confirmation
from historian_blueprint.schema import Answer, Citation, ClaimVerdict, SourceText
from historian_blueprint.text.markers import EVIDENCE_MARKER, strip_any_markers
from historian_blueprint.text.spans import Layouts
from historian_blueprint.verify.confidence import to_verdict
from historian_blueprint.verify.grounding import confirm_by_quote

# A quote that is not in its passage verbatim may still be anchored when this similar to the source's words.
ANCHOR_MIN_RATIO = 0.9
# A judge's quote carries a claim in a sentence or two; a longer one could piece a claim together from a page.
MAX_CONFIRMING_QUOTE = 600


def evidence_block(hits: list[dict[str, Any]], history: list[dict[str, Any]], question: str,
                   budget: int) -> tuple[str, list[str], int]:
    """The question, recent turns and numbered passages, trimmed to the context budget."""
    entries = [
        f"E{n} ({h.get('author') or h.get('title')}, {h.get('year') or 'n.d.'}, {h.get('locator')}; {h['source_id']}): "
        + " ".join(h["text"].split())
        for n, h in enumerate(hits, start=1)
    ]
    turns = [f"Q: {t.get('question', '')}\nA: {t.get('answer', '')[:600]}" for t in history[-5:]]
    fixed = 1500 + len(prompts.RULES) // 4 + len(prompts.few_shot_text()) // 4 + len(question) // 4
    kept_turns, kept_entries, dropped = fit(fixed, turns, entries, budget)
    text = ""
    if kept_turns:
        text += "Earlier in this conversation:\n" + "\n\n".join(kept_turns) + "\n\n"
    text += f"Question: {question}\n\nEvidence:\n" + "\n".join(kept_entries)
    ids = [f"E{n}" for n in range(1, len(kept_entries) + 1)]
    return text, ids, dropped


def anchor(doc: SourceText, quote: str, start: int, end: int) -> tuple[int, int, str] | None:
    """Find the quote in the source: exactly in its passage, exactly anywhere, then fuzzily in the passage."""
    text = doc.text
    quote = quote.strip().strip('"“”')
    if not quote:
        return None
    for lo, hi in ((start, end), (0, len(text))):
        at = text.find(quote, lo, hi)
        if at >= 0:
            return at, at + len(quote), "exact"
    # differences in whitespace only (line breaks of the source)
    pattern = r"\s+".join(re.escape(w) for w in quote.split())
    match = re.search(pattern, text[start:end])
    if match:
        return start + match.start(), start + match.end(), "exact"
    match = re.search(pattern, text)
    if match:
        return match.start(), match.end(), "exact"
    passage = text[start:end]
    best: tuple[float, int, int] | None = None
    for m in re.finditer(r"\S+", passage):
        lo = m.start()
        hi = min(len(passage), lo + len(quote))
        ratio = difflib.SequenceMatcher(None, quote, passage[lo:hi], autojunk=False).ratio()
        if best is None or ratio > best[0]:
            best = (ratio, lo, hi)
    if best and best[0] >= ANCHOR_MIN_RATIO:
        lo, hi = best[1], best[2]
        while hi < len(passage) and passage[hi].isalnum():  # end on a word boundary, not mid-word
            hi += 1
        while hi > lo and passage[hi - 1].isspace():
            hi -= 1
        return start + lo, start + hi, "fuzzy"
    return None


def to_answer(reply: ComposerReply, hits: list[dict[str, Any]], ids: list[str], get_document: Any) -> Answer:
    """Turn the composer's reply into an Answer with exact citations; what it needed is in ``Answer.notes``."""
    problems: list[str] = []
    by_id = {eid: hits[n] for n, eid in enumerate(ids)}
    citations: list[Citation] = []
    bullets: list[str] = []
    claims: list[str] = []
    failed: list[int] = []
    renumber: dict[str, int] = {}
    layouts = Layouts()
    for k, finding in enumerate(reply.findings, start=1):
        eid = finding.evidence_id.strip().strip("[]").upper()
        hit = by_id.get(eid)
        if hit is None:
            problems.append(f"finding {k} cites {finding.evidence_id!r}, which was not given: rejected")
            continue
        doc = get_document(hit["source_id"])
        if doc is None:
            problems.append(f"finding {k}: source {hit['source_id']} is gone: rejected")
            continue
        n = len(citations) + 1
        placed = anchor(doc, finding.quote, hit["start"], hit["end"])
        if placed is None:
            start, end = hit["start"], hit["end"]
            failed.append(n)
            problems.append(f"finding {k}: its quote is not in {hit['source_id']}: failed citation [{n}]")
        else:
            start, end, how = placed
            if how == "fuzzy":
                problems.append(f"finding {k}: quote anchored fuzzily (≥ {ANCHOR_MIN_RATIO:.0%} similar) in "
                                f"{hit['source_id']}")
        citations.append(Citation(
            id=n, source_id=doc.source_id, title=hit.get("title") or doc.title, author=hit.get("author") or doc.author,
            year=hit.get("year"), locator=layouts.locate(doc.source_id, doc.text, start, end), text=doc.text[start:end],
            start=start, end=end,
        ))
        renumber.setdefault(eid, n)
        claim = strip_any_markers(finding.claim)
        claims.append(claim)
        bullets.append(f"{claim} [{n}]")

    def marker(match: re.Match[str]) -> str:
        n = renumber.get(match.group(1).upper())
        return f"[{n}]" if n else ""

    narrative = EVIDENCE_MARKER.sub(marker, reply.answer).strip()
    return Answer(answer=narrative, bullets=bullets, citations=citations, claims=claims, failed_citations=failed,
                  notes=problems)


def claims_block(claims: list[ClaimVerdict]) -> str:
    return "\n".join(
        f"Claim {c.id}: {c.text}\n  Evidence ({c.evidence.source_id if c.evidence else 'none'}): "
        f"{c.evidence.text[:500] if c.evidence else '(none)'}\n  Floor verdict: {c.verdict}"
        for c in claims
    )


def confirm(
    claims: list[ClaimVerdict], confirmations: list[Confirmation], get_document: Callable[[str], SourceText | None],
) -> tuple[list[ClaimVerdict], list[str]]:
    """The claims with those the judge's quotes confirm made supported, and a note on every quote.

    A quote confirms a claim only when the claim is unconfirmed (a conflict stands), the quote is from a
    source the claim cites, it is found there exactly (not fuzzily) and every check passes on those words
    (``confirm_by_quote``); the claim's evidence is then the quoted span.
    """
    by_id = {c.id: c for c in claims}
    notes: list[str] = []
    layouts = Layouts()
    for q in confirmations:
        claim = by_id.get(q.claim_id)
        if claim is not None and claim.verdict == "supported":
            continue  # nothing to confirm
        if claim is None or claim.verdict != "unconfirmed":
            notes.append(f"claim {q.claim_id} is {claim.verdict if claim else 'unknown'}: a quote cannot confirm it")
            continue
        cited = {*claim.cited_source_ids, *([claim.evidence.source_id] if claim.evidence else [])}
        doc = get_document(q.source_id) if q.source_id in cited else None
        if doc is None:
            notes.append(f"claim {q.claim_id}: the judge quotes {q.source_id}, which the claim does not cite")
            continue
        span = claim.evidence if claim.evidence and claim.evidence.source_id == doc.source_id else None
        placed = anchor(doc, q.quote, span.start if span else 0, span.end if span else 0)
        if placed is None or placed[2] != "exact":
            notes.append(f"claim {q.claim_id}: judge quote not found in {doc.source_id}")
            continue
        start, end, _ = placed
        if end - start > MAX_CONFIRMING_QUOTE:
            notes.append(f"claim {q.claim_id}: judge quote longer than {MAX_CONFIRMING_QUOTE} characters")
            continue
        try:
            result = confirm_by_quote(claim.text, doc, start, end)
        except Exception as exc:  # fail safe, as the floor does: a check that fails confirms nothing
            notes.append(f"claim {q.claim_id}: the judge's quote could not be checked ({type(exc).__name__})")
            continue
        if result.verdict != "supported":
            notes.append(f"claim {q.claim_id}: the judge's quote does not confirm it ({result.reason})")
            continue
        quoted = doc.text[start:end]
        by_id[claim.id] = to_verdict(claim.id, result, layouts, lambda _, text=doc.text: text).model_copy(update={
            "part": claim.part, "cited_source_ids": claim.cited_source_ids, "decided_by": "judge quote",
            "reason": f"the judge quoted “{quoted[:300]}” from {doc.source_id}: those words carry the claim "
                      "and no check finds a conflict",
        })
        notes.append(f"claim {q.claim_id} confirmed by the judge's quote from {doc.source_id}")
    return [by_id[c.id] for c in claims], notes
