"""Security headers on Historian's responses (and, through ``apply``, on a host's if it wants them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from historian_blueprint.config import DEFAULT_CSP

FIXED = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}


def headers_for(config: Mapping[str, Any]) -> dict[str, str]:
    """The headers ``HISTORIAN_SECURITY_HEADERS`` and ``HISTORIAN_SECURITY_CSP`` ask for. ``"auto"``: Historian's
    policy, enforced when the pages use Historian's own layout; in a host's layout (which may load inline
    scripts, other origins' styles or fonts) sent as ``Content-Security-Policy-Report-Only``, so the browser
    reports what the policy would block and blocks nothing, until the host sets a policy it has checked."""
    if not config.get("HISTORIAN_SECURITY_HEADERS", True):
        return {}
    out = dict(FIXED)
    csp = config.get("HISTORIAN_SECURITY_CSP", "auto")
    if csp == "auto":
        own_layout = config.get("HISTORIAN_BASE_TEMPLATE", "historian/base.html") == "historian/base.html"
        out["Content-Security-Policy" if own_layout else "Content-Security-Policy-Report-Only"] = DEFAULT_CSP
    elif csp:
        out["Content-Security-Policy"] = csp
    return out


def apply(response: Any, config: Mapping[str, Any]) -> Any:
    """Add the headers a response does not carry yet (a host's own policy, set earlier, wins)."""
    for name, value in headers_for(config).items():
        response.headers.setdefault(name, value)
    return response
