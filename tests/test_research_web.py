"""The researcher's pages and JSON API through Flask's test client (the browser test drives the same pages)."""

from __future__ import annotations

import re

from pathlib import Path

import pytest

from historian_blueprint import get_store
from tests.conftest import login, make_plain_app
from tests.test_graph import corpus_docs
from tests.test_index import run_reindex

EVIL = "<script>alert('x')</script>"
QUESTION = "List three causes of the depression"


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    path = tmp_path_factory.mktemp("web")
    docs = corpus_docs() + [{
        "_id": "evil-1", "title": f"Pamphlet {EVIL}", "author": "Anon <b>bold</b>", "date": "1890-05-01",
        "content": f"The depression of the nineties was caused by {EVIL} speculation in silver and by the "
                   "collapse of railroads.",
    }]
    app = make_plain_app(path, docs, WTF_CSRF_ENABLED=False)
    run_reindex(app)
    return path


@pytest.fixture
def client(home):
    return make_plain_app(home, WTF_CSRF_ENABLED=False).test_client()


def ask(client, question=QUESTION, **extra):
    response = client.post("/historian/ask", data={"question": question, **extra})
    assert response.status_code == 303, response.data[:500]
    return response.headers["Location"].rsplit("/", 1)[1]


def test_ask_without_javascript_then_the_answer_page(client):
    run_id = ask(client)
    page = client.get(f"/historian/runs/{run_id}").get_data(as_text=True)
    assert 'data-testid="status"' in page and "Claims checked" in page
    assert re.search(r'<a class="h-marker" href="#h-cite-1"', page)  # [1] linked to its citation
    for report in ("challenge", "interrogation", "counter", "judge"):
        assert f'data-testid="report-{report}"' in page
    assert "Retrieved passages" in page and "Run details" in page


def test_progress_streams_before_the_answer(client):
    response = client.post("/historian/ask/stream", data={"question": QUESTION})
    assert response.mimetype == "text/event-stream"
    events = re.findall(r"event: (\w+)\ndata: (.*)\n\n", response.get_data(as_text=True))
    names = [name for name, _ in events]
    assert names[-1] == "done" and names.count("node") >= 8
    assert any('"node": "retrieve"' in data and "chunks retrieved" in data for _, data in events)


def test_citation_opens_the_source_with_the_span_highlighted(client):
    run_id = ask(client)
    run = client.get(f"/historian/api/runs/{run_id}").json
    cite = run["output"]["citations"][0]
    page = client.get(f"/historian/runs/{run_id}").get_data(as_text=True)
    link = re.search(r'data-testid="cite-1" href="([^"]+)"', page).group(1).replace("&amp;", "&")
    source = client.get(link).get_data(as_text=True)
    marked = re.search(r'<mark class="h-mark" id="h-mark-first"[^>]*>(.*?)</mark>', source, re.S).group(1)
    import html

    assert html.unescape(marked) == cite["text"]
    # whichever citation is clicked, its own span is the one brought into view
    for n, c in enumerate(run["output"]["citations"], start=1):
        link = re.search(rf'data-testid="cite-{n}" href="([^"]+)"', page).group(1).replace("&amp;", "&")
        source = client.get(link).get_data(as_text=True)
        focused = re.search(r'<mark class="h-mark" id="h-mark-first"[^>]*>(.*?)</mark>', source, re.S).group(1)
        assert c["text"] in html.unescape(focused), n
        # a highlighted span is labelled by the run's citation numbers only ("[1]", never "[0, 1]")
        labels = re.findall(r'<sup class="h-mark-n">\[([^\]]*)\]</sup>', source)
        assert labels and all(int(k) >= 1 for label in labels for k in label.split(", ")), labels
    # a span asked for without a run (a draft's evidence, a map's passage) is marked and numbered by nothing
    alone = client.get(f"/historian/sources/{cite['source_id']}?span={cite['start']}-{cite['end']}").get_data(
        as_text=True)
    assert 'id="h-mark-first"' in alone and "h-mark-n" not in alone


def test_script_in_documents_and_questions_renders_as_text(client):
    run_id = ask(client, f"What caused the depression {EVIL}?")
    for url in (f"/historian/runs/{run_id}", "/historian/runs", "/historian/sources/evil-1?span=0-20",
                f"/historian/runs/{run_id}?partial=1"):
        page = client.get(url).get_data(as_text=True)
        assert "<script>alert" not in page, url
        assert "&lt;script&gt;" in page, url
    assert "<b>bold</b>" not in client.get("/historian/sources/evil-1").get_data(as_text=True)


def test_history_search_follow_up_and_delete(client):
    first = ask(client, "What did Hoover say about the causes of the depression?")
    follow = ask(client, "And what did he propose about banks?", parent=first)
    run = client.get(f"/historian/api/runs/{follow}").json
    assert run["parent_id"] == first and run["thread_id"] == first
    # the thread informs the plan
    assert any("hoover" in q.lower() for q in run["output"]["metadata"]["sub_queries"][1:])
    page = client.get(f"/historian/runs/{follow}").get_data(as_text=True)
    assert "What did Hoover say about the causes" in page  # the thread is shown
    listing = client.get("/historian/runs?q=banks").get_data(as_text=True)
    assert listing.count('data-testid="run-row"') == 1
    assert client.post(f"/historian/runs/{follow}/delete").status_code == 303
    assert client.get(f"/historian/runs/{follow}").status_code == 404


def test_exports(client):
    run_id = ask(client)
    md = client.get(f"/historian/runs/{run_id}/export.md").get_data(as_text=True)
    assert md.startswith(f"# {QUESTION}") and "## Sources" in md
    js = client.get(f"/historian/runs/{run_id}/export.json").json
    assert js["metadata"]["run_id"] == run_id and js["citations"]
    bib = client.get(f"/historian/runs/{run_id}/export.bib").get_data(as_text=True)
    assert re.search(r"^@misc\{hoover1931\w+,$", bib, re.M) and "author = {Herbert Hoover}" in bib, bib
    chicago = client.get(f"/historian/runs/{run_id}/export.chicago.txt").get_data(as_text=True)
    assert re.search(r"^Hoover, Herbert\. “.+\.” .+ Historian collection, sotu-1931-herbert-hoover\.$", chicago,
                     re.M), chicago


def test_check_a_draft_page_and_api(client):
    page = client.post("/historian/verify",
                       data={"text": "The President abolished every tax in 1931 [sotu-1931-herbert-hoover]."})
    assert page.status_code == 200 and 'class="h-outcome-unconfirmed"' in page.get_data(as_text=True)
    api = client.post("/historian/api/verify",
                      json={"text": "Hoover abolished every tax.", "sources": ["sotu-1931-herbert-hoover"]})
    assert api.status_code == 200 and api.json["status"] != "verified" and api.json["claims"]
    bad = client.post("/historian/api/verify", json={"text": ""})
    assert bad.status_code == 400 and bad.json["error"]["code"] == "bad_request"


def test_api_round_trip_and_permalink_after_restart(home, client):
    out = client.post("/historian/api/ask", json={"question": QUESTION, "profile": "research"}).json
    run_id = out["metadata"]["run_id"]
    assert out["metadata"]["profile"] == "research"
    restarted = make_plain_app(home, WTF_CSRF_ENABLED=False).test_client()
    assert restarted.get(f"/historian/api/runs/{run_id}").json["output"]["answer"] == out["answer"]
    assert restarted.get(f"/historian/runs/{run_id}").status_code == 200
    errors = [
        client.post("/historian/api/ask", json={"question": ""}),
        client.post("/historian/api/ask", json={"question": "x", "profile": "fast"}),
        client.post("/historian/api/ask", data="not json"),
        client.get("/historian/api/runs/nope"),
    ]
    assert [(r.status_code, r.json["error"]["code"]) for r in errors] == [
        (400, "bad_request"), (400, "bad_request"), (400, "bad_request"), (404, "not_found")]


def test_access_rules(app, client):
    anonymous = app.test_client()
    for url in ("/historian/ask", "/historian/runs", "/historian/verify"):
        assert anonymous.get(url).status_code == 302  # to the login page
    assert anonymous.post("/historian/api/ask", json={"question": "x"}).status_code == 401
    researcher = login(app.test_client())
    assert researcher.get("/historian/admin/reindex").status_code == 403
    # with CSRF on (the demo host), a post without the token is refused
    assert researcher.post("/historian/ask", data={"question": "x"}).status_code == 400
    assert researcher.post("/historian/api/ask", json={"question": "x"}).status_code == 400


def test_other_users_runs_are_not_visible(home, client):
    run_id = ask(client)
    with make_plain_app(home).app_context():
        get_store().runs.update_one({"_id": run_id}, {"$set": {"user_id": "someone-else"}})
    assert client.get(f"/historian/runs/{run_id}").status_code == 404
    assert client.get(f"/historian/api/runs/{run_id}").status_code == 404


def test_history_is_paged_fifty_at_a_time(tmp_path):
    from historian_blueprint import history
    from historian_blueprint.web.common import user as _user

    app = make_plain_app(tmp_path, corpus_docs()[:2], WTF_CSRF_ENABLED=False)
    client = app.test_client()
    assert client.get("/historian/api/runs").json["total"] == 0
    with app.test_request_context():
        owner = _user()
    with app.app_context():
        for n in range(55):
            history.record_run(get_store(), {
                "_id": f"run-{n:02d}", "kind": "ask", "user_id": owner, "question": f"Question {n:02d}",
                "created_at": 1_700_000_000 + n, "thread_id": f"run-{n:02d}",
                "output": {"status": "verified", "confidence": 0.9},
            })
        history.record_run(get_store(),
                           {"_id": "theirs", "kind": "ask", "user_id": "someone-else", "question": "Theirs",
                                     "created_at": 1_800_000_000, "output": {"status": "verified", "confidence": 0.9}})
    first = client.get("/historian/runs").get_data(as_text=True)
    assert first.count('data-testid="run-row"') == 50 and "page 1 of 2 (55 questions)" in first
    assert "Question 54" in first and "Question 04" not in first and "Theirs" not in first  # newest first, own only
    assert 'rel="next"' in first and 'rel="prev"' not in first
    second = client.get("/historian/runs?page=2").get_data(as_text=True)
    assert second.count('data-testid="run-row"') == 5 and "Question 00" in second and 'rel="prev"' in second
    api = client.get("/historian/api/runs?page=2").json
    assert api["total"] == 55 and api["page"] == 2 and [r["run_id"] for r in api["runs"]][-1] == "run-00"
    assert client.get("/historian/runs?page=zero").status_code == 400
    assert client.get("/historian/api/runs?page=-1").json["error"]["code"] == "bad_request"
    assert client.get("/historian/api/runs?page=%C2%B2").status_code == 400  # a superscript two is not a page
    beyond = client.get("/historian/runs?page=9").get_data(as_text=True)
    assert "No questions on page 9 (55 in all)" in beyond and "Back to the first page" in beyond


def test_check_a_bare_yes_or_no_against_its_question(client):
    asked = "Was the depression of the nineties caused by speculation in silver?"
    yes = client.post("/historian/api/verify", json={"text": "Yes.", "sources": ["evil-1"], "question": asked}).json
    assert yes["claims"][0]["verdict"] == "supported" and yes["claims"][0]["text"] == "Yes."
    no = client.post("/historian/api/verify", json={"text": "No", "sources": ["evil-1"], "question": asked}).json
    assert no["claims"][0]["verdict"] == "contradicted" and no["status"] != "verified"
    unsaid = client.post("/historian/api/verify", json={
        "text": "no", "sources": ["evil-1"], "question": "Was the depression of the nineties caused by tariffs?"}).json
    assert unsaid["claims"][0]["verdict"] == "unconfirmed" and "not established" in unsaid["claims"][0]["reason"]
    wrong = client.post("/historian/api/verify", json={"text": "yes", "question": "What caused the depression?"})
    assert wrong.status_code == 400 and "yes/no question" in wrong.json["error"]["message"]
    assert client.post("/historian/api/verify", json={"text": "yes", "question": 5}).status_code == 400
    page = client.post("/historian/verify",
                       data={"text": "Yes", "sources": "evil-1", "question": asked}).get_data(as_text=True)
    assert 'data-testid="status"' in page and asked in page  # the form keeps the question


def test_a_document_id_with_slashes_and_dots_links_to_itself(tmp_path):
    from flask import url_for

    odd = "evil/../3?x=1#y"
    app = make_plain_app(tmp_path, [{"_id": odd, "title": "Odd", "content": "The dam held until May."},
                                    {"_id": "3?x=1#y", "title": "Other", "content": "Another text."}])
    with app.test_request_context():
        link = url_for("historian.source", source_id=odd)
    assert "/.." not in link and link == "/historian/sources/evil%2F..%2F3%3Fx%3D1%23y"
    page = app.test_client().get(link).get_data(as_text=True)
    assert "The dam held until May." in page and "Another text." not in page



# ---------------------------------------------------------------------------- search filters (issue 22)
def test_search_filters_limit_every_citation_and_the_page_says_so(client):

    out = client.post("/historian/api/ask", json={"question": "What was said about the depression and unemployment?",
                                                   "author": "Hoover", "year_from": 1925, "year_to": 1935}).get_json()
    assert out["metadata"]["filters"] == {"author": "Hoover", "year_from": 1925, "year_to": 1935}
    assert out["citations"] and {c["source_id"] for c in out["citations"]} == {"sotu-1931-herbert-hoover"}
    page = client.get(f"/historian/runs/{out['metadata']['run_id']}").get_data(as_text=True)
    assert ('data-testid="filters"' in page and "whose author or title names “Hoover”" in page
            and "from 1925 to 1935" in page)
    # the form carries them, and a follow-up starts with the same filters
    form = client.get(f"/historian/ask?parent={out['metadata']['run_id']}").get_data(as_text=True)
    assert 'name="author"' in form and 'value="Hoover"' in form and 'name="collection"' in form


def test_the_form_s_filters_reach_the_search(client):

    run_id = ask(client, "What was said about the depression?", author="Wilson", year_from="", year_to="")
    with client.application.app_context():
        run = get_store().runs.find_one({"_id": run_id})
    assert run["output"]["metadata"]["filters"] == {"author": "Wilson"}
    assert all(c["source_id"] == "sotu-1919-woodrow-wilson" for c in run["output"]["citations"])


@pytest.mark.parametrize("body, message", [
    ({"year_from": "eighteen-sixty"}, "year_from must be a year"),
    ({"year_from": 1900, "year_to": 1890}, "year_from (1900) is after year_to (1890)"),
    ({"author": "x" * 201}, "author is longer than 200 characters"),
    ({"author": "D."}, "author must name someone"),
])
def test_a_bad_filter_is_a_clear_error_and_nothing_runs(client, body, message):

    with client.application.app_context():
        before = get_store().runs.count_documents({})
    response = client.post("/historian/ask", data={"question": "What was said about the depression?", **body})
    assert response.status_code == 400 and message in response.get_data(as_text=True)
    with client.application.app_context():
        assert get_store().runs.count_documents({}) == before


def test_a_source_without_paragraphs_is_read_in_blocks_named_by_the_sentence_numbers_its_locators_use():
    from historian_blueprint.text.spans import Layout
    from historian_blueprint.web.reading import highlighted

    text = " ".join(f"In the year past the {n}th measure of this long address was laid before you."
                    for n in range(1, 40))
    start = text.find("the 8th measure")
    end = text.find(".", start) + 1
    pieces = highlighted(text, [(1, start, end)])
    assert "".join(p["text"] for p in pieces) == text  # nothing lost or added
    labels = [p["block"] for p in pieces if p.get("block")]
    assert labels[:2] == ["sentences 1–6", "sentences 7–12"] and labels[-1] == "sentences 37–39"
    assert Layout(text).locate(start, end) == "sentence 8"  # the locator's sentence sits in block "sentences 7–12"
    assert all(not p.get("block") for p in highlighted("Short text. With two sentences.", []))
    assert all(not p.get("block") for p in highlighted("A line.\nAnother line. " * 200, []))  # it has lines of its own


def test_each_finding_can_be_read_in_its_context(client):
    out = client.post("/historian/api/ask", json={"question": QUESTION}).json
    page = client.get(f"/historian/runs/{out['metadata']['run_id']}").get_data(as_text=True)
    panels = re.findall(r'data-testid="context"><summary>Read it in its context</summary>\s*<p>(.*?)</p>', page, re.S)
    assert len(panels) == len(out["citations"]) and all("[the passage above]" in p for p in panels)
    from historian_blueprint.web.reading import around

    text = "First sentence here. The cited passage is this one. Then the next sentence follows."
    start = text.find("The cited")
    assert around(text, start, start + len("The cited passage is this one.")) == {
        "before": "First sentence here.", "after": "Then the next sentence follows."}


def test_a_comparison_is_answered_side_by_side_and_never_called_verified(client):
    out = client.post("/historian/api/ask",
                      json={"question": "Compare what Cleveland and Hoover said about the banks."}).json
    assert (out["shape"]["kind"] == "comparison"
            and [s["label"] for s in out["shape"]["sides"]] == ["Cleveland", "Hoover"])
    by_id = {c["id"]: c for c in out["citations"]}
    for side, author in zip(out["shape"]["sides"], ("Grover Cleveland", "Herbert Hoover")):
        assert side["found"] and all(by_id[n]["author"] == author for n in side["citations"])  # each side its own
    assert out["status"] != "verified" and "for you to judge" in out["verification"]["comparison"]["finding"]
    page = client.get(f"/historian/runs/{out['metadata']['run_id']}").get_data(as_text=True)
    assert 'data-testid="comparison"' in page and "check before use" in page and "for you to judge" in page
    assert out["answer"].startswith("Side by side:")


def test_a_block_that_starts_inside_a_highlight_is_named_on_it():
    from historian_blueprint.web.reading import highlighted

    text = " ".join(f"In the year past the {n}th measure of this long address was laid before you."
                    for n in range(1, 40))
    start = text.find("the 6th measure")  # a highlight from sentence 6 into sentence 8: block 7-12 starts inside it
    end = text.find(".", text.find("the 8th measure")) + 1
    pieces = highlighted(text, [(1, start, end)])
    assert "".join(p["text"] for p in pieces) == text
    marked = next(p for p in pieces if p["mark"])
    assert marked["block"] == "sentences 7–12"
    assert [p["block"] for p in pieces if p.get("block")][:3] == ["sentences 1–6", "sentences 7–12", "sentences 13–18"]


def test_every_door_cleans_a_question_the_same_way(client):
    """Control characters are dropped and spaces collapsed before the checks, at the page, the API and the graph."""
    empty = client.post("/historian/api/ask", json={"question": "\x00\x1b \x07"})
    assert empty.status_code == 400 and empty.json["error"]["message"] == "the question is empty"
    assert client.get("/historian/api/retrieve?q=%00%1b").status_code == 400
    out = client.post("/historian/api/ask", json={"question": "List three\x00 causes\x1b  of the depression"}).json
    run = client.get(f"/historian/api/runs/{out['metadata']['run_id']}").json
    assert run["question"] == "List three causes of the depression"


def test_bad_requests_have_one_handler_json_under_the_api_and_historians_page_elsewhere(client, monkeypatch):
    """A malformed API parameter is the documented JSON with the reason as written (no "400 Bad Request:" prefix);
    a page's bad request is Historian's error page; every page module leaves error handling to the blueprint."""
    bad = client.get("/historian/api/retrieve?q=silver&mode=sideways")
    assert bad.status_code == 400 and bad.json == {"error": {"code": "bad_request",
                                                             "message": "mode must be hybrid, dense or bm25"}}
    bad = client.get("/historian/api/retrieve?q=silver&top_k=many")
    assert bad.status_code == 400 and bad.json["error"]["message"] == "top_k must be an integer, got 'many'"
    from werkzeug.exceptions import BadRequest

    from historian_blueprint import web

    handlers = client.application.error_handler_spec.get("historian", {})
    assert 400 not in handlers and all(BadRequest not in h for h in handlers.values())  # one HTTPException handler
    assert [m.__name__ for m in web.PAGES if "errorhandler" in Path(m.__file__).read_text(encoding="utf-8")] == []


@pytest.mark.parametrize("question", [QUESTION, "Compare what Cleveland and Hoover said about the banks.",
                                      "What did Cleveland say about the tariff?"])
def test_one_status_wording_per_run_on_the_badge_history_judge_progress_export_and_api(client, question):
    import html

    events = client.post("/historian/ask/stream", data={"question": question}).get_data(as_text=True)
    run_id = re.search(r'"run_id": "([0-9a-f]+)"', events).group(1)
    closing = [d for n, d in re.findall(r"event: (\w+)\ndata: (.*)\n\n", events) if '"node": "finalize"' in d][-1]
    page = client.get(f"/historian/runs/{run_id}").get_data(as_text=True)
    badge = html.unescape(re.search(r'data-testid="status"[^>]*>([^<]+)<', page).group(1))
    judge = re.search(r'data-testid="report-judge".*?<p>(.*?)</p>', page, re.S)
    history = client.get("/historian/runs").get_data(as_text=True)
    listed = re.search(rf'href="/historian/runs/{run_id}".*?class="h-badge[^"]*">([^<]+)<', history, re.S).group(1)
    md = client.get(f"/historian/runs/{run_id}/export.md").get_data(as_text=True)
    api = client.get(f"/historian/api/runs/{run_id}").json
    assert badge == html.unescape(listed) == api["standing"]["label"], (badge, listed, api["standing"])
    assert f'"detail": "{badge}"' in closing  # the progress list's last node
    done = [d for n, d in re.findall(r"event: (\w+)\ndata: (.*)\n\n", events) if n == "done"][-1]
    assert f'"standing": "{badge}"' in done  # what the page's progress list says when the answer is ready
    assert f"**{badge[0].upper()}{badge[1:]}.**" in md
    if judge:  # the judge's paragraph ends on the same words (not the status code, not another label)
        assert f"Its standing: {badge}" in html.unescape(judge.group(1))
    if badge != "verified":  # never "high" beside a flag
        assert not re.search(r'data-testid="confidence">high', page) and "Confidence: high" not in md
