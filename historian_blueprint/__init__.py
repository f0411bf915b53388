"""Historian: a verified research assistant for a Flask document reader, as a Flask extension.

This module is the top layer: the extension registers the blueprint (``web``) and the commands
(``cli``) on top of what ``services.setup`` does. Nothing inside the package imports it.
"""

from __future__ import annotations

import gc
from typing import Any

from flask import Flask

from historian_blueprint.services import (
    Services, get_services, get_settings, get_store, provide, setup,
)
from historian_blueprint.cli import build_cli
from historian_blueprint.config import ConfigError
from historian_blueprint.index import service as index_service
from historian_blueprint.text import dialect
from historian_blueprint.verify.rules import lexicon
from historian_blueprint.verify import combination, reader
from historian_blueprint.web import build_blueprint

__all__ = ["Historian", "Services", "get_services", "get_settings", "get_store",
           "ConfigError", "documents_changed", "preload", "preload_when_ready"]
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
        # the reading is process-wide (the verifier is a library below the app): the reader on or off
        settings = get_settings(app)
        index_service.backend_named(settings.retrieval_backend)  # an unknown backend fails at start-up
        reader.use_reader(settings.reader == "on")
        app.register_blueprint(build_blueprint(), url_prefix=settings.url_prefix)
        app.cli.add_command(build_cli())


@provide("engine")
def _engine(services: Services, client: Any = None, kind: str | None = None) -> Any:
    from historian_blueprint.ask.roles.engines import build_engine  # on use (no graph: langgraph is not loaded)

    return build_engine(services, client, kind)


def documents_changed() -> str | None:
    """Call after the host writes documents (in an app context): an incremental index build starts in the background
    (or follows the running one), so new and changed documents become answerable without a full reindex."""
    return index_service.documents_changed()


def preload(app: Flask) -> dict[str, Any]:
    """Load once, in a pre-forking server's master, what every worker reads (the serving generation, the search
    encoder's model, the spaCy pipeline, the word lexicons and the support combination), so that the workers share
    it instead of each loading a copy. For gunicorn: ``preload_app = True``, ``preload_when_ready`` as its
    ``when_ready`` hook and ``historian_blueprint.serving.worker_exit`` as its ``worker_exit`` hook (``historian serve``
    does the same). It starts no Python thread and leaves no connection open; what it loaded, and everything loaded
    before it, is frozen out of the garbage collector's reach, so no collection in a worker writes to (and copies)
    those pages: call it only in a master that will fork."""
    import historian_blueprint.ask.run  # noqa: F401 - the pages import the graphs on first use: import them now
    import historian_blueprint.ask.roles.engines  # noqa: F401 - the engines the runs build, as the graphs
    import historian_blueprint.mapping.run  # noqa: F401 - imported for its graphs, as the line above
    from historian_blueprint.ask import graph as ask_graph
    from historian_blueprint.mapping import graph as map_graph

    loaded = index_service.preload(app)
    ask_graph.compiled()
    map_graph.compiled()
    lexicon.load_all()
    dialect.lexicon()
    try:
        combination.default_combiner()
    except combination.CombinerUnavailable:  # reported by every check that needs it, as without a preload
        pass
    gc.collect()  # what is garbage now is not kept forever by the freeze
    gc.freeze()
    return loaded


def preload_when_ready(server: Any) -> None:
    """A gunicorn ``when_ready`` hook for a host's ``gunicorn.conf.py`` (with ``preload_app = True``): ``preload`` the
    loaded app in the master, before the first worker forks (the app factory stays as it is for ``flask`` commands
    and tests)."""
    preload(server.app.wsgi())
