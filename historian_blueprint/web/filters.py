"""The template filters and globals Historian's pages use, all registered here (app-wide, named ``historian_*``)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from flask import Blueprint, g

from historian_blueprint.services import get_store
from historian_blueprint.present.report import (
    confidence_words, outcome, outcome_counts, report_views, source_label, status_label, status_words,
)
from historian_blueprint.present import formats
from historian_blueprint.schema import CLAIM_TYPE_LABELS
from historian_blueprint.text.markers import split_at_markers
from historian_blueprint.web.common import source_link
from historian_blueprint.web.reading import around


def historian_markers(text: str) -> list[dict[str, Any]]:
    """Split text at its [n] citation markers, so the template can link them (and escape the rest)."""
    return split_at_markers(text or "")


def source_url(source_id: str, start: int | None = None, end: int | None = None, run_id: str | None = None) -> str:
    return source_link(source_id, start, end, run_id)


def historian_json(value: Any) -> str:
    """Indented JSON with its characters as they are (no \\u2013 escapes); the template escapes it as text."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def historian_time(when: float | str | None) -> str:
    """A time as a reader reads it, to the minute in UTC ("2026-11-28 21:40 UTC"), from epoch seconds or an ISO
    timestamp (an index generation's); "" for none, and an unreadable string shown as it is."""
    if not when:
        return ""
    if isinstance(when, str):
        try:
            moment = datetime.fromisoformat(when)
        except ValueError:
            return when
        moment = moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
    else:
        moment = datetime.fromtimestamp(when, timezone.utc)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def cited_document(source_id: str) -> Any:
    """A cited document, read once per request however many of the page's spans cite it."""
    docs = g.setdefault("historian_cited", {})
    if source_id not in docs:
        docs[source_id] = get_store().get_document(source_id)
    return docs[source_id]


def source_groups(citations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The citations grouped by document, in order of first citation, each group with its label (who, what,
    when) and its citations in order: the page quotes each passage once, under its source."""
    groups: dict[str, dict[str, Any]] = {}
    for c in citations:
        doc = cited_document(c["source_id"])
        if c["source_id"] not in groups:
            groups[c["source_id"]] = {"source_id": c["source_id"], "label": source_label({**c, "locator": None}, doc),
                                      "citations": []}
        groups[c["source_id"]]["citations"].append({**c, **around(doc.text if doc else "", c["start"], c["end"])})
    return list(groups.values())


def document_label(span: Any) -> str:
    """A span's document (a stored answer's dict or a checked draft's EvidenceSpan) as a historian cites it:
    who, what, when and where in it, not its id; each document read once per request."""
    source_id, locator = (span.get("source_id"), span.get("locator")) if isinstance(span, dict) else (
        span.source_id, getattr(span, "locator", None))
    doc = cited_document(source_id)
    if doc is None:
        return source_id + (f", {locator}" if locator else "")
    return source_label({"source_id": doc.id, "title": doc.title, "author": doc.author, "year": doc.year,
                         "locator": locator}, doc)


FILTERS = {"historian_markers": historian_markers, "historian_json": historian_json, "historian_time": historian_time,
           "historian_outcome": outcome}  # verdict -> (group, label, span)
GLOBALS = {"historian_source_url": source_url, "historian_source_groups": source_groups,
           "historian_document_label": document_label, "historian_outcome_counts": outcome_counts,
           "historian_status_words": status_words,  # output -> (group, label, sentence)
           "historian_claim_type": lambda kind: CLAIM_TYPE_LABELS.get(kind, kind or ""),  # a claim type in words
           "historian_confidence_words": confidence_words,
           "historian_status_label": status_label,  # a run summary's (group, label)
           "historian_report_views": report_views,
           "historian_export_formats": formats.formats_for}  # "answer" or "map" -> its export formats


def register(bp: Blueprint) -> None:
    """Add every filter and global to the app the blueprint is registered on."""
    for name, function in FILTERS.items():
        bp.add_app_template_filter(function, name)
    for name, function in GLOBALS.items():
        bp.add_app_template_global(function, name)
