"""Who is asking: the host's flask-login user, or a script holding an API token."""

from __future__ import annotations

import functools
import hmac
from dataclasses import dataclass
from typing import Any, Callable

from flask import current_app, g, jsonify, redirect, render_template, request, url_for

from historian_blueprint.services import get_settings


@dataclass(frozen=True)
class Identity:
    user_id: str
    is_admin: bool


def _token_identity() -> Identity | None:
    header = request.headers.get("Authorization", "")
    if not header.startswith("Bearer "):
        return None
    given = header[len("Bearer "):].strip()
    for token, who in (get_settings().api_tokens or {}).items():
        if hmac.compare_digest(given.encode(), str(token).encode()):
            who = who or {}
            role = who.get("role", "researcher")
            return Identity(str(who.get("user", "api")), role == get_settings().admin_role)
    return None


def current_identity() -> Identity | None:
    """Return the identity of this request, or None when nobody is logged in."""
    if "historian_identity" in g:
        return g.historian_identity
    identity = _token_identity()
    g.historian_identity_from_token = identity is not None
    if identity is None:
        try:
            from flask_login import current_user
        except ImportError:  # pragma: no cover - flask-login is a dependency
            current_user = None
        if current_user is not None and getattr(current_user, "is_authenticated", False):
            role = getattr(current_user, "role", None)
            is_admin = role == get_settings().admin_role or bool(getattr(current_user, "is_admin", False))
            # runs are keyed by get_id(): it must stay the same across logins (keep a session-invalidation
            # nonce out of it, as the demo does), or the user's history is left under the old key
            identity = Identity(str(current_user.get_id()), is_admin)
        elif not get_settings().login_required:
            identity = Identity("anonymous", False)
    g.historian_identity = identity
    return identity


def _wants_json() -> bool:
    return request.blueprint == "historian" and "/api/" in request.path


def _deny_anonymous() -> Any:
    if _wants_json():
        return jsonify(error={"code": "unauthorized", "message": "log in or send an API token"}), 401
    manager = getattr(current_app, "login_manager", None)
    login_view = manager and (manager.blueprint_login_views.get(request.blueprint) or manager.login_view)
    if login_view:
        return redirect(url_for(login_view, next=request.full_path.rstrip("?")))
    message = "Historian's pages need a logged-in user, and this site names no login page for them"
    message += f" ({LOGIN_FIX})" if current_app.debug else "."
    return render_template("historian/error.html", title="Log in to use Historian", message=message), 401


LOGIN_FIX = ("the host sets up flask-login: `LoginManager(app)` with a `user_loader` and a `login_view`, or "
             "HISTORIAN_LOGIN_REQUIRED=False for a site without users")


def login_problem(app: Any) -> str | None:
    """What is missing for Historian's login to work on this app (None: nothing), naming the fix."""
    if not get_settings(app).login_required:
        return None
    manager = getattr(app, "login_manager", None)
    if manager is None:
        return f"HISTORIAN_LOGIN_REQUIRED is on but the app has no flask-login LoginManager: {LOGIN_FIX}"
    if getattr(manager, "_user_callback", None) is None and getattr(manager, "_request_callback", None) is None:
        return f"the app's LoginManager has no user_loader (or request_loader): nobody can log in; {LOGIN_FIX}"
    if not manager.login_view and not manager.blueprint_login_views.get("historian"):
        return ("the app's LoginManager has no login_view: Historian's pages answer 401 instead of sending people "
                "to log in; set login_manager.login_view")
    return None


def login_required(view: Callable[..., Any]) -> Callable[..., Any]:
    """Let only logged-in users (or API tokens) through; others go to the host's login page."""

    @functools.wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if current_identity() is None:
            return _deny_anonymous()
        return view(*args, **kwargs)

    return wrapped


def admin_required(view: Callable[..., Any]) -> Callable[..., Any]:
    """Let only admins through: anonymous users go to login, others get 403."""

    @functools.wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        identity = current_identity()
        if identity is None:
            return _deny_anonymous()
        if not identity.is_admin:
            if _wants_json():
                return jsonify(error={"code": "forbidden", "message": "admins only"}), 403
            return current_app.response_class("Admins only.", status=403)
        return view(*args, **kwargs)

    return wrapped
