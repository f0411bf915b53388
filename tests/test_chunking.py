"""Chunks: the offset invariant under random noisy Unicode text, sizes, coverage, locators."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from historian_blueprint.index.chunking import chunk_document
from historian_blueprint.text.spans import Layout
from tests.conftest import REPO

CORPUS = REPO / "historian_blueprint" / "demo" / "corpus"

# words, OCR debris, punctuation, newlines and blank lines, any Unicode letters and symbols
pieces = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30),
    st.sampled_from(["The ", "railroad ", "Mr. ", "U.S. ", "1873. ", "sjc )(( iff ", "\n", "\n\n", "  ", "!", "? ", "…",
                     "“Yes,” ", "ﬁ", "é", "日本語。", "\t"]),
    st.text(alphabet="abcdefghij .", min_size=50, max_size=900),
)
texts = st.lists(pieces, max_size=80).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=texts, size=st.integers(100, 900), overlap_frac=st.floats(0, 0.45))
def test_offsets_always_point_at_the_chunk_text(text, size, overlap_frac):
    overlap = int(size * overlap_frac)
    chunks = chunk_document("d", text, size, overlap)
    for c in chunks:
        assert text[c.start:c.end] == c.text
        assert 0 < len(c.text) <= size
        assert c.text == c.text.strip()
        assert c.locator
    # every non-space character is inside some chunk, and chunks advance through the text
    covered = [False] * len(text)
    for c in chunks:
        covered[c.start:c.end] = [True] * (c.end - c.start)
    assert all(covered[i] for i, ch in enumerate(text) if not ch.isspace())
    starts = [c.start for c in chunks]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)


def test_empty_and_whitespace_documents_have_no_chunks():
    assert chunk_document("d", "", 700, 150) == []
    assert chunk_document("d", " \n\n\t ", 700, 150) == []


def test_sentences_are_not_cut_and_neighbours_overlap():
    sentences = [f"Sentence number {i} tells of the line from Omaha to Ogden." for i in range(40)]
    text = " ".join(sentences)
    chunks = chunk_document("d", text, 300, 100)
    for c in chunks:
        assert c.text.startswith("Sentence number") and c.text.endswith("Ogden.")
    for a, b in zip(chunks, chunks[1:]):
        assert b.start < a.end  # overlap
        assert a.end - b.start <= 100


def test_a_huge_document_without_spaces_is_cut_hard():
    text = "x" * 5000
    chunks = chunk_document("d", text, 700, 150)
    assert all(len(c.text) <= 700 for c in chunks)
    assert sum(len(c.text) for c in chunks) >= 5000


def test_locators_name_paragraph_and_lines():
    text = "First para line one.\nline two.\n\nSecond para.\nIts second line.\nThird line here."
    layout = Layout(text)
    start = text.index("Its second")
    assert layout.locate(start, start + 10) == "para 2, line 2"
    assert layout.locate(start, text.index("Third") + 5) == "para 2, lines 2–3"
    assert layout.locate(0, len(text)) == "paras 1–2"


def test_locators_use_pages_when_the_document_has_them():
    pages = ["Page one text here.", "Page two follows on.", "Page three ends it."]
    text = "\n\n".join(pages)
    layout = Layout(text, pages)
    assert layout.locate(text.index("two"), text.index("two") + 3) == "p. 2"
    assert layout.locate(0, len(text)) == "pp. 1–3"


def test_real_corpus_offsets_hold_and_sizes_match_the_profile():
    for path in sorted(CORPUS.glob("*.jsonl")):
        with open(path, encoding="utf-8") as fh:
            for line in list(fh)[:15]:
                doc = json.loads(line)
                for c in chunk_document(doc["_id"], doc["content"], 700, 150):
                    assert doc["content"][c.start:c.end] == c.text
                    assert len(c.text) <= 700


def test_long_unbroken_speeches_are_located_by_sentence():
    text = " ".join(f"This is sentence number {i} of a long address to the Congress." for i in range(1, 101))
    layout = Layout(text)
    start = text.index("number 42 ")
    assert layout.locate(start, start + 10) == "sentence 42"
    assert layout.locate(start, text.index("number 44 ") + 5) == "sentences 42–44"


def test_initials_titles_and_numbered_forms_do_not_end_a_sentence_but_a_plain_word_does():
    from historian_blueprint.text.spans import quote_spans, sentences

    text = "Eugene V. Debs spoke at St. Louis. Gen. Lee came by train No. 14 (see p. 4 of vol. 2). It rained."
    assert sentences(text) == [
        "Eugene V. Debs spoke at St. Louis.", "Gen. Lee came by train No. 14 (see p. 4 of vol. 2).", "It rained."]
    assert sentences("He sailed on Nov. 27 from New York. It sank in Dec. Then.") == [
        "He sailed on Nov. 27 from New York.", "It sank in Dec.", "Then."]
    assert sentences("He said no. Then he left. It was I. The end came at No. Nine.") == [
        "He said no.", "Then he left.", "It was I.", "The end came at No.", "Nine."]
    # a sentence longer than a quote can be is quoted by its clauses, cut nearest its middle
    long = "By virtue of a statute " + "of the United States, " * 30 + "I appointed a commission. Next."
    spans = quote_spans(long)
    assert all(e - s <= 600 for s, e in spans) and long[spans[-1][0]:spans[-1][1]] == "Next."
    assert "".join(long[s:e] for s, e in spans[:-1]).replace(",", ", ").split() == long[:-6].replace(",", ", ").split()


def test_the_parser_reads_a_numbered_form_as_one_token_as_the_splitter_does():
    from historian_blueprint.text.parse import pipeline

    doc = pipeline()("That No. 14 had been directed by an order of Charles Lindqvist to wait at Tillotson.")
    (subject,) = [t for t in doc if t.dep_ == "nsubjpass"]
    assert subject.text == "No." and "14" in [c.text for c in subject.children]


def _boundaries(text: str, sentences: list[str]) -> set[int]:
    out, at = set(), 0
    for sentence in sentences:
        at = text.index(sentence, at) + len(sentence)
        out.add(at)
    return out


def test_the_splitter_holds_its_figures_on_the_sealed_passages():
    """tests/data/sealed/sentences_abbrev.jsonl (written by a helper, not read), measured once on 2026-11-25:
    boundary precision 0.930, recall 0.956 (before the abbreviation rule: 0.730 and 1.000). Floors."""
    from historian_blueprint.text.spans import sentence_spans

    sealed = (REPO / "tests/data/sealed/sentences_abbrev.jsonl").read_text()
    rows = [json.loads(line) for line in sealed.splitlines() if line]
    hit = got_n = want_n = 0
    for row in rows:
        got = _boundaries(row["text"], [row["text"][s:e] for s, e in sentence_spans(row["text"])])
        want = _boundaries(row["text"], row["sentences"])
        hit, got_n, want_n = hit + len(got & want), got_n + len(got), want_n + len(want)
    assert len(rows) == 60 and hit / got_n >= 0.93 and hit / want_n >= 0.95
