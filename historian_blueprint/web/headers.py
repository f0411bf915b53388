"""Security headers on Historian's responses (and, through ``apply``, on a host's if it wants them)."""

from __future__ import annotations

from typing import Any

from historian_blueprint.config import DEFAULT_CSP, Settings

FIXED = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}


def headers_for(settings: Settings) -> dict[str, str]:
    """The headers ``HISTORIAN_SECURITY_HEADERS`` and ``HISTORIAN_SECURITY_CSP`` ask for. ``"auto"``: Historian's
    policy, enforced when the pages use Historian's own layout; in a host's layout (which may load inline
    scripts, other origins' styles or fonts) sent as ``Content-Security-Policy-Report-Only``, so the browser
    reports what the policy would block and blocks nothing, until the host sets a policy it has checked."""
    if not settings.security_headers:
        return {}
    out = dict(FIXED)
    csp = settings.security_csp
    if csp == "auto":
        own_layout = settings.base_template == Settings.model_fields["base_template"].default
        out["Content-Security-Policy" if own_layout else "Content-Security-Policy-Report-Only"] = DEFAULT_CSP
    elif csp:
        out["Content-Security-Policy"] = csp
    return out


def apply(response: Any, settings: Settings) -> Any:
    """Add the headers a response does not carry yet (a host's own policy, set earlier, wins)."""
    for name, value in headers_for(settings).items():
        response.headers.setdefault(name, value)
    return response
