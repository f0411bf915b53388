"""Retrieval quality: Recall@1/6/12 and MRR for hybrid, BM25-only and dense-only in one run."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from historian_lab.bench.common import SAMPLE_CORPUS, ensure_documents, ensure_index, read_jsonl, workspace
from historian_blueprint.index import service

KS = (1, 6, 12)
MODES = ("hybrid", "bm25", "dense")
_PARA_BREAK = re.compile(r"\n\n")


def score_ranking(relevant: Callable[[service.Hit], bool], hits: list[service.Hit]) -> tuple[dict[int, float], float]:
    """Return hit@k for each k and the reciprocal rank of the first relevant hit."""
    first = next((i for i, h in enumerate(hits) if relevant(h)), None)
    recall = {k: float(first is not None and first < k) for k in KS}
    return recall, (1.0 / (first + 1)) if first is not None else 0.0


def evaluate(app: Any, items: list[tuple[str, Callable[[service.Hit], bool]]]) -> dict[str, dict[str, float]]:
    """Run every query in every mode; average recall@k and MRR."""
    out: dict[str, dict[str, float]] = {}
    with app.app_context():
        for mode in MODES:
            sums = {f"recall@{k}": 0.0 for k in KS} | {"mrr": 0.0}
            for query, relevant in items:
                hits = service.retrieve(query, top_k=max(KS), mode=mode)
                recall, rr = score_ranking(relevant, hits)
                for k in KS:
                    sums[f"recall@{k}"] += recall[k]
                sums["mrr"] += rr
            out[mode] = {name: round(value / max(len(items), 1), 4) for name, value in sums.items()}
    return out


def bench_workspace(root: Path, name: str, encoder: str | None) -> Any:
    """The benchmark's workspace, its own per encoder when one is named (``sample-static``)."""
    if encoder is None:
        return workspace(root, name)
    return workspace(root, f"{name}-{encoder}", HISTORIAN_INDEX_ENCODER=encoder)


def historian_qa(root: Path, data: Path, encoder: str | None = None) -> dict[str, Any]:
    """historian_qa_dev over the sample corpus: a hit is a retrieved chunk containing a gold quote."""
    app = bench_workspace(root, "sample", encoder)
    ensure_documents(app, sorted(SAMPLE_CORPUS.glob("*.jsonl")))
    ensure_index(app)
    items, reachable = [], 0
    with app.app_context():
        loaded = service.get_index()
        for q in read_jsonl(data / "eval" / "historian_qa_dev.jsonl"):
            if not q["gold"]:
                continue
            golds = [(g["source_id"], g["quote"]) for g in q["gold"]]

            def relevant(hit: service.Hit, golds: list[tuple[str, str]] = golds) -> bool:
                return any(hit.source_id == sid and quote in hit.text for sid, quote in golds)

            reachable += any(
                loaded.rows.source_ids[i] == sid and quote in loaded.rows.texts[i]
                for sid, quote in golds for i in range(*loaded.documents[sid]["rows"])
            )
            items.append((q["question"], relevant))
    result = evaluate(app, items)
    return {"n": len(items), "gold_quote_inside_one_chunk": round(reachable / max(len(items), 1), 4), **result}


def paragraph_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the blank-line-separated paragraphs (TimeQA's ``gold.para`` indexes these)."""
    spans, start = [], 0
    for match in _PARA_BREAK.finditer(text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    return spans


def timeqa(root: Path, data: Path, limit: int | None = None, encoder: str | None = None) -> dict[str, Any]:
    """TimeQA dev: a hit is a retrieved chunk that covers the gold paragraph (at least half of it, or 100 chars)."""
    docs_path = data / "eval" / "timeqa_dev_docs.jsonl"
    app = bench_workspace(root, "timeqa", encoder)
    ensure_documents(app, [docs_path])
    ensure_index(app)
    spans = {d["_id"]: paragraph_spans(d["content"]) for d in read_jsonl(docs_path)}
    items = []
    for n, q in enumerate(read_jsonl(data / "eval" / "timeqa_dev_qa.jsonl")):
        if limit is not None and n >= limit:
            break
        golds = []
        for g in q["gold"]:
            doc_spans = spans.get(g["doc_id"])
            if doc_spans is not None and g["para"] < len(doc_spans):
                golds.append((g["doc_id"], *doc_spans[g["para"]]))
        if not golds:
            continue

        def relevant(hit: service.Hit, golds: list[tuple[str, int, int]] = golds) -> bool:
            for sid, start, end in golds:
                overlap = min(hit.end, end) - max(hit.start, start)
                if hit.source_id == sid and overlap >= min(100, (end - start) / 2):
                    return True
            return False

        items.append((q["question"], relevant))
    return {"n": len(items), **evaluate(app, items)}


def run(root: Path, data: Path, timeqa_limit: int | None = None, encoder: str | None = None) -> dict[str, Any]:
    datasets = {"historian_qa_dev": historian_qa(root, data, encoder),
                "timeqa_dev": timeqa(root, data, timeqa_limit, encoder)}
    for result in datasets.values():
        modes = {m: result[m]["recall@6"] for m in MODES}
        result["hybrid_beats_both_at_recall@6"] = modes["hybrid"] > modes["bm25"] and modes["hybrid"] > modes["dense"]
    return {"datasets": datasets}
