"""Historian inside a Flask app: its per-app state, the store accessor, and setting both up.

Everything above this floor reaches the app's Historian through ``get_settings()``, ``get_state()`` and
``get_store()``; ``setup(app)`` is what ``Historian.init_app`` does before it adds the blueprint and the commands (the
benchmarks' workspaces use it alone).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flask import Flask, current_app, g

from historian_blueprint import config as cfg
from historian_blueprint import migrate
from historian_blueprint.store import FieldMapping, Store, StoreFactory

log = logging.getLogger("historian")


@dataclass
class HistorianState:
    """Per-app state kept in ``app.extensions["historian"]``."""

    settings: cfg.Settings
    stores: StoreFactory
    data_dir: Path
    pending_migrations: list[str] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)


def setup(app: Flask, options: dict[str, Any] | None = None, collection: Any = None) -> HistorianState:
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
    state = HistorianState(settings=settings, stores=stores, data_dir=data_dir)
    app.extensions["historian"] = state
    app.teardown_appcontext(_close_store)

    store = stores.open()
    try:
        if settings.auto_migrate:
            migrate.apply_pending(store)
        state.pending_migrations = [m.name for m in migrate.pending(store)]
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


def get_state(app: Flask | None = None) -> HistorianState:
    """Return Historian's state for ``app`` (default: the current app)."""
    app = app or current_app
    try:
        return app.extensions["historian"]
    except KeyError:
        raise RuntimeError("Historian is not initialised on this app; call Historian(app) first") from None


def get_settings(app: Flask | None = None) -> cfg.Settings:
    """The app's Historian settings (read once, at ``init_app``)."""
    return get_state(app).settings


def get_store() -> Store:
    """Return the Store for this app context, opening it on first use (closed at teardown)."""
    if "historian_store" not in g:
        g.historian_store = get_state().stores.open()
    return g.historian_store


def _close_store(exc: BaseException | None = None) -> None:
    store = g.pop("historian_store", None)
    if store is not None:
        store.close()
