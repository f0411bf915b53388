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
    """The headers ``HISTORIAN_SECURITY_HEADERS`` and ``HISTORIAN_SECURITY_CSP`` ask for."""
    if not config.get("HISTORIAN_SECURITY_HEADERS", True):
        return {}
    out = dict(FIXED)
    csp = config.get("HISTORIAN_SECURITY_CSP", DEFAULT_CSP)
    if csp:
        out["Content-Security-Policy"] = csp
    return out


def apply(response: Any, config: Mapping[str, Any]) -> Any:
    """Add the headers a response does not carry yet (a host's own policy, set earlier, wins)."""
    for name, value in headers_for(config).items():
        response.headers.setdefault(name, value)
    return response
