"""Word-level alignment of a claim to its evidence: the small edits are where meaning flips."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from historian_blueprint.text.words import aligned_words


@dataclass(frozen=True)
class Alignment:
    """Word-level alignment of a claim to its evidence: what each side has that the other lacks nearby."""

    region: list[str]            # evidence words from the first to the last shared word
    claim_only: list[str]        # claim words inserted in small gaps (<= 2 words)
    gaps: list[tuple[list[str], list[str]]] = field(default_factory=list)  # (claim side, evidence side) of each edit


SMALL_GAP = 2


def align(claim: str, evidence: str) -> Alignment:
    """Align claim and evidence word by word; edits of one or two words are where meaning flips."""
    a, b = aligned_words(claim), aligned_words(evidence)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    blocks = [m for m in matcher.get_matching_blocks() if m.size]
    if not blocks:
        return Alignment(b, a)
    claim_only: list[str] = []
    gaps: list[tuple[list[str], list[str]]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if j1 < blocks[0].b or j2 > blocks[-1].b + blocks[-1].size:
            # outside the aligned region: claim words are still inserted claims, evidence words are context
            if i2 - i1 <= SMALL_GAP:
                claim_only += a[i1:i2]
                gaps.append((a[i1:i2], []))
            continue
        mine = a[i1:i2] if i2 - i1 <= SMALL_GAP else []
        theirs = b[j1:j2] if j2 - j1 <= SMALL_GAP else []
        claim_only += mine
        if mine or theirs:  # an edit with a small side, kept whole: the small side is read against the other
            gaps.append((a[i1:i2], b[j1:j2]))
    return Alignment(b[blocks[0].b: blocks[-1].b + blocks[-1].size], claim_only, gaps)


def flips(alignment: Alignment, words: frozenset[str] | set[str]) -> list[str]:
    """Words of ``words`` that one side of an edit has and the other side lacks ("not" added or dropped).
    A negation reworded within one edit ("no water" / "not any water", "didn't" / "never") is no flip."""
    out = []
    for mine, theirs in alignment.gaps:
        ours, other = [t for t in mine if t in words], [t for t in theirs if t in words]
        if bool(ours) != bool(other) and len(mine if ours else theirs) <= SMALL_GAP:  # found in a small side
            out += ours or other
    return out
