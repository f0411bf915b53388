"""The knowledge map scored on a corpus written for it: planted conflicts found with their sides and kind,
conflicts and consensus points that mix events, shared facts found with three sources, entity recall.

A topics file (``tests/data/map_topics*.json`` and the sealed ones) names, per topic, its documents, the
documents about other events (``distractors``), the planted conflicts (kind, the documents of each side), the
facts its sources share and the entities it names. The corpus is indexed alone in a fresh workspace and each
topic is mapped once, offline.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from historian_lab.bench.common import ensure_documents, ensure_index, workspace
from historian_blueprint.mapping.nlp import name_key

KIND = {"number": "number", "date": "date", "cause": "assertion", "assertion": "assertion",
        "attribution": "attribution"}


def sides(conflict: dict[str, Any]) -> list[set[str]]:
    return [{c["source_id"] for c in side["citations"]} for side in conflict["sides"]]


def found(planted: dict[str, Any], conflicts: list[dict[str, Any]]) -> bool:
    """A reported conflict of the planted kind whose two sides each cite only documents of one planted side."""
    a, b = set(planted["sides"][0]), set(planted["sides"][1])
    for c in conflicts:
        if c["kind"] != KIND[planted["kind"]]:
            continue
        s = sides(c)
        if any(x and x <= a for x in s) and any(y and y <= b for y in s):
            return True
    return False


def score_topic(topic: dict[str, Any], output: dict[str, Any]) -> dict[str, Any]:
    docs = set(topic["documents"])
    conflicts = output["conflicts"]
    planted = topic["conflicts"]
    hits = [c for c in planted if found(c, conflicts)]
    unplanted = [c for c in conflicts if not any(found(p, [c]) for p in planted)]
    mixed = [c for c in conflicts if any(not s <= docs for s in sides(c))]
    agreeing = [c for c in unplanted for a, b, _ in topic.get("agreements", [])
                if any(a in s and b not in s for s in sides(c)) and any(b in s and a not in s for s in sides(c))]
    facts = []
    for fact in topic.get("consensus", []):
        best = max((set(c["sources"]) & set(fact["sources"]) for c in output["consensus"]), key=len, default=set())
        facts.append(len(best) >= min(3, len(fact["sources"])))
    mixed_consensus = [c for c in output["consensus"] if not set(c["sources"]) <= docs]
    names = {name_key(n) for e in output["entities"] for n in (e["name"], *e["aliases"])}
    planted_names = list(topic.get("entities", []))
    recalled = [n for n in planted_names if name_key(n) in names]
    merged, seen = variants_merged(topic.get("entity_variants") or {}, output["entities"])
    return {
        "topic": topic["topic"],
        "conflicts_planted": len(planted), "conflicts_found": len(hits),
        "found_by_kind": {k: [sum(found(c, conflicts) for c in planted if c["kind"] == k),
                              sum(c["kind"] == k for c in planted)]
                          for k in dict.fromkeys(c["kind"] for c in planted)},
        "conflicts_reported": len(conflicts), "conflicts_unplanted": len(unplanted),
        "conflicts_mixing_events": len(mixed), "conflicts_between_agreeing": len(agreeing),
        "consensus_facts": len(facts), "consensus_found": sum(facts), "consensus_reported": len(output["consensus"]),
        "consensus_mixing_events": len(mixed_consensus),
        "entities_planted": len(planted_names), "entities_recalled": len(recalled),
        "variants_seen": seen, "variants_merged": merged,
        "entities_missed": sorted(set(planted_names) - set(recalled)),
        "missed_conflicts": [c["point"] for c in planted if c not in hits],
        "unplanted": [{"kind": c["kind"], "point": c["point"], "sides": [sorted(s) for s in sides(c)],
                       "found_by": c.get("found_by", "")}
                      for c in unplanted],
        "counter_queries": [{"query": q["query"], "tests": q["aimed_at"]} for q in output["counter_queries"]],
    }


def variants_merged(variants: dict[str, list[str]], entities: list[dict[str, Any]]) -> tuple[int, int]:
    """Of the planted spellings of one name (``entity_variants``: a canonical name and its short and misread forms)
    that the map found, how many stand in the same entity as the most often found of them: (merged, found)."""
    where = {}
    for e in entities:
        for n in (e["name"], *e["aliases"]):
            where.setdefault(name_key(n), e["id"])
    merged = seen = 0
    for canonical, forms in variants.items():
        found = [where[k] for k in dict.fromkeys(name_key(f) for f in (canonical, *forms)) if k in where]
        if len(found) < 2:
            continue
        main = max(set(found), key=found.count)
        seen += len(found) - 1
        merged += found.count(main) - 1
    return merged, seen


def run(corpus: Path, topics_file: Path, root: Path | None = None, detail: bool = False) -> dict[str, Any]:
    """Index ``corpus`` alone, map each topic of ``topics_file`` and score it; totals over the topics."""
    from historian_blueprint.mapping.run import make_map_context, map_topic

    topics = json.loads(Path(topics_file).read_text(encoding="utf-8"))["topics"]
    with tempfile.TemporaryDirectory() as tmp:
        app = workspace(Path(root or tmp), Path(corpus).stem)
        ensure_documents(app, [Path(corpus)])
        ensure_index(app)
        with app.app_context():
            context = make_map_context()
            scored = [score_topic(t, map_topic(t["topic"], user_id="bench", context=context)) for t in topics]
    total = {k: sum(s[k] for s in scored) for k in scored[0] if isinstance(scored[0][k], int)}
    by_kind: dict[str, list[int]] = {}
    for s in scored:
        for k, (f, n) in s["found_by_kind"].items():
            by_kind.setdefault(k, [0, 0])
            by_kind[k][0] += f
            by_kind[k][1] += n

    def share(a: str, b: str) -> float | None:
        return round(total[a] / total[b], 3) if total[b] else None

    return {
        "corpus": Path(corpus).name,
        "conflicts_found": f"{total['conflicts_found']}/{total['conflicts_planted']}",
        "conflict_recall": share("conflicts_found", "conflicts_planted"),
        "found_by_kind": {k: f"{f}/{n}" for k, (f, n) in by_kind.items()},
        "conflicts_reported": total["conflicts_reported"], "conflicts_unplanted": total["conflicts_unplanted"],
        "conflicts_mixing_events": total["conflicts_mixing_events"],
        "conflicts_between_agreeing": total["conflicts_between_agreeing"],
        "consensus_found": f"{total['consensus_found']}/{total['consensus_facts']}",
        "consensus_reported": total["consensus_reported"], "consensus_mixing_events": total["consensus_mixing_events"],
        "entity_recall": share("entities_recalled", "entities_planted"),
        "variants_merged": f"{total['variants_merged']}/{total['variants_seen']}",
        "entities": f"{total['entities_recalled']}/{total['entities_planted']}",
        "targets": {"conflict_recall": 0.70, "mixing_events": 0, "consensus_found": "2/3", "entity_recall": 0.80},
        **({"topics": scored} if detail else {}),
    }
