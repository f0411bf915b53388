"""Historian's JSON API (retrieval here; ask and verify join it with the graph)."""

from __future__ import annotations

from flask import jsonify, request

from historian_blueprint.services import get_settings
from historian_blueprint.text.questions import clean_question

from historian_blueprint.index import service
from historian_blueprint.web.auth import login_required
from historian_blueprint.web.common import Problem, index_problems, running


def _bad(message: str) -> Problem:
    """A request parameter is missing or malformed: the blueprint's one problem handler answers it."""
    return Problem(400, "bad_request", message)


def _int_arg(name: str, low: int, high: int) -> int | None:
    raw = request.args.get(name)
    if raw in (None, ""):
        return None
    try:
        value = int(raw)
    except ValueError:
        raise _bad(f"{name} must be an integer, got {raw!r}") from None
    if not low <= value <= high:
        raise _bad(f"{name} must be between {low} and {high}")
    return value


@login_required
def api_retrieve():
    try:
        query = clean_question(request.args.get("q"), get_settings().limits_max_question_chars, "q (the query)")
    except ValueError as exc:
        raise _bad(str(exc)) from None
    mode = request.args.get("mode", "hybrid")
    if mode not in ("hybrid", "dense", "bm25"):
        raise _bad("mode must be hybrid, dense or bm25")
    filters = service.Filters(
        collection=request.args.get("collection") or None,
        year_from=_int_arg("year_from", -10000, 10000),
        year_to=_int_arg("year_to", -10000, 10000),
        author=" ".join((request.args.get("author") or "").split())[:200] or None,
    )
    top_k = _int_arg("top_k", 1, 200)
    rerank_k = _int_arg("rerank_k", 1, 200)
    with running("retrieve"), index_problems():  # a search is work too: in the user's running budget
        hits = service.retrieve(query, top_k=top_k, rerank_k=rerank_k, mode=mode, filters=filters)
        generation = service.retriever().status().generation
    return jsonify(query=query, mode=mode, generation=generation, hits=[h.to_dict() for h in hits])


# The pages and endpoints of this module: (rule, view, methods), added to the blueprint by build_blueprint.
ROUTES = (
    ("/api/retrieve", api_retrieve, ["GET"]),
)
