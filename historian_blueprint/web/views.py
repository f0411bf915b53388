"""Historian's pages and JSON endpoints."""

from __future__ import annotations

from flask import jsonify, render_template

from historian_blueprint import config as cfg
from historian_blueprint import migrate
from historian_blueprint.services import get_settings, get_services, get_store
from historian_blueprint.index import service
from historian_blueprint.redaction import redact_text
from historian_blueprint.store import STORE_ERRORS, store_problem
from historian_blueprint.web.auth import admin_required, current_identity, login_required


def status() -> dict:
    """Return what an admin or a health check wants to know about this installation."""
    state = get_services()
    store = get_store()
    return {
        "documents": store.count_documents(),
        "store": state.stores.kind,
        "database": get_settings().db_name,
        "collection": get_settings().collection,
        "profile": get_settings().profile,
        "engine": get_settings().engine,
        "schema_version": migrate.schema_version(store),
        "pending_migrations": list(state.pending_migrations),
        "index": _index_status(store),
    }


def _index_status(store) -> dict | None:
    record = service.current_generation(store)
    info = {k: record[k] for k in ("generation", "chunks", "documents", "updated_at")} if record else None
    health = service.index_health()
    return {**(info or {}), "health": health} if info or health["state"] != "not_built" else None


def health() -> tuple[dict, int]:
    """The health check's answer and status: 200 ``ok`` (an index not built yet included), else 503 with the reason:
    the store cannot be read or written, the index is damaged (even while an earlier generation serves), migrations
    are pending."""
    try:
        problem = get_store().probe()
        info = status()
    except STORE_ERRORS as exc:
        return {"status": "store_failing", "reason": store_problem(exc)}, 503
    except Exception as exc:  # noqa: BLE001 - a health check reports the failure instead of raising
        return {"status": "error", "reason": redact_text(f"{type(exc).__name__}: {exc}")}, 503
    index = (info.get("index") or {}).get("health") or {}
    if problem:
        return {"status": "store_failing", "reason": problem, **info}, 503
    if index.get("state") in ("damaged", "serving_previous"):
        files = ", ".join(f"{d['file']} ({d['problem']})" for d in index["damaged"])
        serving = (f"generation {index['serving']} serves meanwhile" if index["serving"] is not None
                   else "nothing is searched")
        reason = f"index generation {index['named']} is damaged: {files}; {serving}; rebuild with `{index['rebuild']}`"
        return {"status": "index_damaged", "reason": reason, **info}, 503
    if index.get("state") == "mismatch":
        return {"status": "index_mismatch", "reason": index["message"], **info}, 503
    if info["pending_migrations"]:
        return {"status": "migrations_pending", "reason": "run `flask historian migrate`", **info}, 503
    return {"status": "ok", **info}, 200


@login_required
def index():
    return render_template("historian/index.html", status=status(), identity=current_identity())


def api_health():
    body, code = health()
    return jsonify(body), code


@admin_required
def api_config():
    return jsonify(cfg.redacted(get_settings().as_config()))


# The pages and endpoints of this module: (rule, view, methods), added to the blueprint by build_blueprint.
ROUTES = (
    ("/", index, ["GET"]),
    ("/api/health", api_health, ["GET"]),
    ("/api/config", api_config, ["GET"]),
)
