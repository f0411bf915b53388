"""Scripted chat models for the LLM engine's roles: each reply is computed from the prompt the role sent."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import openai
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from historian_lab.bench import fake_llm_server as ts
from historian_lab.bench.fake_llm_server import first_sentence

USAGE = {"input_tokens": 120, "output_tokens": 30, "total_tokens": 150}


class Scripted(BaseChatModel):
    """Replies from a script: each item is text, an exception to raise, or a function of the messages."""

    script: list[Any]
    calls: list[list[BaseMessage]] = Field(default_factory=list)

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        self.calls.append(messages)
        item = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        if callable(item) and not isinstance(item, BaseException):
            item = item(messages)
        if isinstance(item, BaseException):
            raise item
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=item, usage_metadata=USAGE))])

    @property
    def _llm_type(self) -> str:
        return "scripted"


def passages(messages: list[BaseMessage]) -> list[tuple[str, str]]:
    """(evidence id, passage text) pairs of the prompt's evidence block."""
    return ts.passages(messages[-1].content)


def honest_composer(messages: list[BaseMessage]) -> str:
    """Three findings, each one exact sentence of a given passage, the claim in the passage's own words."""
    return ts.faithful_responder("composer", [{"content": messages[-1].content}])


def hallucinating_composer(messages: list[BaseMessage]) -> str:
    found = passages(messages)[:3]
    findings = [{"claim": "The President abolished every federal tax in 1901 and the Senate agreed unanimously.",
                 "evidence_id": eid, "quote": first_sentence(t)} for eid, t in found]
    return json.dumps({"answer": "Taxes were abolished [E1].", "findings": findings})


def embellishing_composer(messages: list[BaseMessage]) -> str:
    """Honest findings, but prose that says more: one cited sentence its passage does not carry."""
    reply = json.loads(honest_composer(messages))
    reply["answer"] += " Congress repealed every one of these measures in 1901 [E1]."
    return json.dumps(reply)


def rambling_composer(messages: list[BaseMessage]) -> str:
    """Honest findings buried in prose that no source carries."""
    reply = json.loads(honest_composer(messages))
    reply["answer"] = (reply["answer"] + " Congress repealed every one of these measures in 1901 [E1]."
                       " The Senate voted unanimously to abolish the income tax [E2]."
                       " Farmers in Kansas burned their crops in protest [E3]."
                       " Historians now agree that the whole crisis was easily avoidable.")
    return json.dumps(reply)


def inventing_composer(messages: list[BaseMessage]) -> str:
    reply = json.loads(honest_composer(messages))
    reply["findings"].append({"claim": "A fourth finding from nowhere.", "evidence_id": "E99", "quote": "nothing"})
    return json.dumps(reply)


PLAN = json.dumps({"sub_queries": ["causes of the depression"]})
NO_WEAKNESS = json.dumps({"weaknesses": []})
ALL_EXACT = json.dumps({"citations": []})
NO_COUNTER = json.dumps({"opposing_reading": None, "evidence_ids": [], "both_interpretations_valid": False,
                         "strength": 0})


def judge_says(status: str, confidence: float) -> str:
    return json.dumps({"status": status, "confidence": confidence, "required_revisions": [], "reasoning": "scripted"})


def rate_limited() -> openai.RateLimitError:
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    return openai.RateLimitError("rate limited", response=httpx.Response(429, request=request), body=None)


def timed_out() -> openai.APITimeoutError:
    return openai.APITimeoutError(request=httpx.Request("POST", "http://127.0.0.1/v1/chat/completions"))


def scripted_roles(**overrides: list[Any]) -> dict[str, Scripted]:
    """A happy-path model per role; pass ``role=[...]`` to script one differently."""
    script: dict[str, list[Any]] = {
        "planner": [PLAN], "composer": [honest_composer], "challenger": [NO_WEAKNESS], "interrogator": [ALL_EXACT],
        "counter_arguer": [NO_COUNTER], "judge": [judge_says("verified", 0.9)], "refiner": [honest_composer],
    }
    script.update(overrides)
    return {role: Scripted(script=items) for role, items in script.items()}


def factory(models: dict[str, Scripted]) -> Callable[[Any], Scripted]:
    return lambda role_settings: models[role_settings.role]
