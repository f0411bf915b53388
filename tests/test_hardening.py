"""Issue 14, first part: bad input never gets a server error. Wrong types are a 400 naming the field, JSON
nested a thousand levels deep and bodies that are not UTF-8 are refused, an oversized body is a 413, and every
error under /api/ is the documented JSON (unknown routes, wrong methods, failures inside Historian)."""

from __future__ import annotations

import re

import pytest
import rispy

from historian_blueprint import get_store
from tests.conftest import login, make_plain_app
from tests.test_admin_and_api import _token, small_demo  # noqa: F401 - the fixture

DEEP = "[" * 1000 + "]" * 1000


@pytest.fixture
def client(tmp_path):
    return make_plain_app(tmp_path, [{"_id": "d1", "title": "T", "content": "The panic of 1893 closed banks."}],
                          WTF_CSRF_ENABLED=False).test_client()


@pytest.mark.parametrize("path", ["/historian/api/ask", "/historian/api/verify", "/historian/api/map",
                                  "/historian/ask/stream", "/historian/map/stream"])
def test_json_nested_a_thousand_levels_is_a_clear_400(client, path):
    for body in (DEEP, '{"question": ' + DEEP + "}"):
        response = client.post(path, data=body, content_type="application/json")
        assert response.status_code == 400, (path, response.status_code)
        assert "nests deeper" in response.get_json()["error"]["message"]


@pytest.mark.parametrize("body, field", [
    ({"question": 5}, "question"), ({"question": ["a"]}, "question"), ({"question": {"a": 1}}, "question"),
    ({"question": True}, "question"), ({"question": "q", "profile": 3}, "profile"),
])
def test_a_question_of_the_wrong_type_is_refused_not_stringified(client, body, field):
    response = client.post("/historian/api/ask", json=body)
    assert response.status_code == 400 and response.get_json()["error"]["message"].startswith(field)
    with client.application.app_context():
        assert get_store().runs.count_documents({}) == 0  # nothing was asked


@pytest.mark.parametrize("body", [{"text": {"a": 1}}, {"text": ["x"]}, {"text": "x", "sources": "d1"},
                                  {"text": "x", "sources": [1]}])
def test_a_draft_of_the_wrong_type_is_refused(client, body):
    response = client.post("/historian/api/verify", json=body)
    assert response.status_code == 400 and "error" in response.get_json()


def test_a_body_that_is_not_utf8_or_too_large(client):
    bad = client.post("/historian/api/ask", data=b'{"question": "\xff\xfe"}', content_type="application/json")
    assert bad.status_code == 400 and "UTF-8" in bad.get_json()["error"]["message"]
    big = client.post("/historian/api/verify", data=b'{"text": "' + b"a" * 5_000_000 + b'"}',
                      content_type="application/json")
    assert big.status_code == 413 and big.get_json()["error"]["code"] == "too_large"


def test_unknown_api_routes_and_wrong_methods_answer_json(client):
    missing = client.get("/historian/api/nothing-here")
    assert missing.status_code == 404 and missing.get_json()["error"]["code"] == "not_found"
    wrong = client.get("/historian/api/ask")
    assert wrong.status_code == 405 and wrong.get_json()["error"]["code"] == "method_not_allowed"


def test_a_failure_inside_historian_is_json_without_a_traceback(client, monkeypatch):
    from historian_blueprint.web import research

    def boom(*args, **kwargs):
        raise RuntimeError("secret internals /etc/passwd")

    monkeypatch.setattr(research, "check_draft", boom)
    response = client.post("/historian/api/verify", json={"text": "The panic of 1893 closed banks."})
    assert response.status_code == 500
    error = response.get_json()["error"]
    assert (error["code"] == "internal_error" and "secret" not in error["message"]
            and "Traceback" not in response.get_data(as_text=True))


@pytest.mark.parametrize("body, status", [("[1]", 400), ('"x"', 400), ('{"full": "false"}', 400),
                                          ('{"retry_failed": 1}', 400), (b"\xff\xfe", 400)])
def test_reindex_refuses_bodies_that_are_not_an_object_of_booleans(
    small_demo, body, status,  # noqa: F811 - small_demo is the imported fixture
):
    admin = login(small_demo.test_client(), "root", "root-pw")
    response = admin.post("/historian/api/reindex", data=body, content_type="application/json",
                          headers={"X-CSRFToken": _token(admin)})
    assert response.status_code == status and "error" in response.get_json()
    with small_demo.app_context():
        assert get_store().jobs.count_documents({}) == 0  # no reindex started


@pytest.mark.parametrize("uri, secret", [
    ("mongodb://:pw-only@host/db", "pw-only"), ("mongodb://user:pw2@host/db", "pw2"),
    ("mongodb://host/db?tls=true&tlsCertificateKeyFilePassword=s3cret&w=1", "s3cret"),
])
def test_every_secret_of_a_mongodb_uri_is_masked(uri, secret):
    from historian_blueprint.config import redact_uri

    masked = redact_uri(uri)
    assert secret not in masked and "***" in masked and masked.split("://")[0] == uri.split("://")[0]


EVIL = "<script>alert(1)</script> [click](javascript:alert(2)) <img src=x onerror=alert(3)>"


def test_exports_carry_text_not_markup_only_http_urls_and_one_charset(tmp_path):
    app = make_plain_app(tmp_path, [{"_id": "d1", "title": f"Pamphlet {EVIL}", "author": "Anon [x](javascript:a)",
                                     "url": "javascript:alert(4)", "content": "The panic of 1893 closed banks."}],
                         WTF_CSRF_ENABLED=False)
    citation = {"id": 1, "source_id": "d1", "title": f"Pamphlet {EVIL}", "author": "Anon", "year": 1893,
                "locator": "para 1",
                "text": "The panic of 1893 closed banks.", "start": 0, "end": 31, "url": "javascript:alert(5)"}
    output = {"answer": f"Banks closed [1]. {EVIL}", "bullets": [f"Banks closed [1] {EVIL}"], "citations": [citation],
              "confidence": 0.9, "status": "verified",
              "claims": [{"id": 1, "text": EVIL, "verdict": "supported", "type": None}],
              "verification": {"judge": {"summary": EVIL}}, "metadata": {"run_id": "r1", "engine": "embedded"}}
    with app.app_context():
        get_store().runs.insert_one({"_id": "r1", "kind": "ask", "user_id": "anonymous", "question": EVIL,
                                     "output": output, "created_at": 0})
    client = app.test_client()
    md = client.get("/historian/runs/r1/export.md")
    text = md.get_data(as_text=True)
    # only escaped
    assert not re.search(r"(?<!\\)<(?:script|img)", text) and not re.search(r"(?<!\\)\]\(javascript:", text)
    assert "\\<script\\>" in text and "Banks closed [1]" in text  # shown as text; the citation marker kept
    assert md.headers["Content-Type"].count("charset") == 1
    bib = client.get("/historian/runs/r1/export.bib")
    body = bib.get_data(as_text=True)  # plain text: a title is text; only the URL could be followed, and it is dropped
    assert "alert(4)" not in body and "alert(5)" not in body and bib.headers["Content-Type"].count("charset") == 1


def test_a_newline_in_metadata_cannot_split_a_bibliography_entry(tmp_path):
    app = make_plain_app(tmp_path, [{"_id": "d2", "title": "Dam report\n# Injected heading\n\nAnon. “Fake.” 1700.",
                                     "author": "Smith,\nJohn", "content": "The dam failed in May."}],
                         WTF_CSRF_ENABLED=False)
    output = {"answer": "It failed [1].",
              "citations": [{"id": 1, "source_id": "d2", "title": "x", "start": 0, "end": 22,
                                                          "text": "The dam failed in May."}],
              "confidence": 0.9, "status": "verified", "claims": [], "metadata": {"run_id": "r2"}}
    with app.app_context():
        get_store().runs.insert_one({"_id": "r2", "kind": "ask", "user_id": "anonymous", "question": "q",
                                     "output": output, "created_at": 0})
    client = app.test_client()
    chicago = client.get("/historian/runs/r2/export.chicago.txt").get_data(as_text=True)
    entry = chicago.split("Bibliography\n\n")[1]
    assert entry.count("\n") == 1 and "“Dam report # Injected heading Anon. “Fake.” 1700.”" in entry
    bib = client.get("/historian/runs/r2/export.bib").get_data(as_text=True)
    assert bib.count("@misc") == 1 and "title = {{Dam report \\# Injected heading Anon. “Fake.” 1700.}}" in bib
    assert len(rispy.loads(client.get("/historian/runs/r2/export.ris").get_data(as_text=True))) == 1


def test_a_lone_surrogate_in_any_json_string_is_a_clear_400_not_a_failure(client):
    for path, body in (("/historian/api/ask", rb'{"question": "dam \udc80 flood"}'),
                       ("/historian/api/map", rb'{"topic": "dam \ud800"}'),
                       ("/historian/api/verify", rb'{"text": "ok", "sources": ["d1"], "question": "why \udfff?"}'),
                       ("/historian/ask/stream", rb'{"question": "\ud83d"}')):
        response = client.post(path, data=body, content_type="application/json")
        assert response.status_code == 400, (path, response.status_code)
        assert "unpaired surrogate" in response.get_json()["error"]["message"]
    assert client.post("/historian/api/ask", data=rb'{"question": "\ud83d\ude00 what caused the panic?"}',
                       content_type="application/json").status_code != 400  # a paired emoji is text


def test_form_bodies_are_capped_too(client):
    big = {"text": "x" * 1_100_000}
    for path in ("/historian/verify", "/historian/ask", "/historian/map"):
        response = client.post(path, data=big)
        assert response.status_code == 413, (path, response.status_code)
        assert len(response.data) < 20_000  # the page says so; it does not echo the megabyte back
