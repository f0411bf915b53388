"""An answer's exports as a historian's tools read them: BibTeX that a BibTeX parser reads, CSL-JSON valid against
the CSL data schema, RIS that reads back field for field, Chicago notes and bibliography, and a Markdown report
with every claim whole and no internal ids."""

import json
from pathlib import Path

import bibtexparser
import jsonschema
import pytest
import rispy

from conftest import make_plain_app
from historian_blueprint import get_store

SCHEMA = json.loads((Path(__file__).parent / "data" / "csl" / "csl-data.json").read_text(encoding="utf-8"))
LONG_CLAIM = ("The President said that the repeal of the purchasing clause of the so-called Sherman law, "
              "which had long been urged upon Congress by the business interests of the country, was the first duty "
              "of the session and the surest way back to confidence")

DOCS = [
    {"_id": "sotu-1893", "title": "Annual Message to Congress (1893)", "author": "Grover Cleveland",
     "date": "1893-12-04",
     "year": 1893, "collection": "State of the Union Addresses", "doc_type": "presidential address",
     "content": "The repeal was urged. " + LONG_CLAIM + ".", "url": "https://example.org/sotu/1893"},
    {"_id": "wpa-adams", "title": "Interview with Rachel Adams, Georgia",
     "author": "Federal Writers' Project, Works Progress Administration",
     "date": "1936-1938", "year": 1937, "collection": "Slave Narratives", "doc_type": "oral history interview",
     "interviewee": "Rachel Adams", "content": "Us was free when the Yankees come through."},
    {"_id": "news-1916", "title": "The Sun & Herald: 100% {special} edition #3", "author": None, "date": "1916-01-01",
     "year": 1916, "collection": "Chronicling America", "doc_type": "newspaper page (OCR)", "place": "New York, N.Y.",
     "content": "Ancona sunk; the dead number 200."},
]


def citation(n, doc, text, locator):
    start = doc["content"].index(text)
    return {"id": n, "source_id": doc["_id"], "title": doc["title"], "author": doc["author"], "year": doc["year"],
            "locator": locator, "text": text, "start": start, "end": start + len(text)}


@pytest.fixture()
def client(tmp_path):
    app = make_plain_app(tmp_path, DOCS, WTF_CSRF_ENABLED=False)
    citations = [citation(1, DOCS[0], LONG_CLAIM, "sentence 2"),
                 citation(2, DOCS[1], "Us was free when the Yankees come through.", "para 1"),
                 citation(3, DOCS[2], "Ancona sunk; the dead number 200.", "para 1"),
                 citation(4, DOCS[0], "The repeal was urged.", "sentence 1")]
    claims = [{"id": n, "text": c["text"], "verdict": "supported", "type": None, "severity": "none", "confidence": 0.9,
               "support": 1.0, "reason": "quoted",
               "evidence": {"source_id": c["source_id"], "start": c["start"], "end": c["end"],
                            "text": c["text"], "locator": c["locator"]}}
              for n, c in enumerate(citations, start=1)]
    output = {"answer": "The repeal was urged [1].", "bullets": [], "citations": citations, "confidence": 0.9,
              "status": "verified", "claims": claims,
              "verification": {"judge": {"summary": "fine", "base": 0.9, "confidence": 0.9, "status": "verified"}},
              "metadata": {"run_id": "run-abcdef123456", "engine": "embedded", "refusal": False}}
    with app.app_context():
        get_store().runs.insert_one({"_id": "run-abcdef123456", "kind": "ask", "user_id": "anonymous",
                                     "question": "What did Cleveland urge?", "output": output, "created_at": 0})
    return app.test_client()


def export(client, fmt):
    response = client.get(f"/historian/runs/run-abcdef123456/export.{fmt}")
    assert response.status_code == 200, response.get_data(as_text=True)
    return response


def test_bibtex_parses_as_one_misc_entry_per_source_with_its_fields(client):
    response = export(client, "bib")
    library = bibtexparser.parse_string(response.get_data(as_text=True))
    assert not library.failed_blocks
    entries = {e["title"].strip("{}"): e for e in library.entries}
    # one per source, not per citation
    assert len(library.entries) == 3 and all(e.entry_type == "misc" for e in library.entries)
    cleveland = entries["Annual Message to Congress (1893)"]
    assert (cleveland["author"] == "Grover Cleveland" and cleveland["date"] == "1893-12-04"
            and cleveland["year"] == "1893")
    assert cleveland["url"] == "https://example.org/sotu/1893" and "sentence 2" in cleveland["note"]
    interview = entries["Interview with Rachel Adams, Georgia"]
    # a body, not "Administration, F."
    assert interview["author"] == "{Federal Writers' Project, Works Progress Administration}"
    assert "Interview with Rachel Adams" in interview["note"]
    paper = next(e for e in library.entries if "Sun" in e["title"])
    # TeX specials escaped
    assert r"\&" in paper["title"] and r"\%" in paper["title"] and r"\{special\}" in paper["title"]
    assert response.headers["Content-Disposition"].endswith('.bib"')


def test_csl_json_is_valid_against_the_csl_schema(client):
    items = export(client, "csl.json").json
    jsonschema.validate(items, SCHEMA)
    by_title = {i["title"]: i for i in items}
    cleveland = by_title["Annual Message to Congress (1893)"]
    assert cleveland["type"] == "speech" and cleveland["author"] == [{"family": "Cleveland", "given": "Grover"}]
    assert (cleveland["issued"] == {"date-parts": [[1893, 12, 4]]}
            and cleveland["URL"] == "https://example.org/sotu/1893")
    interview = by_title["Interview with Rachel Adams, Georgia"]
    assert interview["type"] == "interview" and interview["author"] == [{"family": "Adams", "given": "Rachel"}]
    assert interview["interviewer"] == [{"literal": "Federal Writers' Project, Works Progress Administration"}]
    paper = next(i for i in items if "Sun" in i["title"])
    assert paper["type"] == "article-newspaper" and paper["container-title"] == "Chronicling America"
    assert paper["publisher-place"] == "New York, N.Y."


def test_ris_reads_back_field_for_field(client):
    records = rispy.loads(export(client, "ris").get_data(as_text=True))
    assert len(records) == 3
    cleveland = next(r for r in records if r["title"] == "Annual Message to Congress (1893)")
    assert cleveland["type_of_reference"] == "GEN" and cleveland["authors"] == ["Cleveland, Grover"]
    assert (cleveland["year"] == "1893" and cleveland["date"] == "1893/12/04"
            and cleveland["urls"] == ["https://example.org/sotu/1893"])
    paper = next(r for r in records if "Sun" in r["title"])
    assert (paper["title"] == DOCS[2]["title"] and paper["type_of_reference"] == "NEWS"
            and paper["place_published"] == "New York, N.Y.")
    assert rispy.loads(rispy.dumps(records)) == records  # what it reads, it writes back the same


def test_chicago_gives_a_note_per_citation_and_a_bibliography(client):
    text = export(client, "chicago.txt").get_data(as_text=True)
    notes, bibliography = text.split("Bibliography")
    assert ("1. Grover Cleveland, “Annual Message to Congress (1893),” December 4, 1893, State of the Union "
            "Addresses, sentence 2." in notes)
    assert "4. Cleveland, “Annual Message to Congress,” sentence 1." in notes  # a later note is short
    assert "interview with Rachel Adams" in notes
    assert "Cleveland, Grover. “Annual Message to Congress (1893).” December 4, 1893." in bibliography
    assert ("Federal Writers' Project, Works Progress Administration. “Interview with Rachel Adams, Georgia.”"
            in bibliography)


def test_markdown_report_has_every_claim_whole_and_no_internal_ids(client):
    md = export(client, "md").get_data(as_text=True)
    assert md.count(LONG_CLAIM) >= 2  # the claim whole in the table (and its source quote), not cut at 160 characters
    assert "run-abcdef123456" not in md and "sotu-1893 chars" not in md and "p(supported)" not in md
    assert "Grover Cleveland, Annual Message to Congress (1893), sentence 2" in md  # who, what, where
    assert "Rachel Adams, interviewed by the Federal Writers' Project" in md
    assert "## References" in md and "**Verified.** Every claim is supported" in md


def test_an_unknown_export_format_is_a_clear_404(client):
    response = client.get("/historian/runs/run-abcdef123456/export.docx")
    assert response.status_code == 404 and "bib" in response.get_data(as_text=True)


def test_each_format_escapes_a_hostile_value_its_own_way():
    """The escaping each format gives a value that would break out of its field (tests/test_export_hostile.py reads
    every field back with each format's reader): BibTeX's TeX escapes with balanced braces, a URL percent-encoded,
    RIS and Chicago on one line, Markdown's opening marker escaped."""
    from historian_blueprint.present.report import to_markdown
    from historian_blueprint.present.references import Reference, bibtex, chicago, ris

    ref = Reference(source_id="d1", title="a}b {c} \\input{x}\n@misc{y,", authors=["=Smith, J.\nER  - TY"], year=1893,
                    url="https://example.org/w}b{;x")
    bib = bibtex([ref])
    assert r"title = {{a\textbraceright{}b \{c\} \textbackslash{}input\{x\} @misc\textbraceleft{}y,}}" in bib
    assert "url = {https://example.org/w%7Db%7B;x}" in bib and bib.count("\n@") == 0
    assert "UR  - https://example.org/w%7Db%7B%3Bx\n" in ris([ref]) and "\nAU  - =Smith, J. ER - TY\n" in ris([ref])
    assert ("\n'=Smith, J. ER - TY. “a}b {c} \\input{x} @misc{y,.” 1893."
            in chicago([ref], [{"id": 1, "source_id": "d1"}]))
    output = {"answer": "- not a list", "bullets": [], "citations": [], "confidence": 0.5, "status": "flagged",
              "claims": []}
    md = to_markdown(output, references=["= 1+1"])
    assert "\n\\- not a list\n" in md and "\n\\= 1+1\n" in md
