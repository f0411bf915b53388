"""Synthesis: conflicts with their sides, consensus points, and the Markdown report."""

from __future__ import annotations

import re
from collections import defaultdict
from difflib import SequenceMatcher
from collections.abc import Collection
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


def agreeing(comparison: Comparison, leave_out: Collection[int] = ()) -> dict[int, set[int]]:
    """What each statement agrees with directly (statements in ``leave_out`` take no part)."""
    near: dict[int, set[int]] = defaultdict(set)
    for e in comparison.agreements:
        if e.a not in leave_out and e.b not in leave_out:
            near[e.a].add(e.b)
            near[e.b].add(e.a)
    return near


def conflicts(comparison: Comparison, credibility: dict[str, float],
              sources: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One conflict per pair of agreement clusters that contradict each other; each side cites the statement
    in conflict and the statements agreeing with it that are in the same conflict; a verdict when credibility separates
    the sides."""
    st = comparison.statements
    cl = clusters(comparison)
    near = agreeing(comparison)
    opposed = {(min(e.a, e.b), max(e.a, e.b), e.kind) for e in comparison.conflicts}
    seen: dict[tuple[int, int], dict[str, Any]] = {}
    for e in comparison.conflicts:
        a, b = sorted((cl[e.a], cl[e.b]))
        if a == b or (a, b) in seen:
            continue
        # each side: the statement in conflict and those agreeing with it directly that are in the same conflict
        # with the other side (a chain of agreements drifts from the point), never a source the other side cites
        groups = [{e.a} | {j for j in near[e.a] if (min(j, e.b), max(j, e.b), e.kind) in opposed},
                  {e.b} | {j for j in near[e.b] if (min(j, e.a), max(j, e.a), e.kind) in opposed}]
        ids = [{st[i].source_id for i in g} for g in groups]
        groups = [{i for i in groups[0] if st[i].source_id not in ids[1] or i == e.a},
                  {i for i in groups[1] if st[i].source_id not in ids[0] or i == e.b}]
        sides = []
        for _c, members_c in zip((a, b), groups):
            group = sorted(members_c, key=lambda i: -credibility.get(st[i].source_id, 0.5))
            cred = [credibility.get(s, 0.5) for s in dict.fromkeys(st[i].source_id for i in group)]
            sides.append({"claim": st[group[0]].text, "citations": [span(st[i]) for i in group],
                          "credibility": round(sum(cred) / len(cred), 3)})
        verdict, confidence, reason = _verdict(sides, [sorted(g) for g in groups], st, sources)
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


def _verdict(sides: list[dict[str, Any]], groups: list[list[int]], st: list[Statement],
             sources: dict[str, dict[str, Any]]) -> tuple[str, float, str]:
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
    """Points on which two or more independent sources agree: a statement and the statements agreeing with it
    directly, none of them in a conflict (a chain of agreements drifts from the point); the statement with the most
    independent sources first, each statement in one point, each source cited once in a point. Sources are
    independent when their authors differ and they do not print one wire report (the same sentence word for word
    but for a few words: ``wire_copies``), which counts once and is named as such (``wire``)."""
    st = comparison.statements
    contested = {e.a for e in comparison.conflicts} | {e.b for e in comparison.conflicts}
    near = agreeing(comparison, leave_out=contested)

    def voices(group: set[int]) -> list[set[str]]:
        """The group's sources, those of one author or one wire report together."""
        out: list[set[str]] = []
        for j in sorted(group):
            who = authors.get(st[j].source_id) or st[j].source_id
            same = [v for v in out if st[j].source_id in v or who in {authors.get(s) or s for s in v}
                    or any(wire_copies(st[j], st[k]) for k in group if st[k].source_id in v)]
            merged = set().union({st[j].source_id}, *same)
            out = [v for v in out if not any(v is s for s in same)] + [merged]
        return out

    def independent(group: set[int]) -> int:
        return len(voices(group))

    used: set[int] = set()
    out = []
    for i in sorted(near, key=lambda i: (-independent({i} | near[i]), -credibility.get(st[i].source_id, 0.5),
                                         len(st[i].text))):
        group = ({i} | near[i]) - used
        if i in used or independent(group) < 2:
            continue
        used |= group
        ordered = [i] + sorted(group - {i}, key=lambda j: (-credibility.get(st[j].source_id, 0.5), st[j].source_id))
        first: dict[str, int] = {}
        for j in ordered:  # each source's first statement, in order
            first.setdefault(st[j].source_id, j)
        heard = voices(group)
        wire = [sorted(v) for v in heard if len(v) > 1 and len({authors.get(s) or s for s in v}) > 1]
        out.append({"claim": st[i].text, "citations": [span(st[j]) for j in first.values()], "sources": list(first),
                    "independent": len(heard), **({"wire": wire} if wire else {})})
    return sorted(out, key=lambda x: (-x["independent"], -len(x["sources"])))


WIRE_SAME = 0.90  # two papers' sentences this alike, word for word (difflib's ratio), print one wire report


def wire_copies(a: Statement, b: Statement) -> bool:
    """Two statements of different sources that are one report printed twice: the same words in the same order
    but for a few (a headline's, an OCR misreading's); long enough (eight words) not to be a stock phrase."""
    x, y = re.findall(r"[a-z0-9]+", a.text.lower()), re.findall(r"[a-z0-9]+", b.text.lower())
    if a.source_id == b.source_id or min(len(x), len(y)) < 8:
        return False
    return SequenceMatcher(None, x, y, autojunk=False).ratio() >= WIRE_SAME


def _voices(point: dict[str, Any], titles: dict[str, str]) -> str:
    """" (2 independent; A and B print one wire report)" after a consensus point."""
    if not point.get("independent"):
        return ""
    wires = ["; " + " and ".join(md_escape(titles.get(s, s)) for s in w) + " print one wire report"
             for w in point.get("wire") or []]
    return f" ({point['independent']} independent{''.join(wires)})"


def report(topic: str, output: dict[str, Any]) -> str:
    """The map as Markdown: consensus, battleground, sources and their credibility, counter-queries."""
    titles = {s["source_id"]: s["title"] for s in output["sources"]}

    def cite(sp: dict[str, Any]) -> str:
        return f"[{md_escape(titles.get(sp['source_id'], sp['source_id']))}, {sp['start']}–{sp['end']}]"

    lines = [f"# Knowledge map: {md_escape(topic)}", ""]
    lines += ["## Consensus", ""]
    lines += ([f"- {md_escape(c['claim'])} " + " ".join(cite(s) for s in c["citations"]) + _voices(c, titles)
               for c in output["consensus"]] or ["- (no point on which independent sources agree)"])
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
        lines.append(f"- {md_escape(s['title'])} ({md_escape(s.get('doc_type') or 'unknown type')}, "
                     f"{s.get('year') or 'undated'}): "
                     f"credibility {s['credibility']:.2f} — {factors}")
    lines += ["", "## Counter-queries", ""]
    lines += [f"- round {q['round']}: {md_escape(q['query'])} → {len(q['new_sources'])} new source(s); tests "
              f"{md_escape(q['aimed_at'])}"
              for q in output["counter_queries"]] or ["- (none)"]
    return "\n".join(lines) + "\n"
