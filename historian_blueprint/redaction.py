"""Masking of secrets by their shape, whatever setting holds them (``config.redacted`` applies it to every value).

Masked: the user-info (user and password) of any URL, for any scheme, multi-host MongoDB URIs included (the
scheme, hosts, ports and path stay readable); the values of query (and fragment) parameters whose name contains
key, token, secret, password, passwd, pwd, auth, signature, sig, credential or session, and the whole
``authMechanismProperties`` (it can carry ``AWS_SESSION_TOKEN:...``); bearer-like tokens anywhere (``sk-...``,
other well-known key prefixes, JWTs, ``Bearer ...``, long high-entropy hex or base64 runs); and every value under a
name that suggests a secret (``api_key``, ``token``, ``password``, ...). Model names, paths, profile names, numbers
and booleans are kept. Nothing here raises on odd input: a value it cannot read is masked whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote

MASK = "***"
_MAX_DEPTH = 32  # nesting deeper than this is masked whole (a config is never that deep; a cycle would be)

# query-parameter names that carry secrets: any name containing one of these (case-insensitive)
_SECRET_PARAM = re.compile(r"key|token|secret|passw|pwd|auth|sig|credential|session", re.I)
# MongoDB options that name how to authenticate, not with what: kept readable
_NAMED_NOT_SECRET = {"authsource", "authmechanism"}
# the words of a setting's or a mapping key's name that make its whole value a secret ("author" is no "auth")
_SECRET_WORDS = {"key", "apikey", "token", "secret", "password", "passwd", "pwd", "passphrase", "auth",
                 "authorization", "signature", "sig", "credential", "credentials", "session", "cookie", "bearer"}
_SECRET_ENDINGS = ("key", "token", "secret", "password", "passwd", "pwd", "credential", "credentials")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://\S*")
# tokens recognised by their form wherever they stand
_TOKEN = re.compile(
    r"(?<![A-Za-z0-9])(?:sk-[A-Za-z0-9_\-]{6,}|[sr]k_(?:live|test)_\w+)"  # OpenAI, Anthropic, Stripe keys
    r"|(?<![A-Za-z0-9])(?:gh[pousr]_|github_pat_|glpat-|hf_|xox[abprs]-|AIza)[A-Za-z0-9_\-]{16,}"
    r"|(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])"  # AWS access key ids
    r"|(?<![A-Za-z0-9])eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"  # JWTs
)
_BEARER = re.compile(r"(\b(?:[Bb]earer|Basic)\s+)[A-Za-z0-9._~+/=\-]{8,}")  # an Authorization header's value
_RUN = re.compile(r"[A-Za-z0-9+/=_\-]{32,}")  # a candidate for a high-entropy key (base64, base64url, hex)
_URL_RUN = re.compile(r"[A-Za-z0-9+=_\-]{32,}")
_HEX = re.compile(r"[0-9a-fA-F]{32,}")
_WORDISH = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")  # "MiniLM12v" -> Mini, LM, 12, v
_FILE_PATH = re.compile(r"(?:~|\.{1,2})?[/\\]|[A-Za-z]:[/\\]")


def secret_name(name: Any) -> bool:
    """A setting or mapping key whose name says its value is a secret (``LLM_API_KEY``, ``apiKey``, ``token``)."""
    if not isinstance(name, str):
        return False
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()
    return any(w in _SECRET_WORDS or w.endswith(_SECRET_ENDINGS) for w in re.split(r"[^a-z0-9]+", words) if w)


def _looks_random(run: str) -> bool:
    """A long run of key characters that reads as random, not as words (a model name, a slug, a CamelCase name):
    a hex key; a long letters-and-digits segment of short words or few vowels; or, cut up by ``+ / - _``, a
    class (lower, upper, digit) that changes at 4 characters in 10 or more. Measured on random keys of 32
    characters: under 1 in 100 slips through (a few in 100 where ``-`` and ``_`` cut them often), fewer the
    longer the key."""
    if re.match(r"sha(?:256|384|512)-", run, re.I):  # a CSP hash source: public, not a secret
        return False
    if any(_mixed(h) and len(set(h.lower())) >= 8 for h in _HEX.findall(run)):
        return True
    segments = re.split(r"[^A-Za-z0-9]+", run)
    for seg in (s for s in segments if len(s) >= 16 and _mixed(s)):
        letters = re.sub(r"[^A-Za-z]", "", seg)
        if len(seg) <= 5 * len(_WORDISH.findall(seg)) or (
                len(seg) >= 20 and sum(c in "aeiouAEIOU" for c in letters) < 0.25 * len(letters)):
            return True
    kinds = ["d" if c.isdigit() else "u" if c.isupper() else "l" for c in run if c.isalnum()]
    changes = sum(a != b for a, b in zip(kinds, kinds[1:]))
    return len(set(kinds)) > 1 and changes >= 0.4 * (len(kinds) - 1) and max(map(len, segments)) >= 10


def _mixed(text: str) -> bool:
    return bool(re.search(r"\d", text) and re.search(r"[A-Za-z]", text))


def mask_tokens(text: str) -> str:
    """``text`` with every bearer-like token masked. In a URL ``/`` ends a run (a key in a path leaves the path
    readable); elsewhere it belongs to it (base64); in a file path a hex folder name is no key (a snapshot)."""
    text = _BEARER.sub(lambda m: m.group(1) + MASK, _TOKEN.sub(MASK, text))
    in_url = "://" in text
    file_path = not in_url and _FILE_PATH.match(text)

    def one(match: re.Match[str]) -> str:
        run = match.group(0)
        probe = "/".join(p for p in run.split("/") if not _HEX.fullmatch(p)) if file_path else run
        return MASK if _looks_random(probe) else run

    return (_URL_RUN if in_url else _RUN).sub(one, text)


def _mask_params(params: str, depth: int) -> str:
    """``a=1&api_key=x`` -> ``a=1&api_key=***`` (``;`` separates too); a nested URL is masked in turn."""
    parts = re.split(r"([&;])", params)
    for i in range(0, len(parts), 2):
        name, eq, value = parts[i].partition("=")
        if eq and unquote(name).lower() not in _NAMED_NOT_SECRET and (
                _SECRET_PARAM.search(unquote(name)) or name.lower() == "authmechanismproperties"):
            parts[i] = f"{name}={MASK}"
        elif eq and "://" in value and depth < _MAX_DEPTH:
            parts[i] = f"{name}={_mask_url(value, depth + 1)}"
    return "".join(parts)


def _userinfo_end(rest: str) -> int:
    """Where the user-info of a URL's remainder (after ``scheme://``) ends (its ``@``), or -1 when it has none."""
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    if "@" in authority:
        return authority.rfind("@")
    at = rest.rfind("@")  # a password with an unencoded / ? or # in it ("u:p#ss@host"): still user:password@
    if at < 0 or ":" not in rest[:at]:
        return -1
    user, _, password = rest[:at].partition(":")
    if re.search(r"[/?#\s]", user) or re.match(r"\d*(?:[/?#]|$)", password):  # a path, or host:port/...@
        return -1
    return at


def _mask_url(uri: str, depth: int = 0) -> str:
    scheme, sep, rest = uri.partition("://")
    if not sep:
        return uri
    at = _userinfo_end(rest)
    head = ""
    if at >= 0:
        head = (f"{MASK}:{MASK}" if ":" in rest[:at] else MASK) + "@"
        rest = rest[at + 1:]
    rest, hash_, fragment = rest.partition("#")
    where, query_mark, query = rest.partition("?")
    if query_mark:
        rest = where + "?" + _mask_params(query, depth)
    if hash_:
        rest += "#" + _mask_params(fragment, depth)
    return f"{scheme}://{head}{rest}"


def redact_uri(uri: str) -> str:
    """A URI (MongoDB or any other) with its user-info and every secret-bearing parameter masked; a string that is
    no URI comes back as it is."""
    try:
        return _mask_url(uri) if isinstance(uri, str) else uri
    except Exception:  # noqa: BLE001 - redaction must never fail; what it cannot read it masks whole
        return MASK


def redact_text(text: str) -> str:
    """A string with the credentials of every URL in it and every bearer-like token masked."""
    try:
        if _URL.match(text) and len(text.split()) > 1:  # a URL setting whose password may hold a space
            text = _mask_url(text)  # (masking is idempotent: the pass below finds any further URL)
        return mask_tokens(_URL.sub(lambda m: _mask_url(m.group(0)), text))
    except Exception:  # noqa: BLE001 - as above
        return MASK


def redact_value(value: Any, secret: bool = False, depth: int = 0) -> Any:
    """``value`` with its secrets masked, strings inside lists and mappings too; ``secret``: the name holding it
    says it is one (a non-empty value is then masked whole; none and empty stay, so "unset" still shows)."""
    if value is None or isinstance(value, bool):
        return value
    if depth > _MAX_DEPTH:
        return MASK
    if isinstance(value, Mapping):
        if secret and value:
            return {MASK: f"{len(value)} entries"}
        out: dict[Any, Any] = {}
        for key, item in value.items():
            shown = redact_text(key) if isinstance(key, str) else key
            while shown in out:  # two keys masked alike: keep both
                shown = f"{shown}+"
            out[shown] = redact_value(item, secret_name(key), depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [MASK] * len(value) if secret else [redact_value(item, False, depth + 1) for item in value]
    if secret and value != "":
        return MASK
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, (int, float)):
        return value
    try:  # another object (a URL type, a path): masked by its text when that holds a secret
        text = str(value)
    except Exception:  # noqa: BLE001 - as above
        return MASK
    shown = redact_text(text)
    return value if shown == text else shown


_KNOWN_MIN = 8  # a known secret shorter than this is left to the shapes (masking "abc" everywhere would maim text)


def redact_known(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``redact_text`` after masking the exact values of ``secrets`` (the keys a component was configured with,
    which an endpoint's error may echo back whatever their shape), longest first."""
    try:
        known = {s for s in secrets if isinstance(s, str) and len(s) >= _KNOWN_MIN}
        for secret in sorted(known, key=len, reverse=True):
            text = text.replace(secret, MASK)
        return redact_text(text)
    except Exception:  # noqa: BLE001 - as above
        return MASK
