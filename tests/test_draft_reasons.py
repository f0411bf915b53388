"""The draft checker on a ten-sentence draft of our own about Lincoln's annual message of 1864: faithful
paraphrases (rounded figures, the message's year), a wrong figure, a wrong speaker and a wrong year. Each
verdict must be right for the right reason, and the evidence shown must be the sentence that decided."""

from __future__ import annotations

import json

import pytest

from historian_blueprint.verify.service import check_draft
from tests.conftest import REPO, make_plain_app
from tests.test_index import run_reindex

DOCS = ("sotu-1864-abraham-lincoln", "sotu-1866-andrew-johnson", "sotu-1893-grover-cleveland")

# The draft, one sentence per line: kind (faithful / rounded / wrong_figure / wrong_speaker / wrong_year), the
# source sentence it rests on ("quote") and, for a changed sentence, the changed detail as written ("wrong").
# `historian bench drafts` reads the same file.
DRAFT = [json.loads(line)
         for line in (REPO / "tests/data/draft_sentences.jsonl").read_text(encoding="utf-8").splitlines()]
NOT_SUPPORTED = {"contradicted", "unsupported", "unconfirmed", "not_supported", "misquote", "fabricated"}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with open(REPO / "historian_blueprint/demo/corpus/sotu_1860_1945.jsonl", encoding="utf-8") as fh:
        docs = [d for d in map(json.loads, fh) if d["_id"] in DOCS]
    app = make_plain_app(tmp_path_factory.mktemp("draft"), docs)
    run_reindex(app)
    return app


@pytest.fixture(scope="module")
def claims(app):
    with app.app_context():
        result = check_draft(" ".join(item["sentence"] for item in DRAFT))
    assert len(result.claims) == len(DRAFT), [c.text for c in result.claims]
    return result.claims


@pytest.mark.parametrize("n", range(len(DRAFT)))
def test_each_sentence_is_judged_for_the_right_reason(claims, n):
    item, claim = DRAFT[n], claims[n]
    sentence = item["sentence"]
    if item["kind"] in ("faithful", "rounded"):
        assert claim.verdict == "supported", (sentence, claim.verdict, claim.reason)
    else:
        assert claim.verdict in NOT_SUPPORTED, (sentence, claim.verdict, claim.reason)
        if item["kind"] == "wrong_figure":  # the source states another figure where the claim states its own
            assert claim.verdict == "contradicted", (sentence, claim.verdict, claim.reason)
        assert item["wrong"] in claim.reason, (sentence, claim.reason)  # the changed detail is the reason given
    # the evidence column shows the sentence that decided, and no year is read as a quantity ("1,864")
    assert claim.evidence is not None and item["quote"] in claim.evidence.text, (sentence, claim.evidence)
    assert not any(f"{y // 1000},{y % 1000:03d}" in claim.reason for y in range(1500, 2100)), claim.reason


def test_a_frame_naming_another_document_is_not_excused(app):
    """The frame's own words are read in the document's title: "In his inaugural address" is not the annual
    message the figure stands in, so the claim is not supported, and its checks name the words it lacks."""
    with app.app_context():
        right, wrong = check_draft(
            "In his 1864 annual message, Lincoln reported that the Navy had captured 324 vessels during the year. "
            "In his inaugural address, Lincoln reported that the Navy had captured 324 vessels during the year.").claims
    assert right.verdict == "supported", right.reason
    assert wrong.verdict != "supported", wrong.reason
    assert any("inaugural" in check.detail for check in wrong.checks), wrong.checks
