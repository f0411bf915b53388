"""Draft sentences as a historian writes them, checked against the sample corpus (issue 22).

A file holds one sentence per line (see tests/data/sealed/draft_sentences.jsonl and tests/test_draft_reasons.py):
``kind`` is ``faithful`` or ``rounded`` (the sentence says what the source says; ``rounded``: with a figure
rounded and hedged) or ``wrong_figure``, ``wrong_speaker``, ``wrong_year`` (one detail changed, given as
``wrong``); ``source_id`` and ``quote`` name the source sentence.

Scored as the draft checker's page reads:
- a faithful or rounded sentence is right when ``supported`` and its evidence holds the quote (coverage);
- a changed one is right when not ``supported`` and the reason names the changed detail as written; it is a
  false "supported" when ``supported`` (the error a historian does not forgive);
- every verdict's evidence is "the deciding sentence" when it overlaps the quote.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from historian_lab.bench.common import read_jsonl, sample_app

FAITHFUL = ("faithful", "rounded")
CHANGED = ("wrong_figure", "wrong_speaker", "wrong_year")


def score_item(item: dict[str, Any], claim: Any, text: str) -> dict[str, Any]:
    """One sentence's verdict against its label."""
    at = text.find(item["quote"])
    span = (at, at + len(item["quote"])) if at >= 0 else None
    ev = claim.evidence
    on_quote = bool(ev and span and ev.source_id == item["source_id"] and ev.start < span[1] and span[0] < ev.end)
    supported = claim.verdict == "supported"
    if item["kind"] in FAITHFUL:
        right = supported and on_quote
    else:
        right = not supported and str(item.get("wrong") or "").lower() in (claim.reason or "").lower()
    return {"id": item["id"], "kind": item["kind"], "verdict": claim.verdict, "reason": claim.reason,
            "evidence_on_quote": on_quote, "right": bool(right),
            "false_supported": item["kind"] in CHANGED and supported}


def summarize(verdicts: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in FAITHFUL + CHANGED:
        mine = [v for v in verdicts if v["kind"] == kind]
        if mine:
            out[kind] = f"{sum(v['right'] for v in mine)}/{len(mine)}"
    faithful = [v for v in verdicts if v["kind"] in FAITHFUL]
    changed = [v for v in verdicts if v["kind"] in CHANGED]
    out["right"] = f"{sum(v['right'] for v in verdicts)}/{len(verdicts)}"
    out["coverage"] = round(sum(v["verdict"] == "supported" for v in faithful) / len(faithful), 3) if faithful else None
    out["false_supported"] = round(sum(v["false_supported"] for v in changed) / len(changed), 3) if changed else None
    out["evidence_on_quote"] = f"{sum(v['evidence_on_quote'] for v in verdicts)}/{len(verdicts)}"
    return out


def run(root: Path, path: Path, detail: bool = False) -> dict[str, Any]:
    from historian_blueprint.verify.service import check_draft

    items = list(read_jsonl(path))
    app, texts = sample_app(root)
    verdicts = []
    with app.app_context():
        for item in items:  # one sentence per check: a sentence is judged on its own, as a draft's line is
            claims = check_draft(item["sentence"]).claims
            if not claims:  # nothing to judge: a wrong one is then not "supported", a faithful one not confirmed
                verdicts.append({"id": item["id"], "kind": item["kind"], "verdict": None, "reason": "no claim read",
                                 "evidence_on_quote": False, "right": False, "false_supported": False})
                continue
            claim = max(claims, key=lambda c: len(c.text))
            verdicts.append(score_item(item, claim, texts.get(item["source_id"], "")))
    out = {"sentences": str(path), **summarize(verdicts)}
    if detail:
        out["items"] = verdicts
    return out
