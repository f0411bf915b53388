"""Historian's pages and JSON endpoints."""

from __future__ import annotations

from flask import Blueprint, jsonify, render_template

from historian_blueprint import config as cfg
from historian_blueprint import migrate
from historian_blueprint.app import get_settings, get_state, get_store
from historian_blueprint.index import service
from historian_blueprint.web.auth import admin_required, current_identity, login_required


def status() -> dict:
    """Return what an admin or a health check wants to know about this installation."""
    state = get_state()
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
    return {k: record[k] for k in ("generation", "chunks", "documents", "updated_at")} if record else None


def register(bp: Blueprint) -> None:
    @bp.get("/")
    @login_required
    def index():
        return render_template("historian/index.html", status=status(), identity=current_identity())

    @bp.get("/api/health")
    def api_health():
        try:
            info = status()
        except Exception as exc:  # a health check reports the failure instead of raising
            return jsonify(status="error", error=str(exc)), 503
        ok = not info["pending_migrations"]
        return jsonify(status="ok" if ok else "migrations_pending", **info), 200 if ok else 503

    @bp.get("/api/config")
    @admin_required
    def api_config():
        return jsonify(cfg.redacted(get_settings().as_config()))
