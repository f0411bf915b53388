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

    _register_index_commands(group)
    return group


def _register_index_commands(group: AppGroup) -> None:
    @group.command("reindex")
    @click.option("--full", is_flag=True, help="Re-embed every document instead of only new and changed ones.")
    @click.option("--retry-failed", is_flag=True, help="Re-run only the documents that failed last time.")
    def reindex_command(full: bool, retry_failed: bool) -> None:
        """Bring the search index up to date (incremental by content hash), with a progress bar."""
        import time

        from historian_blueprint.index import jobs, service

        try:
            job_id = service.start_reindex(full=full, retry_failed=retry_failed, user="cli")
        except (jobs.ReindexBusy, ValueError) as exc:
            raise click.ClickException(str(exc)) from None
        store = get_store()
        phase, bar = None, None
        while True:
            job = store.jobs.find_one({"_id": job_id})
            if job["phase"] != phase and job["phase"] in ("scan", "embed", "write"):
                if bar:
                    bar.render_finish()
                phase = job["phase"]
                bar = click.progressbar(length=max(job["progress"]["total"], 1), label=f"{phase:<6}", show_pos=True)
            if bar and job["phase"] == phase:
                bar.length = max(job["progress"]["total"], 1)
                bar.update(job["progress"]["done"] - bar.pos)
            if job["state"] not in ("queued", "running"):
                break
            time.sleep(0.3)
        if bar:
            bar.render_finish()
        for error in job.get("errors", []):
            click.echo(f"error: {error['source_id']}: {error['error']}", err=True)
        counts = ", ".join(f"{k} {v}" for k, v in job.get("counts", {}).items())
        click.echo(f"{job['state']}: {job.get('message')} ({counts}) in {job.get('timings', {}).get('total_s', 0):.1f}s")
        if job["state"] == "failed":
            sys.exit(1)
