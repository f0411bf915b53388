"""Chicago notes-bibliography for an answer's cited sources (``present/references.py`` reads them): a note per
citation in the answer's numbering (a later citation of the same source shortened), a bibliography entry per
source, each by kind of document (an address, an interview, a newspaper page), every element closed by one period;
each line plain text that stays one line and that a spreadsheet will not run (``inert``)."""

from __future__ import annotations

from typing import Any

from historian_blueprint.present.references import Reference, corporate, inverted
from historian_blueprint.text.markdown import one_line

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


def _long_date(r: Reference) -> str:
    parts = r.date_parts
    if parts and len(parts) == 3:
        return f"{_MONTHS[parts[1] - 1]} {parts[2]}, {parts[0]}"
    if parts and len(parts) == 2:
        return f"{_MONTHS[parts[1] - 1]} {parts[0]}"
    return r.date or (str(r.year) if r.year else "n.d.")


def _end(text: str) -> str:
    """A bibliography element closed by one period ("MacLennan, F.P." stays as it is: never "F.P..")."""
    text = text.strip()
    return text if not text or text.endswith((".", "?", "!", ".”", "?”", "!”")) else text + "."


def _names(names: list[str]) -> str:
    return " and ".join(names)


def _quoted(title: str, mark: str) -> str:
    """A title in quotation marks with the punctuation that follows it inside them ("“Title,”", "“Title.”"); a
    title that ends in its own question or exclamation mark keeps it alone ("“Shall the Union Survive?”")."""
    title = title.rstrip(".")
    return f"“{title}”" if title.endswith(("?", "!")) else f"“{title}{mark}”"


def chicago_note(r: Reference, locator: str | None = None) -> str:
    """A first full note, by kind: "Grover Cleveland, “Annual Message to Congress (1893),” December 4, 1893, State
    of the Union Addresses, para 12."; an interview: "Rachel Adams, interview by Federal Writers' Project, ...,
    “Interview with Rachel Adams, Georgia,” 1936-1938, ..."; a newspaper page: "“Front page,” Goodwin's weekly
    (Salt Lake City, Utah), January 1, 1916, 1, Chronicling America ..."."""
    parts = [f"{_names(r.authors)}, " if r.authors else ""]
    if r.interviewers:
        parts.append(f"interview by {_names(r.interviewers)}, ")
    parts.append(_quoted(r.title, ",") + " ")
    if r.container:
        parts.append(f"{r.container}{f' ({r.place})' if r.place else ''}, ")
    elif r.place:
        parts.append(f"{r.place}, ")
    parts.append(_long_date(r))
    parts += [f", {value}" for value in (r.page, r.collection, locator) if value]
    return _end("".join(parts))


def chicago_bibliography_entry(r: Reference) -> str:
    """A bibliography entry, by kind: "Cleveland, Grover. “Annual Message to Congress (1893).” December 4, 1893. ...";
    "Adams, Rachel. Interview by Federal Writers' Project, .... “Interview with Rachel Adams, Georgia.” ...";
    "Goodwin's weekly (Salt Lake City, Utah). “Front page.” January 1, 1916, 1. ..." (an element ends in one
    period)."""
    if r.authors:
        head = [inverted(r.authors[0]) + "".join(f" and {a}" for a in r.authors[1:])]
    elif r.container:
        head = [f"{r.container}{f' ({r.place})' if r.place else ''}"]
    else:
        head = []
    if r.interviewers:
        head.append(f"Interview by {_names(r.interviewers)}")
    when = _long_date(r).rstrip(".") + (f", {r.page}" if r.page else "")  # "n.d.", not "n.d.."
    parts = head + [_quoted(r.title, ".")]
    if r.place and not r.container:
        parts.append(f"{r.place},")
    parts += [when, r.collection or "", f"Historian collection, {r.source_id}", r.url or ""]
    return " ".join(_end(p) if not p.endswith(",") else p for p in parts if p)


def _sort_key(r: Reference) -> str:
    return (inverted(r.authors[0]) if r.authors else r.container or r.title).lower()


def chicago(refs: list[Reference], citations: list[dict[str, Any]]) -> str:
    """Notes (one per citation, in the answer's numbering; a later citation of the same source is shortened)
    and the bibliography (alphabetical by author or title)."""
    by_id = {r.source_id: r for r in refs}
    notes, seen = [], set()
    for c in citations:
        r = by_id.get(str(c["source_id"]))
        if r is None:
            continue
        locator = one_line(c.get("locator") or "") or None
        if r.source_id in seen:  # a later note is short: who, a short title, (the paper,) where
            who = inverted(r.authors[0]).split(",")[0] + ", " if r.authors and not corporate(r.authors[0]) else ""
            rest = [value for value in (r.container, locator) if value]
            short = _quoted(_short_title(r.title), "," if rest else ".")
            notes.append(inert(f"{c['id']}. {who}{short}{' ' + ', '.join(rest) + '.' if rest else ''}"))
        else:
            notes.append(inert(f"{c['id']}. {chicago_note(r, locator)}"))
            seen.add(r.source_id)
    entries = sorted(refs, key=_sort_key)
    return ("Notes\n\n" + "\n".join(notes) + "\n\nBibliography\n\n"
            + "\n".join(inert(chicago_bibliography_entry(r)) for r in entries) + "\n" if refs else "")


_OPENERS = ("=", "+", "-", "@", "\t", "\r")


def inert(line: str) -> str:
    """A line of plain text that stays one line and that a spreadsheet will not run: the line on one line
    (``one_line``: no value can start a line of its own), and a leading apostrophe when it opens with = + - @ (or a
    tab or carriage return), as OWASP advises against formula injection (a document titled "=HYPERLINK(...)")."""
    text = one_line(line)
    return "'" + text if line[:1] in _OPENERS or text[:1] in _OPENERS else text


def _short_title(title: str) -> str:
    """Chicago's short title: the first four words (a later note names the work briefly)."""
    return " ".join(title.rstrip(".").split()[:4]).rstrip(",;:")
