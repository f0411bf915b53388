"""CSRF protection for Historian's own forms and session-authenticated JSON posts."""

from __future__ import annotations

from flask import abort, current_app, g, request
from flask_wtf.csrf import generate_csrf, validate_csrf
from wtforms.validators import ValidationError


def csrf_token() -> str:
    return generate_csrf()


def protect() -> None:
    """Abort with 400 unless the request carries a valid CSRF token (API tokens are exempt)."""
    if not current_app.config.get("WTF_CSRF_ENABLED", True):
        return
    if getattr(g, "historian_identity_from_token", False):
        return
    token = request.form.get("csrf_token") or request.headers.get("X-CSRFToken") or request.headers.get("X-CSRF-Token")
    try:
        validate_csrf(token)
    except ValidationError as exc:
        abort(400, description=f"CSRF check failed: {exc}")
