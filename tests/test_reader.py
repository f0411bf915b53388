"""The reader (``verify/reader.py``): the shipped model reads, the verifier asks it only above fitted cuts, a name
or figure the passage lacks is never "said in other words", the answer's findings are ranked by it, the map's
and a reader that cannot be loaded is named while the rules decide."""

from __future__ import annotations

import json

import pytest

from historian_blueprint.schema import Cited, SourceText
from historian_blueprint.verify import reader as R
from historian_blueprint.verify.grounding import verify_claim
from tests.conftest import REPO

PASSAGE = ("The committee met in Albany on the fourth of March. After a long debate the members voted to close the "
           "old canal, because the cost of repairing its locks had grown beyond what the state could pay.")


@pytest.fixture
def cuts(monkeypatch):
    """Cuts for the mechanism (the shipped ones are fitted on the labeled files' fit halves)."""
    def set_(entails: float = 0.5, contradicts: float = 0.9) -> None:
        monkeypatch.setitem(R._loaded, "thresholds", R.Thresholds(entails, contradicts, {}))
    return set_


@pytest.fixture(autouse=True)
def reader_on(monkeypatch):
    monkeypatch.setitem(R._on, "reader", True)


def doc(text: str = PASSAGE) -> SourceText:
    return SourceText("canal-report", text, "Report of the canal committee")


def test_the_shipped_reader_reads_entailment_contradiction_and_answers():
    reader = R.default_reader()
    (e1, c1, _), (e2, c2, _) = reader.nli([(PASSAGE, "The members decided to shut the old canal."),
                                          (PASSAGE, "The members refused to close the old canal.")])
    assert e1 > 0.5 > c1 and c2 > 0.5 > e2
    asked = "Why was the old canal closed?"
    p = reader.answers(asked, ["The committee met in Albany to discuss the old canal on the fourth of March.",
                               "It was closed because the cost of repairing its locks had grown beyond what the "
                               "state could pay."])
    assert p[1] > p[0]
    assert reader.digest == json.loads((R.READER_DIR / "meta.json").read_text())["model_sha256"]


def test_a_claim_in_other_words_is_supported_by_the_reader_above_its_cut(cuts):
    cuts(entails=0.5)
    claim = "The members decided to shut the old canal."
    result = verify_claim(claim, [doc()], [Cited("canal-report", 0, len(PASSAGE))])
    assert result.verdict == "supported" and result.decided_by == "reader"
    assert "in other words" in result.reason and result.evidence is not None
    assert PASSAGE[result.evidence.start:result.evidence.end] == result.evidence.text  # an exact span
    cuts(entails=1.000001)  # no cut cleared (the reader is not sure enough): the rules' "not confirmed" stands
    assert verify_claim(claim, [doc()], [Cited("canal-report", 0, len(PASSAGE))]).verdict == "unconfirmed"


def test_a_name_or_figure_the_passage_lacks_is_never_said_in_other_words(cuts):
    cuts(entails=0.0)  # whatever the model says
    for claim in ("The members in Buffalo decided to shut the old canal.",
                  "The 40 members decided to shut the old canal.",
                  "In his 1850 report, Harrison said that the members decided to shut the old canal.",
                  "The members twice decided to shut the old canal."):
        result = verify_claim(claim, [doc()], [Cited("canal-report", 0, len(PASSAGE))])
        assert result.verdict != "supported" and result.decided_by != "reader", claim
    assert R.names_held("Free speech came first.", "He named free speech first.", "the free man; free speech")
    # a first word is a name unless written in lower case
    assert not R.names_held("Roosevelt named it.", "He named it.")
    assert not R.names_held("Grant ordered the attack.", "Sherman ordered it.", "to grant a pardon. General Grant said")
    assert not R.names_held("Andrew Jackson won.", "Andrew Johnson won at Jackson, Mississippi.")
    assert not R.figures_held("He came in the 1850s.", "He came in the 1860s.")
    assert not R.figures_held("It came first.", "It came second.") and R.figures_held("three men", "3 men")
    assert R.held_details("In his 1893 message, Cleveland reported that ", "the silver law was repealed.",
                          "The law of silver was repealed.", "Annual Message to Congress (1893) Grover Cleveland")


def test_the_reader_never_reads_past_a_finding_of_the_rules(cuts):
    """A speaker, a quotation, a reversed opinion: the rules' verdict stands whatever the reader says."""
    cuts(entails=0.0, contradicts=0.0)
    tariff = SourceText("tariff", "The new tariff has been beneficial to the farmers of the West.", "Message of 1890")
    assert verify_claim("The tariff was harmful to farmers.", [tariff], [Cited("tariff", 0, 62)]).decided_by != "reader"
    for claim in ('The committee said "the members decided to shut the old canal."',
                  "Harrison said that the members decided to shut the old canal."):
        assert verify_claim(claim, [doc()], [Cited("canal-report", 0, len(PASSAGE))]).decided_by != "reader", claim


def test_a_bare_no_is_not_made_right_by_the_reader(cuts):
    from historian_blueprint.verify.answers import verify_answer

    cuts(entails=1.000001, contradicts=0.5)
    result = verify_answer("Did the committee never meet?", "No.", [doc()], [Cited("canal-report", 0, len(PASSAGE))])
    assert result.verdict == "unconfirmed" and "only Historian's reader model" in result.reason


def test_the_reader_contradicts_above_its_own_cut_and_shows_the_span(cuts):
    cuts(entails=1.000001, contradicts=0.5)
    result = verify_claim("The members refused to close the old canal.", [doc()],
                          [Cited("canal-report", 0, len(PASSAGE))])
    assert result.verdict == "contradicted" and result.decided_by == "reader"
    assert result.evidence is not None and "says otherwise" in result.reason
    cuts(entails=1.000001, contradicts=0.5)  # a claim about someone the passage does not name is not contradicted by it
    other = verify_claim("Harrison refused to close the old canal.", [doc()], [Cited("canal-report", 0, len(PASSAGE))])
    assert other.decided_by != "reader"


def test_without_fitted_cuts_for_this_model_the_reader_decides_nothing(monkeypatch, tmp_path):
    monkeypatch.setitem(R._loaded, "thresholds", None)
    claim = "The members decided to shut the old canal."
    assert verify_claim(claim, [doc()], [Cited("canal-report", 0, len(PASSAGE))]).decided_by != "reader"
    meta = json.loads((R.READER_DIR / "meta.json").read_text())
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    cuts = tmp_path / "thresholds.json"
    good = {"entails": 0.9, "contradicts": 0.95, "model_sha256": meta["model_sha256"],
            "combiner_sha256": R.combiner_digest()}
    cuts.write_text(json.dumps(good))
    assert R._read_thresholds(cuts) is not None
    for bad in ({"model_sha256": "another"}, {"model_sha256": None}, {"combiner_sha256": "another"},
                {"entails": float("nan")}, {"contradicts": -0.1}, {"entails": 1.5}):
        cuts.write_text(json.dumps(good | bad))
        assert R._read_thresholds(cuts) is None, bad
    for text in ("{not json", "[1, 2]", ""):
        cuts.write_text(text)
        assert R._read_thresholds(cuts) is None


def test_a_model_file_that_is_not_the_one_described_is_not_loaded(tmp_path):
    for name in ("model.onnx", "tokenizer.json", "meta.json"):
        (tmp_path / name).write_bytes((R.READER_DIR / name).read_bytes())
    (tmp_path / "model.onnx").write_bytes((tmp_path / "model.onnx").read_bytes()[:-1] + b"\0")
    with pytest.raises(R.ReaderUnavailable, match="SHA-256"):
        R.Reader(tmp_path)


def test_a_reader_that_cannot_be_loaded_is_named_and_the_rules_decide(monkeypatch, tmp_path):
    monkeypatch.setitem(R._loaded, "reader", R.ReaderUnavailable("no reader model at /nowhere"))
    monkeypatch.setitem(R._loaded, "thresholds", R.Thresholds(0.0, 0.0, {}))
    sentence = PASSAGE.split(". ")[1]
    result = verify_claim(sentence, [doc()], [Cited("canal-report", 0, len(PASSAGE))])
    assert result.verdict == "supported" and result.decided_by == "support"  # the rules carry a verbatim claim
    unread = verify_claim("The members decided to shut the old canal.", [doc()],
                          [Cited("canal-report", 0, len(PASSAGE))])
    assert unread.verdict == "unconfirmed" and unread.decided_by != "reader"
    assert any(c.name == "reader" and not c.ok and "unavailable" in c.detail for c in unread.checks)


def test_the_answering_sentence_is_ranked_first_by_the_reader(monkeypatch):
    """William Black's narrative, asked what his master gave the slaves when they were freed (tests/data/
    questions.jsonl, q-15): by words alone a sentence that repeats the question's words comes first; the reader
    puts the one that answers ("some clothes and five dollars") first."""
    from historian_lab.evaluation.harness import sample_corpus
    from historian_blueprint.questions.reading import read_question
    from historian_blueprint.ask.roles import extractive as X

    lines = (REPO / "tests" / "data" / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    item = next(json.loads(line) for line in lines if '"q-15"' in line)
    document = sample_corpus()[item["gold"][0]["source_id"]]
    hit = {"source_id": document.source_id, "title": document.title, "author": None, "year": None, "start": 0,
           "end": len(document.text), "text": document.text, "locator": "", "score": 1.0}
    def first() -> str:
        return " ".join(X.extract(read_question(item["question"]), [hit])[0].text.split())

    assert "five dollars" in first()
    monkeypatch.setitem(R._on, "reader", False)
    assert "five dollars" not in first()
    monkeypatch.setitem(R._on, "reader", True)

    def broken(*_args, **_kwargs):
        raise RuntimeError("onnxruntime failed at run time")
    monkeypatch.setattr(R.default_reader(), "answers", broken)  # a reader that fails: the ranking by words stands
    assert "five dollars" not in first()


def test_the_cuts_are_the_lowest_that_keep_every_file_within_its_caps():
    """``historian_lab.fitting.fit.fit_cuts`` on rows of two files: p(entails) may not add a false claim past a file's
    cap (the rules' own false "supported" count against it), p(contradicts) may not contradict a true claim."""
    from types import SimpleNamespace as Row

    def row(supported: bool, entails: float, contradicts: float = 0.0, verdict: str = "unconfirmed") -> Row:
        return Row(supported=supported, verdict=verdict, hard_failed=False, features={
            "reader_entails": entails, "reader_contradicts": contradicts, "reader_details_held": 1.0,
            "reader_names_held": 1.0, "reader_window_clear": 1.0})

    wice = [row(True, 0.97), row(True, 0.95), row(False, 0.96)] + [row(False, 0.1) for _ in range(39)]
    begin = ([row(True, 0.99), row(True, 0.3, 0.97)] + [row(False, 0.2, 0.99) for _ in range(40)]
             + [row(False, 0.1) for _ in range(20)])
    from historian_lab.fitting.fit import fit_cuts, wilson_low

    cuts = fit_cuts([("wice_dev", r) for r in wice] + [("begin_dev", r) for r in begin])
    # WiCE's cap 0.02 of 40 false claims lets none through: the cut sits above the false claim's 0.96
    assert cuts["entails"] == 0.97 and cuts["fit_half"]["wice_dev"]["false_supported"] == 0.0
    # contradicting at 0.97 would hit a true BEGIN claim: the cut is 0.99 (40 of 40 right: the bound clears 0.9)
    assert cuts["contradicts"] == 0.99 and cuts["fit_half"]["begin_dev"]["contradicted_true"] == 0
    # BEGIN alone: the false claim read as contradicted is not among those the reader would support, so the cut
    # falls to the true claim's 0.3
    assert fit_cuts([("begin_dev", r) for r in begin])["entails"] == 0.3
    assert round(wilson_low(8, 8), 2) == 0.75 and wilson_low(0, 0) == 0.0 and wilson_low(40, 40) > 0.9
