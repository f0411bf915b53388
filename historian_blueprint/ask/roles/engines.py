"""Which engine a run's roles come from, chosen once per run: the offline engine (no model) or the LLM engine over
the app's client. Provided to ``Services.engine`` by the extension (``historian_blueprint/__init__.py``), so that the
graph's run asks the services for its engine and nothing leads back to the run."""

from __future__ import annotations

from historian_blueprint.services import Services
from historian_blueprint.ask.roles.base import Engine
from historian_blueprint.ask.roles.llm import llm_engine
from historian_blueprint.llm.engine import LLMEngine
from historian_blueprint.ask.roles.offline import offline_engine
from historian_blueprint.llm.client import LLMClient
from historian_blueprint.llm.prompts import load_calibration
from historian_blueprint.settings import Caps, LLMSettings, read


def build_engine(services: Services, client: LLMClient | None = None, kind: str | None = None) -> Engine:
    """The roles of one run, from the configured engine (``kind``: "embedded" or "llm"; ``client``: the LLM engine
    over this client, e.g. one with a scripted model). An LLM run gets its own token usage."""
    settings = services.settings
    caps = Caps.of(settings)
    if client is None and (kind or settings.engine) != "llm":
        return offline_engine(caps)
    client = client or services.llm()
    llm = LLMEngine(client=client, calibration=load_calibration(client.settings.calibration_file))
    return llm_engine(llm, caps, read(LLMSettings, settings).context_tokens)
