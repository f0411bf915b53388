"""The knowledge map's pages and API: /map (live progress), /maps/<id> (the graph, conflicts, consensus,
sources), exports, history, POST /api/map. Map runs are owner-only like ask's runs."""

from __future__ import annotations

import json
from typing import Any

from flask import jsonify, redirect, render_template, request, url_for

from historian_blueprint import history
from historian_blueprint.services import get_store
from historian_blueprint.mapping.topic import Topic, read_topic
from historian_blueprint.text.questions import MAX_TOPIC_CHARS
from historian_blueprint.web.auth import login_required
from historian_blueprint.web.bodies import MapBody, json_body, parse, raw_json
from historian_blueprint.web.csrf import csrf_token, protect
from historian_blueprint.web.common import (
    RUNS_PER_PAGE, Problem, delete_own, export_as, exported, index_problems, load_run, page_number, running,
    running_events, server_sent, source_link, user,
)


def load_map(run_id: str) -> dict[str, Any]:
    """The map run, if this user may see it (its owner or an admin); 404 otherwise."""
    return load_run(run_id, "map", "map")


def _topic(data: Any) -> Topic:
    if not hasattr(data, "get"):
        raise Problem(400, "bad_request", "send the form or a JSON object")
    topic = data.get("topic")
    if not isinstance(topic, str):
        raise Problem(400, "bad_request", "topic must be a string")
    try:  # read once (control characters dropped, spaces collapsed: as a question is); the map reads the value
        return read_topic(topic)
    except ValueError as exc:
        raise Problem(400, "bad_request", str(exc)) from None


def _map(topic: Topic, include: list[str] = ()) -> dict[str, Any]:
    from historian_blueprint.mapping.run import map_topic  # on use: spaCy loads with the first map

    with index_problems(), running("map"):
        return map_topic(topic, user_id=user(), include=include)


def _included(form: Any) -> list[str]:
    """The sources a form asks to include (the map page's "include them"), checked as the API's body is."""
    return parse(MapBody, {"topic": "", "include": form.getlist("include")}).include


def graph_elements(out: dict[str, Any], href: Any = None) -> dict[str, Any]:
    """The map as nodes and edges for the graph view: entities, relations between them, conflicts marked
    (a conflict node joined to the entities its sides name), each edge carrying the span it stands on (and,
    with ``href``, the link to that span)."""
    nodes = [{"id": e["id"], "label": e["name"], "type": e["type"], "mentions": len(e["mentions"])}
             for e in out["entities"]]
    edges = []
    for n, r in enumerate(out["relations"]):
        if r.get("subject_id") and r.get("object_id") and r["subject_id"] != r["object_id"]:
            edges.append({"id": f"r{n}", "source": r["subject_id"], "target": r["object_id"], "label": r["relation"],
                          "kind": "relation", "citation": r["citation"]})
    for c in out["conflicts"]:
        nodes.append({"id": c["id"], "label": c["point"], "type": "conflict", "mentions": 0})
        for k, side in enumerate(c["sides"]):
            for cit in side["citations"]:
                for e in out["entities"]:
                    if any(m["source_id"] == cit["source_id"] and m["start"] < cit["end"] and m["end"] > cit["start"]
                           for m in e["mentions"]):
                        edges.append({"id": f"{c['id']}-{k}-{e['id']}-{cit['start']}", "source": c["id"],
                                      "target": e["id"], "label": f"side {k + 1}", "kind": "conflict", "citation": cit})
    if href is not None:
        for e in edges:
            e["href"] = href(e["citation"]["source_id"], e["citation"]["start"], e["citation"]["end"])
    isolated = {x["id"] for x in nodes} - {x["source"] for x in edges} - {x["target"] for x in edges}
    nodes = [x for x in nodes if x["id"] not in isolated or x["type"] == "conflict" or x["mentions"] > 1]
    keep = {x["id"] for x in nodes}
    edges = [x for x in edges if x["source"] in keep and x["target"] in keep]
    return {"nodes": nodes, "edges": edges}


@login_required
def map_page():
    topic = (request.args.get("topic") or "")[:MAX_TOPIC_CHARS]
    recent, _ = history.page(get_store(), user(), "map", 1, 10)
    return render_template("historian/map.html", csrf_token=csrf_token(), topic=topic, recent=recent,
                           max_chars=MAX_TOPIC_CHARS)


@login_required
def map_submit():
    protect()
    output = _map(_topic(request.form), _included(request.form))
    return redirect(url_for("historian.map_run_page", run_id=output["metadata"]["run_id"]), code=303)


@login_required
def map_stream():
    """Server-sent events: one ``node`` event per finished step, then ``done`` (or ``error``)."""
    protect()
    body = None if request.form else parse(MapBody, raw_json())
    topic = _topic(request.form if body is None else body.model_dump())
    include = _included(request.form) if body is None else body.include
    from historian_blueprint.mapping.run import stream_map  # on use: spaCy loads with the first map

    def done(event: dict[str, Any]) -> dict[str, Any]:
        return {"run_id": event["run_id"], "url": url_for("historian.map_run_page", run_id=event["run_id"])}

    return server_sent(running_events("map", lambda: stream_map(topic, user_id=user(), include=include)), done, "map")


@login_required
def maps_page():
    page = page_number(request.args.get("page"))
    runs, total = history.page(get_store(), user(), "map", page, RUNS_PER_PAGE)
    return render_template("historian/maps.html", runs=runs, page=page, pages=max(1, -(-total // RUNS_PER_PAGE)),
                           total=total, csrf_token=csrf_token())


@login_required
def map_run_page(run_id: str):
    run = load_map(run_id)
    titles = {s["source_id"]: s["title"] for s in run["output"]["sources"]}
    return render_template("historian/map_run.html", run=run, out=run["output"], titles=titles, csrf_token=csrf_token(),
                           graph_url=url_for("historian.map_export", run_id=run_id, fmt="json", graph=1))


@login_required
def map_delete(run_id: str):
    protect()
    delete_own(load_map(run_id), "maps")
    return redirect(url_for("historian.maps_page"), code=303)


@login_required
def map_export(run_id: str, fmt: str):
    """The map in one of the maps' export formats (present/formats.py); ``?graph=1`` on JSON: the graph view's
    elements, shown inline."""
    run = load_map(run_id)
    out = run["output"]
    if fmt == "json" and request.args.get("graph"):
        return exported(json.dumps(graph_elements(out, source_link), indent=2, ensure_ascii=False), "application/json",
                        "", inline=True)
    return export_as("map", fmt, out, out.get("topic") or "", f"historian-map-{run_id[:8]}")


@login_required
def api_map():
    protect()
    body = json_body(MapBody)
    return jsonify(_map(_topic(body.model_dump()), body.include))


@login_required
def api_map_run(run_id: str):
    run = load_map(run_id)
    return jsonify({k: run.get(k) for k in ("_id", "topic", "user_id", "created_at", "engine", "output", "trace")})


# The pages and endpoints of this module: (rule, view, methods), added to the blueprint by build_blueprint.
ROUTES = (
    ("/map", map_page, ["GET"]),
    ("/map", map_submit, ["POST"]),
    ("/map/stream", map_stream, ["POST"]),
    ("/maps", maps_page, ["GET"]),
    ("/maps/<run_id>", map_run_page, ["GET"]),
    ("/maps/<run_id>/delete", map_delete, ["POST"]),
    ("/maps/<run_id>/export.<fmt>", map_export, ["GET"]),
    ("/api/map", api_map, ["POST"]),
    ("/api/maps/<run_id>", api_map_run, ["GET"]),
)
