"""Every field of every export is neutral: hostile metadata (braces, backslashes, ``@``, newlines, formula openers,
Markdown and HTML, ``ER  -``, a ``}`` that would close a field) in any field of a cited document comes out of BibTeX,
RIS, CSL-JSON, Chicago and the Markdown report as that field's text. Each export is read back with its format's own
reader: one entry per cited document, no other block, and every field's text recovered once its escaping is decoded
(after the normalisations the exports document: whitespace collapsed to single spaces, control characters dropped,
a URL percent-encoded where it carried a character that is not a URL character)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote

import bibtexparser
import jsonschema
import pytest
import rispy
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import make_plain_app
from historian_blueprint import get_store
from historian_blueprint.present.report import safe_url, to_markdown
from historian_blueprint.text.markdown import one_line
from historian_blueprint.present.chicago import chicago, chicago_bibliography_entry
from historian_blueprint.present.references import PAGE_TITLE, bibtex, csl_json, references, keys, ris
from historian_blueprint.store import Document
from historian_blueprint.text.labels import source_label

SCHEMA = json.loads((Path(__file__).parent / "data" / "csl" / "csl-data.json").read_text(encoding="utf-8"))
PREAMBLE_URL = "https://x.example/}}@preamble{{\\input{/etc/hostname}}}@misc{x,title={x},note={"
BRACE_URL = "https://example.org/w}b{"
EXPORTS = settings(max_examples=60, deadline=None, database=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

PIECES = ["{", "}", "}}", "}}@preamble{{", "\\", "\\input{/etc/hostname}", "\\}", "@", "@misc{x,", "@string{a=b}",
          "@comment{", "\n", "\r", "\r\n", "\t", "\u2028", "\x85", "\x0b", "\x00", "\x1b[31m", "=", "+", "-",
          "=HYPERLINK(\"http://x\")", "@SUM(A1)", "%", "#", "&", "$", "_", "^", "~", ",", "\"", "'", " and ", "ER  - ",
          "\nER  - \n", "\nTY  - JOUR\n", "\nAU  - ", "# ", "## ", "- ", "* ", "1. ", "1893) ", "> ", "---", "===",
          "|", "`", "```", "*", "[x](javascript:alert(1))", "<script>", "<img src=x onerror=alert(1)>", "&amp;",
          "&#x3c;", "[3]", "[3]: http://evil", "![i](x)", "é", "“", "\u202e", "\u200b", "日本", "\U0001f600", " ", "."]
URL_PIECES = ["{", "}", "\\", "@", ";", "%", "%7B", "#", "&", "=", ",", "\"", "<", ">", "`", "|", "^", "~", "_", "$",
              "'", "(", ")", "[", "]", "é", "\u202e", "\x80", "a", "/", "?"]

hostile = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=6)), min_size=1, max_size=8).map("".join)
url = st.one_of(st.none(), hostile, st.sampled_from([PREAMBLE_URL, BRACE_URL]),
                st.lists(st.sampled_from(URL_PIECES), max_size=10).map(lambda p: "https://x.example/" + "".join(p)))
date = st.one_of(st.none(), hostile, st.dates().map(str),
                 st.sampled_from(["1893-12-04", "1893-02", "1893-13-45", "1936-1938", "0000-01-01", "١٨٩٣-١٢-٠٤"]))
source = st.fixed_dictionaries({
    "sid": hostile.filter(lambda s: one_line(s)), "stored": st.booleans(), "title": hostile,
    "author": st.one_of(st.none(), hostile), "date": date, "year": st.one_of(st.none(), st.integers(-50, 3000)),
    "cited_year": st.one_of(st.none(), st.integers(1, 2100), hostile, st.sampled_from(["1893", " 1893\n"])),
    "url": url, "collection": st.one_of(st.none(), hostile), "interviewee": st.one_of(st.none(), hostile),
    "doc_type": st.one_of(st.none(), hostile, st.sampled_from(["newspaper page", "oral history interview", "speech"])),
    "place": st.one_of(st.none(), hostile), "quote": hostile,
    "locators": st.lists(st.one_of(st.none(), hostile), min_size=1, max_size=2),
})
sources = st.lists(source, min_size=1, max_size=3, unique_by=lambda s: s["sid"])

PLAIN = {"sid": "d1", "stored": True, "title": "Plain", "author": None, "date": None, "year": None, "cited_year": None,
         "collection": None, "interviewee": None, "doc_type": None, "place": None, "quote": "q", "locators": ["para 1"]}
# The two URLs, and the same attack in every text field of one document.
CONCRETE = [
    [{**PLAIN, "url": PREAMBLE_URL}, {**PLAIN, "sid": "d2", "url": BRACE_URL, "stored": False}],
    [{"sid": "d1}\n@preamble{x}", "stored": True, "title": PREAMBLE_URL, "author": "=HYPERLINK(\"x\")\nER  - ",
      "date": "1893-12-04\n}", "year": 1893, "cited_year": "18}93", "url": PREAMBLE_URL, "collection": "}}@string{a=b}",
      "interviewee": "- list\n# heading", "doc_type": "interview <script>", "place": "+1 \\input{x}",
      "quote": "@SUM(A1) [x](javascript:alert(1))", "locators": ["}\nER  - \nTY  - JOUR", "\r\n= 1"]}],
]


def cited(specs):
    """The stored documents (of the specs that are stored) and the citations an answer made to all of them."""
    docs, citations = {}, []
    for s in specs:
        if s["stored"]:
            extra = {name: s[name] for name in ("interviewee", "doc_type", "place")}
            docs[s["sid"]] = Document(id=s["sid"], title=s["title"], text=s["quote"], author=s["author"],
                                      date=s["date"], url=s["url"], year=s["year"], collection=s["collection"],
                                      extra=extra)
        for locator in s["locators"]:
            citations.append({"id": len(citations) + 1, "source_id": s["sid"], "title": s["title"],
                              "author": s["author"], "year": s["year"] if s["stored"] else s["cited_year"],
                              "url": s["url"], "locator": locator, "text": s["quote"], "start": 0,
                              "end": len(s["quote"])})
    return docs, citations


def field_text(value):
    """What a field says once whitespace is collapsed and control characters are dropped; None when nothing is left."""
    return one_line(value) if value is not None and one_line(value) else None


def check_references_keep_the_input(specs, refs):
    assert [r.source_id for r in refs] == [s["sid"] for s in specs]
    for s, r in zip(specs, refs):
        stored = s["stored"]
        title = field_text(s["title"]) or one_line(s["sid"])
        author = [one_line(s["author"])] if field_text(s["author"]) else []
        interview = field_text(s["interviewee"]) if stored else None
        page = ("newspaper" in (field_text(s["doc_type"]) or "").lower() and stored and not interview
                and PAGE_TITLE.match(title))
        if interview:  # the narrator is the author; the record's author recorded it (unless it is the narrator)
            assert r.authors == [interview] and r.interviewers == [a for a in author if a != interview]
            assert r.title == title
        elif page:  # a newspaper page: no author; the record's author published the paper
            assert r.authors == [] and r.publisher == (author[0] if author else None)
            assert r.title.startswith(("Front page", "Page "))
        else:
            assert r.authors == author and r.title == title
        assert r.locators == [one_line(loc) for loc in s["locators"] if field_text(loc)]
        for name in ("collection", "date", "interviewee", "doc_type", "place"):
            assert getattr(r, name) == (field_text(s[name]) if stored else None), name
        year = s["year"] if stored else s["cited_year"]
        digits = re.fullmatch(r"[0-9]{1,4}", year.strip()) if isinstance(year, str) else None
        assert r.year == (int(year) if digits else year if isinstance(year, int) else None)
        assert r.url == safe_url(s["url"])
        if r.url is not None:  # percent-encoding only: the same URL
            assert unquote(r.url) == unquote(s["url"].strip()) and not re.search(r"[{}\\\s<>\"`|^]", r.url)


# ----------------------------------------------------------------------------- BibTeX
_UNBIB = re.compile(r"\\text(backslash|asciitilde|asciicircum|braceleft|braceright)\{\}|\\([{}&%$#_])|[{}]")
_TEXT_COMMANDS = {"backslash": "\\", "asciitilde": "~", "asciicircum": "^", "braceleft": "{", "braceright": "}"}


def unbib(value: str) -> str:
    """A BibTeX field's LaTeX back to its text: the escapes decoded, the protecting (unescaped) braces dropped."""
    return _UNBIB.sub(lambda m: _TEXT_COMMANDS[m[1]] if m[1] else m[2] or "", value)


def bib_names(value: str) -> list[str]:
    """The names of an author field, split on " and " outside braces (escaped braces are text), each decoded."""
    names, depth, start = [], 0, 0
    for m in re.finditer(r"\\[{}]|[{}]| and ", value):
        if m[0] in "{}":
            depth += 1 if m[0] == "{" else -1
        elif m[0] == " and " and depth == 0:
            names.append(value[start:m.start()])
            start = m.end()
    return [unbib(n) for n in [*names, value[start:]]] if value else []


def balanced(value: str) -> bool:
    """Whether a field's braces balance as BibTeX itself counts them: every brace, escaped or not."""
    depth = 0
    for ch in value:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def check_bibtex(text, refs):
    library = bibtexparser.parse_string(text)
    assert not library.failed_blocks and not library.strings and not library.preambles and not library.comments
    assert len(library.blocks) == len(library.entries) == len(refs)  # one entry per document, nothing else
    for entry, r, key in zip(library.entries, refs, keys(refs)):
        fields = {name: f.value for name, f in entry.fields_dict.items()}
        assert entry.entry_type == ("article" if r.container else "misc") and entry.key == key
        assert re.fullmatch(r"[a-z0-9]+", entry.key)
        assert all(balanced(value) for value in fields.values()), fields
        assert unbib(fields["title"]) == one_line(r.title) and unbib(fields["note"]) == one_line(r.full_note)
        assert bib_names(fields.get("author", "")) == r.authors
        assert bib_names(fields.get("editor", "")) == r.interviewers
        for name, value in (("journal", r.container), ("pages", r.page), ("publisher", r.publisher)):
            assert (unbib(fields[name]) if name in fields else None) == (value if r.container else None), name
        assert (unbib(fields["howpublished"]) if "howpublished" in fields else None) == r.collection
        assert fields.get("url") == r.url  # as safe_url encoded it: no escape to decode
        assert fields.get("year") == (str(r.date_parts[0]) if r.date_parts else None)
    lines = text.splitlines()
    assert sum(line.startswith("@") for line in lines) == len(refs) and all(
        line == "" or line == "}" or line.startswith(("@misc{", "@article{", "  ")) for line in lines)


# ----------------------------------------------------------------------------- RIS
def check_ris(text, refs):
    records = rispy.loads(text)
    assert len(records) == len(refs)
    assert all(re.match(r"[A-Z][A-Z0-9]  - ", line) or line == "" for line in text.split("\n"))  # tag lines only
    assert sum(line == "ER  - " for line in text.split("\n")) == len(refs)
    words = lambda name: sorted(name.replace(",", " ").split())  # noqa: E731 - RIS inverts a person's name
    for record, r, key in zip(records, refs, keys(refs)):
        assert record["id"] == key and record["title"] == one_line(r.title)
        assert [words(a) for a in record.get("authors", [])] == [words(a) for a in r.authors]
        assert [words(a) for a in record.get("secondary_authors", [])] == [words(a) for a in r.interviewers]
        assert record["notes"] == [one_line(r.full_note)]
        news = r.kind == "article-newspaper"
        assert record.get("secondary_title") == (r.container if news else r.collection)
        assert record.get("name_of_database") == (r.collection if news else None)
        assert record.get("place_published") == r.place
        assert [unquote(u) for u in record.get("urls", [])] == ([unquote(r.url)] if r.url else [])


# ----------------------------------------------------------------------------- CSL-JSON
def check_csl(text, refs):
    items = json.loads(text)
    jsonschema.validate(items, SCHEMA)
    assert len(items) == len(refs)
    words = lambda name: sorted(name.replace(",", " ").split())  # noqa: E731 - a name written inverted is split
    for item, r in zip(items, refs):
        assert item["title"] == r.title and item["note"] == r.note and item.get("URL") == r.url
        assert item.get("archive") == r.collection and item.get("container-title") == r.container
        assert item.get("publisher-place") == r.place
        people = item.get("author", []) + item.get("interviewer", [])
        names = [n.get("literal") or f"{n['given']} {n['family']}" for n in people]
        assert sorted(map(words, names)) == sorted(map(words, [*r.authors, *r.interviewers]))


# ----------------------------------------------------------------------------- Chicago and Markdown: line by line
OPENERS = ("=", "+", "-", "@", "\t", "\r")


def check_chicago(text, refs, citations):
    lines = text.split("\n")
    n = len(citations)
    assert lines[:2] == ["Notes", ""] and lines[2 + n:5 + n] == ["", "Bibliography", ""] and lines[-1] == ""
    notes, entries = lines[2:2 + n], lines[5 + n:-1]
    assert len(entries) == len(refs)  # one line per note, one per document: no value made a line of its own
    assert all(line == one_line(line) and not line.startswith(OPENERS) for line in lines)
    for note, c in zip(notes, citations):
        assert note.startswith(f"{c['id']}. ") and (field_text(c["locator"]) or "") in note
    for r in refs:
        entry = one_line(chicago_bibliography_entry(r))
        assert entry in entries or f"'{entry}" in entries
        title = one_line(r.title.rstrip("."))
        parts = (title, r.collection, r.place, r.url, r.container)
        assert all(part in entry for part in parts if part)


def check_markdown_lines(text):
    made = re.compile(r"(# |## |\*\*|\[\d+\] |\| |$)")  # the report's own line openers
    for line in text.split("\n"):
        assert not line.startswith(OPENERS) and "\r" not in line and line == line.strip()
        # no heading, quote, emphasis, HTML, link, table, code, list or entity; a bare "[3]" is a citation marker
        assert made.match(line) or not re.match(r"[#>*_<|`~]|\[(?!\d{1,3}\](?![:(\[]))|[0-9]+[.)]|&#?\w+;", line), line


def report(specs):
    docs, citations = cited(specs)
    refs = references(citations, docs.get)
    claims = [{"id": c["id"], "text": c["text"], "verdict": "supported",
               "evidence": {"text": c["text"], "locator": c["locator"]}} for c in citations]
    output = {"answer": "The record says so [1].", "bullets": [], "citations": citations, "confidence": 0.9,
              "status": "verified", "claims": claims, "metadata": {}}
    labels = {c["id"]: source_label(c, docs.get(c["source_id"])) for c in citations}
    entries = [chicago_bibliography_entry(r) for r in refs]
    return to_markdown(output, "What happened?", labels, entries), labels, entries, citations


@EXPORTS
@given(sources)
@example(CONCRETE[0])
@example(CONCRETE[1])
def test_every_field_of_every_export_reads_back_as_its_text(specs):
    docs, citations = cited(specs)
    refs = references(citations, docs.get)
    check_references_keep_the_input(specs, refs)
    check_bibtex(bibtex(refs), refs)
    check_ris(ris(refs), refs)
    check_csl(csl_json(refs), refs)
    check_chicago(chicago(refs, citations), refs, citations)
    check_markdown_lines(report(specs)[0])


def inline_text(token) -> str:
    return "".join(t.content if t.type in ("text", "code_inline") else " " for t in token.children or [])


@EXPORTS
@given(sources)
@example(CONCRETE[0])
@example(CONCRETE[1])
def test_a_markdown_renderer_shows_the_metadata_as_text_and_nothing_else(specs):
    markdown_it = pytest.importorskip("markdown_it")
    md, labels, entries, citations = report(specs)
    tokens = markdown_it.MarkdownIt("commonmark").enable("table").parse(md)
    kinds = [t.type for t in tokens] + [c.type for t in tokens for c in t.children or []]
    assert not set(kinds) & {"html_block", "html_inline", "link_open", "image", "bullet_list_open", "ordered_list_open",
                             "blockquote_open", "hr", "code_block", "fence", "code_inline", "em_open", "s_open"}
    assert kinds.count("strong_open") == 1  # the status line's own bold, and no other
    headings = [inline_text(tokens[i + 1]) for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings == ["What happened?", "Sources", "Claims checked", "References"]
    paragraphs = [inline_text(tokens[i + 1]) for i, t in enumerate(tokens) if t.type == "paragraph_open"]
    for c in citations:  # "[n] label: “quote”", as the source said it
        assert f"[{c['id']}] {one_line(labels[c['id']])}: “{one_line(c['text'])}”" in paragraphs
    assert paragraphs[-len(entries):] == [one_line(e) for e in entries]
    cells = [inline_text(tokens[i + 1]) for i, t in enumerate(tokens) if t.type == "td_open"]
    rows = [cells[i:i + 4] for i in range(0, len(cells), 4)]  # no "|" in a claim opened a column or closed a row:
    assert [(row[0], row[2]) for row in rows] == [(str(c["id"]), one_line(c["text"])) for c in citations]


def test_the_run_export_routes_keep_hostile_metadata_as_text(tmp_path):
    """End to end: the issue's two URLs and a hostile document, through /runs/<id>/export.<fmt>."""
    specs = CONCRETE[0][:1] + [{**CONCRETE[1][0], "sid": "d2"}, {**PLAIN, "sid": "d3", "url": BRACE_URL}]
    docs, citations = cited(specs)
    app = make_plain_app(tmp_path, [{"_id": d.id, "title": d.title, "author": d.author, "date": d.date, "year": d.year,
                                     "url": d.url, "collection": d.collection, "content": d.text, **d.extra}
                                    for d in docs.values()], WTF_CSRF_ENABLED=False)
    output = {"answer": "It says so [1].", "bullets": [], "citations": citations, "confidence": 0.9,
              "status": "verified", "claims": [], "metadata": {"run_id": "run-hostile"}}
    with app.app_context():
        get_store().runs.insert_one({"_id": "run-hostile", "kind": "ask", "user_id": "anonymous", "question": "q?",
                                     "output": output, "created_at": 0})
        refs = references(citations, get_store().get_document)
    client = app.test_client()
    responses = {fmt: client.get(f"/historian/runs/run-hostile/export.{fmt}")
                 for fmt in ("bib", "ris", "csl.json", "chicago.txt", "md")}
    assert {r.status_code for r in responses.values()} == {200}
    body = {fmt: r.get_data(as_text=True) for fmt, r in responses.items()}
    check_bibtex(body["bib"], refs)
    assert "url = {https://x.example/%7D%7D@preamble%7B%7B%5Cinput%7B/etc/hostname%7D%7D%7D@misc%7Bx," in body["bib"]
    assert "url = {https://example.org/w%7Db%7B}" in body["bib"]
    check_ris(body["ris"], refs)
    check_csl(body["csl.json"], refs)
    check_chicago(body["chicago.txt"], refs, citations)
    check_markdown_lines(body["md"])
