"""Speed work keeps verdicts the same: the verifier's verdict, flag, confidence and deciding check on the first 40
items of each labeled file, compared with a snapshot written before the speed work (tests/data/verdicts_snapshot.json,
rewritten only on purpose with `python -m tests.test_verdict_snapshot --write`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.conftest import EVAL

SNAPSHOT = Path(__file__).parent / "data" / "verdicts_snapshot.json"
FILES = ("historian_claims_dev.jsonl", "halueval_qa_dev.jsonl", "begin_dev.jsonl", "wice_dev.jsonl")
LIMIT = 40


def verdicts() -> dict[str, list[list]]:
    from historian_lab.evaluation.harness import collect

    out = {}
    for name in FILES:
        path = EVAL / name
        if path.exists():
            _, rows = collect(path, limit=LIMIT)
            out[name] = [[r.verdict, r.flagged, round(r.confidence, 6), r.decided_by, r.span_ok] for r in rows]
    return out


def test_verdicts_are_what_they_were_before_the_speed_work():
    want = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    got = verdicts()
    assert set(got) == set(want) and sum(len(v) for v in got.values()) >= 100
    for name in want:
        assert got[name] == want[name], name


if __name__ == "__main__" and "--write" in sys.argv:
    SNAPSHOT.write_text(json.dumps(verdicts(), indent=0), encoding="utf-8")
    print(f"wrote {SNAPSHOT}")
