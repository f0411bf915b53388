"""The one decision (verify/decision.py): its order, its fail-safe default, and that nothing else writes a verdict."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from historian_blueprint.verify.decision import NOT_CONFIRMED, Said, settle
from historian_blueprint.verify.findings import Finding

REPO = Path(__file__).resolve().parents[1]
VERDICTS = {"supported", "unconfirmed", "contradicted", "misquote", "misattributed", "opinion"}


def said(verdict: str | None, by: str = "") -> Said:
    return Said(Finding(verdict=verdict, reason=f"{verdict} found"), by)


def test_a_conflict_decides_over_support_and_support_over_the_rest():
    assert settle(conflict=said("contradicted", "numbers"), carried=said("supported", "support")).by == "numbers"
    assert settle(carried=said("supported", "support"), otherwise=said("unconfirmed", "opinion")).by == "support"
    assert settle(otherwise=said("contradicted", "reader")).finding.verdict == "contradicted"
    assert settle(conflict=said(None, "numbers"), otherwise=said("unconfirmed", "opinion")).by == "opinion"


def test_with_nothing_found_a_claim_is_unconfirmed_never_supported():
    decided = settle()
    assert decided.finding == NOT_CONFIRMED and decided.finding.verdict == "unconfirmed"


@pytest.mark.parametrize("verdict", ["supported", None])
def test_a_claim_not_read_through_is_never_supported_whatever_it_is_given(verdict):
    decided = settle(unread=said(verdict, "time limit"), carried=said("supported", "support"))
    assert decided.finding.verdict == "unconfirmed" and decided.by == "time limit"


def test_a_misquote_stands_over_a_conflict_and_support():
    decided = settle(misquote=said("misquote", "quote"), conflict=said("contradicted"), carried=said("supported"))
    assert decided.finding.verdict == "misquote"
    assert settle(unread=said("unconfirmed", "verifier"), misquote=said("misquote")).by == "verifier"


def _verdict_literals(path: Path) -> list[str]:
    """Where a file puts a verdict written as a literal into a claim: ``x.verdict = "..."`` (or in a tuple
    assignment), ``{"verdict": "..."}``, or a ``ClaimResult`` that starts as anything but unconfirmed (undecided)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                pairs = (zip(target.elts, node.value.elts) if isinstance(target, ast.Tuple)
                         and isinstance(node.value, ast.Tuple) else [(target, node.value)])
                for t, v in pairs:
                    if isinstance(t, ast.Attribute) and t.attr == "verdict" and isinstance(v, ast.Constant) \
                            and v.value in VERDICTS:
                        found.append(f"{path.relative_to(REPO)}:{node.lineno}")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "ClaimResult":
            given = [*node.args[1:2], *(k.value for k in node.keywords if k.arg == "verdict")]
            if any(isinstance(v, ast.Constant) and v.value in VERDICTS - {"unconfirmed"} for v in given):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")  # a claim starts undecided: unconfirmed
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and k.value == "verdict" and isinstance(v, ast.Constant) \
                        and v.value in VERDICTS:
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    return found


def test_no_module_writes_a_verdict_of_its_own():
    """A claim's verdict comes from the decision's inputs: no module sets one as a literal (the grounding service,
    the fail-safe, the time limit, the judge's quotes, misquotes, yes/no answers and the harness all settle). The
    benchmarks' made-up stored runs are data, not verdicts."""
    paths = [*(REPO / "historian_blueprint").rglob("*.py"), *(REPO / "historian_lab" / "evaluation").rglob("*.py"),
             *(REPO / "historian_lab" / "fitting").rglob("*.py")]
    assert [where for path in paths for where in _verdict_literals(path)] == []
