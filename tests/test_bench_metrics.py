"""The retrieval benchmark's scoring: recall@k, reciprocal rank, TimeQA paragraph spans."""

from __future__ import annotations

from historian_blueprint.bench.common import percentile
from historian_blueprint.bench.retrieval import paragraph_spans, score_ranking
from historian_blueprint.index.service import Hit


def hit(source_id: str, text: str = "", start: int = 0, end: int = 10) -> Hit:
    return Hit(0, source_id, "t", None, None, None, start, end, "para 1", text, 1.0, 1.0, 1.0)


def test_recall_and_reciprocal_rank():
    hits = [hit("a"), hit("b"), hit("c", "the gold quote here")] + [hit("z")] * 9
    recall, rr = score_ranking(lambda h: "gold quote" in h.text, hits)
    assert recall == {1: 0.0, 6: 1.0, 12: 1.0}
    assert rr == 1 / 3
    recall, rr = score_ranking(lambda h: False, hits)
    assert recall == {1: 0.0, 6: 0.0, 12: 0.0} and rr == 0.0


def test_paragraph_spans_index_like_timeqa():
    text = "Title\n\nFirst para.\n\nSecond para."
    spans = paragraph_spans(text)
    assert [text[s:e] for s, e in spans] == ["Title", "First para.", "Second para."]


def test_percentile():
    values = list(range(1, 101))
    assert percentile(values, 50) in (50, 51)
    assert percentile(values, 95) in (95, 96)
