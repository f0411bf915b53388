"""Historian: a verified research assistant for a Flask document reader, as a Flask extension.

This module is the top floor: the extension registers the blueprint (``web``) and the commands
(``cli``) on top of what ``app.setup`` does. Nothing inside the package imports it.
"""

from __future__ import annotations

from typing import Any

from flask import Flask

from historian_blueprint.app import HistorianState, get_state, get_store, setup
from historian_blueprint.cli import build_cli
from historian_blueprint.config import ConfigError
from historian_blueprint.verify import support
from historian_blueprint.web import build_blueprint

__all__ = ["Historian", "HistorianState", "get_store", "get_state", "ConfigError"]
__version__ = "0.1.0"


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
        setup(app, self.options, collection if collection is not None else self.collection)
        # the support reading is process-wide (the verifier is a library below the app): the scorer on or off
        support.use_scorer(str(app.config["HISTORIAN_VERIFY_SCORER"]).lower() == "on")
        app.register_blueprint(build_blueprint(), url_prefix=app.config["HISTORIAN_URL_PREFIX"])
        app.cli.add_command(build_cli())
