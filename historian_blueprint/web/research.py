"""The researcher's pages and API: ask (live progress over SSE), answers, sources, history, export, drafts."""

from __future__ import annotations

import json
import re
from typing import Any

from flask import (
    Blueprint, Response, current_app, g, jsonify, redirect, render_template, request, url_for,
)

from historian_blueprint import history
from historian_blueprint.app import get_settings, get_store
from historian_blueprint.config import PROFILES
from historian_blueprint.graph.export import (
    confidence_words, outcome, outcome_counts, report_views, source_label, status_label, status_words, to_markdown,
)
from historian_blueprint.graph.references import bibtex, chicago, chicago_bibliography_entry, csl_json, references, ris
from historian_blueprint.index import service
from historian_blueprint.text.markers import split_at_markers
from historian_blueprint.text.questions import clean_question
from historian_blueprint.verify.draft import TooManyClaims
from historian_blueprint.verify.service import check_draft
from historian_blueprint.web.bodies import AskBody, VerifyBody, json_body, parse, raw_json, search_filters, verify_form
from historian_blueprint.web.auth import login_required
from historian_blueprint.web.common import (
    RUNS_PER_PAGE, Problem, delete_own, host_source_url, index_problems, load_run, page_number, running, running_events,
    server_sent, source_link, user,
)
from historian_blueprint.web.csrf import csrf_token, protect
from historian_blueprint.web.reading import around, highlighted

# An answer's exports: the report, the output, and its cited sources in the formats reference managers import.
EXPORTS = {"md": "text/markdown", "json": "application/json", "bib": "application/x-bibtex",
           "ris": "application/x-research-info-systems", "csl.json": "application/vnd.citationstyles.csl+json",
           "chicago.txt": "text/plain"}
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


def _run_ask(question: str, profile: str | None, parent: str | None, filters: dict[str, Any] | None = None) -> dict[str, Any]:
    from historian_blueprint.graph.run import ask  # on use: langgraph loads with the first question, not with the app

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


def register(bp: Blueprint) -> None:
    @bp.app_template_filter("historian_markers")
    def historian_markers(text: str) -> list[dict[str, Any]]:
        """Split text at its [n] citation markers, so the template can link them (and escape the rest)."""
        return split_at_markers(text or "")

    @bp.app_template_global("historian_source_url")
    def source_url(source_id: str, start: int | None = None, end: int | None = None, run_id: str | None = None) -> str:
        return source_link(source_id, start, end, run_id)

    bp.add_app_template_filter(outcome, "historian_outcome")  # verdict -> (group, label, span)
    bp.add_app_template_global(outcome_counts, "historian_outcome_counts")
    bp.add_app_template_global(status_words, "historian_status_words")  # output -> (group, label, sentence)
    bp.add_app_template_global(confidence_words, "historian_confidence_words")
    bp.add_app_template_global(status_label, "historian_status_label")  # a run summary's (group, label)
    bp.add_app_template_global(report_views, "historian_report_views")

    @bp.app_template_filter("historian_json")
    def historian_json(value: Any) -> str:
        """Indented JSON with its characters as they are (no \\u2013 escapes); the template escapes it as text."""
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)

    def cited_document(source_id: str) -> Any:
        """A cited document, read once per request however many of the page's spans cite it."""
        docs = g.setdefault("historian_cited", {})
        if source_id not in docs:
            docs[source_id] = get_store().get_document(source_id)
        return docs[source_id]

    @bp.app_template_global("historian_source_groups")
    def source_groups(citations: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The citations grouped by document, in order of first citation, each group with its label (who, what,
        when) and its citations in order: the page quotes each passage once, under its source."""
        groups: dict[str, dict[str, Any]] = {}
        for c in citations:
            doc = cited_document(c["source_id"])
            if c["source_id"] not in groups:
                groups[c["source_id"]] = {"source_id": c["source_id"], "label": source_label({**c, "locator": None}, doc),
                                          "citations": []}
            groups[c["source_id"]]["citations"].append({**c, **around(doc.text if doc else "", c["start"], c["end"])})
        return list(groups.values())

    @bp.app_template_global("historian_document_label")
    def document_label(span: Any) -> str:
        """A span's document (a stored answer's dict or a checked draft's EvidenceSpan) as a historian cites it:
        who, what, when and where in it, not its id; each document read once per request."""
        source_id, locator = (span.get("source_id"), span.get("locator")) if isinstance(span, dict) else (
            span.source_id, getattr(span, "locator", None))
        doc = cited_document(source_id)
        if doc is None:
            return source_id + (f", {locator}" if locator else "")
        return source_label({"source_id": doc.id, "title": doc.title, "author": doc.author, "year": doc.year,
                             "locator": locator}, doc)

    # ------------------------------------------------------------------ ask
    @bp.get("/ask")
    @login_required
    def ask_page():
        parent = request.args.get("parent")
        parent_run = load_run(parent) if parent else None
        filters = ((parent_run or {}).get("output", {}).get("metadata") or {}).get("filters") or {}  # a follow-up keeps them
        return render_template("historian/ask.html", csrf_token=csrf_token(), profiles=PROFILES, parent=parent_run,
                               profile=get_settings().profile, filters=filters,
                               collections=_collections())

    @bp.post("/ask")
    @login_required
    def ask_submit():
        protect()
        question, profile, parent, filters = _question_and_options(request.form)
        output = _run_ask(question, profile, parent, filters)
        return redirect(url_for("historian.run_page", run_id=output["metadata"]["run_id"]), code=303)

    @bp.post("/ask/stream")
    @login_required
    def ask_stream():
        """Server-sent events: one ``node`` event per finished step, then ``done`` (or ``error``)."""
        protect()
        body = request.form if request.form else parse(AskBody, raw_json()).model_dump()
        question, profile, parent, filters = _question_and_options(body)
        from historian_blueprint.graph.run import stream  # on use, as in _run_ask

        def done(event: dict[str, Any]) -> dict[str, Any]:
            return {"run_id": event["run_id"], "url": url_for("historian.run_page", run_id=event["run_id"]),
                    "status": event["output"]["status"]}

        events = running_events("ask", lambda: stream(question, user_id=user(), parent_id=parent, profile=profile,
                                                      filters=filters))
        return server_sent(events, done, "ask")

    # ------------------------------------------------------------------ runs
    @bp.get("/runs")
    @login_required
    def runs_page():
        query = (request.args.get("q") or "").strip()[:200]
        page = page_number(request.args.get("page"))
        runs, total = history.page(get_store(), user(), "ask", page, RUNS_PER_PAGE, query)
        pages = max(1, -(-total // RUNS_PER_PAGE))
        return render_template("historian/runs.html", runs=runs, query=query, page=page, pages=pages, total=total,
                               csrf_token=csrf_token())

    @bp.get("/runs/<run_id>")
    @login_required
    def run_page(run_id: str):
        run = load_run(run_id)
        thread = list(get_store().runs.find({"thread_id": run.get("thread_id") or run_id, "kind": "ask", "user_id": run.get("user_id")},
                                            {"question": 1, "created_at": 1}).sort("created_at", 1))
        template = "historian/_answer.html" if request.args.get("partial") else "historian/run.html"
        return render_template(template, run=run, out=run["output"], thread=thread, csrf_token=csrf_token())

    @bp.post("/runs/<run_id>/delete")
    @login_required
    def run_delete(run_id: str):
        protect()
        delete_own(load_run(run_id), "runs")
        return redirect(url_for("historian.runs_page"), code=303)

    @bp.get("/runs/<run_id>/export.<fmt>")
    @login_required
    def run_export(run_id: str, fmt: str):
        """The run as a report (md), its output (json), or its cited sources as references: BibTeX (bib), RIS
        (ris), CSL-JSON (csl.json) and Chicago notes-bibliography (chicago.txt)."""
        run = load_run(run_id)
        out = run["output"]
        if fmt not in EXPORTS:
            raise Problem(404, "not_found", f"export formats: {', '.join(EXPORTS)}")
        if fmt == "json":
            body = json.dumps(out, indent=2, ensure_ascii=False)
        else:  # each cited document read once, for its references and (md) its sources' labels
            store = get_store()
            docs = {sid: store.get_document(sid) for sid in dict.fromkeys(c["source_id"] for c in out["citations"])}
            refs = references(out["citations"], docs.get)
            if fmt == "md":
                labels = {c["id"]: source_label(c, docs[c["source_id"]]) for c in out["citations"]}
                body = to_markdown(out, run["question"], labels, [chicago_bibliography_entry(r) for r in refs])
            elif fmt == "chicago.txt":
                body = chicago(refs, out["citations"])
            else:
                body = {"bib": bibtex, "ris": ris, "csl.json": csl_json}[fmt](refs)
        mime = EXPORTS[fmt]  # Flask adds the charset to text/* only; the other types name theirs here
        kind = {"mimetype": mime} if mime.startswith("text/") else {"content_type": f"{mime}; charset=utf-8"}
        return Response(body, **kind, headers={"Content-Disposition": f'attachment; filename="historian-{run_id[:8]}.{fmt}"'})

    # ------------------------------------------------------------------ sources
    @bp.get("/sources/<historian_document_id:source_id>")
    @login_required
    def source(source_id: str):
        doc = get_store().get_document(source_id)
        if doc is None:
            raise Problem(404, "not_found", f"no document {source_id}")
        spans: list[tuple[int, int, int]] = []
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
            spans.append((0, *asked[-1]))
        pieces = highlighted(doc.text, spans, focus=asked[0] if asked else None)  # the clicked citation, in view
        return render_template("historian/source.html", doc=doc, pieces=pieces, run=run,
                               host_url=host_source_url(source_id, spans[0][1] if spans else None, spans[0][2] if spans else None))

    # ------------------------------------------------------------------ check a draft
    @bp.route("/verify", methods=["GET", "POST"])
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
        return render_template("historian/verify.html", result=result, text=text, question=question if request.method == "POST" else "",
                               error=error, csrf_token=csrf_token())

    def _check(text: str, sources: list[str], question: str | None = None) -> Any:
        with running("verify"):
            try:
                return check_draft(text, sources, question=question)
            except TooManyClaims as exc:
                raise Problem(413, "too_many_claims", str(exc)) from None
            except ValueError as exc:
                raise Problem(400, "bad_request", str(exc)) from None

    # ------------------------------------------------------------------ JSON API
    @bp.post("/api/ask")
    @login_required
    def api_ask():
        protect()
        question, profile, parent, filters = _question_and_options(json_body(AskBody).model_dump())
        return jsonify(_run_ask(question, profile, parent, filters))

    @bp.post("/api/verify")
    @login_required
    def api_verify():
        protect()
        body = json_body(VerifyBody)
        return jsonify(_check(body.text, body.sources, body.question).model_dump())

    @bp.get("/api/runs/<run_id>")
    @login_required
    def api_run(run_id: str):
        run = load_run(run_id)
        return jsonify({k: run.get(k) for k in ("_id", "question", "user_id", "created_at", "thread_id", "parent_id",
                                                "profile", "engine", "index_generation", "output", "trace")})

    @bp.get("/api/runs")
    @login_required
    def api_runs():
        page = page_number(request.args.get("page"))
        runs, total = history.page(get_store(), user(), "ask", page, RUNS_PER_PAGE)
        return jsonify(runs=[{"run_id": r["_id"], "question": r["question"], "created_at": r["created_at"],
                              "status": r.get("output", {}).get("status")} for r in runs],
                       page=page, per_page=RUNS_PER_PAGE, total=total)

