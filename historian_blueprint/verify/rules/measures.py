"""Is the claim carried by its evidence at all: an assertion, evidence found, most of its words, nothing new,
and the support in the cited document rather than another one."""

from __future__ import annotations

from historian_blueprint.text.quotations import is_question
from historian_blueprint.text.words import as_written, content_words, words
from historian_blueprint.verify.context import ClaimContext
from historian_blueprint.verify.evidence import SUPPORT_THRESHOLD, covered, document_words, related_form, sentences_of
from historian_blueprint.verify.findings import Check, Finding, failed, passed
from historian_blueprint.verify.rules.lexicon import kin, spelled_alike
from historian_blueprint.verify.rules.registry import rule

MISATTRIBUTION_MARGIN = 0.15  # support elsewhere must beat the cited source's by this much
DOCUMENT_THRESHOLD = 0.9      # share of the claim's content words found anywhere in the source document


@rule("conflict", 10, needs="nothing")
def assertion(ctx: ClaimContext) -> Finding | None:
    """A question asserts nothing the sources could support."""
    if is_question(ctx.body):
        return failed(Check("assertion", False, "a question"), "unconfirmed", "inference", "low",
                      "a question asserts nothing the sources could support")
    return None


def evidence(ctx: ClaimContext) -> Finding | None:
    """No sentence of the sources shares a word with the claim: fabricated, or supported only elsewhere."""
    if ctx.evidence is not None:
        return None
    check = Check("coverage", False, "no sentence of the sources shares words with the claim")
    return misattribution(ctx, check) or failed(check, "unconfirmed", "fabrication", "high",
                                                "nothing in the sources supports this claim")


@rule("support", 10, needs="evidence")
def coverage(ctx: ClaimContext) -> Finding:
    """The evidence holds most of the claim's words (numbers are checked on their own)."""
    share = ctx.window_share
    check = Check("coverage", share >= SUPPORT_THRESHOLD, f"{share:.2f} of the claim's words in the evidence")
    if check.ok:
        return passed(check)
    kind = "inference" if share >= 0.5 else "fabrication"
    return misattribution(ctx, check) or failed(
        check, "unconfirmed", kind, "high" if kind == "fabrication" else "medium",
        "the evidence does not contain most of the claim"
    )


@rule("support", 20, needs="evidence")
def novel_words(ctx: ClaimContext) -> Finding:
    """What the evidence window lacks must at least be in the document (or its title and author)."""
    outside = ctx.wordy - ctx.window_words
    doc_words = (document_words(ctx.doc.text) | set(content_words(ctx.doc.byline))) if outside else ctx.wordy
    novel = sorted(w for w in ctx.wordy - doc_words if w in ctx.names or not related_form(w, doc_words))
    share = 1 - len(novel) / len(ctx.wordy)
    shown = as_written(novel, ctx.body)  # as the claim writes them: "named", not the stem "nam"
    check = Check("novel_words", share >= DOCUMENT_THRESHOLD, ", ".join(shown[:8]))
    if not check.ok:
        return failed(check, "unconfirmed", "unverified_detail", "medium",
                      f"the source never mentions {', '.join(shown[:3])}")
    return passed(check)


@rule("conflict", 20, needs="nothing")
def misattributed(ctx: ClaimContext) -> Finding | None:
    """The claim is carried by a document other than the one it cites (clearly better than by its own)."""
    share = ctx.evidence.coverage if ctx.evidence is not None else 0.0
    return misattribution(ctx, Check("misattribution", False, f"{share:.2f} of the claim's words in the cited source"))


def misattribution(ctx: ClaimContext, check: Check) -> Finding | None:
    """The claim is carried by a document other than the one it cites (clearly better than by its own)."""
    if ctx.elsewhere is None:
        return None
    other, found = ctx.elsewhere
    own = ctx.evidence.coverage if ctx.evidence is not None else 0.0
    if found.coverage < SUPPORT_THRESHOLD or found.coverage <= own + MISATTRIBUTION_MARGIN:
        return None
    # support is the share the cited source's evidence had; with none there at all it stays 0
    return failed(check, "misattributed", "misattribution", "high",
                  f"the support is in {other.source_id}, not the cited source",
                  evidence=found, support=found.coverage if ctx.evidence is not None else None)


def unexplained(ctx: ClaimContext) -> list[str]:
    """The claim's words its evidence window does not carry: not there as written, nor (names excepted) in a
    related form, a WordNet derivation or a synonym of a word that is there."""
    if ctx.evidence is None:
        return sorted(ctx.wordy)
    window = set(ctx.window_words)
    if ctx.doc is not None:  # who wrote it and what it is: "Woodrow Wilson called attention ..." of his own message
        byline = set(content_words(ctx.doc.byline))
        window |= byline
        if byline & ctx.wordy:  # the claim reports the document's author: "Hoover said that ...", "Wilson wrote"
            window |= REPORTING_VERBS
    window_kin = set().union(*(kin(w) for w in window)) if window else set()
    out = []
    for w in sorted(ctx.wordy - window):
        if w in ctx.names:
            out.append(w)
        elif not related_form(w, window) and not (kin(w) & (window | window_kin)) \
                and not any(spelled_alike(w, v) for v in window):
            out.append(w)
    return out


# Verbs of saying: the frame of a report of what the source's author says, not a fact the source must carry.
REPORTING_VERBS = frozenset(content_words(
    "say said says stated state states wrote write writes declared declare declares noted note notes remarked observed "
    "argued argue argues reported report reports told tell added add adds explained explain maintained held hold holds "
    "asserted assert insisted insist called attention"))


def local_coverage(ctx: ClaimContext, extra: frozenset[str] = frozenset(), span: int = 2) -> float:
    """The share of the claim's words (and ``extra``: a question's) that one sentence of the evidence (or
    ``span`` adjacent ones) hold: a claim pieced together from words spread over a passage is carried by none of it."""
    if ctx.evidence is None:
        return 0.0
    wanted = frozenset(ctx.wordy | extra)
    if not wanted:
        return 0.0
    sentences = [w for _, _, w in sentences_of(ctx.evidence.text)] or [frozenset(ctx.window_words)]
    best = 0.0
    for i in range(len(sentences)):
        for j in range(i, i + span):
            if j < len(sentences):
                held = set().union(*sentences[i:j + 1])
                best = max(best, covered(wanted, held, ctx.names))
    return best


FIRST_PERSON = frozenset("i me my mine we us our ours myself ourselves".split())


def own_voice(ctx: ClaimContext) -> list[str]:
    """First-person words of the claim ("I think", "my") where its evidence has none: the claim speaks for
    its writer, and the source cannot confirm what the writer thinks or did."""
    if ctx.evidence is None:
        return []
    mine = [w for w in words(ctx.body) if w in FIRST_PERSON]
    if not mine or any(w in FIRST_PERSON for w in words(ctx.evidence.text)):
        return []
    return list(dict.fromkeys(mine))
