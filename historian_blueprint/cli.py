"""The ``flask historian ...`` command group, built per app by ``init_app``."""

from __future__ import annotations

import json
import sys

import click
from flask import current_app
from flask.cli import AppGroup

from historian_blueprint import config as cfg
from historian_blueprint import get_state, get_store, migrate


def build_cli() -> AppGroup:
    """Return a fresh ``historian`` command group (one per app, so hosts can add their own)."""
    group = AppGroup("historian", help="Historian: verified research assistant.")

    @group.command("migrate")
    def migrate_command() -> None:
        """Apply pending migrations of Historian's collections (safe to run again)."""
        store = get_store()
        done = migrate.apply_pending(store)
        for m in done:
            click.echo(f"applied {m.name}: {m.description}")
        get_state().pending_migrations = []
        click.echo(f"{len(done)} migration(s) applied; schema version {migrate.schema_version(store)}")

    @group.command("load-corpus")
    @click.argument("paths", nargs=-1, required=True, type=click.Path(dir_okay=False))
    def load_corpus_command(paths: tuple[str, ...]) -> None:
        """Upsert documents from JSONL/JSON files (optionally .gz) by id into the documents collection."""
        from historian_blueprint.corpus.loader import load_corpus

        report = load_corpus(get_store(), paths)
        for error in report.errors:
            click.echo(f"error: {error}", err=True)
        click.echo(report.summary())
        if report.errors:
            sys.exit(1)

    @group.command("config")
    def config_command() -> None:
        """Print the effective settings as JSON, secrets masked."""
        click.echo(json.dumps(cfg.redacted(current_app.config), indent=2, default=str))

    return group
