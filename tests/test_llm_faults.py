"""The LLM engine under fault over HTTP: whatever the endpoint or the model does wrong, the run is stored, never
``verified``, and names the failure where a reader of the run sees it."""

from __future__ import annotations

import httpx
import openai
import pytest

from historian_blueprint import get_store
from historian_lab.bench import faults
from historian_blueprint.ask.run import ask
from historian_blueprint.llm.client import retry_after


@pytest.fixture(scope="module")
def server():
    with faults.fault_server() as s:
        yield s


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("bench")


@pytest.fixture(scope="module")
def app(root, server):
    return faults.fault_app(root, server.url)  # the bench command's own workspace: three documents, indexed


def stored(app, run_id):
    with app.app_context():
        return get_store().runs.find_one({"_id": run_id})


def judge_step(run):
    return next(e["detail"] for e in run["trace"] if e["node"] == "judge")


def test_without_a_fault_the_same_question_is_verified(app, server):
    row = faults.run_fault(app, server, None)
    assert row["status"] == "verified" and row["stored"]  # so what lowers the status below is the fault


@pytest.mark.parametrize("fault", [f for f in faults.matrix() if f.play], ids=lambda f: f"{f.role}-{f.name}")
def test_a_failing_role_is_never_verified_and_the_run_names_the_failure(app, server, fault):
    row = faults.run_fault(app, server, fault)
    assert row["requests_faulted"] == 2  # asked again (one retry, or the re-prompt for a broken reply), then given up
    run = stored(app, row["run_id"])
    assert run is not None and run["kind"] == "ask"
    out = run["output"]
    assert out["status"] != "verified" and not out["verification"]["judge"]["safe_to_publish"]
    failures = out["verification"]["model_failures"]  # the answer page's "Model roles that failed" line
    assert [f for f in failures if f.startswith(f"{fault.role}: ") and faults.TRANSPORT[fault.name] in f], failures
    assert "penalties): not verified" in judge_step(run) and "because a model role failed" in judge_step(run)
    assert f"{fault.role}: " in judge_step(run)
    assert row["failure_recorded"] and row["seconds"] < 10
    spent = out["metadata"]["tokens"]["per_role"][fault.role]  # what the failed role cost is on the record
    assert spent["failed"] >= 1 and spent["calls"] >= 1 and spent["ms"] > 0
    if fault.name in ("timeout", "rate_limit", "server_error", "cut_stream"):
        assert spent["retries"] >= 1


def test_a_judge_that_lies_upward_about_a_hallucinated_answer_is_overruled(app, server):
    lie = next(f for f in faults.matrix() if f.name == "lying_judge")
    row = faults.run_fault(app, server, lie)
    run = stored(app, row["run_id"])
    out = run["output"]
    assert out["status"] != "verified" and out["confidence"] < 0.6
    assert out["claims"] and all(c["verdict"] != "supported" for c in out["claims"])
    summary = out["verification"]["judge"]["summary"]  # the standing said once, the model's word beside it
    assert "the model judge said verified (0.99)" in summary and "penalties): verified" not in summary
    assert "the model judge said verified (0.99)" in judge_step(run)
    assert row["failure_recorded"] and row["seconds"] < 10


def test_a_429_is_retried_after_the_servers_retry_after(app, server):
    server.play({"judge": "rate_limit"}, limit=1)  # one 429 (Retry-After: 1), then the judge answers
    try:
        with app.app_context():
            run_id = ask(faults.QUESTION)["metadata"]["run_id"]
    finally:
        faulted = server.faulted.get("judge", 0)
        server.play()
    judge = stored(app, run_id)["output"]["metadata"]["tokens"]["per_role"]["judge"]
    assert faulted == 1 and judge["retries"] == 1
    assert judge["ms"] >= 1000 * faults.RETRY_AFTER_S > 1000 * faults.BACKOFF_S  # it waited what the server asked
    assert stored(app, run_id)["output"]["status"] == "verified"


@pytest.mark.parametrize(
    "headers,seconds",
    [({"Retry-After": "2"}, 2.0), ({"retry-after-ms": "250", "Retry-After": "1"}, 0.25),
     ({"Retry-After": "Thu, 01 Jan 1970 00:00:00 GMT"}, 0.0), ({"Retry-After": "soon"}, None), ({}, None)],
)
def test_retry_after_is_read_from_the_429(headers, seconds):
    response = httpx.Response(429, headers=headers,
                              request=httpx.Request("POST", "http://127.0.0.1/v1/chat/completions"))
    assert retry_after(openai.RateLimitError("rate limited", response=response, body=None)) == seconds


def test_the_fault_matrix_command_reports_zero_verified(app, root):
    result = faults.run_fault_matrix(root, roles=("judge",))  # on the workspace built above: no reindex
    assert result["control"]["status"] == "verified"
    assert [r["fault"] for r in result["faults"]] == [*faults.TRANSPORT, "lying_judge"]
    assert (result["verified"], result["unrecorded"], result["unstored"]) == (0, 0, 0)
    assert all(r["recorded_as"] for r in result["faults"])
