"""Readable renderings of the output schema (Markdown report)."""

from __future__ import annotations

from typing import Any


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
