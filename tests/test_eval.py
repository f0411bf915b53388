"""The evaluation harness on the labeled development sets (../shared/data/eval)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import SHARED, make_plain_app

EVAL = SHARED / "data" / "eval"
pytestmark = pytest.mark.skipif(not EVAL.is_dir(), reason="../shared/data/eval is not beside the checkout")


def test_historian_claims_meet_the_detection_targets(tmp_path):
    from historian_blueprint.evaluation.harness import run

    result = run(EVAL / "historian_claims_dev.jsonl")
    assert result["n"] == 400
    assert result["detection_rate"] >= 0.95
    assert result["false_positive_rate"] <= 0.05
    assert result["citation_integrity"] == 1.0 and result["schema_validity"] == 1.0
    assert result["balanced_accuracy"] > result["baseline_lexical"]["balanced_accuracy"]
    for kind in ("misquote", "negated", "number_changed", "misattributed"):
        assert result["per_kind"][kind]["flagged"] >= 0.9, kind


def test_eval_command_writes_a_report_with_a_reliability_diagram(tmp_path):
    app = make_plain_app(tmp_path)
    out = app.test_cli_runner().invoke(
        args=["historian", "eval", str(EVAL / "halueval_qa_dev.jsonl"), "--limit", "40", "--json", "--report", str(tmp_path / "r")]
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["n"] == 40
    for key in ("dataset", "detection_rate", "false_positive_rate", "balanced_accuracy", "citation_integrity", "ece",
                "schema_validity", "latency_ms", "per_kind", "baseline_lexical"):
        assert key in data
    assert (tmp_path / "r" / "halueval_qa_dev_reliability.png").stat().st_size > 1000
    assert json.loads((tmp_path / "r" / "halueval_qa_dev.json").read_text())["n"] == 40
