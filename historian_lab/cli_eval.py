"""The lab's ``historian eval`` (the labeled files by fit and check halves) and ``historian train-checker`` (the
verifier's support combination and the reader's cuts, fitted on the fit halves); ``cli.register`` adds them."""

from __future__ import annotations

import json
from pathlib import Path

import click
from flask.cli import with_appcontext


@click.command("eval")
@with_appcontext
@click.argument("paths", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@click.option("--data", type=click.Path(file_okay=False, exists=True), default=None,
              help="With no PATHS: the shared data folder whose eval/ files are all run (default: ../shared/data).")
@click.option("--limit", type=int, default=None, help="Only the first N items of each file.")
@click.option("--report", "report_dir", type=click.Path(file_okay=False), default=None,
              help="Write the JSON and a reliability-diagram PNG (of each check half) into this folder.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def eval_command(paths: tuple[str, ...], data: str | None, limit: int | None, report_dir: str | None,
                 as_json: bool) -> None:
    """Verify labeled claims: fit and check halves, the lexical baseline fitted on the fit half, and (with
    several files, or none: every labeled file of --data) leave-one-dataset-out."""
    from historian_lab.bench import common as bench_common
    from historian_lab.evaluation import harness

    if len(paths) == 1:
        result = harness.run(Path(paths[0]), limit=limit)
        if report_dir:
            json_path, png_path = harness.write_report(result, Path(report_dir))
            result["report"] = {"json": str(json_path), "reliability_png": str(png_path)}
        click.echo(json.dumps(result, indent=None if as_json else 2))
        return
    files = [Path(p) for p in paths]
    elsewhere: list[str] = []
    if not files:
        eval_dir = (Path(data) if data else bench_common.default_data_dir()) / "eval"
        if not eval_dir.is_dir():
            raise click.ClickException(f"no labeled data at {eval_dir}: pass --data DIR or the files")
        files = harness.labeled_files(eval_dir)
        elsewhere = sorted(p.stem for p in eval_dir.glob("*.jsonl") if p not in files)
    result = harness.protocol(files, limit=limit)
    if report_dir:
        result["report"] = [str(p) for p in harness.write_protocol_report(result, Path(report_dir))]
    if as_json:
        click.echo(json.dumps(result))
        return
    click.echo(f"{'file':<24}{'fit BA':>8}{'check BA':>10}{'det':>7}{'FPR':>7}{'ECE':>7}{'LODO BA':>9}{'baseline':>10}")
    for stem, f in result["files"].items():
        c, lodo = f["check"], f["leave_one_dataset_out"] or {}
        click.echo(f"{stem:<24}{f['fit']['balanced_accuracy']:>8.3f}{c['balanced_accuracy']:>10.3f}"
                   f"{c['detection_rate']:>7.3f}{c['false_positive_rate']:>7.3f}{c['ece']:>7.3f}"
                   f"{lodo.get('balanced_accuracy', float('nan')):>9.3f}{f['baseline_lexical']['check']:>10.3f}")
    for stem in elsewhere:  # question sets need the index: the benchmarks score them
        where = ("historian bench graph (fit and check halves)" if stem.startswith("historian_qa")
                 else "historian bench retrieval")
        click.echo(f"{stem:<24}questions, not labeled claims: scored by `{where}`")


@click.command("train-checker")
@with_appcontext
@click.option("--eval-data", type=click.Path(file_okay=False, exists=True), default=None,
              help="The shared data folder whose eval/ fit halves set the combination and the cuts (default: "
                   "../shared/data).")
@click.option("--stage", type=click.Choice(["all", "fit", "reader"]), default="all", show_default=True,
              help="fit: the support combination (verify/model/combiner.json); reader: the reader's two cuts "
                   "(verify/reader_model/thresholds.json); all: both.")
def train_checker_command(eval_data, stage) -> None:
    """Fit the verifier's support combination and the reader's cuts on the labeled files' fit halves (the reader
    model itself is trained in the lab: lab/reader/README.md)."""
    from historian_lab.bench import common as bench_common
    from historian_lab.fitting import fit as fit_stage

    eval_dir = (Path(eval_data) if eval_data else bench_common.default_data_dir()) / "eval"
    if not eval_dir.is_dir():
        raise click.ClickException(f"no labeled data at {eval_dir}: pass --eval-data DIR")
    if stage in ("all", "fit"):
        click.echo(json.dumps({"combiner": fit_stage.fit_stage(eval_dir)["combiner"]["info"]}))
    if stage in ("all", "reader"):
        click.echo(json.dumps(fit_stage.reader_stage(eval_dir)))
