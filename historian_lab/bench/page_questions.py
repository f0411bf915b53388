"""Questions as a historian asks them, scored as a historian reads the page (issue 22).

A question file holds five kinds (see tests/data/page_questions.jsonl; a line without ``kind`` is factual, as
in tests/data/dialect_questions.jsonl):
- ``factual`` and ``followup`` (the earlier turn is asked first, then the follow-up continues its thread):
  right when the answer is not a refusal and a citation's span overlaps a gold quote;
- ``comparison``: right when every side the collection speaks to has a finding (a citation overlapping that
  side's gold) and every side it is silent on is said to be "not found" in the answer's comparison table;
- ``list``: right when the answer states how many items it found of how many were asked, the found count is
  true (the items whose gold its citations overlap), at least one was found, and it is not ``verified`` with
  fewer items than asked; a list question that names no count ("Which countries ...": ``asked`` is then the
  number of items the collection holds) is right when the page calls it an open list (no count to state), at
  least one item was found, and it is not ``verified`` with fewer items than the collection holds;
- ``outside``: right when the answer is a refusal (the collection cannot answer it);
- ``premise``: the question presupposes something the documents contradict or do not hold ("Why did X oppose Y"
  where X proposed Y; an address of a year the collection lacks): right when the answer is a refusal or the page
  names what of the question no cited passage bears out (``verification.premise``), and never when ``verified``.

A ``verified`` answer that is not right is counted apart: it is the error a historian does not forgive.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from historian_lab.bench.common import read_jsonl, sample_app
from historian_lab.bench.graph import holds_answer as cited  # some citation (of ids) overlaps a gold quote
from historian_blueprint.text.words import NUMBER_WORDS

KINDS = ("factual", "comparison", "list", "followup", "outside", "premise")


def score_item(item: dict[str, Any], result: dict[str, Any], texts: dict[str, str]) -> dict[str, Any]:
    """One question's verdict: ``right`` and what was seen (for the per-item detail)."""
    refused = bool(result["metadata"].get("refusal"))
    shape = result.get("shape") or {}
    kind = item.get("kind", "factual")
    seen: dict[str, Any] = {"status": result["status"], "refused": refused}
    if kind in ("factual", "followup"):
        right = not refused and cited(result, item["gold"], texts)
    elif kind == "outside":
        right = refused
    elif kind == "premise":
        named = bool(((result.get("verification") or {}).get("premise") or {}).get("finding"))
        seen["premise_named"] = named
        right = result["status"] != "verified" and (refused or named)
    elif kind == "comparison":
        table = ({s.get("label", "").lower(): s for s in shape.get("sides", [])}
                 if shape.get("kind") == "comparison" else {})
        per_side = []
        for side in item["sides"]:
            row = _row(table, side["label"])
            if side["gold"]:
                ids = set(row.get("citations", [])) if row else None
                per_side.append(not refused and cited(result, side["gold"], texts, ids))
            else:
                per_side.append(bool(row) and not row.get("found"))
        seen["sides_right"] = per_side
        right = all(per_side)
    elif kind == "list":
        have = [it for it in item["items"] if it["gold"]]
        found = sum(cited(result, it["gold"], texts) for it in have) if not refused else 0
        stated = shape if shape.get("kind") == "list" else {}
        seen.update(items_found=found, items_in_collection=len(have), asked=item["asked"],
                    stated_found=stated.get("found"), stated_asked=stated.get("asked"))
        if names_count(item["question"], item["asked"]):  # "What three amendments ...": the page says "N of 3 found"
            right = (bool(stated) and found >= 1 and stated.get("found") == found
                     and stated.get("asked") == item["asked"]
                     and not (found < item["asked"] and result["status"] == "verified"))
        else:  # "Which countries ...": no count to state; the page says it is an open list, and never verified short
            right = (bool(stated.get("open")) and found >= 1
                     and not (found < len(have) and result["status"] == "verified"))
    else:
        raise ValueError(f"unknown kind {kind!r} in {item['id']}")
    seen["right"] = bool(right)
    return seen


_MONTH = r"(?:january|february|march|april|may|june|july|august|september|october|november|december)"
# A day of a month is a date, not a count: "3 January", "January 3", "the 3d of January", "January 3, 1916".
_DAY = re.compile(rf"\b(?:\d{{1,2}}\s+{_MONTH}|(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th|d)\s+(?:of\s+)?{_MONTH}|"
                  rf"the\s+\d{{1,2}}\s+of\s+{_MONTH}|{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th|d)?)\b")


def names_count(question: str, asked: int) -> bool:
    """The question gives the number of items it asks for, as a figure or a word ("three", "3"); a day of a month
    ("3 January", "January 3") is a date, not a count."""
    words = {w for w, n in NUMBER_WORDS.items() if n == asked} | {str(asked)}
    return bool(words & set(re.findall(r"[a-z0-9]+", _DAY.sub(" ", question.lower()))))


def _row(table: dict[str, dict[str, Any]], label: str) -> dict[str, Any] | None:
    """The comparison row for a side: its label; a row whose label shares the side's last word (a surname); or
    a row whose words all stand in the side's label (a row "1914" for the side "Wilson, 1914 message")."""
    label = label.lower()
    if label in table:
        return table[label]
    words = set(re.findall(r"[a-z0-9]+", label))
    last = label.split()[-1] if label.split() else ""
    return (next((row for key, row in table.items() if last and last in key.split()), None)
            or next((row for key, row in table.items() if set(re.findall(r"[a-z0-9]+", key)) <= words
                     and re.findall(r"[a-z0-9]+", key)), None))


def ask_item(item: dict[str, Any], ask) -> dict[str, Any]:
    """Ask one question as a user would: a follow-up continues the thread of its earlier turns."""
    parent = None
    for turn in item.get("history") or []:
        parent = ask(turn["question"], parent_id=parent)["metadata"]["run_id"]
    return ask(item["question"], parent_id=parent)


def summarize(items: list[dict[str, Any]], verdicts: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in KINDS:
        mine = [v for it, v in zip(items, verdicts) if it.get("kind", "factual") == kind]
        if mine:
            out[kind] = f"{sum(v['right'] for v in mine)}/{len(mine)}"
    out["right"] = f"{sum(v['right'] for v in verdicts)}/{len(verdicts)}"
    verified = [v for v in verdicts if v["status"] == "verified"]
    out["verified"] = len(verified)
    out["verified_wrong"] = sum(not v["right"] for v in verified)
    lists = [v for it, v in zip(items, verdicts) if it.get("kind") == "list"]
    if lists:
        out["list_items_found"] = (f"{sum(v['items_found'] for v in lists)}/"
                                   f"{sum(v['items_in_collection'] for v in lists)}")
    return out


def run(root: Path, path: Path, detail: bool = False) -> dict[str, Any]:
    from historian_blueprint.ask.run import ask

    items = list(read_jsonl(path))
    app, texts = sample_app(root)
    with app.app_context():
        verdicts = []
        for item in items:
            result = ask_item(item, lambda q, parent_id=None: ask(q, parent_id=parent_id, user_id="bench"))
            verdicts.append({"id": item["id"], "kind": item.get("kind", "factual"), **score_item(item, result, texts)})
    out = {"questions": str(path), **summarize(items, verdicts)}
    if detail:
        out["items"] = verdicts
    return out
