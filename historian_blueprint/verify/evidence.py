"""Finding a claim's evidence: the 1–3 consecutive sentences of a source that carry most of its words.

Sentences are cut once per text (cached) with their content words, or taken from the serving generation's
readings of whole documents (``text/readings.py``, made when they were indexed); a cited claim is looked for around its
citation first, then in the whole document.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from historian_blueprint.schema import Cited, SourceText
from historian_blueprint.text import readings
from historian_blueprint.text.spans import CUT, claim_sentence_spans
from historian_blueprint.text.quantities import quantities, rounds_to
from historian_blueprint.text.words import FREQUENT, INFREQUENT, SCOPE_WORDS, content_words, name_words

SUPPORT_THRESHOLD = 0.75   # share of the claim's content words the evidence must contain
# Content words that only say how much or how often: a neighbouring sentence that adds nothing else of a claim
# does not hold its evidence ("It always meant freedom" beside "Sometimes Mr. Rankins would have ...").
HOW_MUCH = frozenset(content_words(" ".join(SCOPE_WORDS | FREQUENT | INFREQUENT)))


@dataclass(frozen=True)
class Evidence:
    source_id: str
    start: int
    end: int
    text: str
    coverage: float


@lru_cache(maxsize=512)
def _stored(text: str) -> readings.Reading | None:
    """The serving generation's reading of a whole document (made when it was indexed), if it has one."""
    return readings.stored(text)


@lru_cache(maxsize=512)
def sentences_of(text: str) -> tuple[tuple[int, int, frozenset[str]], ...]:
    stored = _stored(text)
    return stored.sentences if stored is not None else readings.sentences(text)


@lru_cache(maxsize=512)
def sentence_count(text: str) -> int:
    """How many sentences ``sentences_of`` finds in the text, without reading their words."""
    stored = _stored(text)
    return len(stored.sentences) if stored is not None else len(claim_sentence_spans(text))


def names_together(names: Sequence[str], doc: SourceText, span: int = 2, evidence: Evidence | None = None) -> bool:
    """True when some run of ``span`` consecutive sentences of the document mentions every name.

    The claim's own evidence is looked at first (the usual case, and cheap); then the whole document.
    """
    wanted = name_words(" ".join(names))  # "u-boats" -> u, boats: the same tokens as the sentences
    if evidence is not None and wanted <= name_words(evidence.text) and len(sentences_of(evidence.text)) <= span:
        return True
    sentences = word_sentences(doc.text)
    for i in range(len(sentences)):
        if wanted <= set().union(*sentences[i:i + span]):
            return True
    return False


@lru_cache(maxsize=512)
def document_words(text: str) -> frozenset[str]:
    stored = _stored(text)
    return stored.words if stored is not None else frozenset(content_words(text))


LOCAL_RADIUS = 2500  # characters around a citation searched before the whole document
_SPACE = re.compile(r"\s+")


@lru_cache(maxsize=2048)
def sentences_near(text: str, start: int, end: int) -> tuple[tuple[int, int, frozenset[str]], ...]:
    """The sentences of the region around a citation, in document offsets (the region starts at a line break)."""
    lo = max(0, start - LOCAL_RADIUS)
    if lo:  # start after a sentence end close by; failing that, at least at a word boundary
        ends = [m.end() for m in CUT.finditer(text, max(0, lo - 400), lo)]
        if ends:
            lo = ends[-1]
        else:
            space = _SPACE.search(text, lo)
            lo = space.end() if space and space.end() <= start else lo
    hi = min(len(text), end + LOCAL_RADIUS)
    if hi < len(text):
        found = CUT.search(text, hi, hi + 400)
        if found:
            hi = found.start() + 1
        else:
            back = text.rfind(" ", end, hi)
            hi = back if back > end else hi
    return tuple((lo + s, lo + e, words) for s, e, words in sentences_of(text[lo:hi]))


@lru_cache(maxsize=4096)
def stated_figures(sentence: str) -> tuple[float, ...]:
    """The values of the figures a sentence states (cached: the same sentences are read for every claim)."""
    return tuple(q.value for q in quantities(sentence))


@lru_cache(maxsize=256)
def word_sentences(text: str) -> tuple[frozenset[str], ...]:
    """Each sentence's words (whole words: "lee" is not in "fleet")."""
    stored = _stored(text)
    return stored.names if stored is not None else readings.names(text, sentences_of(text))


def best_window(
    claim_words: frozenset[str], doc: SourceText, near: Cited | None = None, max_len: int = 3, local: bool = False,
    names: frozenset[str] = frozenset(), frame: frozenset[str] = frozenset(),
) -> Evidence | None:
    """Return the 1–3 consecutive sentences of ``doc`` that contain most of the claim's words.

    ``local``: only the region around the citation ``near`` (a cheap first look for cited claims).
    ``names``: claim words that must be found as written (no related forms: "America" is not "American").
    ``frame``: the words of the claim's frame (context.frame_of): an edge sentence that adds only these is
    trimmed off.
    """
    if local and near is not None and near.source_id == doc.source_id:
        sentences = sentences_near(doc.text, near.start, near.end)
    else:
        sentences = sentences_of(doc.text)
    if not sentences or not claim_words:
        return None
    best: tuple[float, int, int, int] | None = None
    for i in range(len(sentences)):
        if not (claim_words & sentences[i][2]):
            continue
        union: set[str] = set()
        for j in range(i, min(i + max_len, len(sentences))):
            union |= sentences[j][2]
            coverage = len(claim_words & union) / len(claim_words)
            start, end = sentences[i][0], sentences[j][1]
            bonus = 0.0
            if near is not None and near.source_id == doc.source_id and start < near.end and near.start < end:
                bonus = 0.01
            key = (coverage + bonus - 0.001 * (j - i), start, end)
            if best is None or key[0] > best[0]:
                best = (key[0], i, j, j - i)
    if best is None:
        return None
    _, i, j, _ = best
    # the window's edges that add only the claim's frame (who reported it), or only a word of how much or how
    # often ("always" from a neighbouring sentence about something else), are not the evidence
    cited = (near.start, near.end) if near is not None and near.source_id == doc.source_id else None
    i, j = _trimmed(claim_words, sentences, i, j, frame | HOW_MUCH, cited)
    start, end = sentences[i][0], sentences[j][1]
    coverage = covered(claim_words, set(content_words(doc.text[start:end])), names)
    return Evidence(doc.source_id, start, end, doc.text[start:end], round(coverage, 4))


_FIGURE_TEXT = re.compile(r"\$?\d[\d,]*(?:\.\d+)?(?:\s+(?:thousand|million|billion))?")


def as_stated(claim: str, evidence: str) -> str:
    """The claim with each rounded figure ("about $1.74 billion", "roughly 1.7 million") written as the evidence's
    figure it rounds to ("$1,740,690,489.49"): the claim's figure is that figure, and its words then are the
    evidence's (a figure that does not round to one of the evidence is left as it is: the numbers rule judges it).
    Years and exact figures are left as they are."""
    stated = {}
    for m in _FIGURE_TEXT.finditer(evidence):
        values = stated_figures(m.group())
        if len(values) == 1:
            stated.setdefault(values[0], m.group().rstrip(",."))
    out, last = [], 0
    for m in _FIGURE_TEXT.finditer(claim):
        before = claim[max(0, m.start() - 20):m.start()]
        found = quantities(before + m.group())
        q = found[-1] if found else None
        if q is None or q.year or not (q.hedged or q.scaled) or any(abs(q.value - v) < 1e-9 for v in stated):
            continue
        match = next((text for v, text in stated.items() if rounds_to(q, v)), None)
        if match is not None:
            out += [claim[last:m.start()], match]
            last = m.end()
    return "".join(out) + claim[last:] if out else claim


def _trimmed(claim_words: frozenset[str], sentences: Sequence[tuple[int, int, frozenset[str]]], i: int, j: int,
             frame: frozenset[str], cited: tuple[int, int] | None) -> tuple[int, int]:
    """The window without its edge sentences that add nothing of the claim but words of its frame (who
    reported it, in which document: "... I refer you to the report of the Secretary"): the evidence shown is
    the sentence that decided, not its neighbours."""
    def adds(k: int, lo: int, hi: int) -> set[str]:
        others = set().union(*(sentences[m][2] for m in range(lo, hi + 1) if m != k))
        return set(claim_words & sentences[k][2]) - others
    def kept(k: int) -> bool:  # the cited sentence stays in its window
        return cited is not None and sentences[k][0] < cited[1] and cited[0] < sentences[k][1]

    while i < j and not kept(i) and adds(i, i, j) <= frame:
        i += 1
    while j > i and not kept(j) and adds(j, i, j) <= frame:
        j -= 1
    return i, j


RELATED_MIN = 5  # the shorter form has at least this many letters
# Derivational endings that keep the meaning of a stem: creat / creation, found / founder, locat / location.
# Not -ity, -ry, -y, -ization: author / authority, infant / infantry, police / policy differ in meaning.
RELATED_SUFFIXES = ("ion", "ions", "ation", "ations", "er", "ers", "or", "ors", "ment", "ments", "ive", "e", "s")


def covered(claim_words: frozenset[str], window: set[str], names: frozenset[str]) -> float:
    """The share of ``claim_words`` the window has, as written or (names excepted) in a related form."""
    found = [w for w in claim_words if w in window or (w not in names and related_form(w, window))]
    return len(found) / len(claim_words) if claim_words else 0.0


def related_form(word: str, vocabulary: set[str] | frozenset[str]) -> bool:
    """True when ``vocabulary`` has ``word`` with a derivational ending added or removed (creat / creation)."""
    if len(word) < RELATED_MIN or word.isdigit():
        return False
    for other in vocabulary:
        short, long_ = (word, other) if len(word) <= len(other) else (other, word)
        if len(short) >= RELATED_MIN and long_ != short and long_.startswith(short) \
                and long_[len(short):] in RELATED_SUFFIXES:
            return True
    return False


def naming(name: str, documents: Sequence[SourceText]) -> Iterator[tuple[SourceText, int]]:
    """(document, sentence index) of every sentence that names ``name`` (whole words, possessives too)."""
    wanted = name_words(name)
    for doc in documents:
        for i, names in enumerate(word_sentences(doc.text)):
            if wanted <= names:
                yield doc, i


def best_elsewhere(
    body: str, words: frozenset[str], names: frozenset[str], documents: Sequence[SourceText], cited: list[Cited],
    search: Callable[[str], Sequence[SourceText]] | None,
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
