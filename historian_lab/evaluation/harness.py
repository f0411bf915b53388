"""Evaluation harness: verify every labeled claim of a file, score detection, calibration and integrity.

Items follow ../shared/data/README.md. Items with inline ``documents`` are verified against those
documents alone (an isolated set per item); historian items name their documents by id and are verified
against the sample corpus, with their citation (``cited``) when they carry one.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from historian_lab.bench.common import SAMPLE_CORPUS, percentile, read_jsonl
from historian_blueprint.index.service import search_documents
from historian_blueprint.schema import CONFLICTS, Cited, SourceText
from historian_blueprint.text.spans import Layouts
from historian_blueprint.text.words import STOPWORDS, number_vocabulary, numbers
from historian_blueprint.verify.confidence import to_verdict
from historian_blueprint.verify.decision import Said, settle
from historian_blueprint.verify.findings import ClaimResult, Finding
from historian_blueprint.verify.answers import verify_answer
from historian_blueprint.verify.grounding import verify_claim
from historian_blueprint.verify.combination import (
    DEFAULT_FALSE_SUPPORTED_LIMIT, FALSE_SUPPORTED_LIMITS, LEXICAL_FEATURES, Combiner, default_combiner, fit,
)

FLAGGED_LABELS = ("unsupported", "partially_supported")


def sample_corpus() -> dict[str, SourceText]:
    docs = {}
    for path in sorted(SAMPLE_CORPUS.glob("*.jsonl")):
        for d in read_jsonl(path):
            docs[d["_id"]] = SourceText(d["_id"], d["content"], d.get("title", ""), d.get("author"))
    return docs


def _baseline_words(text: str) -> set[str]:
    """The baseline's own fixed tokenizer (lowercase words minus stopwords), independent of the verifier's."""
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS}


def balanced_accuracy(predicted_supported: list[bool], supported: list[bool]) -> float:
    pos = [p for p, y in zip(predicted_supported, supported) if not y]   # unsupported items
    neg = [p for p, y in zip(predicted_supported, supported) if y]
    detection = sum(1 for p in pos if not p) / len(pos) if pos else 0.0
    specificity = sum(1 for p in neg if p) / len(neg) if neg else 0.0
    return (detection + specificity) / 2


def expected_calibration_error(confidences: list[float], outcomes: list[bool],
                               bins: int = 10) -> tuple[float, list[dict[str, float]]]:
    table = []
    total = len(confidences)
    ece = 0.0
    for b in range(bins):
        low, high = b / bins, (b + 1) / bins
        members = [(c, o) for c, o in zip(confidences, outcomes) if low <= c < high or (b == bins - 1 and c == 1.0)]
        if not members:
            continue
        mean_conf = sum(c for c, _ in members) / len(members)
        accuracy = sum(1 for _, o in members if o) / len(members)
        ece += len(members) / total * abs(mean_conf - accuracy)
        table.append({"bin": f"{low:.1f}-{high:.1f}", "n": len(members), "confidence": round(mean_conf, 4),
                      "accuracy": round(accuracy, 4)})
    return round(ece, 4), table


def group_key(item: dict[str, Any]) -> str:
    """What ties items together: the documents they are checked against (their ids, and their text when it
    is inline), so that a right and a hallucinated answer over one passage, or two claims about one document,
    never fall in different halves; an item without documents is its own group (its id)."""
    documents = item.get("documents") or []
    if not documents:
        return str(item.get("id") or item.get("claim") or item.get("question"))
    parts = sorted(f"{d.get('_id', '')}\x1f{hashlib.sha256(d.get('content', '').encode('utf-8')).hexdigest()}"
                   for d in documents)
    return "\x1e".join(parts)


def half(item: dict[str, Any]) -> str:
    """The item's half, fixed by a hash of its group (``group_key``): "fit" or "check"."""
    return "fit" if hashlib.sha256(group_key(item).encode("utf-8")).digest()[0] % 2 == 0 else "check"


@dataclass
class Row:
    """One verified item: what the harness scores and what a combiner is refitted on."""

    half: str
    supported: bool          # the label
    flagged: bool            # the verifier's verdict
    verdict: str
    confidence: float
    hard_failed: bool
    features: dict[str, float] | None
    kind: str
    span_ok: bool | None
    valid: bool
    latency_ms: float
    baseline_share: float
    baseline_numbers_ok: bool
    decided_by: str = ""


def collect(
    path: Path, limit: int | None = None, checker: Callable[..., ClaimResult] | None = None,
    halves: tuple[str, ...] = ("fit", "check"),
) -> tuple[str, list[Row]]:
    """Verify every item of a file (of the given halves): (dataset name, one row per item)."""
    items = [item for item in list(read_jsonl(path))[:limit] if half(item) in halves]
    corpus: dict[str, SourceText] | None = None
    search = None
    if any("content" not in d for item in items for d in item["documents"]):
        corpus = sample_corpus()
        search = search_documents(list(corpus.values()))
    rows = []
    for item in items:
        if corpus is not None:
            documents = [corpus[d["_id"]] for d in item["documents"] if d["_id"] in corpus]
        else:
            documents = [SourceText(d["_id"], d["content"], d.get("title", "")) for d in item["documents"]]
        cited = [Cited(c["source_id"], c["start"], c["end"]) for c in item.get("cited") or []]
        t0 = time.perf_counter()
        if item.get("question"):  # an answer: read with its question ("yes" asserts what was asked)
            result = verify_answer(item["question"], item["claim"], documents, cited, search, checker=checker)
        else:
            result = verify_claim(item["claim"], documents, cited, search, checker=checker)
        latency = (time.perf_counter() - t0) * 1000
        by_id = corpus if corpus is not None else {d.source_id: d for d in documents}
        try:
            verdict = to_verdict(1, result, Layouts(), lambda source_id, by_id=by_id: by_id[source_id].text)
        except (ValidationError, KeyError):
            verdict = None
        span_ok = None
        if verdict is not None and verdict.evidence is not None:
            source = by_id.get(verdict.evidence.source_id)
            span_ok = bool(source
                           and source.text[verdict.evidence.start: verdict.evidence.end] == verdict.evidence.text)
        text = " ".join(d.text for d in documents)
        claim_words = _baseline_words(item["claim"])
        share = len(claim_words & _baseline_words(text)) / len(claim_words) if claim_words else 1.0
        hard = result.verdict in CONFLICTS or (result.flagged and result.decided_by not in ("support", "opinion", ""))
        rows.append(Row(
            half(item), item["label"] not in FLAGGED_LABELS, result.flagged, result.verdict,
            verdict.confidence if verdict else 0.0, hard, result.features, item.get("kind") or item["label"], span_ok,
            verdict is not None, latency, share, numbers(item["claim"]) <= number_vocabulary(text),
            result.decided_by or "",
        ))
    name = items[0].get("dataset", path.stem) if items else path.stem
    return name, rows


def rescore(rows: list[Row], combiner: Combiner) -> list[Row]:
    """The rows as another combiner would decide them (the conflict checks' verdicts stand)."""
    out = []
    for r in rows:
        if r.features is None:  # decided without a reading (a failed check): unchanged
            out.append(r)
            continue
        p = combiner.probability(r.features)
        if r.hard_failed:
            p = combiner.below_cut(p)  # as the decision shows it
        carried = not r.hard_failed and combiner.carries(r.features)  # the decision's own statement
        verdict = settle(  # the one decision: the row's conflict stands; what else the rules found, if not support
            conflict=Said(Finding(verdict=r.verdict)) if r.hard_failed else None,
            carried=Said(Finding(verdict="supported")) if carried else None,
            otherwise=Said(Finding(verdict=r.verdict)) if r.verdict != "supported" else None,
        ).finding.verdict
        out.append(replace(r, flagged=not carried, confidence=round(p, 4), verdict=verdict))
    return out


def figures(rows: list[Row]) -> dict[str, Any]:
    """Detection, false positives, balanced accuracy, calibration and integrity of some rows."""
    pos = [r for r in rows if not r.supported]
    neg = [r for r in rows if r.supported]
    detection = sum(r.flagged for r in pos) / len(pos) if pos else 0.0
    fpr = sum(r.flagged for r in neg) / len(neg) if neg else 0.0
    ece, reliability = expected_calibration_error([r.confidence for r in rows], [r.supported for r in rows])
    spans = [r.span_ok for r in rows if r.span_ok is not None]
    per_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    verdicts: dict[str, int] = defaultdict(int)
    for r in rows:
        per_kind[r.kind][0] += 1
        per_kind[r.kind][1] += r.flagged
        verdicts[r.verdict] += 1
    latencies = [r.latency_ms for r in rows]
    false_claims_supported = sum(r.verdict == "supported" for r in pos)
    conflicts = [r for r in rows if r.verdict in CONFLICTS]
    return {
        "n": len(rows),
        # the asymmetric figures (docs/design.md): a false "supported" is the error a historian does not forgive
        "false_supported": round(false_claims_supported / len(pos), 4) if pos else 0.0,
        "coverage": round(sum(r.verdict == "supported" for r in neg) / len(neg), 4) if neg else 0.0,
        "contradiction_precision": (round(sum(not r.supported for r in conflicts) / len(conflicts), 4)
                                    if conflicts else None),
        "contradictions": len(conflicts),
        "unconfirmed_share": round(sum(r.verdict == "unconfirmed" for r in rows) / len(rows), 4) if rows else 0.0,
        "detection_rate": round(detection, 4),
        "false_positive_rate": round(fpr, 4),
        "balanced_accuracy": round((detection + 1 - fpr) / 2, 4),
        "ece": ece,
        "citation_integrity": round(sum(spans) / len(spans), 4) if spans else 1.0,
        "evidence_spans": len(spans),
        "schema_validity": round(sum(r.valid for r in rows) / len(rows), 4) if rows else 1.0,
        "latency_ms": ({"p50": round(percentile(latencies, 50), 2), "p95": round(percentile(latencies, 95), 2)}
                       if rows else {}),
        "per_kind": {k: {"n": n, "flagged": round(f / n, 4)} for k, (n, f) in sorted(per_kind.items())},
        "verdicts": dict(verdicts),
        "reliability": reliability,
    }


def lexical_baseline(fit: list[Row], check: list[Row]) -> dict[str, Any]:
    """Share of the claim's words in the documents (and every number present): threshold fitted on ``fit``,
    balanced accuracy reported on both."""
    def ba(rows: list[Row], threshold: float) -> float:
        return balanced_accuracy([r.baseline_share >= threshold and r.baseline_numbers_ok for r in rows],
                                 [r.supported for r in rows])

    best = max(sorted({r.baseline_share for r in fit} | {0.0, 1.01}), key=lambda t: (ba(fit, t), -t), default=0.0)
    return {"threshold": round(best, 4), "fit": round(ba(fit, best), 4), "check": round(ba(check, best), 4)}


def run(path: Path, limit: int | None = None, checker: Callable[..., ClaimResult] | None = None) -> dict[str, Any]:
    """Verify every item of one file with the shipped verifier; figures for the whole file and each half."""
    dataset, rows = collect(path, limit, checker)
    fit = [r for r in rows if r.half == "fit"]
    check = [r for r in rows if r.half == "check"]
    whole = figures(rows)
    on_check = figures(check)
    whole["per_kind"] = on_check["per_kind"]  # per kind: the check half only
    baseline = lexical_baseline(fit, check)
    return {
        "dataset": dataset, "file": str(path), **whole,
        "fit": _short(figures(fit)), "check": _short(on_check),
        "baseline_lexical": baseline,
        "beats_baseline": on_check["balanced_accuracy"] > baseline["check"],
    }


def _short(f: dict[str, Any]) -> dict[str, Any]:
    return {k: f[k] for k in ("n", "false_supported", "coverage", "contradiction_precision", "unconfirmed_share",
                              "detection_rate", "false_positive_rate", "balanced_accuracy", "ece")}


def protocol(paths: list[Path], limit: int | None = None) -> dict[str, Any]:
    """Every file verified once; the shipped combiner's fit/check figures, the lexical baseline fitted on each
    fit half, and leave-one-dataset-out (the combiner refitted on the other files' fit halves)."""
    collected = {path.stem: collect(path, limit) for path in paths}
    out: dict[str, Any] = {"files": {}}
    for stem, (dataset, rows) in collected.items():
        fit = [r for r in rows if r.half == "fit"]
        check = [r for r in rows if r.half == "check"]
        others = [(s, r) for s2, (_, rs) in collected.items() if s2 != stem for r in rs if r.half == "fit"
                  for s in [s2]]
        lodo = None
        usable = [(s, r) for s, r in others if r.features is not None]
        if len({s for s, _ in usable}) >= 1 and usable:
            refit = fit_combiner([r for _, r in usable], [s for s, _ in usable])
            lodo = _short(figures(rescore(check, refit)))
        baseline = lexical_baseline(fit, check)
        check_figures = figures(check)
        out["files"][stem] = {
            "dataset": dataset, "n": len(rows), "fit": _short(figures(fit)), "check": check_figures,
            "leave_one_dataset_out": lodo, "baseline_lexical": baseline,
            "check_beats_baseline": check_figures["balanced_accuracy"] > baseline["check"],
        }
    out["combiner"] = default_combiner().info
    return out


def fit_combiner(rows: list[Row], groups: list[str], info: dict[str, Any] | None = None) -> Combiner:
    """Fit the support combination on rows (fit halves only). Rows a conflict check decided, and rows with a
    word the evidence does not carry, are left out: the decision never reads the probability for them."""
    names = LEXICAL_FEATURES
    usable = [(r, g) for r, g in zip(rows, groups)
              if r.features is not None and all(n in r.features for n in names)
              and not r.hard_failed and r.features.get("unexplained", 0.0) == 0.0
              and r.features.get("own_voice", 1.0) == 1.0]
    # the limits count against every false claim of the file (those a check already caught included)
    limits = {}
    for g in set(groups):
        all_false = sum(1 for r, h in zip(rows, groups) if h == g and not r.supported)
        left = sum(1 for r, h in usable if h == g and not r.supported)
        limits[g] = FALSE_SUPPORTED_LIMITS.get(g, DEFAULT_FALSE_SUPPORTED_LIMIT) * all_false / max(left, 1)
    return fit([r.features for r, _ in usable], [r.supported for r, _ in usable],  # type: ignore[misc]
               [g for _, g in usable], info, names, limits)


def write_report(result: dict[str, Any], directory: Path) -> tuple[Path, Path]:
    """Write the JSON report and a reliability-diagram PNG into ``directory``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    directory.mkdir(parents=True, exist_ok=True)
    stem = Path(result["file"]).stem
    json_path = directory / f"{stem}.json"
    json_path.write_text(json.dumps(result, indent=2), encoding="utf-8")
    fig, ax = plt.subplots(figsize=(4.5, 4.5), dpi=110)
    rel = result["reliability"]
    ax.plot([0, 1], [0, 1], linestyle="--", color="#999", label="perfect calibration")
    ax.plot([r["confidence"] for r in rel], [r["accuracy"] for r in rel], marker="o", color="#2f3b45",
            label="Historian")
    ax.set_xlabel("confidence that the claim is supported")
    ax.set_ylabel("share actually supported")
    ax.set_title(f"{result['dataset']} (n={result['n']}, ECE {result['ece']:.3f})", fontsize=9)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    png_path = directory / f"{stem}_reliability.png"
    fig.savefig(png_path)
    plt.close(fig)
    return json_path, png_path


def labeled_files(directory: Path) -> list[Path]:
    """The files of a folder whose items are labeled claims (``claim`` and ``label``); QA files are scored by
    ``historian bench graph``."""
    out = []
    for path in sorted(directory.glob("*.jsonl")):
        first = next(iter(read_jsonl(path)), None)
        if first and "claim" in first and "label" in first:
            out.append(path)
    return out


def write_protocol_report(result: dict[str, Any], directory: Path) -> list[Path]:
    """One reliability diagram of every file's check half (and the whole protocol as JSON)."""
    directory.mkdir(parents=True, exist_ok=True)
    written = [directory / "protocol.json"]
    written[0].write_text(json.dumps(result, indent=2), encoding="utf-8")
    for stem, f in result["files"].items():
        check = f["check"]
        _, png = write_report({"file": f"{stem}_check", "dataset": f"{f['dataset']} check half", "n": check["n"],
                               "ece": check["ece"], "reliability": check["reliability"]}, directory)
        written.append(png)
    return written
