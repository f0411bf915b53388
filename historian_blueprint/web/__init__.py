"""The Historian blueprint: pages and JSON API under ``HISTORIAN_URL_PREFIX``."""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify, render_template, request

from historian_blueprint.app import get_state
from historian_blueprint.migrate import pending_message
from historian_blueprint.resources import resource_path
from historian_blueprint.web import admin, api, maps, research, views


def build_blueprint() -> Blueprint:
    """Return a new blueprint (templates and static files found installed or in a checkout)."""
    bp = Blueprint(
        "historian",
        __name__,
        template_folder=str(resource_path("templates")),
        static_folder=str(resource_path("static")),
        static_url_path="/static",
    )

    @bp.before_request
    def refuse_while_migrations_pending():
        pending = get_state().pending_migrations
        if not pending or request.endpoint in ("historian.static", "historian.api_health"):
            return None
        message = pending_message(pending)
        if "/api/" in request.path:
            return jsonify(error={"code": "migrations_pending", "message": message}), 503
        return render_template("historian/error.html", title="Historian needs a migration", message=message), 503

    @bp.app_template_filter("historian_time")
    def historian_time(epoch: float) -> str:
        from datetime import datetime, timezone

        return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d %H:%M UTC") if epoch else ""

    @bp.context_processor
    def layout():
        return {"historian_base_template": current_app.config["HISTORIAN_BASE_TEMPLATE"]}

    views.register(bp)
    api.register(bp)
    admin.register(bp)
    research.register(bp)
    maps.register(bp)
    return bp
