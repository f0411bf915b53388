"""Typed settings read from the resolved ``HISTORIAN_*`` config, by one mechanism.

Each settings class names, per field, the key it is read from (``key("RETRIEVAL_TOP_K")``); ``read``
builds it from a Flask config (or any mapping of full keys), optionally with a YAML profile's values on
top. Nothing else maps config keys to settings.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, TypeVar

from historian_blueprint.config import PREFIX, ROLES, profile_values

T = TypeVar("T")

# The verifiers are cold (the challenger a little warm to look for trouble); the writers moderate.
ROLE_TEMPERATURE = {
    "planner": 0.0, "composer": 0.4, "challenger": 0.1, "interrogator": 0.0, "counter_arguer": 0.2,
    "judge": 0.0, "refiner": 0.3, "mapper": 0.0,
}
ROLE_MAX_TOKENS = {
    "planner": 300, "composer": 1500, "challenger": 900, "interrogator": 900, "counter_arguer": 700,
    "judge": 500, "refiner": 1500, "mapper": 1500,
}
# Roles whose failure means the answer cannot be called verified (the planner only shapes retrieval).
VERIFYING_ROLES = frozenset(ROLES) - {"planner", "mapper"}  # the mapper runs in the knowledge map, not in ask


def key(name: str, default: Any = None, convert: Callable[[Any], Any] | None = None) -> Any:
    """A settings field read from ``HISTORIAN_<name>`` (``convert`` applied to the value)."""
    return field(default=default, metadata={"key": name, "convert": convert})


def read(cls: type[T], config: Mapping[str, Any], profile: str | None = None) -> T:
    """Build ``cls`` from the config; with ``profile``, that profile's values (over the default profile's) win."""
    values = {**profile_values("default"), **profile_values(profile)} if profile else {}
    kwargs = {}
    for f in fields(cls):
        name = f.metadata.get("key")
        if name is None:
            continue
        value = values.get(name, config[PREFIX + name])
        convert = f.metadata.get("convert")
        kwargs[f.name] = convert(value) if convert is not None else value
    return cls(**kwargs)


@dataclass(frozen=True)
class Caps:
    """The confidence penalties' caps and the status thresholds (DESIGN.md, "Verification vocabulary")."""

    challenge: float = key("VERIFY_CHALLENGE_CAP", 0.30)
    interrogation: float = key("VERIFY_INTERROGATION_CAP", 0.20)
    counter: float = key("VERIFY_COUNTER_CAP", 0.25)
    verified: float = key("VERIFY_VERIFIED_THRESHOLD", 0.80)
    flagged: float = key("VERIFY_FLAGGED_THRESHOLD", 0.60)
    human_review: float = key("VERIFY_HUMAN_REVIEW_THRESHOLD", 0.40)

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Caps:
        return read(cls, config)


@dataclass(frozen=True)
class RunSettings:
    """What one ask run needs from the config (a profile chosen for the run may change them)."""

    top_k: int = key("RETRIEVAL_TOP_K", 12)
    rerank_k: int = key("RETRIEVAL_RERANK_K", 6)
    max_revisions: int = key("VERIFY_MAX_REVISION_ATTEMPTS", 2)
    max_question_chars: int = key("LIMITS_MAX_QUESTION_CHARS", 2000)


@dataclass(frozen=True)
class MapSettings:
    """The knowledge map's search breadth, rounds and credibility weights."""

    max_rounds: int = key("MAP_MAX_ROUNDS", 3, lambda v: max(0, min(3, int(v))))
    top_k: int = key("MAP_TOP_K", 8, int)
    per_document: int = key("MAP_PER_DOCUMENT", 2, int)
    max_sources: int = key("MAP_MAX_SOURCES", 16, int)
    weights: dict = key("MAP_CREDIBILITY_WEIGHTS", None, lambda v: {str(k): float(x) for k, x in (v or {}).items()})
    document_types: dict = key("MAP_DOCUMENT_TYPES", None, lambda v: {str(k): float(x) for k, x in (v or {}).items()})


@dataclass(frozen=True)
class RetrievalSettings:
    top_k: int = key("RETRIEVAL_TOP_K", 12)
    dense_weight: float = key("RETRIEVAL_DENSE_WEIGHT", 0.7)
    bm25_weight: float = key("RETRIEVAL_BM25_WEIGHT", 0.3)


@dataclass(frozen=True)
class IndexSettings:
    chunk_size: int = key("INDEX_CHUNK_SIZE", 700)
    chunk_overlap: int = key("INDEX_CHUNK_OVERLAP", 150)
    model_path: str | None = key("INDEX_EMBEDDING_MODEL")
    batch_size: int = key("INDEX_BATCH_SIZE", 64)
    approximate_above: int = key("INDEX_APPROXIMATE_ABOVE", 200_000)
    context_header: bool = key("INDEX_CONTEXT_HEADER", True)
    encoder: str = key("INDEX_ENCODER", "auto")
    encoder_cache: str | None = key("INDEX_ENCODER_CACHE")

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> IndexSettings:
        return read(cls, config)


@dataclass(frozen=True)
class RoleSettings:
    role: str
    model: str
    temperature: float
    max_tokens: int
    timeout: float
    base_url: str | None = None  # a role may use another server (a larger judge, say); None: the engine's
    api_key: str | None = None


@dataclass(frozen=True)
class LLMSettings:
    """The LLM engine: one endpoint, a default model, per-role overrides over the design's role defaults."""

    base_url: str | None = key("LLM_BASE_URL")
    api_key: str | None = key("LLM_API_KEY")
    model: str = key("LLM_MODEL", "gpt-4o-mini")
    roles: Mapping[str, Mapping[str, Any]] = key("LLM_ROLES", convert=lambda v: v or {})
    timeout: float = key("LLM_TIMEOUT_S", 30.0, float)
    max_retries: int = key("LLM_MAX_RETRIES", 3, int)
    backoff: float = key("LLM_BACKOFF_S", 1.0, float)
    cache_ttl: float = key("LLM_CACHE_TTL_S", 86400.0, float)
    structured_output: str = key("LLM_STRUCTURED_OUTPUT", "json_mode")
    context_tokens: int = key("LLM_CONTEXT_TOKENS", 8000, int)
    calibration_file: str | None = key("LLM_CALIBRATION_FILE")

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> LLMSettings:
        """Read the HISTORIAN_LLM_* keys; the API key falls back to OPENAI_API_KEY."""
        settings = read(cls, config)
        return settings if settings.api_key else settings.with_(api_key=os.environ.get("OPENAI_API_KEY"))

    def role(self, name: str) -> RoleSettings:
        """The effective settings of one role: its overrides over the role defaults over the engine's."""
        opts = dict(self.roles.get(name) or {})
        return RoleSettings(
            role=name,
            model=str(opts.get("model") or self.model),
            temperature=float(opts.get("temperature", ROLE_TEMPERATURE[name])),
            max_tokens=int(opts.get("max_tokens", ROLE_MAX_TOKENS[name])),
            timeout=float(opts.get("timeout", self.timeout)),
            base_url=opts.get("base_url") or self.base_url,
            api_key=opts.get("api_key") or self.api_key,
        )

    def with_(self, **changes: Any) -> LLMSettings:
        return replace(self, **changes)
