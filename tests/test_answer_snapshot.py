"""Speed work keeps answers the same: every question of ``historian_qa_dev`` and of our false-premise set, asked
over the documents that hold historian_qa_dev's answers (21 sample documents, indexed with vectors), gives the
same whole output as the snapshot written before the speed work of 2026-11-25 (tests/data/answers_snapshot.json):
status, answer, findings, citations and their spans, claims with their verdicts and evidence, confidence and the
reports. Rewrite it only on purpose: ``python -m tests.test_answer_snapshot --write``. Rewritten once, on
2026-11-28, when the judge's summary came to say a status in the one vocabulary's words ("check before use", not
"flagged"): the 18 changed outputs, with those words mapped back to the status codes, gave the old digests, all 60.
Rewritten again the same day for the document a question asks about (questions.scope): of the 60, 20 unchanged; 21
refusals whose only change is the years searched ("Searched 21 documents (1865–1942) for"); 9 answers citing the
same passages of the same document, whose searches (kept to that document) scored other passages; and 10 changed
on purpose: 8 questions about a year's message the 21 documents lack, or a false premise the scoped search no
longer quotes past (Cleveland's 1887 message, once verified from his 1888-1896 words, Grant's 1872, Johnson's 1867,
FDR's 1933, Coolidge's 1928, Wilson's 1915, the second Bill of Rights "in 1942", the conference "at Paris"), now
refused naming what is missing; Cleveland's 1893 answer quoting only 1893; Grant's 1873 panic answer with two
findings of the same message in another order. And once more when a single answer's first findings came to be
ranked by meaning too where words cannot tell them apart (extractive.by_meaning): 57 unchanged; Wilson's 1917
recommendation of war on Austria-Hungary now second, after another sentence of the same message; 2 refusals naming
other closest passages. And once more after a review narrowed the document a question asks about to a year that
dates the person's own words (a verb of saying, a possessive with a document word, the question's subject): 52
unchanged; 6 refusals of an absent document worded with the years held ("it holds theirs of 1888, 1893–1894, 1896");
Cleveland's 1894 appointment searched in the whole collection again (the same findings); the conference "at Paris"
back to flagged, as before this session ("agree in 1893" dates no words)."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from historian_lab.bench.common import SAMPLE_CORPUS, read_jsonl
from tests.conftest import EVAL

SNAPSHOT = Path(__file__).parent / "data" / "answers_snapshot.json"
OWN = Path(__file__).parent / "data" / "false_premises.jsonl"
VOLATILE = ("run_id", "latency_ms", "created_at", "started_at", "finished_at", "trace_id", "thread_id")


def _questions() -> list[str]:
    dev = [q["question"] for q in read_jsonl(EVAL / "historian_qa_dev.jsonl")]
    return dev + [q["question"] for q in read_jsonl(OWN)]


def _stable(value: Any, volatile: tuple[str, ...] = VOLATILE) -> Any:
    """The output without what differs from run to run (ids, times)."""
    if isinstance(value, dict):
        return {k: _stable(v, volatile) for k, v in value.items() if k not in volatile}
    if isinstance(value, list):
        return [_stable(v, volatile) for v in value]
    if isinstance(value, float):
        return round(value, 6)
    return value


def answers(tmp_path: Path) -> dict[str, dict[str, str]]:
    from historian_blueprint.ask.run import ask
    from tests.conftest import make_plain_app
    from tests.test_index import run_reindex

    dev = list(read_jsonl(EVAL / "historian_qa_dev.jsonl"))
    wanted = {g["source_id"] for q in dev for g in q.get("gold", [])}
    docs = [d for path in sorted(SAMPLE_CORPUS.glob("*.jsonl")) for d in read_jsonl(path) if d["_id"] in wanted]
    app = make_plain_app(tmp_path, docs)
    assert run_reindex(app)["state"] == "succeeded"
    out = {}
    with app.app_context():
        from historian_blueprint.index import service
        assert len(service.get_index().readings) > 0  # the documents' sentences come from the generation
        for question in _questions():
            result = _stable(ask(question))
            whole = json.dumps(result, sort_keys=True, ensure_ascii=True)
            out[question] = {"status": result["status"], "digest": hashlib.sha256(whole.encode()).hexdigest()[:16]}
    return out


def assert_as_before(snapshot: Path, got: dict[str, Any], what: str, at_least: int) -> None:
    """Every output equals the snapshot's (the same keys, at least ``at_least`` of them)."""
    want = json.loads(snapshot.read_text(encoding="utf-8"))
    assert len(got) >= at_least and set(got) == set(want)
    changed = {key: (want[key], got[key]) for key in want if got[key] != want[key]}
    assert not changed, f"{len(changed)} {what} changed: " + json.dumps(changed, indent=1)[:3000]


def write_snapshot(snapshot: Path, make: Any) -> None:
    """Rewrite a snapshot from ``make(folder)`` (on purpose only)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        snapshot.write_text(json.dumps(make(Path(folder)), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {snapshot}")


def test_answers_are_what_they_were_before_the_speed_work(tmp_path):
    assert_as_before(SNAPSHOT, answers(tmp_path), "answers", 40)


if __name__ == "__main__" and "--write" in sys.argv:
    write_snapshot(SNAPSHOT, answers)
