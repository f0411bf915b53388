"""How a historian names a source: who speaks, in what, when and where."""

from __future__ import annotations

from typing import Any


def source_label(c: dict[str, Any], doc: Any = None) -> str:
    """Who speaks and where, as a historian cites it: "Grover Cleveland, Annual Message to Congress (1893),
    para 12"; an interview names its narrator ("Rachel Adams, interviewed by the Federal Writers' Project,
    1937"); a newspaper its title. ``doc``: the stored document, for the host's fields (interviewee, place)."""
    extra = (getattr(doc, "extra", None) or {}) if doc is not None else {}
    narrator = extra.get("interviewee") or getattr(doc, "interviewee", None)
    author = " ".join(str(c.get("author") or "").split())
    title = " ".join(str(c.get("title") or c["source_id"]).split())
    when = f", {c['year']}" if c.get("year") and str(c["year"]) not in title else ""
    where = f", {c['locator']}" if c.get("locator") else ""
    if narrator:
        by = f", interviewed by the {author}" if author else ""
        return f"{narrator}{by}{when}{where}"
    who = f"{author}, " if author and author not in title else ""
    return f"{who}{title}{when}{where}"
