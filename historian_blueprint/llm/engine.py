"""One run's view of the LLM engine: the shared client, the calibration examples, this run's token usage, and
asking a role (its system prompt and its reply's JSON schema). The ask wing's roles (``ask/roles/llm.py``) and
the knowledge map's mapper (``mapping/llm_mapper.py``) both ask through it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel

from historian_blueprint.config import ROLES
from historian_blueprint.llm import prompts
from historian_blueprint.llm.client import LLMClient, Usage


@dataclass
class LLMEngine:
    """One run's view of the LLM engine: the shared client and this run's token usage."""

    client: LLMClient
    calibration: list[dict[str, Any]] = field(default_factory=lambda: prompts.SKEPTIC_EXAMPLES)
    usage: Usage = field(default_factory=Usage)
    prompt_version: str = prompts.PROMPT_VERSION

    def ask(self, role: str, task_input: str, schema: type[BaseModel], extra_system: str = "") -> Any:
        system = prompts.system(prompts.TASKS[role], schema.model_json_schema())
        if extra_system:
            system += "\n\n" + extra_system
        return self.client.structured(role, [SystemMessage(content=system), HumanMessage(content=task_input)],
                                      schema, self.usage)

    def models(self) -> dict[str, str]:
        return {role: self.client.settings.role(role).model for role in ROLES}
