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
    st.sampled_from(["The ", "railroad ", "Mr. ", "U.S. ", "1873. ", "sjc )(( iff ", "\n", "\n\n", "  ", "!", "? ", "…", "“Yes,” ", "ﬁ", "é", "日本語。", "\t"]),
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
