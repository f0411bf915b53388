"""LLM engine settings: one endpoint, a default model, and per-role overrides with the design's defaults."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

ROLES = ("planner", "composer", "challenger", "interrogator", "counter_arguer", "judge", "refiner")
ROLE_OPTIONS = ("model", "temperature", "max_tokens", "timeout", "base_url", "api_key")
# The verifiers are cold (the challenger a little warm to look for trouble); the writers moderate.
ROLE_TEMPERATURE = {
    "planner": 0.0, "composer": 0.4, "challenger": 0.1, "interrogator": 0.0, "counter_arguer": 0.2,
    "judge": 0.0, "refiner": 0.3,
}
ROLE_MAX_TOKENS = {
    "planner": 300, "composer": 1500, "challenger": 900, "interrogator": 900, "counter_arguer": 700,
    "judge": 500, "refiner": 1500,
}
# Roles whose failure means the answer cannot be called verified (the planner only shapes retrieval).
VERIFYING_ROLES = frozenset({"composer", "challenger", "interrogator", "counter_arguer", "judge", "refiner"})


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
    base_url: str | None
    api_key: str | None
    model: str
    roles: Mapping[str, Mapping[str, Any]]
    timeout: float = 30.0
    max_retries: int = 3
    backoff: float = 1.0
    cache_ttl: float = 86400.0
    structured_output: str = "json_mode"
    context_tokens: int = 8000
    calibration_file: str | None = None

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> LLMSettings:
        """Read the HISTORIAN_LLM_* keys; the API key falls back to OPENAI_API_KEY."""
        return cls(
            base_url=config["HISTORIAN_LLM_BASE_URL"],
            api_key=config["HISTORIAN_LLM_API_KEY"] or os.environ.get("OPENAI_API_KEY"),
            model=config["HISTORIAN_LLM_MODEL"],
            roles=config["HISTORIAN_LLM_ROLES"] or {},
            timeout=float(config["HISTORIAN_LLM_TIMEOUT_S"]),
            max_retries=int(config["HISTORIAN_LLM_MAX_RETRIES"]),
            backoff=float(config["HISTORIAN_LLM_BACKOFF_S"]),
            cache_ttl=float(config["HISTORIAN_LLM_CACHE_TTL_S"]),
            structured_output=config["HISTORIAN_LLM_STRUCTURED_OUTPUT"],
            context_tokens=int(config["HISTORIAN_LLM_CONTEXT_TOKENS"]),
            calibration_file=config["HISTORIAN_LLM_CALIBRATION_FILE"],
        )

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
