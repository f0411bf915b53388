"""Measure the contradiction rules on a set written for them: items ``{"id", "rule", "source", "claim",
"expect": "contradicted" | "not_contradicted"}`` (half where the rule must fire, half where it must not).

Each claim is verified against its source alone, with the whole checklist. Per rule: how many of the items
that must be contradicted are (and how many by that rule itself), and how many of those that must not be are
(a false contradiction), and how many of those are wrongly "supported" when they should be contradicted.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from historian_lab.bench.common import read_jsonl
from historian_blueprint.schema import CONFLICTS, SourceText
from historian_blueprint.verify.grounding import verify_claim

# The set's rule names -> the names of the checks that implement them (``decided_by``).
IMPLEMENTED_BY = {
    "affix_negation": {"affix_negation"},
    "antonym": {"antonym", "opinion"},
    "rather_than_order": {"order", "chronology"},
    "role_swap": {"roles", "negation"},
    "near_spelling": {"near_spelling"},
}


def measure(path: Path) -> dict[str, Any]:
    per: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for item in read_jsonl(path):
        result = verify_claim(item["claim"], [SourceText("source", item["source"], "")])
        counts = per[item["rule"]]
        must = item["expect"] == "contradicted"
        conflict = result.verdict in CONFLICTS
        counts["must_fire" if must else "must_not_fire"] += 1
        if must:
            counts["contradicted"] += conflict
            counts["by_this_rule"] += conflict and result.decided_by in IMPLEMENTED_BY.get(item["rule"], {item["rule"]})
            counts["supported_though_false"] += result.verdict == "supported"
        else:
            counts["false_contradictions"] += conflict
            counts["supported"] += result.verdict == "supported"
    out: dict[str, Any] = {}
    for rule, c in sorted(per.items()):
        out[rule] = {
            **dict(c),
            "recall": round(c["contradicted"] / c["must_fire"], 4) if c["must_fire"] else None,
            "false_contradiction_rate": (round(c["false_contradictions"] / c["must_not_fire"], 4)
                                         if c["must_not_fire"] else None),
        }
    return {"file": str(path), "rules": out}
