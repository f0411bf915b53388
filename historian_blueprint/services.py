"""Historian inside a Flask app: its per-app state, the store accessor, and setting both up.

Everything above this layer reaches the app's Historian through ``get_settings()``, ``get_services()`` and
``get_store()``; ``setup(app)`` is what ``Historian.init_app`` does before it adds the blueprint and the commands (the
benchmarks' workspaces use it alone).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flask import Flask, current_app, g

from historian_blueprint import config as cfg
from historian_blueprint import history, migrate
from historian_blueprint.llm.client import LLMClient, ResponseCache
from historian_blueprint.settings import LLMSettings
from historian_blueprint.store import FieldMapping, Store, StoreFactory

log = logging.getLogger("historian")


# How the layers above make the services this layer cannot import: "retriever" (index/service.py) and "engine"
# (the extension, historian_blueprint/__init__.py). Each registers a factory ``(services, **options) -> service``
# with ``@provide(name)``.
PROVIDERS: dict[str, Callable[..., Any]] = {}


def provide(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register how ``Services`` makes the service ``name`` (a layer above this one does, at import)."""
    def register(factory: Callable[..., Any]) -> Callable[..., Any]:
        PROVIDERS[name] = factory
        return factory
    return register


@dataclass
class Services:
    """Everything Historian's layers use, built once per app by ``setup`` and kept in
    ``app.extensions["historian"]``: the settings, the store (one per app context) with the host's documents, and
    the retriever, the LLM client and the engine (made by the layers that know them: ``provide``). The graphs, the
    verifier, the pages and the commands take what they need from here (``get_services()``)."""

    app: Flask
    settings: cfg.Settings
    stores: StoreFactory
    data_dir: Path
    pending_migrations: list[str] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)

    def store(self) -> Store:
        """The store of this app context (the host's documents and Historian's collections), opened on first use."""
        return get_store()

    def retriever(self) -> Any:
        """The configured search backend (an ``index.retrievers.Retriever``) for this request."""
        return self._make("retriever")

    def llm(self) -> LLMClient:
        """The app's LLM client (one per app: its chat models and response cache are shared by the runs)."""
        if "llm_client" not in self.extras:
            settings = LLMSettings.of(self.settings)
            cache = ResponseCache(self.store().collection("llm_cache"), settings.cache_ttl)
            self.extras["llm_client"] = LLMClient(settings, cache=cache)
        return self.extras["llm_client"]

    def engine(self, **options: Any) -> Any:
        """The roles of one run (offline, or over the LLM client), with the configured caps (``client``: the LLM
        engine over this client; ``kind``: "embedded" or "llm" instead of the configured engine)."""
        return self._make("engine", **options)

    def _make(self, name: str, **options: Any) -> Any:
        factory = PROVIDERS.get(name)
        if factory is None:
            raise RuntimeError(f"no {name} provider: import historian_blueprint (the extension) first")
        return factory(self, **options)




def setup(app: Flask, options: dict[str, Any] | None = None, collection: Any = None) -> Services:
    """Resolve the settings (kept in the state, mirrored into ``app.config`` for the host to read), open storage,
    check migrations, close the store at teardown."""
    explicit = {k: v for k, v in app.config.items() if k.startswith(cfg.PREFIX)}
    settings = cfg.resolve(explicit, options or {}, os.environ)
    app.config.update(settings.as_config())

    data_dir = Path(settings.data_dir or Path(app.instance_path) / "historian")
    stores = StoreFactory(
        uri=settings.mongodb_uri,
        db_name=settings.db_name,
        collection=settings.collection,
        fields=FieldMapping(settings.fields),
        prefix=settings.collection_prefix,
        data_dir=data_dir,
        host_collection=collection,
    )
    state = Services(app=app, settings=settings, stores=stores, data_dir=data_dir)
    app.extensions["historian"] = state
    app.teardown_appcontext(_close_store)

    store = stores.open()
    try:
        if settings.auto_migrate:
            migrate.apply_pending(store)
        state.pending_migrations = [m.name for m in migrate.pending(store)]
        if not state.pending_migrations:
            repaired = history.repair(store)  # runs a killed process stored without their summaries
            if repaired:
                log.warning("Historian filed %d run(s) a stopped process had left half-written", repaired)
    except Exception as exc:  # the database may be down at start-up; report, keep the app up
        log.warning("Historian could not check its schema at start-up: %s", exc)
        try:  # a failed migration (not a down database) must still block the pages that need it
            state.pending_migrations = [m.name for m in migrate.pending(store)]
        except Exception:  # noqa: BLE001 - the database is down: nothing more to learn here
            pass
    finally:
        store.close()
    if state.pending_migrations:
        log.warning(migrate.pending_message(state.pending_migrations))
    return state


def get_services(app: Flask | None = None) -> Services:
    """Return Historian's services for ``app`` (default: the current app)."""
    app = app or current_app
    try:
        return app.extensions["historian"]
    except KeyError:
        raise RuntimeError("Historian is not initialised on this app; call Historian(app) first") from None




def get_settings(app: Flask | None = None) -> cfg.Settings:
    """The app's Historian settings (read once, at ``init_app``)."""
    return get_services(app).settings


def get_store() -> Store:
    """Return the Store for this app context, opening it on first use (closed at teardown)."""
    if "historian_store" not in g:
        g.historian_store = get_services().stores.open()
    return g.historian_store


def _close_store(exc: BaseException | None = None) -> None:
    store = g.pop("historian_store", None)
    if store is not None:
        store.close()
