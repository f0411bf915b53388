"""A claim's three outcomes as a user sees them: supported, not confirmed (read the source), contradicted; each
with the span of the source its decision read (the browser test drives the same draft through the real page)."""

from __future__ import annotations

import html
import re

import pytest

from historian_blueprint import get_store
from tests.conftest import REPO, make_plain_app
from tests.test_graph import corpus_docs
from tests.test_index import run_reindex

WILSON = "sotu-1919-woodrow-wilson"
# verbatim; the same address's loan figure changed ($9,000,000,000 in the source); an invented consequence
SUPPORTED = ("The causes of this unrest, while various and complicated, are superficial rather than "
             f"deep-seated [{WILSON}].")
CONTRADICTED = ("On the other hand, she has purchased a large proportion of the American securities previously held "
                "abroad, has loaned some $4,000,000,000 to foreign governments, and has built her own ships "
                f"[{WILSON}].")
UNCONFIRMED = f"Wilson's warning persuaded the Senate to ratify the treaty within a week [{WILSON}]."
DRAFT = " ".join((SUPPORTED, CONTRADICTED, UNCONFIRMED))
SHOWN = [  # (group, label, what the span is), in the draft's order
    ("supported", "supported", "carried by"),
    ("conflict", "contradicted by the source", "the source says"),
    ("unconfirmed", "not confirmed: read the source", "closest passage (read it)"),
]
ROW = re.compile(r'<tr class="h-outcome-(\w+)" data-testid="claim" data-verdict="(\w+)">(.*?)</tr>', re.S)


def rows(page: str) -> list[dict]:
    """Each claim row: its group, raw verdict, plain label, span label, evidence link and quote."""
    found = []
    for group, verdict, body in ROW.findall(page):
        def text(pattern: str, body: str = body) -> str | None:
            match = re.search(pattern, body, re.S)
            return html.unescape(match.group(1)).strip() if match else None
        found.append({"group": group, "verdict": verdict, "label": text(r'data-testid="outcome">(.*?)</span>'),
                      "span_label": text(r'class="h-span-label">(.*?)</span>'), "link": text(r'<a href="([^"]+)"'),
                      "source": text(r'<a href="[^"]+">(.*?)</a>'),
                      "quote": text(r'data-testid="evidence-span">(.*?)</blockquote>'),
                      "confidence": text(r"<small>(confidence [\d.]+)</small>")})
    return found


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    app = make_plain_app(tmp_path_factory.mktemp("outcomes"), corpus_docs(), WTF_CSRF_ENABLED=False)
    run_reindex(app)
    return app.test_client()


def test_the_draft_holds_one_claim_of_each_outcome(client):
    result = client.post("/historian/api/verify", json={"text": DRAFT}).json
    assert [c["verdict"] for c in result["claims"]] == ["supported", "contradicted", "unconfirmed"]
    assert result["status"] != "verified"  # only an answer whose every claim is supported is verified
    assert "$9,000,000,000" in result["claims"][1]["evidence"]["text"]  # the figure the source gives


def test_check_a_draft_shows_three_outcomes_as_three_different_things(client):
    claims = client.post("/historian/api/verify", json={"text": DRAFT}).json["claims"]
    page = client.post("/historian/verify", data={"text": DRAFT}).get_data(as_text=True)
    shown = rows(page)
    assert [(r["group"], r["label"], r["span_label"]) for r in shown] == SHOWN
    assert [r["verdict"] for r in shown] == ["supported", "contradicted", "unconfirmed"]
    for row, claim in zip(shown, claims):
        span = claim["evidence"]
        assert row["quote"] == span["text"]  # the span its decision read, whole
        assert row["link"] == f"/historian/sources/{WILSON}?span={span['start']}-{span['end']}#h-mark-first"
        assert row["confidence"] == f"confidence {claim['confidence']:.2f}"
        assert row["source"].startswith("Woodrow Wilson") and WILSON not in row["source"]  # named as cited, not by id
    assert "$9,000,000,000" in shown[1]["quote"] and "$4,000,000,000" not in shown[1]["quote"]
    assert "Claims: 1 supported, 1 not confirmed, 1 contradicted" in page
    # the CSP allows no inline style
    assert "p(supported)" not in page and "<style" not in page and " style=" not in page
    # the four reports read as the answer page's do: a paragraph each, in words, their data folded away
    import html as markup

    for key, opening in (("challenge", "The challenger read each of the 3 claims"),
                         ("interrogation", "The interrogator asked of every citation"),
                         ("counter", "The counter-arguer looked"), ("judge", "The judge weighed the three reports")):
        section = re.search(rf'data-testid="report-{key}">.*?<p>(.*?)</p>', page, re.S)
        assert section and markup.unescape(section.group(1)).startswith(opening), key
    badge = re.search(r'data-testid="status"[^>]*>([^<]+)<', page).group(1)
    assert f"Its standing: {badge}" in markup.unescape(re.search(r'data-testid="report-judge">.*?<p>(.*?)</p>', page,
                                                                  re.S).group(1))
    assert "unverified_detail" not in page.split("The report as data")[0]  # no type code outside the data


def test_each_outcome_has_its_own_style_and_a_contradiction_is_red():
    css = (REPO / "static" / "historian" / "historian.css").read_text(encoding="utf-8")
    colour = {group: re.search(rf"\.h-outcome-{group} \.h-outcome-label {{[^}}]*?[^-]color: (#\w+)", css).group(1)
              for group in ("supported", "unconfirmed", "conflict")}
    assert len(set(colour.values())) == 3 and colour["conflict"] == "#a40000"
    assert ".h-verdict-" not in css


def test_a_run_stored_as_unsupported_reads_not_confirmed_on_its_page_and_in_its_report(client):
    run_id = client.post("/historian/api/ask",
                         json={"question": "List three causes of the depression"}).json["metadata"]["run_id"]
    with client.application.app_context():
        out = get_store().runs.find_one({"_id": run_id})["output"]
        assert len(out["claims"]) >= 2 and all(c["verdict"] == "supported" for c in out["claims"])
        out["claims"][0]["verdict"] = "unsupported"  # the word runs used before the three outcomes
        get_store().runs.update_one({"_id": run_id}, {"$set": {"output": out}})
    page = client.get(f"/historian/runs/{run_id}").get_data(as_text=True)
    first = rows(page)[0]
    assert (first["group"], first["label"], first["span_label"]) == SHOWN[2]
    # the claim is finding [1]'s quote: the row names it and links its span; the passage is quoted once, above
    assert first["quote"] is None and 'href="#h-cite-1">finding [1]</a>' in page
    quoted = [html.unescape(b).strip() for b in re.findall(r"<blockquote[^>]*>(.*?)</blockquote>", page, re.S)]
    assert quoted.count(out["claims"][0]["evidence"]["text"].strip()) == 1
    md = client.get(f"/historian/runs/{run_id}/export.md").get_data(as_text=True)
    assert f"{len(out['claims']) - 1} supported, 1 not confirmed, 0 contradicted" in md
    row = next(line for line in md.splitlines() if line.startswith(f"| {out['claims'][0]['id']} |"))
    assert "| not confirmed: read the source |" in row and "closest passage (read it): “" in row
    assert "unsupported" not in md
    # as stored
    assert client.get(f"/historian/runs/{run_id}/export.json").json["claims"][0]["verdict"] == "unsupported"
