"""What each layer reads of the settings: small typed views of ``config.Settings``, the one definition.

Each view names, per field, the setting it is read from (``key("RETRIEVAL_TOP_K")``), whose default is the
definition's (a view cannot drift from it); ``read`` builds a view from the app's ``Settings``, optionally with
a YAML profile's values on top (a run that picks its own profile).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, TypeVar

from historian_blueprint.config import ROLES, Settings

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


def key(name: str, convert: Callable[[Any], Any] | None = None) -> Any:
    """A view's field read from the setting ``HISTORIAN_<name>`` (``convert`` applied), with its default."""
    info = Settings.model_fields[name.lower()]
    value = info.default
    default = {"default_factory": lambda: dict(value)} if isinstance(value, dict) else {"default": value}
    return field(**default, metadata={"key": name, "convert": convert})


def read(cls: type[T], settings: Settings, profile: str | None = None) -> T:
    """Build the view ``cls`` from the settings; with ``profile``, that profile's values (over the default
    profile's) win."""
    settings = settings.with_profile(profile)
    kwargs = {}
    for f in fields(cls):
        name = f.metadata.get("key")
        if name is None:
            continue
        value = settings.key(name)
        convert = f.metadata.get("convert")
        kwargs[f.name] = convert(value) if convert is not None else value
    return cls(**kwargs)


@dataclass(frozen=True)
class Caps:
    """The confidence penalties' caps and the status thresholds (docs/design.md, "Verification vocabulary")."""

    challenge: float = key("VERIFY_CHALLENGE_CAP")
    interrogation: float = key("VERIFY_INTERROGATION_CAP")
    counter: float = key("VERIFY_COUNTER_CAP")
    verified: float = key("VERIFY_VERIFIED_THRESHOLD")
    flagged: float = key("VERIFY_FLAGGED_THRESHOLD")
    human_review: float = key("VERIFY_HUMAN_REVIEW_THRESHOLD")

    @classmethod
    def of(cls, settings: Settings) -> Caps:
        return read(cls, settings)


@dataclass(frozen=True)
class RunSettings:
    """What one ask run needs from the config (a profile chosen for the run may change them)."""

    top_k: int = key("RETRIEVAL_TOP_K")
    rerank_k: int = key("RETRIEVAL_RERANK_K")
    max_revisions: int = key("VERIFY_MAX_REVISION_ATTEMPTS")
    max_question_chars: int = key("LIMITS_MAX_QUESTION_CHARS")


@dataclass(frozen=True)
class MapSettings:
    """The knowledge map's search breadth, rounds and credibility weights."""

    max_rounds: int = key("MAP_MAX_ROUNDS", lambda v: max(0, min(3, int(v))))
    top_k: int = key("MAP_TOP_K", int)
    per_document: int = key("MAP_PER_DOCUMENT", int)
    max_sources: int = key("MAP_MAX_SOURCES", int)
    weights: dict = key("MAP_CREDIBILITY_WEIGHTS", lambda v: {str(k): float(x) for k, x in (v or {}).items()})
    document_types: dict = key("MAP_DOCUMENT_TYPES", lambda v: {str(k): float(x) for k, x in (v or {}).items()})


@dataclass(frozen=True)
class RetrievalSettings:
    top_k: int = key("RETRIEVAL_TOP_K")
    dense_weight: float = key("RETRIEVAL_DENSE_WEIGHT")
    bm25_weight: float = key("RETRIEVAL_BM25_WEIGHT")


@dataclass(frozen=True)
class IndexSettings:
    chunk_size: int = key("INDEX_CHUNK_SIZE")
    chunk_overlap: int = key("INDEX_CHUNK_OVERLAP")
    model_path: str | None = key("INDEX_EMBEDDING_MODEL")
    batch_size: int = key("INDEX_BATCH_SIZE")
    approximate_above: int = key("INDEX_APPROXIMATE_ABOVE")
    dense: str = key("INDEX_DENSE")
    nprobe: int = key("INDEX_NPROBE")
    context_header: bool = key("INDEX_CONTEXT_HEADER")
    encoder: str = key("INDEX_ENCODER")
    encoder_cache: str | None = key("INDEX_ENCODER_CACHE")
    device: str = key("INDEX_DEVICE")
    encoder_check: int = key("INDEX_ENCODER_CHECK")

    @classmethod
    def of(cls, settings: Settings) -> IndexSettings:
        return read(cls, settings)


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
    model: str = key("LLM_MODEL")
    roles: Mapping[str, Mapping[str, Any]] = key("LLM_ROLES")
    timeout: float = key("LLM_TIMEOUT_S", float)
    max_retries: int = key("LLM_MAX_RETRIES", int)
    backoff: float = key("LLM_BACKOFF_S", float)
    cache_ttl: float = key("LLM_CACHE_TTL_S", float)
    structured_output: str = key("LLM_STRUCTURED_OUTPUT")
    context_tokens: int = key("LLM_CONTEXT_TOKENS", int)
    calibration_file: str | None = key("LLM_CALIBRATION_FILE")

    @classmethod
    def of(cls, app_settings: Settings) -> LLMSettings:
        """Read the HISTORIAN_LLM_* settings; the API key falls back to OPENAI_API_KEY."""
        settings = read(cls, app_settings)
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
