"""Synthesis: conflicts with their sides, consensus points, and the Markdown report."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from historian_blueprint.mapping.compare import Comparison
from historian_blueprint.mapping.nlp import Statement
from historian_blueprint.text.markdown import md_escape

SEPARATES = 0.10  # a credibility gap this wide between two sides gives a verdict; a narrower one is "unresolved"
KIND_QUESTION = {"number": "How many", "date": "When", "assertion": "Whether", "attribution": "Who"}


def span(st: Statement) -> dict[str, Any]:
    return {"source_id": st.source_id, "start": st.start, "end": st.end, "text": st.text}


def clusters(comparison: Comparison) -> list[int]:
    """Each statement's agreement cluster (union-find over the agreements)."""
    parent = list(range(len(comparison.statements)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for e in comparison.agreements:
        parent[root(e.a)] = root(e.b)
    return [root(i) for i in range(len(parent))]


def conflicts(comparison: Comparison, credibility: dict[str, float], sources: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One conflict per pair of agreement clusters that contradict each other; each side cites every statement
    of its cluster; a verdict when credibility separates the sides."""
    st = comparison.statements
    cl = clusters(comparison)
    members: dict[int, list[int]] = defaultdict(list)
    for i, c in enumerate(cl):
        members[c].append(i)
    seen: dict[tuple[int, int], dict[str, Any]] = {}
    for e in comparison.conflicts:
        a, b = sorted((cl[e.a], cl[e.b]))
        if a == b or (a, b) in seen:
            continue
        sides = []
        for c in (a, b):
            group = sorted(members[c], key=lambda i: -credibility.get(st[i].source_id, 0.5))
            cred = [credibility.get(s, 0.5) for s in dict.fromkeys(st[i].source_id for i in group)]
            sides.append({"claim": st[group[0]].text, "citations": [span(st[i]) for i in group],
                          "credibility": round(sum(cred) / len(cred), 3)})
        verdict, confidence, reason = _verdict(sides, [members[a], members[b]], st, sources)
        seen[(a, b)] = {
            "id": f"c{len(seen) + 1}", "point": _point(e.kind, st[e.a], e.detail), "kind": e.kind, "sides": sides,
            "verdict": verdict, "confidence": confidence, "reason": reason, "found_by": f"{e.kind}: {e.detail}",
        }
    return list(seen.values())


def _point(kind: str, st: Statement, detail: str) -> str:
    question = KIND_QUESTION.get(kind, "What")
    if kind in ("number", "date") and ":" in detail:  # detail: "deaths: 300 / 1,000", "date: rain fall: 10 / 11"
        return f"{question}: {detail.rsplit(':', 1)[0].removeprefix('date:').strip()}"
    bare = re.sub(r"(\s*…)+", " …", st.skeleton.replace("someone", "…"))
    bare = re.sub(r"[\s,;:.]+$", "", bare)
    return f"{question}: {bare}"


def _verdict(sides: list[dict[str, Any]], groups: list[list[int]], st: list[Statement], sources: dict[str, dict[str, Any]]) -> tuple[str, float, str]:
    (x, y) = sides
    gap = x["credibility"] - y["credibility"]
    reason = _reason(groups, st, sources)
    if abs(gap) < SEPARATES:
        return "unresolved", round(0.5 - abs(gap), 3), reason
    better = x if gap > 0 else y
    return f"more credible: {better['claim']}", round(min(0.9, 0.5 + abs(gap)), 3), reason


def _reason(groups: list[list[int]], st: list[Statement], sources: dict[str, dict[str, Any]]) -> str:
    """The likely reason for the disagreement: how the two sides' sources differ (type, time, interest)."""
    def describe(group: list[int]) -> str:
        parts = []
        for sid in dict.fromkeys(st[i].source_id for i in group):
            s = sources.get(sid, {})
            bits = [s.get("doc_type") or "document", f"of {s['year']}" if s.get("year") else ""]
            factors = s.get("factors", {})
            if factors.get("interested_party", {}).get("value") == 0.0:
                bits.append("(a party to the events)")
            parts.append(" ".join(b for b in bits if b))
        return "; ".join(parts)
    return f"one side rests on {describe(groups[0])}, the other on {describe(groups[1])}"


def consensus(comparison: Comparison, credibility: dict[str, float], authors: dict[str, str]) -> list[dict[str, Any]]:
    """Agreement clusters of two or more independent sources (different authors) that no conflict touches."""
    st = comparison.statements
    cl = clusters(comparison)
    contested = {cl[e.a] for e in comparison.conflicts} | {cl[e.b] for e in comparison.conflicts}
    members: dict[int, list[int]] = defaultdict(list)
    for i, c in enumerate(cl):
        members[c].append(i)
    out = []
    for c, group in members.items():
        ids = list(dict.fromkeys(st[i].source_id for i in group))
        independent = {authors.get(s) or s for s in ids}
        if c in contested or len(independent) < 2:
            continue
        # the point in the words of the statement the others agree with most (then the most credible source)
        degree = {i: sum(1 for e in comparison.agreements if i in (e.a, e.b)) for i in group}
        group.sort(key=lambda i: (-degree[i], -credibility.get(st[i].source_id, 0.5), len(st[i].text)))
        out.append({"claim": st[group[0]].text, "citations": [span(st[i]) for i in group], "sources": ids})
    return sorted(out, key=lambda x: -len(x["sources"]))


def report(topic: str, output: dict[str, Any]) -> str:
    """The map as Markdown: consensus, battleground, sources and their credibility, counter-queries."""
    titles = {s["source_id"]: s["title"] for s in output["sources"]}

    def cite(sp: dict[str, Any]) -> str:
        return f"[{md_escape(titles.get(sp['source_id'], sp['source_id']))}, {sp['start']}–{sp['end']}]"

    lines = [f"# Knowledge map: {md_escape(topic)}", ""]
    lines += ["## Consensus", ""]
    lines += [f"- {md_escape(c['claim'])} " + " ".join(cite(s) for s in c["citations"]) for c in output["consensus"]] or ["- (no point on which independent sources agree)"]
    lines += ["", "## Battleground", ""]
    if not output["conflicts"]:
        lines.append("- (no conflict between the sources found)")
    for c in output["conflicts"]:
        lines.append(f"### {md_escape(c['point'])}")
        for n, side in enumerate(c["sides"], start=1):
            lines.append(f"- Side {n} (credibility {side['credibility']:.2f}): {md_escape(side['claim'])} "
                         + " ".join(cite(s) for s in side["citations"]))
        lines.append(f"- Verdict: {md_escape(c['verdict'])} (confidence {c['confidence']:.2f})")
        lines.append(f"- Likely reason: {md_escape(c['reason'])}")
        lines.append("")
    lines += ["## Sources", ""]
    for s in output["sources"]:
        factors = ", ".join(f"{k} {v['value']:.2f}" for k, v in s["factors"].items())
        lines.append(f"- {md_escape(s['title'])} ({md_escape(s.get('doc_type') or 'unknown type')}, {s.get('year') or 'undated'}): "
                     f"credibility {s['credibility']:.2f} — {factors}")
    lines += ["", "## Counter-queries", ""]
    lines += [f"- round {q['round']}: {md_escape(q['query'])} → {len(q['new_sources'])} new source(s)" for q in output["counter_queries"]] or ["- (none)"]
    return "\n".join(lines) + "\n"
