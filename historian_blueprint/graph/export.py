"""Readable renderings of the output schema (Markdown report) and of a claim's outcome, as pages show it."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from datetime import date
from typing import Any, Literal, NamedTuple

from historian_blueprint.schema import OUTCOME_LABELS, outcome_group
from historian_blueprint.text.markdown import md_escape

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


class Outcome(NamedTuple):
    """How a claim's verdict is shown: its group (the CSS class ``h-outcome-<group>``), the plain label, and
    what its evidence span is to the reader."""

    group: Literal["supported", "unconfirmed", "conflict"]
    label: str
    span: str


_SPAN_LABELS = {"supported": "carried by", "unconfirmed": "closest passage (read it)", "conflict": "the source says"}


def outcome(verdict: str) -> Outcome:
    """The outcome a user sees for a verdict: supported, a conflict a check found, or unconfirmed. Any other
    verdict (the "unsupported" of runs stored before the three outcomes) is unconfirmed: never verified, never
    shown as a contradiction."""
    group = outcome_group(verdict)
    return Outcome(group, OUTCOME_LABELS.get(verdict, OUTCOME_LABELS["unconfirmed"]), _SPAN_LABELS[group])


def outcome_counts(verdicts: Iterable[str]) -> str:
    """The three outcomes counted apart, in plain words: "3 supported, 1 not confirmed, 0 contradicted" (a
    misquote or a misattribution counts as contradicted: a conflict the checks found)."""
    n = Counter(outcome(v).group for v in verdicts)
    return f"{n['supported']} supported, {n['unconfirmed']} not confirmed, {n['conflict']} contradicted"


def to_markdown(output: dict[str, Any], question: str | None = None) -> str:
    """A readable report: answer, findings, sources, claim outcomes with their spans, verification, metadata. Every field that
    came from a document or a user is written as text (``md_escape``): no raw HTML, no links it did not make."""
    e = md_escape
    lines = []
    if question:
        lines += [f"# {e(question)}", ""]
    lines += [f"**Status:** {e(output['status'])} · **confidence** {output['confidence']:.2f}", "", e(output["answer"]), ""]
    if output["bullets"]:
        lines += ["## Findings", ""] + [f"- {e(b)}" for b in output["bullets"]] + [""]
    if output["citations"]:
        lines += ["## Sources", ""]
        for c in output["citations"]:
            who = f"{e(c['author'])}, " if c.get("author") else ""
            lines.append(f"[{c['id']}] {who}*{e(c['title'])}*, {e(c['locator'])} ({e(c['source_id'])} chars {c['start']}–{c['end']})")
        lines.append("")
    if output["claims"]:
        lines += ["## Claims checked", "", outcome_counts(c["verdict"] for c in output["claims"]), "",
                  "| # | outcome | type | claim | evidence |", "| --- | --- | --- | --- | --- |"]
        for c in output["claims"]:
            shown, span = outcome(c["verdict"]), c.get("evidence")
            quote = f"{shown.span}: “{e(span['text'])}” ({e(span['source_id'])} chars {span['start']}–{span['end']})" if span else ""
            lines.append(f"| {c['id']} | {e(shown.label)} | {e(c.get('type') or '')} | {e(c['text'][:160])} | {quote} |")
        lines.append("")
    v = output.get("verification") or {}
    if v:
        lines += ["## Verification", ""]
        for role in ("challenge", "interrogation", "counter", "judge"):
            if role in v:
                lines.append(f"- **{role}**: {e(v[role].get('summary', ''))}")
        lines.append("")
    meta = output.get("metadata") or {}
    if meta:
        lines += ["## Run", "", f"run {e(meta.get('run_id'))} · engine {e(meta.get('engine'))} · index generation "
                  f"{e(meta.get('index_generation'))} · {meta.get('latency_ms', {}).get('total', 0):.0f} ms"]
    return "\n".join(lines).rstrip() + "\n"


def safe_url(url: Any) -> str | None:
    """The URL when it is plain http(s) with nothing that could break out of the line; None otherwise
    (``javascript:``, ``data:``, a URL with spaces or control characters)."""
    if not isinstance(url, str) or not re.fullmatch(r"https?://[^\s<>\"'`\x00-\x1f\x7f]+", url.strip(), re.I):
        return None
    return url.strip()


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
        # one line per entry: a newline in the metadata must not make one entry look like several
        author = " ".join(((doc.author if doc else None) or c.get("author") or "").split())
        title = " ".join(((doc.title if doc else None) or c.get("title") or c["source_id"]).split())
        when = _chicago_date(doc.date if doc else None, c.get("year"))
        url = safe_url((doc.url if doc else None) or c.get("url"))  # only http(s): no javascript: in a bibliography
        parts = [f"{_inverted(author)}." if author else "", f"“{title.rstrip('.')}.”", f"{when}.",
                 f"Historian collection, {' '.join(str(c['source_id']).split())}.", f"{url}." if url else ""]
        entries[c["source_id"]] = (_inverted(author) or title).lower(), " ".join(p for p in parts if p)
    return "\n".join(text for _, text in sorted(entries.values())) + ("\n" if entries else "")
