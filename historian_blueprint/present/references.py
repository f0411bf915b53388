"""The cited sources of an answer as references a historian's tools import: BibTeX, RIS and CSL-JSON (Chicago
notes-bibliography is ``present/chicago.py``'s, from the same references).

One ``Reference`` per cited document is read from the document's metadata (title, author, date, collection,
url, and the host's own fields such as ``interviewee``, ``interviewer``, ``place``, ``page``, ``newspaper``) and the
paragraphs cited in it; each format writes the same reference, with one author model per kind of document:
- an address or a document: its author;
- an interview: its narrator (the interviewee) as author, the project or person who recorded it as interviewer;
- a newspaper page: no author (a page has no byline); the paper is the container (its name from the title
  "<paper>, <date>, front page" or the host's ``newspaper`` field), with its date, page and place; the record's
  named author (the paper's publisher or editors) is the publisher; the digital collection is the archive.
A name that is a body ("Federal Writers' Project", "Pomeroy, Gould & Co.") is kept whole in every format (BibTeX
braces it, CSL writes it as ``literal``, RIS and Chicago never invert it). Nothing here invents a field: what the
document does not say is left out.
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

# Authors that are bodies, not persons: never inverted ("Project, Federal Writers'") or split into given/family.
_CORPORATE = re.compile(r"\b(project|administration|office|department|bureau|committee|society|company|press|"
                        r"association|government|congress|library|university|board|commission|staff|"
                        r"corporation|incorporated|publishing|printing)\b|"
                        # a firm's forms: "& Co.", "Pomeroy, Gould & Co.", "Smith Bros.", "Acme, Inc.", "& Sons"
                        r"&|\b(?:co|corp|bros|ltd)\.|,\s*(?:inc|ltd|llc)\b\.?|\b(?:and|&)\s+(?:sons|brothers)\b",
                        re.I)
# A name's suffix after a comma, not its given names: "Martin Luther King, Jr." is not "King, Jr.".
_SUFFIX = re.compile(r",\s*(?:jr|sr|[ivx]{1,4})\.?$", re.I)
# A newspaper page's title as Chronicling America writes it: "<paper>[ : subtitle], <date>, front page" / "page 3".
PAGE_TITLE = re.compile(r"^(?P<paper>.+?)(?:\s+:\s+[^,]*)?,\s*(?P<date>\d{4}-\d{2}-\d{2}),\s*"
                         r"(?P<page>front page|page\s+(?P<n>\d+))\s*$", re.I)
_TITLE_STOP = frozenset("a an the of on in at to for and with from by".split())


@dataclass
class Reference:
    """One cited document, as its metadata describes it."""

    source_id: str
    title: str
    authors: list[str] = field(default_factory=list)
    interviewee: str | None = None
    interviewers: list[str] = field(default_factory=list)  # an interview's: who recorded it
    container: str | None = None     # a newspaper page's paper
    page: str | None = None          # its page ("1" for the front page)
    publisher: str | None = None     # a newspaper's publisher or editors, as the record names them
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
        """A citation key, author-year-word: the first author's family name (a body's first word; with no author, the
        paper's first word), the year, the title's first word that is not a function word ("cleveland1893annual",
        "adams1937interview", "goodwins1916front"); letters and digits only ("-44" gives 44). Two sources with the
        same key are told apart where the keys are written (``keys``)."""
        who = self.authors[0] if self.authors else ""
        if corporate(who) or not who:  # a body's, or with no author the paper's, first word that is no function word
            name = next((w for w in (_word(t) for t in (who or self.container or "").split())
                         if w and w not in _TITLE_STOP), "")
        else:
            names = inverted(who).split(",")[0].split()[-1:]    # a person: the family name
            name = names[0] if names else ""
        word = next((w for w in (_word(t) for t in self.title.split()) if w and w not in _TITLE_STOP), "")
        year = abs(self.year) if self.year else "nd"
        return f"{_word(name)}{year}{word}" if _word(name) else f"{word or 'doc'}{year}"

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
        if "newspaper" in t or self.container:
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
        """The note, naming who recorded an interview first."""
        return (f"Interview by {' and '.join(self.interviewers)}. " if self.interviewers else "") + self.note


def inverted(author: str) -> str:
    """"Grover Cleveland" -> "Cleveland, Grover" (bodies and already inverted names stay as they are)."""
    author = author.strip()
    if _SUFFIX.search(author) and not corporate(author):  # "Martin Luther King, Jr." -> "King, Martin Luther, Jr."
        base, suffix = author.rsplit(",", 1)
        turned = inverted(base)
        return f"{turned}, {suffix.strip()}" if turned != base.strip() else author
    if not author or "," in author or " " not in author or corporate(author):
        return author
    first, last = author.rsplit(" ", 1)
    return f"{last}, {first}"


def corporate(name: str) -> bool:
    """A name that is a body, not a person: kept whole in every format."""
    return bool(_CORPORATE.search(name))


def _word(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def keys(refs: list[Reference]) -> list[str]:
    """Each reference's key; a later one of the same key told apart by a letter, then by two ("grant1874annualb",
    ... "grant1874annualz", "grant1874annualaa", ...): never twice the same."""
    out: list[str] = []
    taken: set[str] = set()
    for r in refs:
        key, n = r.key, 0
        while key in taken:
            n += 1
            key = r.key + _letters(n)
        taken.add(key)
        out.append(key)
    return out


_ABC = "abcdefghijklmnopqrstuvwxyz"


def _letters(n: int) -> str:
    """The n-th repeat's letters: 1 -> "b", 25 -> "z", 26 -> "aa", 27 -> "ab", ... (the first has none)."""
    if n < 26:
        return _ABC[n]
    n, width = n - 26, 2
    while n >= 26 ** width:
        n, width = n - 26 ** width, width + 1
    out = ""
    for _ in range(width):
        n, rest = divmod(n, 26)
        out = _ABC[rest] + out
    return out


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
            out[sid] = _reference(sid, c, doc)
        if locator := one_line(c.get("locator") or ""):
            out[sid].locators.append(locator)
    return list(out.values())


def _reference(sid: str, c: dict[str, Any], doc: Any) -> Reference:
    """A document's reference, with the author model of its kind (the module's docstring)."""
    extra = (doc.extra if doc is not None else None) or {}
    author = _clean((doc.author if doc else None) or c.get("author"))
    title = _clean((doc.title if doc else None) or c.get("title")) or _clean(sid) or sid
    ref = Reference(
        source_id=sid, title=title, authors=[author] if author else [], interviewee=_clean(extra.get("interviewee")),
        date=_clean(doc.date if doc else None), year=_year((doc.year if doc else None) or c.get("year")),
        collection=_clean(doc.collection if doc else None), doc_type=_clean(extra.get("doc_type")),
        place=_clean(extra.get("place")), url=(doc.url if doc else None) or c.get("url"),
    )
    page = PAGE_TITLE.match(title) if "newspaper" in (ref.doc_type or "").lower() else None
    if ref.interviewee:  # the narrator speaks: the author; who recorded it: the interviewer
        named = _clean(extra.get("interviewer"))
        ref.interviewers = [n for n in ([named] if named else ref.authors) if n != ref.interviewee]
        ref.authors = [ref.interviewee]
    elif page or extra.get("newspaper"):  # a page of a paper (a bylined article keeps its author)
        ref.container = _clean(extra.get("newspaper")) or (page["paper"] if page else None)
        if page:
            ref.title = "Front page" if page["page"].lower() == "front page" else f"Page {page['n']}"
        ref.page = _clean(extra.get("page")) or (page["n"] or "1" if page else None)
        ref.publisher, ref.authors = (ref.authors[0] if ref.authors else None), []
    return ref


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


def _bib_names(names: list[str]) -> str:
    """Names joined by " and ", a body (or a name holding "and") braced whole: ``{Pomeroy, Gould \\& Co.}``."""
    return " and ".join(f"{{{_bib(a)}}}" if corporate(a) or _AND.search(a) else _bib(a) for a in names)


def bibtex(refs: list[Reference]) -> str:
    """An ``@article`` per newspaper page (journal: the paper, pages, address: its place, publisher), a ``@misc``
    per other document; author (an interview's narrator; its interviewer as editor), date, year, url, note, and
    howpublished: the collection."""
    entries = []
    for r, key in zip(refs, keys(refs)):
        fields = [("title", f"{{{_bib(r.title)}}}"), ("author", _bib_names(r.authors))]
        if r.interviewers:
            fields.append(("editor", _bib_names(r.interviewers)))
            fields.append(("editortype", "interviewer"))
        if r.container:
            fields += [("journal", _bib(r.container)), ("pages", _bib(r.page or "")),
                       ("address", _bib(r.place or "")), ("publisher", _bib(r.publisher or ""))]
        if r.date_parts:
            fields += [("date", r.date_text("-")), ("year", str(r.date_parts[0]))]
        # the url as safe_url gave it: no brace, backslash or space (percent-encoded), verbatim for biblatex
        fields += [("howpublished", _bib(r.collection or "")), ("url", r.url or ""), ("note", _bib(r.full_note))]
        body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields if value)
        entries.append(f"@{'article' if r.container else 'misc'}{{{key},\n{body}\n}}\n")
    return "\n".join(entries)


# ----------------------------------------------------------------------------- RIS
_RIS_TYPE = {"article-newspaper": "NEWS", "interview": "GEN", "speech": "GEN", "document": "GEN"}


def _ris(tag: str, value: str) -> str:
    """One tag line: the value on one line, so that it can start no tag line of its own ("ER  - " in a title is
    text). A URL's ";" is percent-encoded: readers split UR on it, between URLs."""
    return f"{tag}  - {one_line(value.replace(';', '%3B') if tag == 'UR' else value)}"


def ris(refs: list[Reference]) -> str:
    """RIS records (TY, ID, TI, AU, A2: an interview's interviewer, PY, DA, T2: a newspaper page's paper or else the
    collection, SP: its page, PB: its publisher, DB: its collection, CY, UR, N1, ER), one line per field, no line
    breaks in a value."""
    out = []
    for r, key in zip(refs, keys(refs)):
        lines = [("TY", _RIS_TYPE[r.kind]), ("ID", key), ("TI", r.title)]
        lines += [("AU", a if corporate(a) else inverted(a)) for a in r.authors]
        lines += [("A2", a if corporate(a) else inverted(a)) for a in r.interviewers]
        parts = r.date_parts
        if parts:
            lines.append(("PY", str(parts[0])))
            lines.append(("DA", r.date_text("/") + "/" * (3 - len(parts))))
        if r.kind == "article-newspaper":  # the paper (when known) and the database it is read in, never mixed
            lines += [(tag, value) for tag, value in (("T2", r.container), ("SP", r.page), ("PB", r.publisher),
                                                      ("DB", r.collection)) if value]
        elif r.collection:
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
    """A person as family and given names ("MacLennan, F.P." as written inverted too); a body, or a single word,
    as ``literal``."""
    if corporate(name) or " " not in name.strip():
        return {"literal": name}
    if "," in name and not _SUFFIX.search(name):
        family, given = (part.strip() for part in name.split(",", 1))
        return {"family": family, "given": given}
    if _SUFFIX.search(name):  # "Martin Luther King, Jr.": the suffix stays with the family name
        base, suffix = name.rsplit(",", 1)
        if " " in base.strip():
            given, family = base.strip().rsplit(" ", 1)
            return {"family": family, "given": given, "suffix": suffix.strip()}
        return {"literal": name}
    given, family = name.rsplit(" ", 1)
    return {"family": family, "given": given}


def csl_json(refs: list[Reference]) -> str:
    """A CSL-JSON array (Zotero, Pandoc and citeproc read it), valid against the CSL data schema."""
    items = []
    for r, key in zip(refs, keys(refs)):
        item: dict[str, Any] = {"id": key, "type": r.kind, "title": r.title, "note": r.note}
        if r.authors:
            item["author"] = [_csl_name(a) for a in r.authors]
        if r.interviewers:
            item["interviewer"] = [_csl_name(a) for a in r.interviewers]
        if r.date_parts:
            item["issued"] = {"date-parts": [r.date_parts]}
        if r.container:
            item["container-title"] = r.container
        item.update({k: v for k, v in (("page", r.page), ("publisher", r.publisher), ("archive", r.collection),
                                       ("publisher-place", r.place), ("URL", r.url)) if v})
        items.append(item)
    return json.dumps(items, indent=2, ensure_ascii=False) + "\n"
