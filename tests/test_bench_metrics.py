"""The retrieval benchmark's scoring: recall@k, reciprocal rank, TimeQA paragraph spans; the bench commands."""

from __future__ import annotations

import json

import pytest

from historian_lab.bench.common import percentile
from historian_lab.bench.retrieval import paragraph_spans, score_ranking
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


@pytest.mark.parametrize("command, module, function", [
    (["retrieval"], "retrieval", "run"), (["graph"], "graph", "run"), (["llm"], "graph", "run_llm"),
    (["index", "--limit-docs", "2"], "indexing", "run"), (["map"], "maps", "run"),
])
def test_each_bench_command_runs_its_benchmark_and_prints_its_figures(runner, tmp_path, monkeypatch, command,
                                                                      module, function):
    """The command line reaches the benchmark it names (the benchmark itself is replaced: it takes minutes)."""
    import importlib

    seen = []
    monkeypatch.setattr(importlib.import_module(f"historian_lab.bench.{module}"), function,
                        lambda *args, **kwargs: seen.append((args, kwargs)) or {"figure": 42})
    data = tmp_path / "data"
    (data / "eval").mkdir(parents=True)
    extra = [] if command[0] == "index" else ["--data", str(data)]
    result = runner.invoke(args=["historian", "bench", *command, "--workdir", str(tmp_path / "w"), *extra, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"figure": 42} and len(seen) == 1


def test_a_bench_command_without_labeled_data_says_where_to_point_it(runner, tmp_path):
    result = runner.invoke(args=["historian", "bench", "graph", "--data", str(tmp_path),
                                 "--workdir", str(tmp_path / "w")])
    assert result.exit_code != 0 and "pass --data DIR" in result.output


def test_the_page_questions_count_reader_takes_a_day_for_a_date_and_a_false_premise_is_never_right_verified():
    from historian_lab.bench.page_questions import names_count, score_item

    assert names_count("What three amendments did Lincoln propose?", 3)
    assert not names_count("What did the front page of 3 January 1916 report about the Persia?", 3)
    assert not names_count("What happened on January 3, 1916, at sea?", 3)
    assert names_count("Name the 3 ships sunk on 3 January 1916.", 3)  # the count still stands beside a date
    assert names_count("Name 3 of January's front pages.", 3)  # "3 of January's ..." counts, it dates nothing
    item = {"id": "p", "kind": "premise", "question": "Why did Lincoln oppose freeing the slaves?", "gold": []}
    named = {"status": "flagged", "metadata": {"refusal": False},
             "verification": {"premise": {"finding": "the passages do not say he opposed it"}}}
    assert score_item(item, named, {})["right"]
    assert not score_item(item, {**named, "status": "verified"}, {})["right"]  # never right when verified
    quiet = {"status": "flagged", "metadata": {"refusal": False}, "verification": {}}
    assert not score_item(item, quiet, {})["right"]  # an answer that does not name the premise is not right
    assert score_item(item, {"status": "human_review", "metadata": {"refusal": True}, "verification": {}}, {})["right"]
