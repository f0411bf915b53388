"""Readable renderings of the output schema (Markdown report)."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


def to_markdown(output: dict[str, Any], question: str | None = None) -> str:
    """A readable report: answer, findings, sources, claim verdicts, verification, metadata."""
    lines = []
    if question:
        lines += [f"# {question}", ""]
    lines += [f"**Status:** {output['status']} · **confidence** {output['confidence']:.2f}", "", output["answer"], ""]
    if output["bullets"]:
        lines += ["## Findings", ""] + [f"- {b}" for b in output["bullets"]] + [""]
    if output["citations"]:
        lines += ["## Sources", ""]
        for c in output["citations"]:
            who = f"{c['author']}, " if c.get("author") else ""
            lines.append(f"[{c['id']}] {who}*{c['title']}*, {c['locator']} (`{c['source_id']}` chars {c['start']}–{c['end']})")
        lines.append("")
    if output["claims"]:
        lines += ["## Claims checked", "", "| # | verdict | type | claim |", "| --- | --- | --- | --- |"]
        for c in output["claims"]:
            text = c["text"].replace("|", "\\|").replace("\n", " ")
            lines.append(f"| {c['id']} | {c['verdict']} | {c['type'] or ''} | {text[:160]} |")
        lines.append("")
    v = output.get("verification") or {}
    if v:
        lines += ["## Verification", ""]
        for role in ("challenge", "interrogation", "counter", "judge"):
            if role in v:
                lines.append(f"- **{role}**: {v[role].get('summary', '')}")
        lines.append("")
    meta = output.get("metadata") or {}
    if meta:
        lines += ["## Run", "", f"run `{meta.get('run_id')}` · engine {meta.get('engine')} · index generation {meta.get('index_generation')} · "
                  f"{meta.get('latency_ms', {}).get('total', 0):.0f} ms"]
    return "\n".join(lines).rstrip() + "\n"


def _inverted(author: str) -> str:
    """"Grover Cleveland" -> "Cleveland, Grover" (the first author of a list; already inverted names stay)."""
    author = author.strip()
    if not author or "," in author or " " not in author:
        return author
    first, last = author.rsplit(" ", 1)
    return f"{last}, {first}"


def _chicago_date(value: Any, year: Any) -> str:
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        d = date.fromisoformat(value)
        return f"{_MONTHS[d.month - 1]} {d.day}, {d.year}"
    return str(value or year or "n.d.")


def bibliography(citations: list[dict[str, Any]], store: Any = None) -> str:
    """A Chicago-style (notes-bibliography) list of the cited sources, alphabetical by author or title."""
    entries = {}
    for c in citations:
        if c["source_id"] in entries:
            continue
        doc = store.get_document(c["source_id"]) if store is not None else None
        author = (doc.author if doc else None) or c.get("author") or ""
        title = (doc.title if doc else None) or c.get("title") or c["source_id"]
        when = _chicago_date(doc.date if doc else None, c.get("year"))
        url = (doc.url if doc else None) or c.get("url")
        parts = [f"{_inverted(author)}." if author else "", f"“{title.rstrip('.')}.”", f"{when}.",
                 f"Historian collection, {c['source_id']}.", f"{url}." if url else ""]
        entries[c["source_id"]] = (_inverted(author) or title).lower(), " ".join(p for p in parts if p)
    return "\n".join(text for _, text in sorted(entries.values())) + ("\n" if entries else "")
