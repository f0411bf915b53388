"""The cited sources of an answer as references a historian's tools import: BibTeX, RIS, CSL-JSON, and Chicago
notes-bibliography (a note per citation, a bibliography per source).

One ``Reference`` per cited document is read from the document's metadata (title, author, date, collection,
url, and the host's own fields such as ``interviewee`` or ``place``) and the paragraphs cited in it; each
format writes the same reference. Nothing here invents a field: what the document does not say is left out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from historian_blueprint.present.report import safe_url
from historian_blueprint.text.markdown import one_line

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
# Authors that are bodies, not persons: never inverted ("Project, Federal Writers'") or split into given/family.
_CORPORATE = re.compile(r"\b(project|administration|office|department|bureau|committee|society|company|press|"
                        r"association|government|congress|library|university|board|commission|staff)\b", re.I)


@dataclass
class Reference:
    """One cited document, as its metadata describes it."""

    source_id: str
    title: str
    authors: list[str] = field(default_factory=list)
    interviewee: str | None = None
    date: str | None = None          # as the document gives it: "1893-12-04", "1893", "1936-1938"
    year: int | None = None
    collection: str | None = None
    doc_type: str | None = None
    place: str | None = None
    url: str | None = None
    locators: list[str] = field(default_factory=list)  # the cited places in it, in citation order

    def __post_init__(self) -> None:
        self.url = safe_url(self.url)  # every format writes it as it is: plain http(s), percent-encoded, or none

    @property
    def key(self) -> str:
        """A BibTeX key: first author's (or interviewee's, or the title's) first word, the year, the id's tail."""
        who = (self.authors[0] if self.authors and not corporate(self.authors[0]) else self.interviewee) or self.title
        name = re.sub(r"[^a-z]", "", (who.split(",")[0].split() or ["x"])[-1].lower()) or "doc"
        tail = re.sub(r"[^a-z0-9]", "", self.source_id.lower())[-6:]
        return f"{name}{abs(self.year) if self.year else 'nd'}{tail}"  # letters and digits only: "-44" gives 44

    @property
    def date_parts(self) -> list[int] | None:
        """[year, month, day] as far as the date gives them (a range such as "1936-1938" gives its year)."""
        m = re.fullmatch(r"([0-9]{4})-([0-9]{2})(?:-([0-9]{2}))?", self.date or "")
        try:  # a date that is no calendar date ("1893-13-45") gives its year, as a range does
            d = date(int(m[1]), int(m[2]), int(m[3] or 1)) if m else None
        except ValueError:
            d = None
        if m and d:
            return [d.year, d.month, d.day][: 3 if m[3] else 2]
        return [self.year] if self.year else None

    def date_text(self, sep: str) -> str:
        """The date's parts joined by ``sep``, month and day with two digits: "1893-12-04", "1893/12/04", "1937"."""
        return sep.join(f"{p:02d}" if i else str(p) for i, p in enumerate(self.date_parts or []))

    @property
    def kind(self) -> str:
        """What it is, in CSL's vocabulary: a newspaper article, an interview, a speech, or a document."""
        t = (self.doc_type or "").lower()
        if "newspaper" in t:
            return "article-newspaper"
        if "interview" in t or "oral history" in t or self.interviewee:
            return "interview"
        if "address" in t or "speech" in t or "message" in t:
            return "speech"
        return "document"

    @property
    def note(self) -> str:
        """The places cited and where the document is held: "Cited: para 3, para 12. Historian collection, <id>."."""
        cited = f"Cited: {', '.join(dict.fromkeys(self.locators))}. " if self.locators else ""
        where = f"{self.collection}; " if self.collection else ""
        return f"{cited}{where}Historian collection, {self.source_id}."

    @property
    def full_note(self) -> str:
        """The note, naming the narrator first when the document is an interview."""
        return (f"Interview with {self.interviewee}. " if self.interviewee else "") + self.note


def corporate(name: str) -> bool:
    return bool(_CORPORATE.search(name))


def _clean(value: Any) -> str | None:
    return (one_line(value) if value is not None else "") or None


def _year(value: Any) -> int | None:
    """A year as a number: an int, or a string of one to four digits ("1893"); anything else is no year."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value or "").strip()
    return int(text) if re.fullmatch(r"[0-9]{1,4}", text) else None


def references(citations: list[dict[str, Any]], get_document: Callable[[str], Any] | None = None) -> list[Reference]:
    """One reference per cited document, in order of first citation, from the stored document when
    ``get_document`` (source id -> document or None) has one, else from the citation's own fields."""
    out: dict[str, Reference] = {}
    for c in citations:
        sid = str(c["source_id"])
        if sid not in out:
            doc = get_document(sid) if get_document is not None else None
            extra = (doc.extra if doc is not None else None) or {}
            author = _clean((doc.author if doc else None) or c.get("author"))
            out[sid] = Reference(
                source_id=sid, title=_clean((doc.title if doc else None) or c.get("title")) or _clean(sid) or sid,
                authors=[author] if author else [], interviewee=_clean(extra.get("interviewee")),
                date=_clean(doc.date if doc else None), year=_year((doc.year if doc else None) or c.get("year")),
                collection=_clean(doc.collection if doc else None), doc_type=_clean(extra.get("doc_type")),
                place=_clean(extra.get("place")), url=(doc.url if doc else None) or c.get("url"),
            )
        if locator := one_line(c.get("locator") or ""):
            out[sid].locators.append(locator)
    return list(out.values())


# ----------------------------------------------------------------------------- BibTeX
_BIB_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
_LONE_BRACE = {"{": r"\textbraceleft{}", "}": r"\textbraceright{}"}
_AND = re.compile(r"\band\b", re.I)  # BibTeX's separator between names: a name with it is braced whole


def _bib(text: str) -> str:
    """A field's text as BibTeX's LaTeX, on one line: TeX's specials escaped (``\\`` as ``\\textbackslash{}``, so
    no value runs a command), a brace as ``\\{``/``\\}`` where it pairs with another and as ``\\textbraceleft{}``/
    ``\\textbraceright{}`` where it does not (BibTeX counts an escaped brace too): the braces always balance, and a
    value closes neither its field nor its entry. An ``@`` stays: inside a field's braces, on a line that is not its
    own, no reader takes it for an entry."""
    text = one_line(text)
    paired, opened = set(), []
    for i, ch in enumerate(text):
        if ch == "{":
            opened.append(i)
        elif ch == "}" and opened:
            paired.update((opened.pop(), i))
    return "".join(("\\" + ch if i in paired else _LONE_BRACE[ch]) if ch in "{}" else _BIB_SPECIAL.get(ch, ch)
                   for i, ch in enumerate(text))


def bibtex(refs: list[Reference]) -> str:
    """``@misc`` entries with title, author, date, year, url, note (and howpublished: the collection)."""
    entries, keys = [], set()
    for r in refs:
        key = r.key
        while key in keys:
            key += "a"
        keys.add(key)
        authors = " and ".join(f"{{{_bib(a)}}}" if corporate(a) or _AND.search(a) else _bib(a) for a in r.authors)
        fields = [("title", f"{{{_bib(r.title)}}}"), ("author", authors)]
        if r.date_parts:
            fields += [("date", r.date_text("-")), ("year", str(r.date_parts[0]))]
        # the url as safe_url gave it: no brace, backslash or space (percent-encoded), verbatim for biblatex
        fields += [("howpublished", _bib(r.collection or "")), ("url", r.url or ""), ("note", _bib(r.full_note))]
        body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields if value)
        entries.append(f"@misc{{{key},\n{body}\n}}\n")
    return "\n".join(entries)


# ----------------------------------------------------------------------------- RIS
_RIS_TYPE = {"article-newspaper": "NEWS", "interview": "GEN", "speech": "GEN", "document": "GEN"}


def _ris(tag: str, value: str) -> str:
    """One tag line: the value on one line, so that it can start no tag line of its own ("ER  - " in a title is
    text). A URL's ";" is percent-encoded: readers split UR on it, between URLs."""
    return f"{tag}  - {one_line(value.replace(';', '%3B') if tag == 'UR' else value)}"


def ris(refs: list[Reference]) -> str:
    """RIS records (TY, TI, AU, PY, DA, T2, CY, UR, N1, ID, ER), one line per field, no line breaks in a value."""
    out = []
    for r in refs:
        lines = [("TY", _RIS_TYPE[r.kind]), ("ID", r.key), ("TI", r.title)]
        lines += [("AU", a if corporate(a) else _inverted(a)) for a in r.authors]
        parts = r.date_parts
        if parts:
            lines.append(("PY", str(parts[0])))
            lines.append(("DA", r.date_text("/") + "/" * (3 - len(parts))))
        if r.collection:
            lines.append(("T2", r.collection))
        if r.place:
            lines.append(("CY", r.place))
        if r.url:
            lines.append(("UR", r.url))
        lines.append(("N1", r.full_note))
        out.append("\n".join(_ris(tag, value) for tag, value in lines) + "\nER  - \n")
    return "\n".join(out)


# ----------------------------------------------------------------------------- CSL-JSON
def _csl_name(name: str) -> dict[str, str]:
    if corporate(name) or " " not in name.strip():
        return {"literal": name}
    given, family = name.rsplit(" ", 1)
    return {"family": family, "given": given}


def csl_json(refs: list[Reference]) -> str:
    """A CSL-JSON array (Zotero, Pandoc and citeproc read it), valid against the CSL data schema."""
    items = []
    for r in refs:
        item: dict[str, Any] = {"id": r.key, "type": r.kind, "title": r.title, "note": r.note}
        if r.authors:
            item["author"] = [_csl_name(a) for a in r.authors]
        if r.interviewee:
            item["interviewer" if r.authors else "author"] = item.pop("author", [])
            item["author"] = [_csl_name(r.interviewee)]
        if r.date_parts:
            item["issued"] = {"date-parts": [r.date_parts]}
        if r.collection:
            item["container-title" if r.kind == "article-newspaper" else "archive"] = r.collection
        if r.place:
            item["publisher-place"] = r.place
        if r.url:
            item["URL"] = r.url
        items.append(item)
    return json.dumps(items, indent=2, ensure_ascii=False) + "\n"


# ----------------------------------------------------------------------------- Chicago notes-bibliography
def _inverted(author: str) -> str:
    """"Grover Cleveland" -> "Cleveland, Grover" (bodies and already inverted names stay as they are)."""
    author = author.strip()
    if not author or "," in author or " " not in author or corporate(author):
        return author
    first, last = author.rsplit(" ", 1)
    return f"{last}, {first}"


def _long_date(r: Reference) -> str:
    parts = r.date_parts
    if parts and len(parts) == 3:
        return f"{_MONTHS[parts[1] - 1]} {parts[2]}, {parts[0]}"
    if parts and len(parts) == 2:
        return f"{_MONTHS[parts[1] - 1]} {parts[0]}"
    return r.date or (str(r.year) if r.year else "n.d.")


def chicago_note(r: Reference, locator: str | None = None) -> str:
    """A first full note: "Grover Cleveland, “Annual Message to Congress (1893),” 1893, State of the Union
    Addresses, para 12." (an interview names its interviewee; a newspaper its place)."""
    who = r.authors[0] if r.authors else ""
    parts = [f"{who}, " if who else "", f"“{r.title.rstrip('.')},” "]
    if r.interviewee:
        parts.append(f"interview with {r.interviewee}, ")
    if r.place:
        parts.append(f"{r.place}, ")
    parts.append(_long_date(r))
    if r.collection:
        parts.append(f", {r.collection}")
    if locator:
        parts.append(f", {locator}")
    return "".join(parts) + "."


def chicago_bibliography_entry(r: Reference) -> str:
    who = _inverted(r.authors[0]) if r.authors else ""
    parts = [f"{who}." if who else "", f"“{r.title.rstrip('.')}.”"]
    if r.interviewee:
        parts.append(f"Interview with {r.interviewee}.")
    if r.place:
        parts.append(f"{r.place},")
    parts.append(f"{_long_date(r).rstrip('.')}.")  # "n.d.", not "n.d.."
    if r.collection:
        parts.append(f"{r.collection}.")
    parts.append(f"Historian collection, {r.source_id}.")
    if r.url:
        parts.append(f"{r.url}.")
    return " ".join(p for p in parts if p)


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
        if r.source_id in seen:
            who = r.authors[0].split()[-1] + ", " if r.authors and not corporate(r.authors[0]) else ""
            tail = f",” {locator}." if locator else ".”"
            notes.append(inert(f"{c['id']}. {who}“{_short_title(r.title)}{tail}"))
        else:
            notes.append(inert(f"{c['id']}. {chicago_note(r, locator)}"))
            seen.add(r.source_id)
    entries = sorted(refs, key=lambda r: (_inverted(r.authors[0]) if r.authors else r.title).lower())
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
