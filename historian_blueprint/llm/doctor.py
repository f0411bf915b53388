"""``flask historian doctor``: is the configured model endpoint usable, and if not, what to change."""

from __future__ import annotations

from dataclasses import dataclass

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel

from historian_blueprint.config import ROLES
from historian_blueprint.llm.client import LLMClient, LLMError, Usage
from historian_blueprint.settings import LLMSettings


@dataclass
class Finding:
    ok: bool
    what: str
    fix: str = ""

    def line(self) -> str:
        mark = "ok  " if self.ok else "FAIL"
        return f"[{mark}] {self.what}" + (f"\n       fix: {self.fix}" if self.fix else "")


class _Probe(BaseModel):
    ok: bool


def diagnose(settings: LLMSettings, engine: str) -> list[Finding]:
    """Check the endpoint step by step; stop at the first step the next ones depend on."""
    import openai

    out: list[Finding] = []
    where = settings.base_url or "https://api.openai.com/v1 (OpenAI)"
    if engine != "llm":
        out.append(Finding(True, f"HISTORIAN_ENGINE is {engine!r}: answers use the offline engine; checking the LLM "
                                 "settings anyway"))
    if not settings.api_key and not settings.base_url:
        out.append(Finding(False, "no API key for OpenAI",
                           "set HISTORIAN_LLM_API_KEY (or OPENAI_API_KEY), or point HISTORIAN_LLM_BASE_URL at "
                           "your own server"))
        return out
    client = openai.OpenAI(base_url=settings.base_url, api_key=settings.api_key or "not-needed",
                           timeout=min(settings.timeout, 15), max_retries=0)
    try:
        listed = [m.id for m in client.models.list()]
    except openai.AuthenticationError:
        out.append(Finding(False, f"{where} refused the API key (401)",
                           "check HISTORIAN_LLM_API_KEY (OPENAI_API_KEY is used when it is unset)"))
        return out
    except openai.NotFoundError:
        out.append(Finding(False, f"{where} has no /models route (404): probably the wrong base URL",
                           "OpenAI-compatible servers answer under /v1, e.g. http://localhost:11434/v1 (Ollama), "
                           "http://localhost:8000/v1 (vLLM), http://localhost:1234/v1 (LM Studio), "
                           "http://localhost:8080/v1 (llama.cpp)"))
        return out
    except (openai.APIConnectionError, openai.APITimeoutError) as exc:
        out.append(Finding(False, f"cannot reach {where} ({type(exc).__name__})",
                           "is the server running and listening there? check the host, port and scheme of "
                           "HISTORIAN_LLM_BASE_URL"))
        return out
    out.append(Finding(True, f"{where} is reachable and lists {len(listed)} model(s)"))
    wanted = sorted({settings.role(r).model for r in ROLES})
    missing = [m for m in wanted if m not in listed]
    if missing:
        out.append(Finding(False, f"model(s) not served here: {', '.join(missing)}",
                           "set HISTORIAN_LLM_MODEL (or a role's model in HISTORIAN_LLM_ROLES) to one of: "
                           f"{', '.join(listed[:10]) or 'none listed'}"))
        return out
    out.append(Finding(True, f"model(s) available: {', '.join(wanted)}"))

    probe = LLMClient(settings.with_(max_retries=0, cache_ttl=0))
    messages = [SystemMessage(content='Reply with the JSON object {"ok": true} and nothing else.'),
                HumanMessage(content="ping")]
    try:
        probe.structured("judge", messages, _Probe, Usage())
    except LLMError as exc:
        if "400" in exc.reason and settings.structured_output != "prompt":
            out.append(Finding(False, f"a structured call failed: the server rejects {settings.structured_output} "
                                      f"({exc.reason[:120]})",
                               "set HISTORIAN_LLM_STRUCTURED_OUTPUT=prompt (Historian then parses JSON "
                               "from plain replies)"))
        else:
            out.append(Finding(False, f"a structured call failed: {exc.reason[:200]}",
                               "try a larger model, or HISTORIAN_LLM_STRUCTURED_OUTPUT=prompt; see the server's log"))
        return out
    out.append(Finding(True, f"a tiny structured call ({settings.structured_output}) answered valid JSON"))
    return out
