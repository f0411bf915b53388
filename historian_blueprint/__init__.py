"""Historian: a verified research assistant for a Flask document reader, as a Flask extension."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flask import Flask, current_app, g

from historian_blueprint import config as cfg
from historian_blueprint.store import FieldMapping, Store, StoreFactory

__all__ = ["Historian", "get_store", "get_state", "ConfigError"]
__version__ = "0.1.0"

ConfigError = cfg.ConfigError
log = logging.getLogger("historian")


@dataclass
class HistorianState:
    """Per-app state kept in ``app.extensions["historian"]``."""

    stores: StoreFactory
    data_dir: Path
    pending_migrations: list[str] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)


class Historian:
    """The Flask extension: ``Historian(app)`` or ``historian.init_app(app)``.

    ``collection`` hands over the host's own pymongo ``Collection`` of documents; other keyword
    options are Historian settings without the prefix (``url_prefix="/research"``).
    """

    def __init__(self, app: Flask | None = None, *, collection: Any = None, **options: Any) -> None:
        self.collection = collection
        self.options = options
        if app is not None:
            self.init_app(app)

    def init_app(self, app: Flask, *, collection: Any = None) -> None:
        """Configure Historian for ``app``: settings, storage, blueprint, commands, teardown."""
        from historian_blueprint import migrate
        from historian_blueprint.cli import build_cli
        from historian_blueprint.web import build_blueprint

        explicit = {k: v for k, v in app.config.items() if k.startswith(cfg.PREFIX)}
        for key, value in cfg.resolve(explicit, self.options, cfg.environ()).items():
            app.config.setdefault(key, value)

        data_dir = Path(app.config["HISTORIAN_DATA_DIR"] or Path(app.instance_path) / "historian")
        stores = StoreFactory(
            uri=app.config["HISTORIAN_MONGODB_URI"],
            db_name=app.config["HISTORIAN_DB_NAME"],
            collection=app.config["HISTORIAN_COLLECTION"],
            fields=FieldMapping(app.config["HISTORIAN_FIELDS"]),
            prefix=app.config["HISTORIAN_COLLECTION_PREFIX"],
            data_dir=data_dir,
            host_collection=collection if collection is not None else self.collection,
        )
        state = HistorianState(stores=stores, data_dir=data_dir)
        app.extensions["historian"] = state

        app.register_blueprint(build_blueprint(), url_prefix=app.config["HISTORIAN_URL_PREFIX"])
        app.cli.add_command(build_cli())
        app.teardown_appcontext(_close_store)

        store = stores.open()
        try:
            if app.config["HISTORIAN_AUTO_MIGRATE"]:
                migrate.apply_pending(store)
            state.pending_migrations = [m.name for m in migrate.pending(store)]
        except Exception as exc:  # the database may be down at start-up; report, keep the app up
            log.warning("Historian could not check its schema at start-up: %s", exc)
        finally:
            store.close()
        if state.pending_migrations:
            log.warning(migrate.pending_message(state.pending_migrations))


def get_state(app: Flask | None = None) -> HistorianState:
    """Return Historian's state for ``app`` (default: the current app)."""
    app = app or current_app
    try:
        return app.extensions["historian"]
    except KeyError:
        raise RuntimeError("Historian is not initialised on this app; call Historian(app) first") from None


def get_store() -> Store:
    """Return the Store for this app context, opening it on first use (closed at teardown)."""
    if "historian_store" not in g:
        g.historian_store = get_state().stores.open()
    return g.historian_store


def _close_store(exc: BaseException | None = None) -> None:
    store = g.pop("historian_store", None)
    if store is not None:
        store.close()
