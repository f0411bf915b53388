"""Refactors keep maps the same: every topic of the two map corpora (tests/data/map_corpus.jsonl with
map_topics.json, map_dev_corpus.jsonl with map_dev_topics.json), each corpus indexed alone with vectors, gives the
same whole map as the snapshot written from the code before the wiring work of 2026-11-25 (5f47610):
entities, relations, conflicts, consensus, credibility, battleground and their spans. Rewrite it only on
purpose: ``python -m tests.test_map_snapshot --write``. Rewritten on 2026-11-29 (issue 42) for two changes read
map by map against the maps before them: time words are no entities (27 date entities gone over the 6 maps, "that
day", "Tuesday", "yesterday", "Forty years", "the previous autumn", and the 8 relations that hung only on them), and
each consensus point says how many independent voices it has (``independent``, ``wire``); conflicts, consensus
claims and their sources, sources and credibility unchanged. And again the same day when the sources set aside came
to carry why (``metadata.set_aside_why``: ``{source_id, title, why}``, ``metadata.included``, the report's "Sources
set aside"): entities, relations, conflicts, consensus, counter-queries and sources equal in all six. And when the
counter-queries came to name the topic as a historian types it ("Fenwick Street bridge fall 1891 number of witnesses
disputed", not the whole topic): conflicts and consensus equal in all six; the Fenwick Street map found one source
more by them (4, with its entities and relations). Then ``metadata.set_aside`` back to the ids of every source
retrieved and not mapped, as hosts read it, with ``set_aside_why`` beside it: only those two keys changed."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from tests.test_answer_snapshot import VOLATILE as ANSWER_VOLATILE
from tests.test_answer_snapshot import _stable, assert_as_before, write_snapshot

DATA = Path(__file__).parent / "data"
SNAPSHOT = DATA / "maps_snapshot.json"
CORPORA = (("map_corpus.jsonl", "map_topics.json"), ("map_dev_corpus.jsonl", "map_dev_topics.json"))
VOLATILE = (*ANSWER_VOLATILE, "trace")


def maps(root: Path) -> dict[str, dict[str, Any]]:
    from historian_blueprint.mapping.run import map_topic
    from tests.conftest import make_plain_app
    from tests.test_index import run_reindex

    out = {}
    for corpus, topics in CORPORA:
        docs = [json.loads(line) for line in (DATA / corpus).read_text(encoding="utf-8").splitlines() if line.strip()]
        app = make_plain_app(root / corpus, docs)
        assert run_reindex(app)["state"] == "succeeded"
        with app.app_context():
            for topic in json.loads((DATA / topics).read_text(encoding="utf-8"))["topics"]:
                result = _stable(map_topic(topic["topic"], user_id="snapshot"), VOLATILE)
                whole = json.dumps(result, sort_keys=True, ensure_ascii=True, default=str)
                out[f"{corpus}: {topic['topic']}"] = {
                    "conflicts": len(result.get("conflicts") or []),
                    "digest": hashlib.sha256(whole.encode()).hexdigest()[:16]}
    return out


def test_maps_are_what_they_were_before_the_wiring_work(tmp_path):
    assert_as_before(SNAPSHOT, maps(tmp_path), "maps", 6)


if __name__ == "__main__" and "--write" in sys.argv:
    write_snapshot(SNAPSHOT, maps)
