"""Deterministic grounding checks — the floor every engine shares.

For one claim: find its best evidence (the cited source first, then the other documents), then check
quotations verbatim, numbers and dates, names, negation, scope words and coverage, and whether the
support sits in another document than the one cited. Every verdict carries its evidence span.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from historian_blueprint.index.chunking import sentence_spans
from historian_blueprint.verify import text as tx

Verdict = Literal["supported", "unsupported", "contradicted", "misquote", "misattributed"]
ClaimType = Literal["fabrication", "exaggeration", "misattribution", "unverified_detail", "inference"]
Severity = Literal["none", "low", "medium", "high", "critical"]

SUPPORT_THRESHOLD = 0.75   # share of the claim's content words the evidence must contain
MISATTRIBUTION_MARGIN = 0.15
DOCUMENT_THRESHOLD = 0.9   # share of the claim's content words found anywhere in the source document

_ATTRIBUTION = re.compile(
    r'^(?P<who>[^"]{2,90}?)\s+(?:said|wrote|stated|declared|noted|remarked|observed|added|argued|told [^"]{1,40}?)'
    r'(?:\s+that)?\s*[,:]?\s*"(?P<quote>.+)"\s*[.]?\s*$',
    re.S,
)


@dataclass(frozen=True)
class SourceText:
    """A document the checks can read."""

    source_id: str
    text: str
    title: str = ""
    author: str | None = None


@dataclass(frozen=True)
class Cited:
    source_id: str
    start: int
    end: int


@dataclass(frozen=True)
class Evidence:
    source_id: str
    start: int
    end: int
    text: str
    coverage: float


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str = ""


@dataclass
class ClaimResult:
    claim: str
    verdict: Verdict
    type: ClaimType | None
    severity: Severity
    evidence: Evidence | None
    support: float
    checks: list[Check] = field(default_factory=list)
    reason: str = ""
    cited: list[Cited] = field(default_factory=list)

    @property
    def flagged(self) -> bool:
        return self.verdict != "supported"


# A sentence end glued to the next sentence ("...the United States.Golf Magazine is..."), common in scraped text.
_GLUED = re.compile(r"(?<=[a-z0-9]{2}[.!?])(?=[A-Z][a-z])")


def claim_sentence_spans(text: str) -> list[tuple[int, int]]:
    """Sentence spans for checking claims: the chunker's sentences, also split where a period has no space."""
    out = []
    for start, end in sentence_spans(text):
        cuts = [start] + [start + m.start() for m in _GLUED.finditer(text[start:end])] + [end]
        out.extend((a, b) for a, b in zip(cuts, cuts[1:]) if text[a:b].strip())
    return out


@lru_cache(maxsize=512)
def _sentences(text: str) -> tuple[tuple[int, int, frozenset[str]], ...]:
    return tuple((s, e, frozenset(tx.content_words(text[s:e]))) for s, e in claim_sentence_spans(text))


def names_together(names: Sequence[str], doc: SourceText, span: int = 2, evidence: Evidence | None = None) -> bool:
    """True when some run of ``span`` consecutive sentences of the document mentions every name.

    The claim's own evidence is looked at first (the usual case, and cheap); then the whole document.
    """
    wanted = _name_words(" ".join(names))  # "u-boats" -> u, boats: the same tokens as the sentences
    if evidence is not None and wanted <= _name_words(evidence.text) and len(_sentences(evidence.text)) <= span:
        return True
    sentences = _word_sentences(doc.text)
    for i in range(len(sentences)):
        if wanted <= set().union(*sentences[i:i + span]):
            return True
    return False


@lru_cache(maxsize=512)
def _document_words(text: str) -> frozenset[str]:
    return frozenset(tx.content_words(text))


LOCAL_RADIUS = 2500  # characters around a citation searched before the whole document
_SENTENCE_END = re.compile(r"[.!?][\"'”’)]*\s+|\n")
_SPACE = re.compile(r"\s+")


@lru_cache(maxsize=2048)
def _sentences_near(text: str, start: int, end: int) -> tuple[tuple[int, int, frozenset[str]], ...]:
    """The sentences of the region around a citation, in document offsets (the region starts at a line break)."""
    lo = max(0, start - LOCAL_RADIUS)
    if lo:  # start after a sentence end close by; failing that, at least at a word boundary
        ends = [m.end() for m in _SENTENCE_END.finditer(text, max(0, lo - 400), lo)]
        if ends:
            lo = ends[-1]
        else:
            space = _SPACE.search(text, lo)
            lo = space.end() if space and space.end() <= start else lo
    hi = min(len(text), end + LOCAL_RADIUS)
    if hi < len(text):
        found = _SENTENCE_END.search(text, hi, hi + 400)
        if found:
            hi = found.start() + 1
        else:
            back = text.rfind(" ", end, hi)
            hi = back if back > end else hi
    return tuple((lo + s, lo + e, words) for s, e, words in _sentences(text[lo:hi]))


def _name_words(text: str) -> frozenset[str]:
    """Whole words without a possessive ("Dylan's" -> dylan), as names are compared."""
    return frozenset(w[:-2] if w.endswith("'s") else w for w in tx.words(text))


@lru_cache(maxsize=256)
def _word_sentences(text: str) -> tuple[frozenset[str], ...]:
    """Each sentence's words (whole words: "lee" is not in "fleet")."""
    return tuple(_name_words(text[s:e]) for s, e, _ in _sentences(text))


@lru_cache(maxsize=512)
def _normalized(text: str) -> str:
    return tx.normalize(text)


def best_window(
    claim_words: frozenset[str], doc: SourceText, near: Cited | None = None, max_len: int = 3, local: bool = False,
    names: frozenset[str] = frozenset(),
) -> Evidence | None:
    """Return the 1–3 consecutive sentences of ``doc`` that contain most of the claim's words.

    ``local``: only the region around the citation ``near`` (a cheap first look for cited claims).
    ``names``: claim words that must be found as written (no related forms: "America" is not "American").
    """
    if local and near is not None and near.source_id == doc.source_id:
        sentences = _sentences_near(doc.text, near.start, near.end)
    else:
        sentences = _sentences(doc.text)
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
                best = (key[0], start, end, j - i)
    if best is None:
        return None
    _, start, end, _ = best
    coverage = covered(claim_words, set(tx.content_words(doc.text[start:end])), names)
    return Evidence(doc.source_id, start, end, doc.text[start:end], round(coverage, 4))


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
        if len(short) >= RELATED_MIN and long_ != short and long_.startswith(short) and long_[len(short):] in RELATED_SUFFIXES:
            return True
    return False


@dataclass(frozen=True)
class Alignment:
    """Word-level alignment of a claim to its evidence: what each side has that the other lacks nearby."""

    region: list[str]            # evidence words from the first to the last shared word
    claim_only: list[str]        # claim words inserted in small gaps (<= 2 words)
    gaps: list[tuple[list[str], list[str]]] = field(default_factory=list)  # (claim side, evidence side) of each edit


SMALL_GAP = 2


def align(claim: str, evidence: str) -> Alignment:
    """Align claim and evidence word by word; edits of one or two words are where meaning flips."""
    a, b = tx.aligned_words(claim), tx.aligned_words(evidence)
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


MAX_COMPARATIVE_CLAIM = 300  # longer clauses are not read as both-A-and-B or A-before-B (bounded regex work)
_BOTH = (  # (pattern, whether the second name is delimited by the pattern)
    (re.compile(r"\bboth\s+(?P<a>[^,;]+?)\s+and\s+(?P<b>[^,;]+?)\s+(?:are|were|have|had|did)\s+(?P<p>[^;]+)$", re.I), True),
    (re.compile(r"^(?:\W*\w+\W+)?(?P<a>[A-Z][^,;]*?)\s+and\s+(?P<b>[^,;]+?)\s+(?:are|were|have|had|did)\s+both\s+(?P<p>[^;]+)$"), True),
    (re.compile(r"^(?P<a>[A-Z][^,;]*?)\s+and\s+(?P<b>[^,;]+?)\s+both\s+(?P<p>[^;]+)$"), True),
    (re.compile(r"^both\s+(?P<a>[^,;]+?)\s+and\s+(?P<b>[^;]+)$", re.I), False),
)
_CONNECTORS = frozenset("of the and de van von da del la le du st".split())
MAX_NAME_WORDS = 6


def _name_in_sources(phrase: str, documents: Sequence[SourceText]) -> str | None:
    """The longest leading run of capitalized words (and connectors: "Kings of Leon") of ``phrase`` that some
    source spells out as a name, whole words; None when the phrase does not start with one."""
    tokens = []
    for token in phrase.split()[:MAX_NAME_WORDS]:
        if not (token[:1].isupper() or token[:1].isdigit() or token.lower() in _CONNECTORS):
            break
        tokens.append(token)
    for n in range(len(tokens), 0, -1):
        candidate = " ".join(tokens[:n]).strip(" ,")
        wanted = tx.words(candidate)
        if not wanted or not candidate[:1].isupper() or wanted[-1] in _CONNECTORS:
            continue
        pattern = re.compile(r"\b" + r"\W+".join(re.escape(w) for w in wanted) + r"\b")
        if any(pattern.search(_normalized(d.text)) for d in documents):
            return candidate
    return None


_CLAUSE_BREAK = re.compile(r";\s*|,\s+")


def clauses(body: str) -> list[str]:
    """The claim, then its parts between semicolons and commas, each short enough to read as a comparison."""
    text = body.strip().rstrip(".?! ")
    parts = [text] + [p.strip() for p in _CLAUSE_BREAK.split(text) if p.strip()]
    return [p for p in dict.fromkeys(parts) if len(p) <= MAX_COMPARATIVE_CLAIM]


def conjuncts(body: str, documents: Sequence[SourceText]) -> list[tuple[str, str]]:
    """(name, predicate) for each of two names a claim joins with "both" ("both A and B are P" -> A P, B P).

    Names run over capitalized words and connectors as far as the sources spell them ("Kings of Leon
    American rock bands" -> "Kings of Leon"); nothing is returned unless both names are found in the sources
    and something is said of them.
    """
    for text, (pattern, delimited) in ((t, pd) for t in clauses(body) for pd in _BOTH):
        match = pattern.search(text)
        if not match:
            continue
        a = _name_in_sources(match.group("a"), documents)
        if not a or a != match.group("a").strip(" ,"):
            continue
        b = _name_in_sources(match.group("b"), documents)
        if delimited:
            if not b or b != match.group("b").strip(" ,"):
                continue
            predicate = match.group("p")
        else:
            if not b:
                continue
            predicate = match.group("b")[len(b):].strip(" ,")
        if predicate and tx.content_words(predicate):
            return [(a, predicate), (b, predicate)]
    return []


_ORDER = re.compile(
    r"^(?P<a>[^,;]+?)\s+(?:was|were|is|are|came|happened|took place|appeared)?\s*(?:\w+\s+)?"
    r"(?P<rel>before|earlier than|prior to|after|later than)\s+(?P<b>[^,;]+)$",
)
_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")


def _naming(name: str, documents: Sequence[SourceText]) -> Iterator[tuple[SourceText, int]]:
    """(document, sentence index) of every sentence that names ``name`` (whole words, possessives too)."""
    wanted = _name_words(name)
    for doc in documents:
        for i, names in enumerate(_word_sentences(doc.text)):
            if wanted <= names:
                yield doc, i


def _year_of(name: str, documents: Sequence[SourceText]) -> int | None:
    """The year of the first sentence naming ``name``, when that sentence gives exactly one year; else None
    (a sentence with a birth year and an election year does not say which one a claim's order is about)."""
    for doc, i in _naming(name, documents):
        start, end, _ = _sentences(doc.text)[i]
        years = set(_YEAR.findall(doc.text[start:end]))
        return int(years.pop()) if len(years) == 1 else None
    return None


def chronology(body: str, documents: Sequence[SourceText]) -> tuple[tuple[str, int | None], tuple[str, int | None]] | None:
    """((earlier, year), (later, year)) as a clause of the claim orders two named things, with the year the
    sources give each (None when the first sentence naming it gives no single year).

    None when no clause orders two names the sources spell out.
    """
    for text in clauses(body):
        match = _ORDER.match(text)
        if not match:
            continue
        a = _name_in_sources(match.group("a"), documents)
        b = _name_in_sources(match.group("b"), documents)
        if not a or not b or set(tx.words(a)) == set(tx.words(b)):
            continue
        year_a, year_b = _year_of(a, documents), _year_of(b, documents)
        if match.group("rel") in ("after", "later than"):
            return (b, year_b), (a, year_a)
        return (a, year_a), (b, year_b)
    return None


_PRONOUN_START = re.compile(r"^\W*(?:he|she|it|they|his|her|its|their|the (?:band|group|company|city|film|town))\b", re.I)


def attribute_said(name: str, predicate: str, documents: Sequence[SourceText]) -> bool:
    """True when a sentence naming ``name`` (or the next one, when it goes on with a pronoun) carries ``predicate``."""
    predicate_words = set(tx.content_words(predicate))
    if not predicate_words:
        return True
    for doc, i in _naming(name, documents):
        sentences = _sentences(doc.text)
        seen = set(sentences[i][2])
        if i + 1 < len(sentences) and _PRONOUN_START.match(doc.text[sentences[i + 1][0]: sentences[i + 1][1]]):
            seen |= sentences[i + 1][2]
        if len(predicate_words & seen) / len(predicate_words) >= SUPPORT_THRESHOLD:
            return True
    return False


_CAPITALIZED_WORD = re.compile(r"\b[A-Z][a-z]+(?:-[A-Z][a-z]+)?\b")


def attribute_replaced(name: str, predicate: str, documents: Sequence[SourceText]) -> str | None:
    """The word a source gives ``name`` where ``predicate`` has a capitalized one ("a Canadian indie rock band"
    against "American rock bands" -> "Canadian"); None when no sentence naming ``name`` says otherwise."""
    heads = {w for w in tx.content_words(_CAPITALIZED_WORD.sub(" ", predicate))}
    said = re.findall(r"[\w'-]+", predicate)
    claimed = [  # a capitalized word that modifies a noun of the predicate ("American rock bands")
        t for k, t in enumerate(said)
        if _CAPITALIZED_WORD.fullmatch(t) and any(w in heads for w in tx.content_words(" ".join(said[k + 1:k + 4])))
    ]
    if not claimed or not heads:
        return None
    name_tokens = {w.lower() for w in re.findall(r"[\w'-]+", name)}
    for doc, i in _naming(name, documents):
        start, end, _ = _sentences(doc.text)[i]
        tokens = re.findall(r"[\w'-]+", doc.text[start:end])
        for k, token in enumerate(tokens[1:], start=1):  # not the sentence's first word
            if not _CAPITALIZED_WORD.fullmatch(token) or token.lower() in name_tokens:
                continue
            if any(c.lower() in token.lower() or token.lower() in c.lower() for c in claimed):
                continue
            if any(w in heads for w in tx.content_words(" ".join(tokens[k + 1:k + 4]))):
                return token
    return None


def _attribution(claim: str) -> tuple[str | None, str]:
    match = _ATTRIBUTION.match(claim.translate(str.maketrans({"“": '"', "”": '"'})))
    if not match:
        return None, claim
    return match.group("who"), match.group("quote")


def check_claim(
    claim: str,
    documents: Sequence[SourceText],
    cited: Sequence[Cited] = (),
    search: Callable[[str], Sequence[SourceText]] | None = None,
) -> ClaimResult:
    """Verify one claim against its cited sources (first) and other documents."""
    speaker, body = _attribution(claim)
    claim_words = frozenset(tx.content_words(body))
    names = frozenset(tx.content_words(" ".join(tx.capitalized_terms(body))))
    by_id = {d.source_id: d for d in documents}
    cited = list(cited)
    cited_docs = [by_id[c.source_id] for c in cited if c.source_id in by_id]
    primary = list({d.source_id: d for d in (cited_docs or documents)}.values())  # one look per document
    near = cited[0] if cited else None

    def look(doc: SourceText) -> Evidence | None:
        """Around the citation first; the whole document only when the region does not carry the claim."""
        cited_here = next((c for c in cited if c.source_id == doc.source_id), None)
        if cited_here is not None:
            found = best_window(claim_words, doc, cited_here, local=True, names=names)
            if found is not None and found.coverage >= SUPPORT_THRESHOLD:
                return found
        return best_window(claim_words, doc, near, names=names)

    candidates = [(doc, look(doc)) for doc in primary]
    candidates = [(d, e) for d, e in candidates if e is not None]
    doc, evidence = max(candidates, key=lambda de: de[1].coverage, default=(None, None))

    # support that sits in another document than the cited one
    elsewhere: tuple[SourceText, Evidence] | None = None
    if cited_docs and (evidence is None or evidence.coverage < SUPPORT_THRESHOLD):
        others = [d for d in documents if d.source_id not in {c.source_id for c in cited}]
        if search is not None:
            others += [d for d in search(body) if d.source_id not in {c.source_id for c in cited}]
        seen: set[str] = set()
        for other in others:
            if other.source_id in seen:
                continue
            seen.add(other.source_id)
            found = best_window(claim_words, other, names=names)
            if found and (elsewhere is None or found.coverage > elsewhere[1].coverage):
                elsewhere = (other, found)

    checks: list[Check] = []
    result = ClaimResult(claim, "supported", None, "none", evidence, evidence.coverage if evidence else 0.0, checks, cited=cited)

    def fail(verdict: Verdict, kind: ClaimType, severity: Severity, reason: str) -> ClaimResult:
        result.verdict, result.type, result.severity, result.reason = verdict, kind, severity, reason
        return result

    if tx.is_question(body):
        checks.append(Check("assertion", False, "a question"))
        return fail("unsupported", "inference", "low", "a question asserts nothing the sources could support")

    if evidence is None or doc is None:
        checks.append(Check("coverage", False, "no sentence of the sources shares words with the claim"))
        if elsewhere and elsewhere[1].coverage >= SUPPORT_THRESHOLD:
            result.evidence = elsewhere[1]
            return fail("misattributed", "misattribution", "high", f"the support is in {elsewhere[0].source_id}, not the cited source")
        return fail("unsupported", "fabrication", "high", "nothing in the sources supports this claim")

    alignment = align(body, evidence.text)
    region = alignment.region

    # quotations must be verbatim in the cited (or given) source
    for quote in tx.quotations(claim) or ([body] if speaker else []):
        ok = tx.normalize(quote).strip(" .") in _normalized(doc.text)
        checks.append(Check("quotation", ok, quote[:80]))
        if not ok:
            return fail("misquote", "misattribution", "high", "the quoted words are not in the source as written")

    # who is said to have said it
    if speaker:
        owner = tx.normalize(f"{doc.title} {doc.author or ''} {evidence.text}")
        compact = owner.replace(" ", "")
        missing = [t for t in tx.capitalized_terms(speaker) if t not in owner and t not in compact]
        checks.append(Check("speaker", not missing, ", ".join(missing)))
        if missing:
            return fail("misattributed", "misattribution", "high", f"the source is not by {speaker}")

    # coverage and novelty count words; numbers are checked on their own below (a changed number is
    # "contradicted", not merely a word short)
    wordy = (claim_words - tx.numbers(body)) or claim_words  # "first" stays a word: numbers() leaves it out
    window_words = set(tx.content_words(evidence.text))
    coverage = covered(wordy, window_words, names)
    coverage_ok = coverage >= SUPPORT_THRESHOLD
    checks.append(Check("coverage", coverage_ok, f"{coverage:.2f} of the claim's words in the evidence"))
    if coverage_ok:
        outside = wordy - window_words
        doc_words = (_document_words(doc.text) | set(tx.content_words(f"{doc.title} {doc.author or ''}"))) if outside else wordy
        novel = sorted(w for w in wordy - doc_words if w in names or not related_form(w, doc_words))
        doc_share = 1 - len(novel) / len(wordy)
        checks.append(Check("novel_words", doc_share >= DOCUMENT_THRESHOLD, ", ".join(novel[:8])))
        if doc_share < DOCUMENT_THRESHOLD:
            return fail("unsupported", "unverified_detail", "medium", f"the source never mentions {', '.join(novel[:3])}")
    if not coverage_ok:
        if elsewhere and elsewhere[1].coverage >= SUPPORT_THRESHOLD and elsewhere[1].coverage > evidence.coverage + MISATTRIBUTION_MARGIN:
            result.evidence = elsewhere[1]
            result.support = elsewhere[1].coverage
            return fail("misattributed", "misattribution", "high", f"the support is in {elsewhere[0].source_id}, not the cited source")
        kind: ClaimType = "inference" if coverage >= 0.5 else "fabrication"
        return fail("unsupported", kind, "high" if kind == "fabrication" else "medium", "the evidence does not contain most of the claim")

    # numbers, amounts and dates
    claim_numbers = tx.numbers(body)
    window_numbers = tx.number_vocabulary(evidence.text)
    missing_numbers = sorted(claim_numbers - window_numbers)
    checks.append(Check("numbers", not missing_numbers, ", ".join(missing_numbers)))
    if missing_numbers:
        verdict: Verdict = "contradicted" if window_numbers - claim_numbers else "unsupported"
        return fail(verdict, "unverified_detail", "high", f"{', '.join(missing_numbers)} is not in the evidence")

    # names, places and institutions
    context = tx.normalize(f"{evidence.text} {doc.title} {doc.author or ''}")
    context_words = set(tx.words(context))
    first_person = bool(context_words & tx.FIRST_PERSON)
    missing_names = [
        t for t in tx.capitalized_terms(body)
        if t not in context_words and not re.search(rf"\b{re.escape(t)}", context)
        and not (first_person and t in tx.VOICE_ROLES)
    ]
    checks.append(Check("names", not missing_names, ", ".join(missing_names)))
    if missing_names:
        return fail("unsupported", "unverified_detail", "high", f"{', '.join(missing_names)} is not in the evidence")

    # names the source mentions apart, joined by the claim ("X is owned by Y" where X and Y never meet)
    metadata = tx.normalize(f"{doc.title} {doc.author or ''}")
    named = list(dict.fromkeys(t for t in tx.capitalized_terms(body) if t not in metadata and t not in tx.VOICE_ROLES))
    together = len(named) < 2 or names_together(named, doc, evidence=evidence)
    checks.append(Check("names_together", together, ", ".join(named)))
    if not together:
        return fail("unsupported", "fabrication", "high", f"the source never mentions {', '.join(named)} together")

    # negation flipped: a "not" added or dropped where the claim otherwise follows the source
    claim_tokens = tx.words(body)
    flipped_negations = flips(alignment, tx.NEGATIONS)
    checks.append(Check("negation", not flipped_negations, " ".join(flipped_negations)))
    if flipped_negations:
        word = flipped_negations[0]
        what = f"adds '{word}'" if word in alignment.claim_only else f"drops '{word}'"
        return fail("contradicted", "fabrication", "critical", f"the claim {what} and so reverses the source")

    # scope widened (all, every, never, certainly ...)
    region_words = set(region)
    widened = sorted(
        ({t for t in claim_tokens if t in tx.SCOPE_WORDS} - region_words)
        | {t for t in alignment.claim_only if t in tx.SCOPE_WORDS}
    )
    checks.append(Check("scope", not widened, ", ".join(widened)))
    if widened:
        return fail("unsupported", "exaggeration", "medium", f"'{widened[0]}' claims more than the source says")

    # how often: "usually" where the source says "rarely" (or the reverse) is not a paraphrase
    said, given = set(claim_tokens), set(tx.words(evidence.text))
    flipped = sorted(
        (said & tx.FREQUENT) - given if (given & tx.INFREQUENT) - said else set()
    ) + sorted((said & tx.INFREQUENT) - given if (given & tx.FREQUENT) - said else set())
    checks.append(Check("frequency", not flipped, ", ".join(flipped)))
    if flipped:
        return fail("contradicted", "exaggeration", "high", f"'{flipped[0]}' is not how often the source says it happened")

    # "both A and B are P": P must be said of each of them, not of one beside the other
    for name, predicate in conjuncts(body, documents):
        said = attribute_said(name, predicate, primary)
        checks.append(Check("each_named", said, f"{name}: {predicate}"))
        if not said:
            other = attribute_replaced(name, predicate, primary)
            if other:
                return fail("contradicted", "fabrication", "high", f"the source calls {name} {other}, not {predicate}")
            return fail("unsupported", "unverified_detail", "high", f"the source does not say of {name}: {predicate}")

    # "A ... before B": the years the sources give each of them must be in that order
    order = chronology(body, primary)
    if order is not None:
        (first, first_year), (second, second_year) = order
        ok = first_year is not None and second_year is not None and first_year < second_year
        checks.append(Check("chronology", ok, f"{first} {first_year}, {second} {second_year}"))
        if first_year is not None and second_year is not None and first_year > second_year:
            return fail("contradicted", "fabrication", "high", f"the sources date {first} to {first_year}, after {second} ({second_year})")
        if not ok:  # an order the sources' dates cannot settle is not verified
            return fail("unsupported", "inference", "medium", f"the sources do not date {first} and {second} apart, so the order is not checked")

    result.reason = "the evidence contains the claim's words, numbers and names"
    return result


def verify_claim(
    claim: str,
    documents: Sequence[SourceText],
    cited: Sequence[Cited] = (),
    search: Callable[[str], Sequence[SourceText]] | None = None,
    checker: Callable[..., ClaimResult] | None = None,
) -> ClaimResult:
    """check_claim that fails safe: an error in any check gives an unverified claim, never a supported one."""
    try:
        result = (checker or check_claim)(claim, documents, cited, search)
        if not isinstance(result, ClaimResult):
            raise TypeError(f"checker returned {type(result).__name__}")
        return result
    except Exception as exc:  # fail safe: record why, never call it supported
        return ClaimResult(
            claim, "unsupported", "unverified_detail", "high", None, 0.0,
            [Check("verifier", False, f"{type(exc).__name__}: {exc}")],
            reason=f"verification failed ({type(exc).__name__}); the claim is not verified", cited=list(cited),
        )


_YES_NO_QUESTION = re.compile(
    r"^\s*(?:are|is|was|were|do|does|did|can|could|has|have|had|will|would)\s+(?P<rest>.+?)\s*\?\s*$", re.I | re.S,
)
YES_WORDS = frozenset("yes yeah yep correct true".split())
NO_WORDS = frozenset("no nope incorrect false".split())


def bare_answer(text: str) -> bool | None:
    """True for a bare "yes" (one or two words of it: "Yes.", "yes, correct"), False for a bare "no", else None."""
    said = tx.words(text)
    if not 0 < len(said) <= 2:
        return None
    if all(w in YES_WORDS for w in said):
        return True
    if all(w in NO_WORDS for w in said):
        return False
    return None


def proposition(question: str) -> str | None:
    """The statement a yes/no question asks about ("Are A and B both P?" -> "A and B both P"); None otherwise."""
    match = _YES_NO_QUESTION.match(question)
    return match.group("rest") if match else None


def verify_answer(
    question: str,
    answer: str,
    documents: Sequence[SourceText],
    cited: Sequence[Cited] = (),
    search: Callable[[str], Sequence[SourceText]] | None = None,
    checker: Callable[..., ClaimResult] | None = None,
) -> ClaimResult:
    """Verify an answer to a question.

    An answer that is a statement is verified as a claim. A bare "yes" asserts the question's statement and
    takes its verdict. A bare "no" denies it: contradicted when the sources say the statement (in any given
    document), supported only when they contradict it, otherwise unsupported (not saying is not denying).
    """
    statement = proposition(question)
    polarity = bare_answer(answer)
    if polarity is None or statement is None:
        return verify_claim(answer, documents, cited, search, checker)
    result = verify_claim(statement, documents, cited, search, checker)
    result.claim = answer
    if polarity:
        result.reason = f"'yes' asserts that {statement}: {result.reason}"
        return result
    if any(c.name == "verifier" for c in result.checks):  # the check itself failed: never call it supported
        return result
    if result.verdict in ("supported", "misattributed", "misquote"):  # the statement is in the sources
        result.verdict, result.type, result.severity = "contradicted", "fabrication", "high"
        result.reason = f"'no' denies that {statement}, which the sources say"
        return result
    why = result.reason
    if result.verdict == "contradicted":
        result.verdict, result.type, result.severity = "supported", None, "none"
        result.reason = f"'no': the sources contradict that {statement} ({why})"
        return result
    result.verdict, result.type, result.severity = "unsupported", "unverified_detail", "medium"
    result.reason = f"'no' is not established: the sources do not contradict that {statement} ({why})"
    return result
