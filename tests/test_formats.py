"""Export formats: one registry that the pages, the export route (pages and API tokens alike) and the CLI read; a
format added through it reaches all three, and the page's Markdown is the CLI's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from historian_blueprint.present import formats
from tests.conftest import make_plain_app
from tests.test_graph import app  # noqa: F401 - the graph tests' fixture: real documents, a built index

QUESTION = "List three causes of the depression"


@pytest.fixture
def toy():
    """A toy format, registered for the test and taken away after it."""
    fmt = formats.register(formats.Format("toy.txt", "Toy", "text/plain", ("answer", "map", "draft"),
                                          lambda e: f"TOY {e.kind}: {e.title} "
                                                    f"({len(e.output.get('citations') or [])})"))
    yield fmt
    formats.FORMATS.pop(fmt.name)


def _ask(client) -> str:
    response = client.post("/historian/ask", data={"question": QUESTION})
    assert response.status_code == 303, response.data[:300]
    return response.headers["Location"].rsplit("/", 1)[1]


def test_a_format_added_through_the_registry_reaches_the_page_the_export_and_the_cli(app, toy):  # noqa: F811 - app
    client = make_plain_app_from(app).test_client()
    run_id = _ask(client)
    page = client.get(f"/historian/runs/{run_id}").get_data(as_text=True)
    assert 'data-testid="export-toy.txt"' in page and f"/runs/{run_id}/export.toy.txt" in page
    exported = client.get(f"/historian/runs/{run_id}/export.toy.txt")
    assert exported.status_code == 200 and exported.get_data(as_text=True).startswith(f"TOY answer: {QUESTION} (")
    assert f'filename="historian-{run_id[:8]}.toy.txt"' in exported.headers["Content-Disposition"]
    printed = app.test_cli_runner().invoke(args=["historian", "ask", QUESTION, "--output", "toy.txt", "--quiet"])
    assert printed.exit_code == 0 and printed.output.startswith(f"TOY answer: {QUESTION} ("), printed.output


def test_a_checked_draft_leaves_through_the_same_registry(app, toy):  # noqa: F811 - app
    """`historian verify` prints a checked draft in its formats: the report (md), the whole verification (json),
    or one added through the registry; its report is the md format's rendering of its json."""
    draft = "Grover Cleveland asked Congress to repeal the silver purchase clause."
    runner = app.test_cli_runner()
    printed = runner.invoke(args=["historian", "verify", "--text", draft, "--output", "toy.txt"])
    assert printed.exit_code == 0 and printed.output.startswith("TOY draft: "), printed.output
    report = runner.invoke(args=["historian", "verify", "--text", draft])
    whole = json.loads(runner.invoke(args=["historian", "verify", "--text", draft, "--output", "json"]).output)
    assert report.exit_code == 0 and report.output.startswith("Status: ")
    lines = report.output.splitlines()  # the report as the command wrote it before the registry: pinned here
    assert " supported, " in lines[1] and lines[1].endswith(" contradicted"), lines[:2]  # the outcomes counted
    assert [line.split(":")[0] for line in lines[-4:]] == ["  challenge", "  interrogation", "  counter", "  judge"]
    assert lines[2].startswith("  [1] ") and whole["claims"][0]["text"][:40] in lines[2]
    assert report.output == formats.find("md", "draft").render(formats.Exported("draft", whole, "")) + "\n"


def test_the_page_and_the_cli_write_one_markdown_and_unknown_formats_are_named(app):  # noqa: F811 - app
    client = make_plain_app_from(app).test_client()
    run_id = _ask(client)
    page_md = client.get(f"/historian/runs/{run_id}/export.md").get_data(as_text=True)
    cli_md = app.test_cli_runner().invoke(args=["historian", "ask", QUESTION, "--output", "md", "--quiet"]).output
    for part in ("## Findings", "## Sources", "## References"):  # the report with its sources' labels and references
        assert part in page_md and part in cli_md, part
    missing = client.get(f"/historian/runs/{run_id}/export.docx")
    assert missing.status_code == 404 and "md, json, bib, ris, csl.json, chicago.txt" in missing.get_data(as_text=True)
    refused = app.test_cli_runner().invoke(args=["historian", "ask", QUESTION, "--output", "markdown", "--quiet"])
    assert refused.exit_code == 2 and "export formats: md, json" in refused.output
    with pytest.raises(ValueError):
        formats.register(formats.Format("md", "again", "text/plain", ("answer",), str))
    with pytest.raises(ValueError):
        formats.register(formats.Format("x", "X", "text/plain", ("poem",), str))


def make_plain_app_from(app):  # noqa: F811 - the fixture's app
    """A second app on the same home (same store and index), CSRF off for the form posts."""
    return make_plain_app(Path(app.instance_path).parent, WTF_CSRF_ENABLED=False)


def test_the_answer_page_groups_its_reference_formats(app):  # noqa: F811 - app
    client = make_plain_app_from(app).test_client()
    page = client.get(f"/historian/runs/{_ask(client)}").get_data(as_text=True)
    assert page.count("references:") == 1 and page.index("references:") < page.index('data-testid="export-bib"')
    assert page.index('data-testid="export-json"') < page.index("references:")
