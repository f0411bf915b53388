"""Export formats: one registry that the pages, the API and the CLI read.

An answer leaves as its report (Markdown), its output (JSON) or its cited sources in the formats reference managers
import (BibTeX, RIS, CSL-JSON, Chicago); a map as its report or its output; a draft checked by ``historian verify``
as its report or its output. A new format is one module that calls
``register`` with a ``Format`` (and its test): the run pages link it, ``/runs/<id>/export.<name>`` (pages and API
tokens) serves it, and ``historian ask --output <name>`` prints it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from historian_blueprint.present.report import draft_report, source_label, to_markdown
from historian_blueprint.present.chicago import chicago, chicago_bibliography_entry
from historian_blueprint.present.references import Reference, bibtex, csl_json, references, ris

KINDS = ("answer", "map", "draft")  # an answer, a map, a draft checked by `historian verify`


@dataclass
class Exported:
    """What a format renders: an answer's or a map's stored output, its question or topic, and how to read a cited
    document (by id; None when it is gone). The cited documents are read once, however many formats use them."""

    kind: str
    output: dict[str, Any]
    title: str
    document: Callable[[str], Any] = lambda _source_id: None
    _documents: dict[str, Any] | None = field(default=None, repr=False)

    def documents(self) -> dict[str, Any]:
        if self._documents is None:
            cited = dict.fromkeys(c["source_id"] for c in self.output.get("citations") or [])
            self._documents = {source_id: self.document(source_id) for source_id in cited}
        return self._documents

    def references(self) -> list[Reference]:
        return references(self.output.get("citations") or [], self.documents().get)


@dataclass(frozen=True)
class Format:
    """One way out: ``name`` is the file's extension (``md``, ``csl.json``), ``label`` what the page's link says,
    ``group`` the words the page puts before the first link of its group ("references")."""

    name: str
    label: str
    mimetype: str
    kinds: tuple[str, ...]
    render: Callable[[Exported], str]
    group: str = ""


FORMATS: dict[str, Format] = {}


def register(fmt: Format) -> Format:
    """Add a format (its name not taken, its kinds known)."""
    if fmt.name in FORMATS:
        raise ValueError(f"the export format {fmt.name!r} is registered already")
    if not fmt.kinds or set(fmt.kinds) - set(KINDS):
        raise ValueError(f"an export format is for {' or '.join(KINDS)}, not {fmt.kinds!r}")
    FORMATS[fmt.name] = fmt
    return fmt


def formats_for(kind: str) -> list[Format]:
    """The formats of answers, of maps or of checked drafts, in the order they were registered."""
    return [f for f in FORMATS.values() if kind in f.kinds]


def find(name: str, kind: str) -> Format:
    """The format of that name for that kind; LookupError naming the ones there are."""
    fmt = FORMATS.get(name)
    if fmt is None or kind not in fmt.kinds:
        raise LookupError(f"export formats: {', '.join(f.name for f in formats_for(kind))}")
    return fmt


def _markdown(exported: Exported) -> str:
    out = exported.output
    if exported.kind == "map":
        return out["report"]
    if exported.kind == "draft":
        return draft_report(out)
    docs = exported.documents()
    labels = {c["id"]: source_label(c, docs.get(c["source_id"])) for c in out.get("citations") or []}
    return to_markdown(out, exported.title, labels, [chicago_bibliography_entry(r) for r in exported.references()])


def _json(exported: Exported) -> str:
    return json.dumps(exported.output, indent=2, ensure_ascii=False)


register(Format("md", "Markdown", "text/markdown", KINDS, _markdown))
register(Format("json", "JSON", "application/json", KINDS, _json))
register(Format("bib", "BibTeX", "application/x-bibtex", ("answer",), lambda e: bibtex(e.references()), "references"))
register(Format("ris", "RIS", "application/x-research-info-systems", ("answer",), lambda e: ris(e.references()),
                "references"))
register(Format("csl.json", "CSL-JSON", "application/vnd.citationstyles.csl+json", ("answer",),
                lambda e: csl_json(e.references()), "references"))
register(Format("chicago.txt", "Chicago", "text/plain", ("answer",),
                lambda e: chicago(e.references(), e.output.get("citations") or []), "references"))
