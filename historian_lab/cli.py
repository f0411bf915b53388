"""The lab's commands, added to ``historian`` as a plugin (the ``historian.commands`` entry point in pyproject.toml):
``bench ...`` (benchmarks that print figures), ``eval`` (the labeled files, fit and check halves) and
``train-checker`` (the verifier's support combination and the reader's cuts). Each imports its module when it runs."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import click
from flask import current_app
from flask.cli import AppGroup

from historian_blueprint.services import get_settings, get_services, get_store
from historian_blueprint.index import service
from historian_blueprint.serving import default_workers


# ------------------------------------------------------------------ historian bench ...
bench = AppGroup("bench", help="Benchmarks that print figures (retrieval quality, indexing throughput, query latency).")

workdir_option = click.option(
    "--workdir", type=click.Path(file_okay=False), default=None,
    help="Where benchmark stores and indexes are kept between runs (default: <data dir>/bench).",
)
data_option = click.option(
    "--data", type=click.Path(file_okay=False, exists=True), default=None,
    help="The shared data folder with eval/ and scale/ (default: ../shared/data).",
)


def workspace_root(workdir: str | None) -> Path:
    """Where the benchmarks keep their stores and indexes between runs."""
    root = Path(workdir) if workdir else get_services().data_dir / "bench"
    root.mkdir(parents=True, exist_ok=True)
    return root


def paths(workdir: str | None, data: str | None) -> tuple:
    from historian_lab.bench import common as bench_common

    data_dir = Path(data) if data else bench_common.default_data_dir()
    if not (data_dir / "eval").is_dir():
        raise click.ClickException(f"no labeled data at {data_dir}: pass --data DIR (the folder with eval/ and scale/)")
    return workspace_root(workdir), data_dir

json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
_SHARED = {"workdir": workdir_option, "data": data_option}


def uses(*names: str):
    """The benchmarks' shared options, named once (``@uses("workdir", "data")``): where the stores and indexes are
    kept, and the shared data folder."""
    def decorate(command):
        for name in reversed(names):
            command = _SHARED[name](command)
        return command
    return decorate


def emit(result: dict, as_json: bool) -> None:
    click.echo(json.dumps(result, indent=None if as_json else 2))


@bench.command("scale")
@uses("workdir", "data")
@click.option("--sizes", default="10000,100000,1000000", show_default=True,
              help="Collection sizes in chunks, comma-separated.")
@click.option("--encoder", type=click.Choice(["int8", "auto", "onnx", "torch"]), default="int8", show_default=True,
              help="The encoder whose vectors the real pages get, and that encodes the questions.")
@click.option("--asks", type=int, default=30, show_default=True, help="Whole asks timed per size.")
@click.option("--plot", type=click.Path(dir_okay=False), default=None, help="Write the cost-against-size PNG here.")
@click.option("--reuse-build", is_flag=True,
              help="Keep each size's index and first-build figures from an earlier run (the row says when it was "
                   "made); measure the incremental build and the workers again.")
@json_option
def bench_scale(workdir, data, sizes, encoder, asks, plot, reuse_build, as_json) -> None:
    """Cost as the collection grows (10k, 100k, 1M chunks of the 1916 front pages and grown copies): build and 1%
    incremental build, disk, two serving workers' RSS/PSS, retrieval and ask p50/p95, recall@10 against exact."""
    from historian_lab.bench import scale as scale_bench

    try:
        wanted = tuple(int(s) for s in sizes.split(",") if s.strip())
    except ValueError as exc:
        raise click.BadParameter("sizes are whole numbers of chunks, comma-separated") from exc
    if not wanted or min(wanted) < 100:
        raise click.BadParameter("each size is at least 100 chunks")
    emit(scale_bench.run(*paths(workdir, data), sizes=wanted, encoder=encoder, asks=asks,
                         plot=Path(plot) if plot else None, reuse_build=reuse_build), as_json)


@bench.command("retrieval")
@uses("workdir", "data")
@click.option("--timeqa-limit", type=int, default=None, help="Only the first N TimeQA questions.")
@click.option("--encoder", type=click.Choice(["auto", "int8", "onnx", "torch", "static"]), default=None,
              help="Index and ask with this encoder, in workspaces of its own (default: the configured one).")
@json_option
def bench_retrieval(workdir, data, timeqa_limit, encoder, as_json) -> None:
    """Recall@1/6/12 and MRR of hybrid, BM25-only and dense-only on historian_qa_dev and TimeQA dev."""
    from historian_lab.bench import retrieval as retrieval_bench

    emit(retrieval_bench.run(*paths(workdir, data), timeqa_limit=timeqa_limit, encoder=encoder), as_json)


@bench.command("reader")
@click.option("--pairs", "n_pairs", type=int, default=512, show_default=True, help="(window, claim) pairs per round.")
@json_option
def bench_reader(n_pairs, as_json) -> None:
    """Reader model throughput (pairs/s) and one claim's three windows (p50/p95 ms) on this machine."""
    from historian_lab.bench import reader as reader_bench

    emit(reader_bench.run(n_pairs), as_json)


@bench.command("index")
@uses("workdir")
@click.option("--limit-docs", type=int, default=None, help="Only the first N sample documents (quick runs).")
@json_option
def bench_index(workdir, limit_docs, as_json) -> None:
    """Full build vs raw encode of the same chunks, no-op reindex, reindex after a 1% change."""
    from historian_lab.bench import indexing as indexing_bench

    root = workspace_root(workdir)
    emit(indexing_bench.run(root, limit_docs=limit_docs), as_json)


@bench.command("graph")
@uses("workdir", "data")
@click.option("--n", "n", type=int, default=30, show_default=True, help="Questions and drafts to time.")
@json_option
def bench_graph(workdir, data, n, as_json) -> None:
    """Warm ask latency and verify latency of five-sentence drafts on the sample corpus (p50/p95)."""
    from historian_lab.bench import graph as graph_bench

    emit(graph_bench.run(*paths(workdir, data), n=n), as_json)


@bench.command("map")
@uses("workdir", "data")
@click.option("--n", "n", type=int, default=10, show_default=True, help="Topics to map.")
@json_option
def bench_map(workdir, data, n, as_json) -> None:
    """Warm latency of the knowledge map per topic on the sample corpus (p50/p95, per node), offline."""
    from historian_lab.bench import maps as maps_bench

    emit(maps_bench.run(*paths(workdir, data), n=n), as_json)


@bench.command("map-corpus")
@click.argument("corpus", type=click.Path(dir_okay=False, exists=True))
@click.argument("topics", type=click.Path(dir_okay=False, exists=True))
@click.option("--detail", is_flag=True,
              help="Per topic: the missed conflicts, the unplanted ones, the missed entities.")
@json_option
def bench_map_corpus(corpus, topics, detail, as_json) -> None:
    """The map scored on a corpus with planted conflicts (CORPUS .jsonl, TOPICS .json): conflicts found with
    their sides and kind, conflicts and consensus mixing events, shared facts found, entity recall."""
    from historian_lab.bench import map_corpora

    emit(map_corpora.run(Path(corpus), Path(topics), detail=detail), as_json)


@bench.command("questions")
@click.argument("questions", type=click.Path(dir_okay=False, exists=True))
@uses("workdir")
@click.option("--detail", is_flag=True, help="Per question: its kind, status and what was right or not.")
@json_option
def bench_questions(questions, workdir, detail, as_json) -> None:
    """Historians' questions (factual, comparison, list, follow-up, outside the collection) on the sample
    corpus, scored as the page reads: right span, a finding per side, the list count, refusals."""
    from historian_lab.bench import page_questions

    emit(page_questions.run(workspace_root(workdir), Path(questions), detail=detail), as_json)


@bench.command("drafts")
@click.argument("sentences", type=click.Path(dir_okay=False, exists=True))
@uses("workdir")
@click.option("--detail", is_flag=True,
              help="Per sentence: its kind, verdict, reason and whether the evidence is its source.")
@json_option
def bench_drafts(sentences, workdir, detail, as_json) -> None:
    """Draft sentences (faithful, rounded, a wrong figure, speaker or year) through the draft checker on the
    sample corpus: right verdicts for the right reason, false "supported", coverage, evidence on the source."""
    from historian_lab.bench import drafts

    emit(drafts.run(workspace_root(workdir), Path(sentences), detail=detail), as_json)


@bench.command("faults")
@uses("workdir")
@click.option("--role", "roles", multiple=True, default=("composer", "judge"), show_default=True,
              help="A role to fail (repeat): composer, challenger, interrogator, counter_arguer, judge.")
@json_option
def bench_faults(workdir, roles, as_json) -> None:
    """The LLM engine under fault over HTTP (timeout, 429, 500, broken or empty reply, cut response, a judge
    that lies upward): no run may end verified, every run is stored with its failure; exits 1 otherwise."""
    from historian_lab.bench import faults as faults_bench

    root = workspace_root(workdir)
    try:
        result = faults_bench.run_fault_matrix(root, roles=roles)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    emit(result, as_json)
    if result["control"]["status"] != "verified" or result["verified"] or result["unrecorded"] or result["unstored"]:
        sys.exit(1)


@bench.command("load")
@click.option("--url", default=None, help="A served instance (default: serve the demo on a free port of 127.0.0.1).")
@click.option("--login", "credentials", default=None, help="NAME:PASSWORD of a researcher on --url.")
@click.option("--users", type=click.IntRange(1, 200), default=20, show_default=True, help="Concurrent askers.")
@click.option("--duration", type=click.FloatRange(1, 3600), default=60, show_default=True, help="Seconds of load.")
@click.option("--warm", type=click.IntRange(1, 100), default=8, show_default=True,
              help="Asks of one user first, to read the server's CPU time per ask.")
@click.option("--reindex", is_flag=True, help="Run a full reindex in this process a quarter of the way in.")
@click.option("--workers", type=click.IntRange(1, 32), default=default_workers,
              show_default="as `historian serve`: on Linux cores + 1, at most 4",
              help="Serve the demo with this many worker processes (`historian serve --workers N`).")
@click.option("--threads", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Threads per worker when --workers is more than 1.")
@json_option
def bench_load(url, credentials, users, duration, warm, reindex, workers, threads, as_json) -> None:
    """Concurrent asks over HTTP: throughput, p50/p95, errors; with --reindex, queries failed during it."""
    from historian_lab.bench import load as load_bench

    store = get_store()
    if service.current_generation(store) is None:
        raise click.ClickException("no search index yet: run `historian reindex` first")

    def full_reindex() -> dict:
        job_id = service.start_reindex(full=True, user="bench-load")
        while (job := service.find_job(job_id))["state"] in ("queued", "running"):
            time.sleep(0.5)
        return job

    options = dict(users=users, duration=duration, warm=warm, reindex=full_reindex if reindex else None)
    if url:
        if not credentials or ":" not in credentials:
            raise click.ClickException("--url needs --login NAME:PASSWORD (a researcher of that instance)")
        name, password = credentials.split(":", 1)
        emit(load_bench.run(base=url, name=name, password=password, **options), as_json)
        return
    if "demo.login" not in current_app.view_functions:
        raise click.ClickException("without --url the bench serves the demo; for another host, serve it and pass --url")
    # the simulated researchers share one account: its limit of runs going at once is raised to their number
    room = max(users, get_settings().limits_max_running_per_user)
    os.environ["HISTORIAN_LIMITS_MAX_RUNNING_PER_USER"] = str(room)
    with load_bench.DemoServer(store, workers=workers, threads=threads) as server:
        emit(load_bench.run(base=server.base, name=server.name, password=server.password,
                            server_pid=server.proc.pid, rounds=workers + 1, **options), as_json)


@bench.command("abuse")
@click.option("--deadline", type=click.FloatRange(1, 600), default=10, show_default=True,
              help="HISTORIAN_LIMITS_TIMEOUT_S of the served demo.")
@click.option("--maps", type=click.IntRange(1, 50), default=10, show_default=True,
              help="Maps the heavy user starts in parallel.")
@click.option("--duration", type=click.FloatRange(5, 600), default=40, show_default=True,
              help="Seconds the heavy user keeps pressing and the second user keeps asking.")
@click.option("--workers", type=click.IntRange(1, 32), default=default_workers,
              show_default="as `historian serve`", help="Worker processes of the served demo.")
@click.option("--threads", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Threads per worker when --workers is more than 1.")
@json_option
def bench_abuse(deadline, maps, duration, workers, threads, as_json) -> None:
    """One user's longest drafts and parallel maps while a second user asks (served on 127.0.0.1): the
    second user's ask p95 (target under 2 s), how long any heavy request held the server (never past the
    deadline plus 1 s), cut-off runs stored and never verified; then a login storm (36 guessers on one name,
    each from a fresh loopback address, 10 s) while a logged-in user loads their runs (p95 under 0.5 s, every
    guess answered 401 or 429). Exits 1 when a limit did not hold."""
    from historian_lab.bench import abuse

    store = get_store()
    if service.current_generation(store) is None:
        raise click.ClickException("no search index yet: run `historian reindex` first")
    if "demo.login" not in current_app.view_functions:
        raise click.ClickException("the abuse bench serves the demo: run it with the demo app")
    result = abuse.run(store=store, deadline=deadline, maps=maps, duration=duration, workers=workers,
                       threads=threads)
    emit(result, as_json)
    if (result["second_user"]["p95_ms"] >= 2000 or result["heavy_user"]["past_deadline_plus_1s"]
            or result["stored"]["cut_off_verified"] or result["second_user"]["errors"]
            or _storm_failed(result.get("login_storm"))):
        sys.exit(1)


def _storm_failed(storm: dict | None) -> bool:
    """The login storm starved the logged-in reader (p95 0.5 s or more) or a guess got another answer than 401/429."""
    return bool(storm) and "reader" in storm and (storm["reader"]["p95_ms"] >= 500 or bool(storm["guesses"]["other"]))


@bench.command("first-answer")
@click.option("--timeout", "timeout_s", type=click.FloatRange(10, 7200), default=1800, show_default=True,
              help="Give up after this many seconds.")
@click.option("--home", type=click.Path(file_okay=False), default=None,
              help="An empty folder for the demo home (default: a new temporary folder, kept for inspection).")
@json_option
def bench_first_answer(timeout_s, home, as_json) -> None:
    """From `historian serve` on an empty demo home to the first answered question; failed requests while the
    meaning vectors are built and when they switch on."""
    from historian_lab.bench import first_answer

    try:
        result = first_answer.run(timeout_s=timeout_s, keep=Path(home) if home else None)
    except (RuntimeError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    emit(result, as_json)
    if result.get("first_answer_s") is None or result.get("failed_after_first_answer"):
        sys.exit(1)


@bench.command("history")
@uses("workdir")
@click.option("--runs", type=int, default=10_000, show_default=True, help="Stored runs of one user.")
@click.option("--repeat", type=int, default=30, show_default=True, help="Requests per page timed.")
@json_option
def bench_history(workdir, runs, repeat, as_json) -> None:
    """History pages of one user with many runs: p50/p95 per page (first, middle, last, API, search)."""
    from historian_lab.bench import history as history_bench
    from historian_blueprint.web import build_blueprint

    def pages(app) -> None:
        app.register_blueprint(build_blueprint(), url_prefix=get_settings(app).url_prefix)

    emit(history_bench.run(workspace_root(workdir), pages, runs=runs, repeat=repeat), as_json)


@bench.command("llm")
@uses("workdir", "data")
@click.option("--n", "n", type=int, default=30, show_default=True, help="Questions to time.")
@json_option
def bench_llm(workdir, data, n, as_json) -> None:
    """LLM-engine graph overhead outside model calls, against a zero-latency local test server."""
    from historian_lab.bench import graph as graph_bench

    emit(graph_bench.run_llm(*paths(workdir, data), n=n), as_json)


@bench.command("query")
@uses("workdir", "data")
@click.option("--corpus", type=click.Choice(["sample", "scale", "both"]), default="both", show_default=True)
@click.option("--queries", "n", type=int, default=200, show_default=True)
@json_option
def bench_query(workdir, data, corpus, n, as_json) -> None:
    """Retrieval p50/p95 latency (warm) and RSS; the scale index is built once and kept."""
    from historian_lab.bench import query as query_bench

    root, data_dir = paths(workdir, data)
    result = {}
    if corpus in ("sample", "both"):
        result["sample"] = query_bench.run_sample(root, data_dir, n)
    if corpus in ("scale", "both"):
        result["scale"] = query_bench.run_scale_in_child(root, data_dir, n)
    result["targets"] = {"p95_ms": 150, "rss_mb": 1536}
    emit(result, as_json)


def register(group: AppGroup) -> None:
    """The plugin's entry: add the lab's commands to Historian's command group."""
    from historian_lab.cli_eval import eval_command, train_checker_command

    for command in (bench, eval_command, train_checker_command):
        group.add_command(command)
