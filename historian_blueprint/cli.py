"""The ``flask historian ...`` command group, built per app by ``init_app``."""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from pathlib import Path
from typing import Any

import click
from flask import current_app
from flask.cli import AppGroup, with_appcontext

from historian_blueprint import config as cfg
from historian_blueprint import migrate
from historian_blueprint.services import get_settings, get_services, get_store
from historian_blueprint.corpus.loader import load_corpus
from historian_blueprint.index import service
from historian_blueprint.present import formats
from historian_blueprint.settings import LLMSettings
from historian_blueprint.verify.service import check_draft

# The graph (langgraph) and the doctor (openai) are imported by the commands that use them: an app that registers
# Historian does not pay for them at start-up (tests/test_architecture.py). The benchmarks, the eval harness and the
# fitting are the lab's (historian_lab), a plugin loaded only when the command line is used.
log = logging.getLogger("historian")


def _run(job_id: str, bar: bool = True) -> dict:
    """Run a claimed build in a thread of this process while showing its progress; return the job."""
    app = current_app._get_current_object()

    def build() -> None:
        with app.app_context():
            try:
                service.run_claimed(job_id)
            except Exception:  # noqa: BLE001 - recorded in the job, shown by _follow
                pass

    # a daemon: Ctrl-C stops the command at once (the claim is taken over, the checkpoint resumes the build)
    worker = threading.Thread(target=build, name=f"historian-reindex-{job_id[:8]}", daemon=True)
    worker.start()
    job = _follow(job_id, bar, alive=worker.is_alive)
    worker.join()
    return service.find_job(job_id) or job


def _follow(job_id: str, bar: bool = True, alive: Any = None) -> dict:
    """Show a build's progress until it ends (a bar per phase, or until ``alive()`` says the building thread is
    gone); print its errors and its outcome; return the job."""
    phase, progress = None, None
    while True:
        job = service.find_job(job_id)
        if alive is not None and not alive():
            job = service.find_job(job_id)  # again: the thread may have finished the job after the read above
            if job["state"] in ("queued", "running"):
                job = {**job, "state": "failed", "message": job.get("message") or "the build stopped before it began"}
            break
        if bar and job["phase"] != phase and job["phase"] in ("scan", "embed", "write"):
            if progress:
                progress.render_finish()
            phase = job["phase"]
            progress = click.progressbar(length=max(job["progress"]["total"], 1), label=f"{phase:<6}", show_pos=True)
        if progress and job["phase"] == phase:
            progress.length = max(job["progress"]["total"], 1)
            progress.update(job["progress"]["done"] - progress.pos)
        if job["state"] not in ("queued", "running"):
            break
        time.sleep(0.3)
    if progress:
        progress.render_finish()
    for error in job.get("errors", []):
        click.echo(f"error: {error['source_id']}: {error['error']}", err=True)
    counts = ", ".join(f"{k} {v}" for k, v in job.get("counts", {}).items())
    click.echo(f"{job['state']}: {job.get('message')} ({counts}) in {job.get('timings', {}).get('total_s', 0):.1f}s")
    return job


def _export_format(name: str, kind: str) -> formats.Format:
    try:
        return formats.find(name, kind)
    except LookupError as exc:
        raise click.BadParameter(str(exc), param_hint="--output") from None


# Packages that add commands to ``historian`` declare a function of the group under this entry-point group (the
# repository's lab adds ``bench``, ``eval`` and ``train-checker``: pyproject.toml). They are loaded when the command
# line is used, never when an app registers Historian: a web process imports none of them.
COMMAND_PLUGINS = "historian.commands"


class HistorianGroup(AppGroup):
    """The ``historian`` group: Historian's commands, and the plugins' once the command line asks for them."""

    _plugins_loaded = False

    def _load_plugins(self) -> None:
        """Let each installed plugin add its commands. A plugin whose own package is not installed (a wheel without
        the lab) is skipped quietly; any other failure is logged with its traceback and the others still load."""
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        from importlib.metadata import entry_points

        for plugin in entry_points(group=COMMAND_PLUGINS):
            package = plugin.value.split(":")[0].split(".")[0]
            try:
                plugin.load()(self)
            except ModuleNotFoundError as exc:
                if exc.name != package:
                    log.exception("historian: the commands of %s failed to load", plugin.value)
            except Exception:  # noqa: BLE001 - a broken plugin never takes Historian's own commands down
                log.exception("historian: the commands of %s failed to load", plugin.value)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._load_plugins()
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        self._load_plugins()
        return super().get_command(ctx, cmd_name)


@click.command("migrate")
@with_appcontext
def migrate_command() -> None:
    """Apply pending migrations of Historian's collections (safe to run again)."""
    store = get_store()
    done = migrate.apply_pending(store)
    for m in done:
        click.echo(f"applied {m.name}: {m.description}")
    get_services().pending_migrations = []
    click.echo(f"{len(done)} migration(s) applied; schema version {migrate.schema_version(store)}")


@click.command("load-corpus")
@with_appcontext
@click.argument("paths", nargs=-1, required=True, type=click.Path(dir_okay=False))
def load_corpus_command(paths: tuple[str, ...]) -> None:
    """Upsert documents from JSONL/JSON files (optionally .gz) by id into the documents collection."""
    report = load_corpus(get_store(), paths)
    for error in report.errors:
        click.echo(f"error: {error}", err=True)
    click.echo(report.summary())
    if report.errors:
        sys.exit(1)


@click.command("config")
@with_appcontext
def config_command() -> None:
    """Print the effective settings as JSON, secrets masked."""
    click.echo(json.dumps(cfg.redacted(get_settings().as_config()), indent=2, default=str))


@click.command("reindex")
@with_appcontext
@click.option("--full", is_flag=True, help="Re-embed every document instead of only new and changed ones.")
@click.option("--retry-failed", is_flag=True, help="Re-run only the documents that failed last time.")
def reindex_command(full: bool, retry_failed: bool) -> None:
    """Bring the search index up to date (incremental by content hash), with a progress bar."""
    try:
        job_id: str | None = service.start_reindex(full=full, retry_failed=retry_failed, user="cli",
                                                   background=False)
    except (service.ReindexBusy, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    while job_id:  # then the build a write asked for meanwhile (documents_changed), if any
        if _run(job_id)["state"] == "failed":
            sys.exit(1)
        job_id = service.take_follow_up()


@click.command("export-chunks")
@with_appcontext
def export_chunks_command() -> None:
    """Write the serving local generation's chunks and vectors into the `atlas` backend's chunk collection
    (HISTORIAN_RETRIEVAL_ATLAS_COLLECTION), replacing what it held; then create its two search indexes in Atlas
    (docs/search-index.md) and set HISTORIAN_RETRIEVAL_BACKEND=atlas."""
    try:
        loaded = service.get_index()
    except (service.IndexNotBuilt, service.IndexMismatch) as exc:
        raise click.ClickException(str(exc)) from None
    chunks = service.atlas_chunks()
    written = service.export_chunks(loaded, chunks)
    click.echo(f"{written} chunks of generation {loaded.number} written to {chunks.name}")


@click.command("sync")
@with_appcontext
@click.option("--every", type=click.FloatRange(min=5), default=None, metavar="SECONDS",
              help="Keep the index in step: sync again every SECONDS until stopped (Ctrl-C).")
def sync_command(every: float | None) -> None:
    """Keep the index in step with the collection: index new and changed documents, drop deleted ones
    (incremental: the others keep their vectors), then any build a write asked for meanwhile."""
    while True:
        try:
            job_id: str | None = service.start_reindex(user="sync", background=False)
        except service.ReindexBusy as exc:
            service.request_build()  # the running build may have read the documents before the latest writes
            click.echo(f"{exc}: one more build follows it", err=True)
            job_id = None
        while job_id:
            if _run(job_id, bar=every is None)["state"] == "failed":
                sys.exit(1)
            job_id = service.take_follow_up()
        if every is None:
            return
        time.sleep(every)


@click.command("ask")
@with_appcontext
@click.argument("question")
@click.option("--output", "fmt", default="md", show_default=True, metavar="FORMAT",
              help="An export format of answers: md (the report), json (the output schema), bib, ris, csl.json, "
                   "chicago.txt (the references), or one a plugin registered.")
@click.option("--quiet", is_flag=True, help="Do not print progress.")
@click.option("--profile", type=click.Choice(cfg.PROFILES), default=None,
              help="Retrieval depth and revision attempts for this run (default: the configured profile).")
@click.option("--follow-up", "parent", metavar="RUN_ID", default=None, help="Continue the thread of this run.")
def ask_command(question: str, fmt: str, quiet: bool, profile: str | None, parent: str | None) -> None:
    """Ask a question: a cited answer, verified; prints it in one of the answers' export formats."""
    from historian_blueprint.ask.run import ask

    chosen = _export_format(fmt, "answer")

    def progress(event: dict) -> None:
        if not quiet:
            click.echo(f"  {event['node']:<14} {event['ms']:>8.1f} ms  {event['detail']}", err=True)

    try:
        output = ask(question, user_id="cli", on_event=progress, profile=profile, parent_id=parent)
    except (service.IndexNotBuilt, service.IndexMismatch, LookupError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(chosen.render(formats.Exported("answer", output, question, get_store().get_document)))


@click.command("map")
@with_appcontext
@click.argument("topic")
@click.option("--output", "fmt", default="md", show_default=True, metavar="FORMAT",
              help="An export format of maps: md (the report) or json (the whole map), or one a plugin registered.")
@click.option("--quiet", is_flag=True, help="Do not print progress.")
def map_command(topic: str, fmt: str, quiet: bool) -> None:
    """Map a topic: entities, cited relations, conflicts between sources, credibility, consensus."""
    from historian_blueprint.mapping.run import map_topic

    chosen = _export_format(fmt, "map")

    def progress(event: dict) -> None:
        if not quiet:
            click.echo(f"  {event['node']:<14} {event['ms']:>8.1f} ms  {event['detail']}", err=True)

    try:
        output = map_topic(topic, user_id="cli", on_event=progress)
    except (service.IndexNotBuilt, service.IndexMismatch, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(chosen.render(formats.Exported("map", output, output["topic"], get_store().get_document)))


@click.command("doctor")
@with_appcontext
def doctor_command() -> None:
    """Check the LLM endpoint (reachable, model listed, a tiny structured call) and explain what is wrong."""
    from historian_blueprint.llm.doctor import diagnose

    findings = diagnose(LLMSettings.of(get_settings()), get_settings().engine)
    for finding in findings:
        click.echo(finding.line())
    if not all(f.ok for f in findings):
        raise SystemExit(1)


@click.command("verify")
@with_appcontext
@click.option("--text", help="The draft to check (or --file).")
@click.option("--file", "path", type=click.Path(exists=True, dir_okay=False), help="Read the draft from a file.")
@click.option("--source", "sources", multiple=True, help="A document id the draft cites (repeatable).")
@click.option("--question", default=None,
              help="The question the text answers (a bare yes/no is checked as its answer).")
@click.option("--output", "fmt", default="md", show_default=True, metavar="FORMAT",
              help="An export format of checked drafts: md (the report) or json (the whole verification), or one a "
                   "plugin registered.")
def verify_command(text: str | None, path: str | None, sources: tuple[str, ...], question: str | None,
                   fmt: str) -> None:
    """Check a draft against the collection: per-claim verdicts, the four reports, confidence, status."""
    chosen = _export_format(fmt, "draft")
    if path:
        text = Path(path).read_text(encoding="utf-8")
    if not text:
        raise click.UsageError("give the draft with --text or --file")
    try:
        result = check_draft(text, sources, question=question)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(chosen.render(formats.Exported("draft", result.model_dump(), question or "", get_store().get_document)))


# Historian's own commands (`historian --help` lists them with the plugins', sorted by name).
COMMANDS = (migrate_command, load_corpus_command, config_command, reindex_command, export_chunks_command, sync_command,
            ask_command, map_command, doctor_command, verify_command)


def build_cli() -> AppGroup:
    """Return a fresh ``historian`` command group (one per app, so hosts can add their own): Historian's commands,
    and the installed plugins' when the command line lists or runs one."""
    group = HistorianGroup("historian", help="Historian: verified research assistant.")
    for command in COMMANDS:
        group.add_command(command)
    return group
