"""Historian configuration: defaults, YAML profiles, environment overrides, validation, redaction.

Precedence, lowest first: built-in defaults < the YAML profile chosen by ``HISTORIAN_PROFILE`` <
environment variables ``HISTORIAN_<SECTION>_<KEY>`` < options given to ``Historian(**options)`` <
keys the host app set in ``app.config`` before ``init_app``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

import yaml

from historian_blueprint.resources import resource_path

PREFIX = "HISTORIAN_"

DEFAULT_FIELDS = {
    "id": "_id",
    "title": "title",
    "text": "content",
    "author": "author",
    "date": "date",
    "url": "url",
    "pages": "pages",
    "year": "year",
    "collection": "collection",
}

# The Content-Security-Policy of Historian's pages. They carry no inline script and no inline style; the one
# inline style allowed, by its hash, is the stylesheet cytoscape inserts for its container
# (".__________cytoscape_container { position: relative; }").
CYTOSCAPE_STYLE_HASH = "'sha256-pgvDUBa4IjFA2yuSJ2cqcyxmNYJMborsd0ORcRv9vw8='"
DEFAULT_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' " + CYTOSCAPE_STYLE_HASH + "; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)

# One entry per key, without the prefix. The section of a key is its first word.
DEFAULTS: dict[str, Any] = {
    "PROFILE": "default",
    "URL_PREFIX": "/historian",
    "BASE_TEMPLATE": "historian/base.html",
    "SOURCE_URL": None,
    "DATA_DIR": None,
    "AUTO_MIGRATE": False,
    "LOGIN_REQUIRED": True,
    "ADMIN_ROLE": "admin",
    "API_TOKENS": {},
    "ENGINE": "embedded",
    # storage
    "MONGODB_URI": None,
    "DB_NAME": "railroad_documents",
    "COLLECTION": "documents",
    "COLLECTION_PREFIX": "historian_",
    "FIELDS": dict(DEFAULT_FIELDS),
    # index
    "INDEX_CHUNK_SIZE": 700,
    "INDEX_CHUNK_OVERLAP": 150,
    "INDEX_EMBEDDING_MODEL": None,
    "INDEX_BATCH_SIZE": 8,
    "INDEX_ENCODER": "auto",
    "INDEX_CONTEXT_HEADER": True,
    "INDEX_ENCODER_CACHE": None,
    "INDEX_APPROXIMATE_ABOVE": 200_000,
    # retrieval
    "RETRIEVAL_TOP_K": 12,
    "RETRIEVAL_RERANK_K": 6,
    "RETRIEVAL_DENSE_WEIGHT": 0.7,
    "RETRIEVAL_BM25_WEIGHT": 0.3,
    # verification
    "VERIFY_MAX_REVISION_ATTEMPTS": 2,
    "VERIFY_CHALLENGE_CAP": 0.30,
    "VERIFY_INTERROGATION_CAP": 0.20,
    "VERIFY_COUNTER_CAP": 0.25,
    "VERIFY_VERIFIED_THRESHOLD": 0.80,
    "VERIFY_FLAGGED_THRESHOLD": 0.60,
    "VERIFY_HUMAN_REVIEW_THRESHOLD": 0.40,
    "VERIFY_SCORER": "off",  # "on": the support scorer's logit joins the support reading (opt-in: README)
    # limits
    "LIMITS_MAX_QUESTION_CHARS": 2000,
    "LIMITS_MAX_DRAFT_CHARS": 20000,
    "LIMITS_TIMEOUT_S": 60,
    "LIMITS_MAX_BODY_BYTES": 1_000_000,
    # security
    "SECURITY_HEADERS": True,
    "SECURITY_CSP": "auto",
    # llm engine
    "LLM_BASE_URL": None,
    "LLM_API_KEY": None,
    "LLM_MODEL": "gpt-4o-mini",
    "LLM_ROLES": {},
    "LLM_TIMEOUT_S": 30.0,
    "LLM_MAX_RETRIES": 3,
    "LLM_BACKOFF_S": 1.0,
    "LLM_CACHE_TTL_S": 86400,
    "LLM_STRUCTURED_OUTPUT": "json_mode",
    "LLM_CONTEXT_TOKENS": 8000,
    "LLM_CALIBRATION_FILE": None,
    # knowledge map
    "MAP_MAX_ROUNDS": 3,
    "MAP_TOP_K": 8,
    "MAP_PER_DOCUMENT": 2,
    "MAP_MAX_SOURCES": 16,
    "MAP_CREDIBILITY_WEIGHTS": {},
    "MAP_DOCUMENT_TYPES": {},
}

SECRET_KEYS = {"LLM_API_KEY", "API_TOKENS"}

# Environment variables with the prefix that are not configuration keys.
NON_CONFIG_ENV = ("HISTORIAN_DEMO_", "HISTORIAN_TEST_")

PROFILES = ("default", "research", "course")

# The LLM engine's roles and what HISTORIAN_LLM_ROLES may set for each (defaults: settings.py).
ROLES = ("planner", "composer", "challenger", "interrogator", "counter_arguer", "judge", "refiner", "mapper")
ROLE_OPTIONS = ("model", "temperature", "max_tokens", "timeout", "base_url", "api_key")


class ConfigError(ValueError):
    """A Historian configuration key or value is wrong."""


def profile_values(name: str) -> dict[str, Any]:
    """Return the flat key -> value mapping of the named YAML profile."""
    if name not in PROFILES:
        raise ConfigError(f"HISTORIAN_PROFILE={name!r} is not one of {', '.join(PROFILES)}")
    with open(resource_path("profiles", f"{name}.yaml"), encoding="utf-8") as fh:
        data = yaml.safe_load(fh) or {}
    return flatten(data, source=f"profile {name!r}")


def flatten(data: Mapping[str, Any], source: str) -> dict[str, Any]:
    """Turn ``{"retrieval": {"top_k": 20}}`` into ``{"RETRIEVAL_TOP_K": 20}``."""
    flat: dict[str, Any] = {}
    for section, value in data.items():
        section_key = str(section).upper()
        if isinstance(value, Mapping) and section_key not in DEFAULTS:
            for key, inner in value.items():
                flat[f"{section_key}_{str(key).upper()}"] = inner
        else:
            flat[section_key] = value
    for key in flat:
        if key not in DEFAULTS:
            raise ConfigError(f"unknown Historian setting {PREFIX}{key} in {source}")
    return flat


def env_values(environ: Mapping[str, str]) -> dict[str, Any]:
    """Return the settings given as ``HISTORIAN_<SECTION>_<KEY>`` environment variables."""
    values: dict[str, Any] = {}
    for name, raw in environ.items():
        if not name.startswith(PREFIX) or name.startswith(NON_CONFIG_ENV):
            continue
        key = name[len(PREFIX):]
        if key not in DEFAULTS:
            raise ConfigError(f"unknown Historian setting in environment variable {name}")
        values[key] = _parse_env(key, raw)
    return values


def _parse_env(key: str, raw: str) -> Any:
    default = DEFAULTS[key]
    if isinstance(default, str) or default is None:
        return raw if raw != "" else None
    try:
        return yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{PREFIX}{key}: cannot parse {raw!r}: {exc}") from exc


def resolve(explicit: Mapping[str, Any], options: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, Any]:
    """Layer defaults, profile, environment, options and explicit app config; return full keys."""
    for name in explicit:
        if name.startswith(PREFIX) and name[len(PREFIX):] not in DEFAULTS:
            raise ConfigError(f"unknown Historian setting {name} in app.config")
    option_values = {}
    for name, value in options.items():
        key = name.upper().removeprefix(PREFIX)
        if key not in DEFAULTS:
            raise ConfigError(f"unknown Historian option {name!r}")
        option_values[key] = value
    env = env_values(environ)
    explicit_values = {name[len(PREFIX):]: v for name, v in explicit.items() if name.startswith(PREFIX)}

    profile = (
        explicit_values.get("PROFILE") or option_values.get("PROFILE") or env.get("PROFILE") or DEFAULTS["PROFILE"]
    )
    merged: dict[str, Any] = {k: _copy(v) for k, v in DEFAULTS.items()}
    for layer in (profile_values(profile), env, option_values, explicit_values):
        merged.update(layer)
    merged["PROFILE"] = profile
    validate(merged)
    return {PREFIX + k: v for k, v in merged.items()}


def _copy(value: Any) -> Any:
    return dict(value) if isinstance(value, dict) else value


def validate(values: Mapping[str, Any]) -> None:
    """Raise ConfigError naming the first key whose value cannot work."""

    def fail(key: str, why: str) -> None:
        raise ConfigError(f"{PREFIX}{key}={values[key]!r}: {why}")

    for key, default in DEFAULTS.items():
        value = values[key]
        if value is None or default is None:
            continue
        if isinstance(default, bool):
            if not isinstance(value, bool):
                fail(key, "expected true or false")
        elif isinstance(default, int):
            if isinstance(value, bool) or not isinstance(value, int):
                fail(key, "expected an integer")
        elif isinstance(default, float):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                fail(key, "expected a number")
        elif isinstance(default, dict):
            if not isinstance(value, dict):
                fail(key, "expected a mapping")
        elif isinstance(default, str) and not isinstance(value, str):
            fail(key, "expected a string")

    if not str(values["URL_PREFIX"]).startswith("/") or values["URL_PREFIX"] == "/":
        fail("URL_PREFIX", "must start with '/' and not be the site root (the blueprint's static files need a prefix)")
    if values["ENGINE"] not in ("embedded", "llm"):
        fail("ENGINE", "expected 'embedded' or 'llm'")
    unknown = set(values["FIELDS"]) - set(DEFAULT_FIELDS)
    if unknown:
        fail("FIELDS", f"unknown field(s) {sorted(unknown)}; known: {sorted(DEFAULT_FIELDS)}")
    for name in ("id", "title", "text"):
        if not values["FIELDS"].get(name, DEFAULT_FIELDS[name]):
            fail("FIELDS", f"the {name!r} field cannot be empty")
    for role, opts in (values["LLM_ROLES"] or {}).items():
        if role not in ROLES:
            fail("LLM_ROLES", f"unknown role {role!r}; roles: {', '.join(ROLES)}")
        unknown_opts = set(opts or {}) - set(ROLE_OPTIONS)
        if unknown_opts:
            fail("LLM_ROLES", f"unknown option(s) {sorted(unknown_opts)} for {role}; options: {', '.join(ROLE_OPTIONS)}")
    if values["LLM_STRUCTURED_OUTPUT"] not in ("json_schema", "json_mode", "prompt"):
        fail("LLM_STRUCTURED_OUTPUT", "expected 'json_schema', 'json_mode' or 'prompt'")
    if values["LLM_MAX_RETRIES"] < 0 or values["LLM_TIMEOUT_S"] <= 0 or values["LLM_CONTEXT_TOKENS"] < 1000:
        fail("LLM_TIMEOUT_S", "need TIMEOUT_S > 0, MAX_RETRIES >= 0 and CONTEXT_TOKENS >= 1000")
    if values["INDEX_ENCODER"] not in ("auto", "int8", "onnx", "torch"):
        fail("INDEX_ENCODER", "expected 'auto' (the shipped int8 graph for the bundled model, else an fp32 ONNX export "
                              "when it reproduces the model, else PyTorch), 'int8', 'onnx' or 'torch'")
    size, overlap = values["INDEX_CHUNK_SIZE"], values["INDEX_CHUNK_OVERLAP"]
    if size < 100:
        fail("INDEX_CHUNK_SIZE", "must be at least 100 characters")
    if not 0 <= overlap < size // 2:
        fail("INDEX_CHUNK_OVERLAP", "must be between 0 and half the chunk size")
    if values["RETRIEVAL_TOP_K"] < 1 or not 1 <= values["RETRIEVAL_RERANK_K"] <= values["RETRIEVAL_TOP_K"]:
        fail("RETRIEVAL_RERANK_K", "need 1 <= RERANK_K <= TOP_K")
    if values["RETRIEVAL_DENSE_WEIGHT"] < 0 or values["RETRIEVAL_BM25_WEIGHT"] < 0:
        fail("RETRIEVAL_DENSE_WEIGHT", "weights cannot be negative")
    if values["VERIFY_MAX_REVISION_ATTEMPTS"] < 0:
        fail("VERIFY_MAX_REVISION_ATTEMPTS", "cannot be negative")
    if not values["VERIFY_HUMAN_REVIEW_THRESHOLD"] <= values["VERIFY_FLAGGED_THRESHOLD"] <= values["VERIFY_VERIFIED_THRESHOLD"]:
        fail("VERIFY_FLAGGED_THRESHOLD", "need HUMAN_REVIEW <= FLAGGED <= VERIFIED thresholds")
    if str(values["VERIFY_SCORER"]).lower() not in ("on", "off"):
        fail("VERIFY_SCORER", "must be 'on' or 'off'")


_URI_PASSWORD = re.compile(r"(?<=://)([^:/@]*):([^@/]*)@")  # "user:pw@" and ":pw@" (no user)
# query options that carry secrets ("tlsCertificateKeyFilePassword=...", "password=...", "...secret=...")
_URI_SECRET_OPTION = re.compile(r"([?&][^=&#]*(?:password|secret|token|key)[^=&#]*=)[^&#]*", re.I)


def redact_uri(uri: str) -> str:
    """A MongoDB URI with its password and every secret-bearing query option masked."""
    return _URI_SECRET_OPTION.sub(r"\1***", _URI_PASSWORD.sub(lambda m: f"{m.group(1)}:***@" if m.group(2) else m.group(0), uri))


def redacted(config: Mapping[str, Any]) -> dict[str, Any]:
    """Return the effective Historian settings with every secret masked."""
    out: dict[str, Any] = {}
    for key in DEFAULTS:
        value = config.get(PREFIX + key)
        if key in SECRET_KEYS and value:
            value = "***" if not isinstance(value, dict) else {"***": f"{len(value)} entries"}
        elif key == "MONGODB_URI" and value:
            value = redact_uri(value)
        elif key == "LLM_ROLES" and value:
            value = {
                role: {k: ("***" if "key" in k.lower() else v) for k, v in (opts or {}).items()}
                for role, opts in value.items()
            }
        out[PREFIX + key] = value
    return out


def setting(config: Mapping[str, Any], key: str) -> Any:
    """Read one resolved setting by its short name (``"RETRIEVAL_TOP_K"``)."""
    return config[PREFIX + key]


def environ() -> Mapping[str, str]:
    """Return the process environment (a seam for tests)."""
    return os.environ
