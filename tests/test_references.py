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
    # a front page as Chronicling America describes it: the record's author is the paper's publishers
    {"_id": "chronam-goodwin",
     "title": "Goodwin's weekly : a thinking paper for thinking people, 1916-01-01, front page",
     "author": "C.C. Goodwin, J.T. Goodwin", "date": "1916-01-01", "year": 1916,
     "collection": "Chronicling America (Library of Congress)", "doc_type": "newspaper page (OCR)",
     "place": "Salt Lake City, Utah", "content": "The Persia was sunk. Three Americans were aboard."},
    {"_id": "report-1870", "title": "Annual Report of the Directors", "author": "Pomeroy, Gould & Co.", "date": "1870",
     "year": 1870, "doc_type": "report", "content": "The road was opened. Receipts rose by a third."},
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
                 citation(4, DOCS[0], "The repeal was urged.", "sentence 1"),
                 citation(5, DOCS[3], "Three Americans were aboard.", "para 3"),
                 citation(6, DOCS[4], "Receipts rose by a third.", "para 2")]
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


def test_bibtex_parses_with_one_author_model_per_kind_of_document(client):
    response = export(client, "bib")
    library = bibtexparser.parse_string(response.get_data(as_text=True))
    assert not library.failed_blocks
    entries = {e.key: e for e in library.entries}  # keys author-year-word, one entry per source
    assert sorted(entries) == ["adams1937interview", "cleveland1893annual", "goodwins1916front",
                               "pomeroy1870annual", "sun1916"]
    cleveland = entries["cleveland1893annual"]  # an address: its author
    assert cleveland.entry_type == "misc" and cleveland["author"] == "Grover Cleveland"
    assert cleveland["date"] == "1893-12-04" and cleveland["year"] == "1893"
    assert cleveland["url"] == "https://example.org/sotu/1893" and "sentence 2" in cleveland["note"]
    interview = entries["adams1937interview"]  # an interview: its narrator, recorded by a body kept whole
    assert interview["author"] == "Rachel Adams"
    assert interview["editor"] == "{Federal Writers' Project, Works Progress Administration}"
    assert interview["editortype"] == "interviewer"
    page = entries["goodwins1916front"]  # a newspaper page: the paper with its date, page and place; no author
    assert page.entry_type == "article" and "author" not in page.fields_dict
    assert (page["title"], page["journal"], page["pages"]) == ("{Front page}", "Goodwin's weekly", "1")
    assert page["address"] == "Salt Lake City, Utah" and page["publisher"] == "C.C. Goodwin, J.T. Goodwin"
    assert page["howpublished"] == "Chronicling America (Library of Congress)" and page["date"] == "1916-01-01"
    assert entries["pomeroy1870annual"]["author"] == r"{Pomeroy, Gould \& Co.}"  # a firm, not "Gould & Co. Pomeroy"
    paper = entries["sun1916"]
    # TeX specials escaped
    assert r"\&" in paper["title"] and r"\%" in paper["title"] and r"\{special\}" in paper["title"]
    assert response.headers["Content-Disposition"].endswith('.bib"')


def test_csl_json_is_valid_against_the_csl_schema_with_one_author_model_per_kind(client):
    items = export(client, "csl.json").json
    jsonschema.validate(items, SCHEMA)
    by_id = {i["id"]: i for i in items}
    cleveland = by_id["cleveland1893annual"]
    assert cleveland["type"] == "speech" and cleveland["author"] == [{"family": "Cleveland", "given": "Grover"}]
    assert (cleveland["issued"] == {"date-parts": [[1893, 12, 4]]}
            and cleveland["URL"] == "https://example.org/sotu/1893")
    interview = by_id["adams1937interview"]
    assert interview["type"] == "interview" and interview["author"] == [{"family": "Adams", "given": "Rachel"}]
    assert interview["interviewer"] == [{"literal": "Federal Writers' Project, Works Progress Administration"}]
    page = by_id["goodwins1916front"]
    assert page["type"] == "article-newspaper" and "author" not in page
    assert (page["container-title"], page["page"], page["publisher-place"]) == ("Goodwin's weekly", "1",
                                                                               "Salt Lake City, Utah")
    assert page["archive"] == "Chronicling America (Library of Congress)"
    assert page["publisher"] == "C.C. Goodwin, J.T. Goodwin" and page["issued"] == {"date-parts": [[1916, 1, 1]]}
    assert by_id["pomeroy1870annual"]["author"] == [{"literal": "Pomeroy, Gould & Co."}]
    paper = by_id["sun1916"]  # a page whose paper its title does not name: the paper is not invented
    assert paper["type"] == "article-newspaper" and "container-title" not in paper
    assert paper["archive"] == "Chronicling America" and paper["publisher-place"] == "New York, N.Y."


def test_ris_reads_back_field_for_field_with_one_author_model_per_kind(client):
    records = {r["id"]: r for r in rispy.loads(export(client, "ris").get_data(as_text=True))}
    assert len(records) == 5
    cleveland = records["cleveland1893annual"]
    assert cleveland["type_of_reference"] == "GEN" and cleveland["authors"] == ["Cleveland, Grover"]
    assert (cleveland["year"] == "1893" and cleveland["date"] == "1893/12/04"
            and cleveland["urls"] == ["https://example.org/sotu/1893"])
    interview = records["adams1937interview"]
    assert interview["authors"] == ["Adams, Rachel"]
    assert interview["secondary_authors"] == ["Federal Writers' Project, Works Progress Administration"]
    page = records["goodwins1916front"]
    assert page["type_of_reference"] == "NEWS" and "authors" not in page and page["title"] == "Front page"
    assert (page["secondary_title"], page["start_page"], page["place_published"]) == (
        "Goodwin's weekly", "1", "Salt Lake City, Utah")
    assert page["publisher"] == "C.C. Goodwin, J.T. Goodwin"
    assert page["name_of_database"] == "Chronicling America (Library of Congress)"
    assert records["pomeroy1870annual"]["authors"] == ["Pomeroy, Gould & Co."]
    paper = records["sun1916"]
    assert (paper["title"] == DOCS[2]["title"] and paper["type_of_reference"] == "NEWS"
            and paper["place_published"] == "New York, N.Y.")
    assert rispy.loads(rispy.dumps(list(records.values()))) == list(records.values())  # read back, written the same


def test_chicago_notes_and_bibliography_as_written_by_hand(client):
    text = export(client, "chicago.txt").get_data(as_text=True)
    notes, bibliography = text.split("Bibliography")
    for line in (
        "1. Grover Cleveland, “Annual Message to Congress (1893),” December 4, 1893, State of the Union Addresses, "
        "sentence 2.",
        "2. Rachel Adams, interview by Federal Writers' Project, Works Progress Administration, “Interview with "
        "Rachel Adams, Georgia,” 1936-1938, Slave Narratives, para 1.",
        "4. Cleveland, “Annual Message to Congress,” sentence 1.",  # a later note is short
        "5. “Front page,” Goodwin's weekly (Salt Lake City, Utah), January 1, 1916, 1, Chronicling America "
        "(Library of Congress), para 3.",
        "6. Pomeroy, Gould & Co., “Annual Report of the Directors,” 1870, para 2.",
    ):
        assert line in notes.splitlines(), (line, notes)
    for line in (
        "Cleveland, Grover. “Annual Message to Congress (1893).” December 4, 1893. State of the Union Addresses. "
        "Historian collection, sotu-1893. https://example.org/sotu/1893.",
        "Adams, Rachel. Interview by Federal Writers' Project, Works Progress Administration. “Interview with Rachel "
        "Adams, Georgia.” 1936-1938. Slave Narratives. Historian collection, wpa-adams.",
        "Goodwin's weekly (Salt Lake City, Utah). “Front page.” January 1, 1916, 1. Chronicling America (Library of "
        "Congress). Historian collection, chronam-goodwin.",
        "Pomeroy, Gould & Co. “Annual Report of the Directors.” 1870. Historian collection, report-1870.",
    ):
        assert line in bibliography.splitlines(), (line, bibliography)


def test_a_name_that_ends_in_an_initial_ends_its_element_with_one_period():
    from historian_blueprint.present.chicago import chicago_bibliography_entry
    from historian_blueprint.present.references import Reference, csl_json

    ref = Reference(source_id="d9", title="The Topeka Strike", authors=["F.P. MacLennan"], year=1894)
    assert chicago_bibliography_entry(ref).startswith("MacLennan, F.P. “The Topeka Strike.” 1894.")
    inverted = Reference(source_id="d8", title="Letters", authors=["MacLennan, F.P."], year=1894)
    assert json.loads(csl_json([inverted]))[0]["author"] == [{"family": "MacLennan", "given": "F.P."}]


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
    from historian_blueprint.present.chicago import chicago
    from historian_blueprint.present.references import Reference, bibtex, ris

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


def test_keys_names_and_titles_a_reader_would_otherwise_misread():
    from historian_blueprint.present.chicago import chicago_bibliography_entry, chicago_note
    from historian_blueprint.present.references import Reference, corporate, csl_json, keys, references

    pages = [Reference(source_id=f"p{n}", title="Front page", container="The Salt Lake herald", year=1916)
             for n in range(60)]
    made = keys(pages)  # many pages of one paper and day: every key its own, none looping
    assert len(set(made)) == 60 and made[0] == "salt1916front" and made[1] == "salt1916frontb"
    assert made[25] == "salt1916frontz" and made[26] == "salt1916frontaa" and made[27] == "salt1916frontab"
    assert corporate("Pomeroy, Gould & Co.") and corporate("Smith Bros.") and corporate("Acme, Inc.")
    assert not any(map(corporate, ("Joyce Brothers", "Co Westerik", "Ray Sons", "Martin Luther King, Jr.")))
    king = Reference(source_id="k", title="Shall the Union Survive?", authors=["Martin Luther King, Jr."], year=1963)
    assert json.loads(csl_json([king]))[0]["author"] == [{"family": "King", "given": "Martin Luther",
                                                          "suffix": "Jr."}]
    assert chicago_note(king) == "Martin Luther King, Jr., “Shall the Union Survive?” 1963."  # no "?," after it
    assert chicago_bibliography_entry(king).startswith("King, Martin Luther, Jr. “Shall the Union Survive?” 1963.")

    class Doc:
        def __init__(self, **fields):
            self.__dict__.update({"date": None, "url": None, "collection": None, **fields})

    bylined = Doc(id="a", title="The Fall of Erzerum", author="Frederick Palmer", year=1916,
                  extra={"doc_type": "newspaper article"})
    narrator = Doc(id="n", title="Interview with Rachel Adams", author="Rachel Adams", year=1937,
                   extra={"interviewee": "Rachel Adams"})
    article, told = references([{"source_id": "a"}, {"source_id": "n"}], {"a": bylined, "n": narrator}.get)
    assert article.authors == ["Frederick Palmer"] and article.container is None  # a byline is kept
    assert told.authors == ["Rachel Adams"] and told.interviewers == []  # never "Rachel Adams, interview by herself"
