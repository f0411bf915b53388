"""Documents' sentences read at index time (text/readings.py): equal to a fresh reading, used only when valid."""

from __future__ import annotations

import json

import pytest

from historian_blueprint.index import service
from historian_blueprint.text import readings
from historian_blueprint.verify import evidence
from tests.conftest import REPO, make_plain_app, small_docs
from tests.test_index import run_reindex


def corpus_texts(per_file: int = 12) -> list[str]:
    texts = []
    for path in sorted((REPO / "historian_blueprint" / "demo" / "corpus").glob("*.jsonl")):
        with open(path, encoding="utf-8") as fh:
            texts += [json.loads(line)["content"] for line in list(fh)[:per_file]]
    return texts


def clear_caches():
    for cached in (evidence._stored, evidence.sentences_of, evidence.sentence_count, evidence.document_words,
                   evidence.word_sentences):
        cached.cache_clear()


@pytest.fixture
def serving(tmp_path):
    texts = corpus_texts()
    readings.save(tmp_path, texts)
    table = readings.load(tmp_path)
    readings.serve(table)
    clear_caches()
    yield texts, table
    readings.serve(None)
    clear_caches()


def fresh(text):
    """What the verifier reads with no table (the code before the table, spelled out)."""
    from historian_blueprint.text.spans import claim_sentence_spans
    from historian_blueprint.text.words import content_words, name_words

    cuts = claim_sentence_spans(text)
    return (tuple((s, e, frozenset(content_words(text[s:e]))) for s, e in cuts),
            tuple(name_words(text[s:e]) for s, e in cuts), frozenset(content_words(text)), len(cuts))


def test_stored_readings_equal_fresh_ones_word_for_word(serving):
    texts, table = serving
    long = [t for t in texts if len(t) >= readings.MIN_CHARS]
    assert len(table) == len(set(long)) > 20
    for text in texts:
        stored = table.get(text)
        assert (stored is not None) == (len(text) >= readings.MIN_CHARS)
        got = (evidence.sentences_of(text), evidence.word_sentences(text), evidence.document_words(text),
               evidence.sentence_count(text))
        assert got == fresh(text)


def test_a_stored_document_is_not_read_again(serving, monkeypatch):
    texts, _ = serving
    clear_caches()

    def no_reading(text):
        raise AssertionError("read afresh")

    monkeypatch.setattr(readings, "claim_sentence_spans", no_reading)
    monkeypatch.setattr(evidence, "content_words", no_reading)
    long = [t for t in texts if len(t) >= readings.MIN_CHARS]
    assert all(evidence.sentences_of(t) and evidence.document_words(t) for t in long)
    with pytest.raises(AssertionError, match="afresh"):
        evidence.sentences_of(long[0] + " One more sentence.")


def test_a_changed_document_is_read_afresh(serving):
    texts, table = serving
    text = next(t for t in texts if len(t) >= readings.MIN_CHARS)
    changed = text.replace(".", ". Not so.", 1)
    assert table.get(text) is not None and table.get(changed) is None
    assert evidence.sentences_of(changed) == fresh(changed)[0]


def test_a_table_written_by_other_code_is_ignored(tmp_path, monkeypatch):
    readings.save(tmp_path, corpus_texts(2))
    assert readings.load(tmp_path) is not None
    monkeypatch.setattr(readings, "fingerprint", lambda: "another version of the word code")
    assert readings.load(tmp_path) is None
    assert readings.load(tmp_path / "missing") is None


def test_a_dense_generation_carries_its_documents_readings_and_serves_them(tmp_path):
    docs = small_docs(per_file=2, chars=4000)
    app = make_plain_app(tmp_path, docs)
    try:
        assert run_reindex(app)["state"] == "succeeded"
        with app.app_context():
            loaded = service.get_index()
            assert (loaded.directory / readings.FILE).is_file()
            assert len(loaded.readings) == len(docs)
            text = docs[0]["content"]
            assert readings.stored(text) == readings.read(text)
    finally:
        readings.serve(None)


def test_an_incremental_build_takes_over_the_readings_of_unchanged_documents(tmp_path, monkeypatch):
    texts = [t for t in corpus_texts(4) if len(t) >= readings.MIN_CHARS]
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    readings.save(tmp_path / "old", texts)
    previous = readings.load(tmp_path / "old")
    changed = texts[0] + " A sentence added since."
    fresh_reads = []
    real = readings.read
    monkeypatch.setattr(readings, "read", lambda text: fresh_reads.append(text) or real(text))
    readings.save(tmp_path / "new", [changed, *texts[1:]], previous)
    assert fresh_reads == [changed]  # only the changed document is read again
    table = readings.load(tmp_path / "new")
    assert all(table.get(t) == real(t) for t in [changed, *texts[1:]])


def test_incremental_builds_in_a_row_keep_every_reading_exact_even_when_word_hashes_collide(tmp_path, monkeypatch):
    texts = [t for t in corpus_texts(4) if len(t) >= readings.MIN_CHARS]
    for n in range(4):
        (tmp_path / str(n)).mkdir()
    readings.save(tmp_path / "0", texts)
    step1 = [texts[0] + " Zanzibar and Kilimanjaro were named.", *texts[1:-1]]  # a new word, a text gone
    readings.save(tmp_path / "1", step1, readings.load(tmp_path / "0"))
    step2 = [*step1[:2], step1[2] + " Timbuktu too.", *step1[3:], texts[-1]]
    readings.save(tmp_path / "2", step2, readings.load(tmp_path / "1"))
    table = readings.load(tmp_path / "2")
    assert all(table.get(t) == readings.read(t) for t in step2)
    monkeypatch.setattr(readings, "_word_hash", lambda word: 7)  # every word one hash: looked up, never trusted
    readings.save(tmp_path / "3", [step2[0] + " Ouagadougou.", *step2[1:]], readings.load(tmp_path / "2"))
    table = readings.load(tmp_path / "3")
    assert all(table.get(t) == readings.read(t) for t in [step2[0] + " Ouagadougou.", *step2[1:]])
