"""The researcher's pages and API: ask (live progress over SSE), answers, sources, history, export, drafts."""

from __future__ import annotations

import re
from typing import Any

from flask import (
    current_app, jsonify, redirect, render_template, request, url_for,
)

from historian_blueprint import history
from historian_blueprint.services import get_settings, get_store
from historian_blueprint.config import PROFILES
from historian_blueprint.index import service
from historian_blueprint.present.report import status_label, status_words
from historian_blueprint.text.questions import clean_question
from historian_blueprint.verify.draft import TooManyClaims
from historian_blueprint.verify.service import check_draft
from historian_blueprint.web.bodies import AskBody, VerifyBody, json_body, parse, raw_json, search_filters, verify_form
from historian_blueprint.web.auth import login_required
from historian_blueprint.web.common import (
    RUNS_PER_PAGE, Problem, delete_own, export_as, host_source_url, index_problems, load_run, page_number, running,
    running_events, server_sent, user,
)
from historian_blueprint.web.csrf import csrf_token, protect
from historian_blueprint.web.reading import highlighted

_SPAN = re.compile(r"^(\d{1,9})-(\d{1,9})$")


def _question_and_options(data: dict[str, Any]) -> tuple[str, str | None, str | None, dict[str, Any]]:
    try:
        question = clean_question(data.get("question"), get_settings().limits_max_question_chars)
    except ValueError as exc:
        raise Problem(400, "bad_request", str(exc)) from None
    profile = str(data.get("profile") or "") or None
    if profile is not None and profile not in PROFILES:
        raise Problem(400, "bad_request", f"profile must be one of {', '.join(PROFILES)}")
    parent = str(data.get("parent") or "") or None
    if parent is not None:
        load_run(parent)
    return question, profile, parent, search_filters(data)


def _run_ask(question: str, profile: str | None, parent: str | None,
             filters: dict[str, Any] | None = None) -> dict[str, Any]:
    from historian_blueprint.ask.run import ask  # on use: langgraph loads with the first question, not with the app

    with index_problems(), running("ask"):
        return ask(question, user_id=user(), parent_id=parent, profile=profile, filters=filters)


def _collections() -> list[str]:
    """The collections the search backend holds, for the ask form's filter (none before the first index)."""
    try:  # the backend the first question needs anyway (`historian serve` preloads it)
        searched = service.serving()
        return searched.status().collections if searched else []
    except Exception:  # noqa: BLE001 - the form is still drawn, offering "All collections" only
        current_app.logger.warning("the ask form could not read the collections", exc_info=True)
        return []


def spans_of(run: dict[str, Any], source_id: str) -> list[tuple[int, int, int]]:
    """(citation id, start, end) of the run's citations into one source."""
    return [(c["id"], c["start"], c["end"]) for c in run["output"]["citations"] if c["source_id"] == source_id]


# ------------------------------------------------------------------ ask
@login_required
def ask_page():
    parent = request.args.get("parent")
    parent_run = load_run(parent) if parent else None
    # a follow-up keeps them
    filters = ((parent_run or {}).get("output", {}).get("metadata") or {}).get("filters") or {}
    return render_template("historian/ask.html", csrf_token=csrf_token(), profiles=PROFILES, parent=parent_run,
                           profile=get_settings().profile, filters=filters,
                           collections=_collections())


@login_required
def ask_submit():
    protect()
    question, profile, parent, filters = _question_and_options(request.form)
    output = _run_ask(question, profile, parent, filters)
    return redirect(url_for("historian.run_page", run_id=output["metadata"]["run_id"]), code=303)


@login_required
def ask_stream():
    """Server-sent events: one ``node`` event per finished step, then ``done`` (or ``error``)."""
    protect()
    body = request.form if request.form else parse(AskBody, raw_json()).model_dump()
    question, profile, parent, filters = _question_and_options(body)
    from historian_blueprint.ask.run import stream  # on use, as in _run_ask

    def done(event: dict[str, Any]) -> dict[str, Any]:
        return {"run_id": event["run_id"], "url": url_for("historian.run_page", run_id=event["run_id"]),
                "status": event["output"]["status"], "standing": status_words(event["output"]).label}

    events = running_events("ask", lambda: stream(question, user_id=user(), parent_id=parent, profile=profile,
                                                  filters=filters))
    return server_sent(events, done, "ask")


# ------------------------------------------------------------------ runs
@login_required
def runs_page():
    query = (request.args.get("q") or "").strip()[:200]
    page = page_number(request.args.get("page"))
    runs, total = history.page(get_store(), user(), "ask", page, RUNS_PER_PAGE, query)
    pages = max(1, -(-total // RUNS_PER_PAGE))
    return render_template("historian/runs.html", runs=runs, query=query, page=page, pages=pages, total=total,
                           csrf_token=csrf_token())


@login_required
def run_page(run_id: str):
    run = load_run(run_id)
    thread = list(get_store().runs.find({"thread_id": run.get("thread_id") or run_id, "kind": "ask",
                                         "user_id": run.get("user_id")},
                                        {"question": 1, "created_at": 1}).sort("created_at", 1))
    template = "historian/_answer.html" if request.args.get("partial") else "historian/run.html"
    return render_template(template, run=run, out=run["output"], thread=thread, csrf_token=csrf_token())


@login_required
def run_delete(run_id: str):
    protect()
    delete_own(load_run(run_id), "runs")
    return redirect(url_for("historian.runs_page"), code=303)


@login_required
def run_export(run_id: str, fmt: str):
    """The run in one of the answers' export formats (present/formats.py: the report, the output, the references)."""
    run = load_run(run_id)
    return export_as("answer", fmt, run["output"], run["question"], f"historian-{run_id[:8]}")


# ------------------------------------------------------------------ sources
@login_required
def source(source_id: str):
    doc = get_store().get_document(source_id)
    if doc is None:
        raise Problem(404, "not_found", f"no document {source_id}")
    spans: list[tuple[int | None, int, int]] = []
    run = None
    if request.args.get("run"):
        run = load_run(request.args["run"])
        spans += spans_of(run, source_id)
    asked: list[tuple[int, int]] = []
    for raw in request.args.getlist("span"):
        match = _SPAN.match(raw)
        if not match:
            raise Problem(400, "bad_request", f"span must be START-END, got {raw!r}")
        asked.append((int(match.group(1)), int(match.group(2))))
        spans.append((None, *asked[-1]))  # marked, numbered only by the run's citations that hold it
    pieces = highlighted(doc.text, spans, focus=asked[0] if asked else None)  # the clicked citation, in view
    return render_template("historian/source.html", doc=doc, pieces=pieces, run=run,
                           host_url=host_source_url(source_id, spans[0][1] if spans else None,
                                                    spans[0][2] if spans else None))


# ------------------------------------------------------------------ check a draft
@login_required
def verify_page():
    result, text, error = None, "", None
    if request.method == "POST":
        protect()
        text = request.form.get("text", "")
        question = request.form.get("question", "")
        try:
            body = verify_form(request.form)  # the API's cap on sources, and its message
            result = _check(body.text, body.sources, body.question)
        except Problem as exc:
            error = exc.message
    return render_template("historian/verify.html", result=result, text=text,
                           question=question if request.method == "POST" else "", error=error, csrf_token=csrf_token())


def _check(text: str, sources: list[str], question: str | None = None) -> Any:
    with running("verify"):
        try:
            return check_draft(text, sources, question=question)
        except TooManyClaims as exc:
            raise Problem(413, "too_many_claims", str(exc)) from None
        except ValueError as exc:
            raise Problem(400, "bad_request", str(exc)) from None


# ------------------------------------------------------------------ JSON API
@login_required
def api_ask():
    protect()
    question, profile, parent, filters = _question_and_options(json_body(AskBody).model_dump())
    return jsonify(_run_ask(question, profile, parent, filters))


@login_required
def api_verify():
    protect()
    body = json_body(VerifyBody)
    return jsonify(_check(body.text, body.sources, body.question).model_dump())


@login_required
def api_run(run_id: str):
    run = load_run(run_id)
    words = status_words(run["output"])  # the standing in the words the page, the history and the exports use
    return jsonify({**{k: run.get(k) for k in ("_id", "question", "user_id", "created_at", "thread_id", "parent_id",
                                               "profile", "engine", "index_generation", "output", "trace")},
                    "standing": words._asdict()})


@login_required
def api_runs():
    page = page_number(request.args.get("page"))
    runs, total = history.page(get_store(), user(), "ask", page, RUNS_PER_PAGE)
    return jsonify(runs=[{"run_id": r["_id"], "question": r["question"], "created_at": r["created_at"],
                          "status": r.get("output", {}).get("status"),
                          "standing": dict(zip(("group", "label"), status_label(r.get("output") or {})))}
                         for r in runs],
                   page=page, per_page=RUNS_PER_PAGE, total=total)


# The pages and endpoints of this module: (rule, view, methods), added to the blueprint by build_blueprint.
ROUTES = (
    ("/ask", ask_page, ["GET"]),
    ("/ask", ask_submit, ["POST"]),
    ("/ask/stream", ask_stream, ["POST"]),
    ("/runs", runs_page, ["GET"]),
    ("/runs/<run_id>", run_page, ["GET"]),
    ("/runs/<run_id>/delete", run_delete, ["POST"]),
    ("/runs/<run_id>/export.<fmt>", run_export, ["GET"]),
    ("/sources/<historian_document_id:source_id>", source, ["GET"]),
    ("/verify", verify_page, ["GET", "POST"]),
    ("/api/ask", api_ask, ["POST"]),
    ("/api/verify", api_verify, ["POST"]),
    ("/api/runs/<run_id>", api_run, ["GET"]),
    ("/api/runs", api_runs, ["GET"]),
)
