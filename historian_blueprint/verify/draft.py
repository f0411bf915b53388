"""Check a draft: split it into claims, verify each against its cited source or the collection, report."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from historian_blueprint.limits import Deadline, TimeLimit
from historian_blueprint.schema import ClaimVerdict, Cited, SourceText, Verification, worse
from historian_blueprint.settings import Caps
from historian_blueprint.text.claims import split_claims
from historian_blueprint.text.spans import Layouts
from historian_blueprint.verify.confidence import to_verdict
from historian_blueprint.verify.decision import Said, settle
from historian_blueprint.verify.findings import ClaimResult, Finding
from historian_blueprint.verify.answers import bare_answer, proposition, verify_answer
from historian_blueprint.verify.grounding import verify_claim
from historian_blueprint.verify.question import premise_of
from historian_blueprint.verify.reports import (challenge, counter_argue, interrogate, judge, premise_summary,
                                                restated)


def verify_claims(
    claims: Sequence[tuple[str, Sequence[Cited]]],
    *,
    get_document: Callable[[str], SourceText | None],
    search: Callable[[str], Sequence[SourceText]] | None,
    caps: Caps,
    passages: list[dict[str, Any]] | None = None,
    revisions_left: bool = True,
    checker: Callable[..., ClaimResult] | None = None,
    deadline: Deadline | None = None,
) -> Verification:
    """Verify each (claim, citations) pair and build the reports (the floor first, then the roles). Past the
    ``deadline`` the claims not yet checked are left unconfirmed and the whole is ``human_review``."""
    t0 = time.perf_counter()
    verdicts: list[ClaimVerdict] = []
    failed_checks = False
    layouts = Layouts()
    stopped: TimeLimit | None = None
    for n, (claim, cited) in enumerate(claims, start=1):
        if stopped is None and deadline is not None and deadline.passed():
            stopped = TimeLimit(deadline.seconds, f"claim {n} of {len(claims)}")
        if stopped is not None:
            said = settle(unread=Said(Finding(verdict="unconfirmed", type="unverified_detail", severity="medium",
                                              reason="not checked: the time limit was reached first"), "time limit"))
            result = ClaimResult(claim, said.finding.verdict, said.finding.type, said.finding.severity, None, 0.0,
                                 cited=list(cited), reason=said.finding.reason, decided_by=said.by)
            verdicts.append(to_verdict(n, result, layouts, lambda source_id: None))
            continue
        documents = [d for d in (get_document(c.source_id) for c in cited) if d is not None]
        if not cited and search is not None:
            documents = list(search(claim))
        result = verify_claim(claim, documents, cited, search, checker=checker)
        failed_checks |= any(c.name == "verifier" and not c.ok for c in result.checks)

        def text_of(source_id: str, documents: list[SourceText] = documents) -> str | None:  # this claim's
            source = get_document(source_id) or next((d for d in documents if d.source_id == source_id), None)
            return source.text if source is not None else None

        verdicts.append(to_verdict(n, result, layouts, text_of))
    ch = challenge(verdicts, caps)
    it = interrogate(verdicts, caps)
    co = counter_argue(verdicts, passages or [], caps)
    jd = judge(verdicts, ch, it, co, caps, revisions_left=revisions_left, failed_checks=failed_checks)
    if stopped is not None:
        jd = jd.model_copy(update={"status": "human_review", "safe_to_publish": False,
                                   "summary": f"Historian stopped: {stopped}. {restated(jd.summary, 'human_review')}"})
    return Verification(
        claims=verdicts, challenge=ch, interrogation=it, counter=co, judge=jd,
        confidence=jd.confidence, status=jd.status, latency_ms=round((time.perf_counter() - t0) * 1000, 2),
    )


class TooManyClaims(ValueError):
    """A draft with more claims than one request checks (HISTORIAN_LIMITS_MAX_CLAIMS)."""


def whole_documents(source_ids: Sequence[str], get_document: Callable[[str], SourceText | None]) -> list[Cited]:
    """Each known document, cited whole (unknown ids are left out; check_draft reports them)."""
    out = []
    for source_id in source_ids:
        doc = get_document(source_id)
        if doc is not None:
            out.append(Cited(source_id, 0, len(doc.text)))
    return out


def verify_draft(
    text: str,
    *,
    sources: Sequence[str] = (),
    get_document: Callable[[str], SourceText | None],
    search: Callable[[str], Sequence[SourceText]] | None,
    caps: Caps,
    checker: Callable[..., ClaimResult] | None = None,
    question: str | None = None,
    deadline: Deadline | None = None,
    max_claims: int | None = None,
) -> Verification:
    """Verify a pasted draft: inline ``[id]`` citations, else ``sources``, else the whole collection.

    With ``question``, a bare "yes" or "no" is verified as the answer to it (verify_answer): the question's
    statement is what is searched and checked. A draft that says something is verified as usual.
    """
    if question and bare_answer(text) is not None:
        statement = proposition(question)
        if statement is None:
            raise ValueError("a bare yes or no needs a yes/no question (one starting with is, are, was, did ...)")
        def answer(claim: str, documents: Sequence[SourceText], cited: Sequence[Cited], search: Any) -> ClaimResult:
            return verify_answer(question, text.strip(), documents, cited, search, checker)

        return verify_claims([(statement, whole_documents(sources, get_document))], get_document=get_document,
                             search=search, caps=caps, revisions_left=False, checker=answer)
    split = split_claims(text)
    if max_claims is not None and len(split) > max_claims:
        raise TooManyClaims(f"the draft makes {len(split)} claims; one check reads at most {max_claims} "
                            "(HISTORIAN_LIMITS_MAX_CLAIMS): check it in parts")
    claims = [(claim, whole_documents(ids or sources, get_document)) for claim, ids in split]
    verification = verify_claims(claims, get_document=get_document, search=search, caps=caps, revisions_left=False,
                                 checker=checker, deadline=deadline)
    if question:
        spans = [(c.evidence.source_id, c.evidence.text, "") for c in verification.claims if c.evidence is not None]
        found = premise_of(question, spans, get_document)
        if found:
            status = worse(verification.status, "flagged")  # type: ignore[arg-type]
            judged = verification.judge.model_copy(update={
                "status": status, "safe_to_publish": False,
                "summary": premise_summary(verification.judge.summary, status, str(found["finding"]))})
            verification = verification.model_copy(update={"premise": found, "status": status, "judge": judged})
    return verification
