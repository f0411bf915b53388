"""A claim's context, built once before the rules run: its words and names, its documents, its evidence.

The rules (``verify/rules``) only read a context; what more than one rule needs (the alignment with the
evidence, the words the coverage is counted on) is computed on first use and kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from historian_blueprint.schema import Cited, SourceText
from historian_blueprint.text.words import capitalized_terms, content_words, numbers
from historian_blueprint.verify.alignment import Alignment, align
from historian_blueprint.verify.evidence import (SUPPORT_THRESHOLD, Evidence, as_stated, best_elsewhere, best_window,
                                                covered)

Search = Callable[[str], Sequence[SourceText]]

_ATTRIBUTION = re.compile(
    r'^(?P<who>[^"]{2,90}?)\s+(?:said|wrote|stated|declared|noted|remarked|observed|added|argued|told [^"]{1,40}?)'
    r'(?:\s+that)?\s*[,:]?\s*"(?P<quote>.+)"\s*[.]?\s*$',
    re.S,
)


MIN_REPORTED_WORDS = 3  # the frame is set aside only when at least this many words of what was reported remain
_DOCUMENT = r"(?:message|address|speech|report|interview|letter|account|narrative|testimony|proclamation)"
# A claim's opening frame: the document ("In his 1864 annual message, ") and the reporter ("Lincoln reported that ").
_FRAME = re.compile(
    rf"^(?:In\s+(?:his|her|its|their|the)\s+(?:[\w'-]+\s+){{0,3}}?{_DOCUMENT}"
    rf"(?:\s+(?:to|of)\s+[A-Z][\w']*)?(?:\s+of\s+\d{{4}})?\s*,\s*)?"
    r"(?:[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*){0,3}\s+(?P<verb>reported|said|wrote|stated|noted|claimed|observed|"
    r"recalled|remembered|recounted|told\s+(?:[\w']+\s+){0,3}?|put|estimated)(?:\s+that)?\s+)?"
)
_HEDGE = re.compile(r"\b(roughly|approximately|nearly|around|almost)\s+(?=\$?\d)", re.I)


def frame_of(body: str) -> tuple[str, str]:
    """The words that open a claim by saying where and by whom it was reported ("In his 1864 annual message,
    Lincoln reported that ") and its reporting verb ("reported"), or ("", ""). They are checked against the
    document's title, author and date (names, numbers), not looked for among the passage's words."""
    match = _FRAME.match(body)
    return (match.group(), match.group("verb") or "") if match else ("", "")


def attribution(claim: str) -> tuple[str | None, str]:
    """(speaker, quoted words) of 'X said "..."'; (None, claim) for any other claim."""
    match = _ATTRIBUTION.match(claim.translate(str.maketrans({"“": '"', "”": '"'})))
    if not match:
        return None, claim
    return match.group("who"), match.group("quote")


@dataclass
class ClaimContext:
    """What the rules read about one claim."""

    claim: str                          # as given
    speaker: str | None                 # who the claim says said it ('X said "..."'), else None
    body: str                           # the claim without its speaker
    words: frozenset[str]               # its content words (stems)
    names: frozenset[str]               # content words of its capitalized terms (compared as written)
    documents: list[SourceText]         # every document given
    cited: list[Cited]
    primary: list[SourceText]           # where the evidence is looked for: the cited documents, else all
    doc: SourceText | None              # the document of the best evidence
    evidence: Evidence | None           # the best evidence in ``primary``
    elsewhere: tuple[SourceText, Evidence] | None = None  # the best evidence outside the cited documents
    frame: str = ""                     # who reported it, in which document (frame_of), as the claim opens

    @cached_property
    def alignment(self) -> Alignment:
        """The claim aligned word by word with its evidence (rules that read it run after evidence is found)."""
        assert self.evidence is not None
        return align(self.body, self.evidence.text)

    @cached_property
    def wordy(self) -> frozenset[str]:
        """The words coverage is counted on: numbers are checked on their own (a changed number is
        "contradicted", not merely a word short); "first" stays a word (numbers() leaves it out)."""
        return (self.words - numbers(self.body)) or self.words

    @cached_property
    def window_words(self) -> set[str]:
        return set(content_words(self.evidence.text)) if self.evidence else set()

    @cached_property
    def window_share(self) -> float:
        """The share of the claim's words (``wordy``) its evidence window holds, a related form counting
        (``evidence.covered``): read once, by every check that asks whether the evidence is close."""
        return covered(self.wordy, self.window_words, self.names)


def build_context(
    claim: str, documents: Sequence[SourceText], cited: Sequence[Cited] = (), search: Search | None = None,
) -> ClaimContext:
    """Split off the speaker, find the best evidence (around the citation first) and any support elsewhere."""
    speaker, body = attribution(claim)
    words = frozenset(content_words(body))
    names = frozenset(content_words(" ".join(capitalized_terms(body))))
    frame, verb = frame_of(body)
    frame_words = frozenset(content_words(frame))
    by_id = {d.source_id: d for d in documents}
    cited = list(cited)
    cited_docs = [by_id[c.source_id] for c in cited if c.source_id in by_id]
    primary = list({d.source_id: d for d in (cited_docs or documents)}.values())  # one look per document
    near = cited[0] if cited else None

    def look(doc: SourceText) -> Evidence | None:
        """Around the citation first; the whole document only when the region does not carry the claim."""
        cited_here = next((c for c in cited if c.source_id == doc.source_id), None)
        if cited_here is not None:
            found = best_window(words, doc, cited_here, local=True, names=names, frame=frame_words)
            if found is not None and found.coverage >= SUPPORT_THRESHOLD:
                return found
        return best_window(words, doc, near, names=names, frame=frame_words)

    candidates = [(doc, found) for doc in primary if (found := look(doc)) is not None]
    doc, evidence = max(candidates, key=lambda de: de[1].coverage, default=(None, None))
    if doc is not None and evidence is not None:
        exact = as_stated(body, evidence.text)
        changed = exact != body
        if changed:  # "about $1.74 billion" read as the "$1,740,690,489.49" it rounds: its words are the evidence's
            body, words = exact, frozenset(content_words(exact))
        # the claim's frame ("In his 1864 annual message, Lincoln reported ...") says who reported it and where. Of
        # the frame, the words the document's title and author carry, its reporting verb and its names (the names
        # rule checks those: "Andrew Johnson is not in the evidence") are not looked for in the passage; a frame
        # naming another document ("In his inaugural address") keeps its other words to be looked for
        named = frozenset(content_words(" ".join(capitalized_terms(frame))))
        excused = ((frame_words & (frozenset(content_words(doc.byline)) | named)) | frozenset(content_words(verb))
                   | frozenset(content_words(" ".join(_HEDGE.findall(body)))))
        if excused & words and len(words - excused) >= MIN_REPORTED_WORDS:
            words, changed = words - excused, True
        if changed:
            evidence = look(doc) or evidence
    elsewhere = None
    if cited_docs and (evidence is None or evidence.coverage < SUPPORT_THRESHOLD):
        elsewhere = best_elsewhere(body, words, names, documents, cited, search)
    return ClaimContext(claim, speaker, body, words, names, list(documents), cited, primary, doc, evidence,
                        elsewhere, frame)
