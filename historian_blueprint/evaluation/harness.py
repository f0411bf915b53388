"""Evaluation harness: verify every labeled claim of a file, score detection, calibration and integrity.

Items follow ../shared/data/README.md. Items with inline ``documents`` are verified against those
documents alone (an isolated set per item); historian items name their documents by id and are verified
against the sample corpus, with their citation (``cited``) when they carry one.
"""

from __future__ import annotations

import json
import re
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from historian_blueprint.bench.common import SAMPLE_CORPUS, percentile, read_jsonl
from historian_blueprint.index.service import search_documents
from historian_blueprint.schema import Cited, SourceText
from historian_blueprint.text.spans import Layouts
from historian_blueprint.text.words import STOPWORDS, number_vocabulary, numbers
from historian_blueprint.verify.confidence import to_verdict
from historian_blueprint.verify.findings import ClaimResult
from historian_blueprint.verify.grounding import verify_answer, verify_claim

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


def lexical_baseline(items: list[dict[str, Any]], texts: list[str]) -> dict[str, Any]:
    """Share of the claim's content words in the document + every number present; threshold fitted here."""
    rows = []
    for item, text in zip(items, texts):
        claim_words = _baseline_words(item["claim"])
        doc_words = _baseline_words(text)
        share = len(claim_words & doc_words) / len(claim_words) if claim_words else 1.0
        numbers_ok = numbers(item["claim"]) <= number_vocabulary(text)
        rows.append((share, numbers_ok, item["label"] not in FLAGGED_LABELS))
    best = (0.0, 0.0)
    for threshold in sorted({r[0] for r in rows} | {0.0, 1.01}):
        preds = [(s >= threshold and n) for s, n, _ in rows]
        ba = balanced_accuracy([p for p in preds], [y for *_, y in rows])
        if ba > best[0]:
            best = (ba, threshold)
    return {"balanced_accuracy": round(best[0], 4), "threshold": round(best[1], 4)}


def balanced_accuracy(predicted_supported: list[bool], supported: list[bool]) -> float:
    pos = [p for p, y in zip(predicted_supported, supported) if not y]   # unsupported items
    neg = [p for p, y in zip(predicted_supported, supported) if y]
    detection = sum(1 for p in pos if not p) / len(pos) if pos else 0.0
    specificity = sum(1 for p in neg if p) / len(neg) if neg else 0.0
    return (detection + specificity) / 2


def expected_calibration_error(confidences: list[float], outcomes: list[bool], bins: int = 10) -> tuple[float, list[dict[str, float]]]:
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
        table.append({"bin": f"{low:.1f}-{high:.1f}", "n": len(members), "confidence": round(mean_conf, 4), "accuracy": round(accuracy, 4)})
    return round(ece, 4), table


def run(path: Path, limit: int | None = None, checker: Callable[..., ClaimResult] | None = None) -> dict[str, Any]:
    """Verify every item; return the metrics as one JSON-ready dict."""
    items = list(read_jsonl(path))[:limit]
    corpus: dict[str, SourceText] | None = None
    search = None
    if any("content" not in d for item in items for d in item["documents"]):
        corpus = sample_corpus()
        search = search_documents(list(corpus.values()))

    per_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    flagged_true = flagged_false = n_true = n_false = 0
    confidences, outcomes, latencies, baseline_texts = [], [], [], []
    spans_ok = spans_total = valid = 0
    verdict_counts: dict[str, int] = defaultdict(int)
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
        latencies.append((time.perf_counter() - t0) * 1000)
        by_id = corpus if corpus is not None else {d.source_id: d for d in documents}
        try:
            verdict = to_verdict(1, result, Layouts(), lambda source_id: by_id[source_id].text)
            valid += 1
        except (ValidationError, KeyError):
            verdict = None
        if verdict is not None and verdict.evidence is not None:
            spans_total += 1
            source = by_id.get(verdict.evidence.source_id)
            spans_ok += bool(source and source.text[verdict.evidence.start: verdict.evidence.end] == verdict.evidence.text)
        supported_label = item["label"] not in FLAGGED_LABELS
        flagged = result.flagged
        verdict_counts[result.verdict] += 1
        if supported_label:
            n_false += 1
            flagged_false += flagged
        else:
            n_true += 1
            flagged_true += flagged
        kind = item.get("kind") or item["label"]
        per_kind[kind][0] += 1
        per_kind[kind][1] += flagged
        confidences.append(verdict.confidence if verdict else 0.0)
        outcomes.append(supported_label)
        baseline_texts.append(" ".join(d.text for d in documents))

    detection = flagged_true / n_true if n_true else 0.0
    fpr = flagged_false / n_false if n_false else 0.0
    ece, reliability = expected_calibration_error(confidences, outcomes)
    baseline = lexical_baseline(items, baseline_texts)
    ba = (detection + 1 - fpr) / 2
    return {
        "dataset": items[0].get("dataset", path.stem) if items else path.stem,
        "file": str(path),
        "n": len(items),
        "detection_rate": round(detection, 4),
        "false_positive_rate": round(fpr, 4),
        "balanced_accuracy": round(ba, 4),
        "citation_integrity": round(spans_ok / spans_total, 4) if spans_total else 1.0,
        "evidence_spans": spans_total,
        "ece": ece,
        "schema_validity": round(valid / len(items), 4) if items else 1.0,
        "latency_ms": {"p50": round(percentile(latencies, 50), 2), "p95": round(percentile(latencies, 95), 2)},
        "per_kind": {k: {"n": n, "flagged": round(f / n, 4)} for k, (n, f) in sorted(per_kind.items())},
        "verdicts": dict(verdict_counts),
        "baseline_lexical": baseline,
        "beats_baseline": ba > baseline["balanced_accuracy"],
        "reliability": reliability,
    }


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
    ax.plot([r["confidence"] for r in rel], [r["accuracy"] for r in rel], marker="o", color="#2f3b45", label="Historian")
    ax.set_xlabel("confidence that the claim is supported")
    ax.set_ylabel("share actually supported")
    ax.set_title(f"{result['dataset']} (n={result['n']}, ECE {result['ece']:.3f})", fontsize=9)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    png_path = directory / f"{stem}_reliability.png"
    fig.savefig(png_path)
    plt.close(fig)
    return json_path, png_path
