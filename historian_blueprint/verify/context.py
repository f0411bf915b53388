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
from historian_blueprint.verify.evidence import SUPPORT_THRESHOLD, Evidence, best_window

Search = Callable[[str], Sequence[SourceText]]

_ATTRIBUTION = re.compile(
    r'^(?P<who>[^"]{2,90}?)\s+(?:said|wrote|stated|declared|noted|remarked|observed|added|argued|told [^"]{1,40}?)'
    r'(?:\s+that)?\s*[,:]?\s*"(?P<quote>.+)"\s*[.]?\s*$',
    re.S,
)


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


def build_context(
    claim: str, documents: Sequence[SourceText], cited: Sequence[Cited] = (), search: Search | None = None,
) -> ClaimContext:
    """Split off the speaker, find the best evidence (around the citation first) and any support elsewhere."""
    speaker, body = attribution(claim)
    words = frozenset(content_words(body))
    names = frozenset(content_words(" ".join(capitalized_terms(body))))
    by_id = {d.source_id: d for d in documents}
    cited = list(cited)
    cited_docs = [by_id[c.source_id] for c in cited if c.source_id in by_id]
    primary = list({d.source_id: d for d in (cited_docs or documents)}.values())  # one look per document
    near = cited[0] if cited else None

    def look(doc: SourceText) -> Evidence | None:
        """Around the citation first; the whole document only when the region does not carry the claim."""
        cited_here = next((c for c in cited if c.source_id == doc.source_id), None)
        if cited_here is not None:
            found = best_window(words, doc, cited_here, local=True, names=names)
            if found is not None and found.coverage >= SUPPORT_THRESHOLD:
                return found
        return best_window(words, doc, near, names=names)

    candidates = [(doc, found) for doc in primary if (found := look(doc)) is not None]
    doc, evidence = max(candidates, key=lambda de: de[1].coverage, default=(None, None))
    elsewhere = None
    if cited_docs and (evidence is None or evidence.coverage < SUPPORT_THRESHOLD):
        elsewhere = _support_elsewhere(body, words, names, documents, cited, search)
    return ClaimContext(claim, speaker, body, words, names, list(documents), cited, primary, doc, evidence, elsewhere)


def _support_elsewhere(
    body: str, words: frozenset[str], names: frozenset[str], documents: Sequence[SourceText], cited: list[Cited],
    search: Search | None,
) -> tuple[SourceText, Evidence] | None:
    """The best evidence in a document other than the cited ones (the given ones, then a search's)."""
    cited_ids = {c.source_id for c in cited}
    others = [d for d in documents if d.source_id not in cited_ids]
    if search is not None:
        others += [d for d in search(body) if d.source_id not in cited_ids]
    best: tuple[SourceText, Evidence] | None = None
    seen: set[str] = set()
    for other in others:
        if other.source_id in seen:
            continue
        seen.add(other.source_id)
        found = best_window(words, other, names=names)
        if found and (best is None or found.coverage > best[1].coverage):
            best = (other, found)
    return best
