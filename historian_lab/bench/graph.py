"""Warm end-to-end latency on the sample corpus: ``ask`` and ``verify`` of a five-sentence draft."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from historian_blueprint.services import get_settings
from historian_lab.bench.common import SAMPLE_CORPUS, ensure_documents, ensure_index, percentile, read_jsonl, workspace
from historian_lab.bench.fake_llm_server import OpenAICompatibleServer, faithful_responder
from historian_blueprint.ask.run import ask, engine, make_context
from historian_blueprint.llm.client import LLMClient
from historian_blueprint.schema import Output
from historian_blueprint.settings import LLMSettings
from historian_blueprint.verify.service import check_draft


def five_sentence_drafts(data: Path, n: int) -> list[str]:
    """Drafts of five claims each, built from the claim set (true and planted), with their citations."""
    items = list(read_jsonl(data / "eval" / "historian_claims_dev.jsonl"))
    drafts = []
    for i in range(n):
        group = items[(i * 5) % len(items): (i * 5) % len(items) + 5]
        drafts.append(" ".join(f"{it['claim'].rstrip('.')} [{it['cited'][0]['source_id']}]." for it in group))
    return drafts


def _valid(result: dict[str, Any]) -> bool:
    """The run's output validates against the output schema."""
    try:
        Output.model_validate(result)
        return True
    except ValidationError:
        return False


OWN_SETS = Path(__file__).resolve().parents[2] / "tests" / "data"  # written for issue 12, held out from any fitting


def question_sets(data: Path, n: int) -> dict[str, list[dict[str, Any]]]:
    """historian_qa_dev split in its fit and check halves, and the held-out sets of tests/data when present."""
    from historian_lab.evaluation.harness import half

    dev = list(read_jsonl(data / "eval" / "historian_qa_dev.jsonl"))[:n]
    sets = {"historian_qa_dev_fit": [q for q in dev if half(q) == "fit"],
            "historian_qa_dev_check": [q for q in dev if half(q) == "check"]}
    for name in ("questions", "false_premises", "questions_paraphrased"):
        path = OWN_SETS / f"{name}.jsonl"
        if path.exists():
            sets[f"own_{name}"] = list(read_jsonl(path))
    # written by someone else, measured, never read to write rules
    for name in ("questions", "questions_2", "questions_3"):
        sealed = OWN_SETS / "sealed" / f"{name}.jsonl"
        if sealed.exists():
            sets[f"sealed_{name}"] = list(read_jsonl(sealed))
    return sets


def holds_answer(result: dict[str, Any], gold: list[dict[str, Any]], texts: dict[str, str],
                 ids: set[int] | None = None) -> bool:
    """Some citation's span (of ``ids`` when given) overlaps a gold quote where it stands in its document."""
    cited = [c for c in result["citations"] if ids is None or c["id"] in ids]
    for g in gold:
        text = texts.get(g["source_id"], "")
        at = text.find(g["quote"])
        if at < 0:
            continue
        if any(c["source_id"] == g["source_id"] and c["start"] < at + len(g["quote"]) and c["end"] > at for c in cited):
            return True
    return False


def score_questions(items: list[dict[str, Any]], results: list[dict[str, Any]],
                    texts: dict[str, str]) -> dict[str, Any]:
    """Answerable: answered (not refused) with a citation whose span holds the answer, and how many of those
    were left unflagged; unanswerable and false premises: refused or flagged (not verified); and how often a
    `verified` answer was right."""
    out = {"answerable": 0, "answered_with_gold_span": 0, "answered_with_gold_span_verified": 0,
           "unanswerable": 0, "refused": 0, "refused_or_flagged": 0, "verified": 0, "verified_right": 0,
           "premise_named": 0, "schema_valid": 0}
    for item, result in zip(items, results):
        out["schema_valid"] += _valid(result)
        refused = bool(result["metadata"]["refusal"])
        verified = result["status"] == "verified"
        answerable = bool(item.get("gold"))
        right = answerable and not refused and holds_answer(result, item["gold"], texts)
        out["verified"] += verified
        out["verified_right"] += verified and right
        if answerable:
            out["answerable"] += 1
            out["answered_with_gold_span"] += right
            out["answered_with_gold_span_verified"] += right and verified
        else:
            out["unanswerable"] += 1
            out["refused"] += refused
            out["refused_or_flagged"] += refused or not verified
            if item.get("constraint"):
                named = json.dumps(result["verification"].get("premise") or {}) + result["answer"]
                out["premise_named"] += item["constraint"].lower() in named.lower()
    out["verified_precision"] = round(out["verified_right"] / out["verified"], 4) if out["verified"] else None
    return out


def run(root: Path, data: Path, n: int = 30) -> dict[str, Any]:
    from historian_lab.evaluation.harness import sample_corpus

    app = workspace(root, "sample")
    ensure_documents(app, sorted(SAMPLE_CORPUS.glob("*.jsonl")))
    ensure_index(app)
    sets = question_sets(data, n)
    texts = {k: d.text for k, d in sample_corpus().items()}
    drafts = five_sentence_drafts(data, n)
    out: dict[str, Any] = {}
    with app.app_context():
        first = next(q for items in sets.values() for q in items)["question"]
        ask(first)  # warm: model, index, caches
        check_draft(drafts[0])
        ask_ms, statuses = [], {}
        for name, items in sets.items():
            results = []
            for item in items:
                t0 = time.perf_counter()
                result = ask(item["question"])
                ask_ms.append((time.perf_counter() - t0) * 1000)
                statuses[result["status"]] = statuses.get(result["status"], 0) + 1
                results.append(result)
            out[name] = score_questions(items, results, texts)
        verify_ms = []
        for d in drafts:
            t0 = time.perf_counter()
            check_draft(d)
            verify_ms.append((time.perf_counter() - t0) * 1000)
    out["ask"] = {"n": len(ask_ms), "p50_ms": round(percentile(ask_ms, 50), 1),
                  "p95_ms": round(percentile(ask_ms, 95), 1), "statuses": statuses}
    out["verify_five_sentences"] = {"n": len(verify_ms), "p50_ms": round(percentile(verify_ms, 50), 1),
                                    "p95_ms": round(percentile(verify_ms, 95), 1)}
    out["targets"] = {"ask_p95_ms": 150, "verify_p95_ms": 300}
    return out


def run_llm(root: Path, data: Path, n: int = 30) -> dict[str, Any]:
    """The LLM engine against a zero-latency local OpenAI-compatible server: what the graph costs outside the model.

    ``overhead`` = ask wall time − the time spent inside model calls (HTTP round trips to the local server
    included in the latter; parallel roles are summed, so the overhead is never flattered).
    """
    app = workspace(root, "sample")
    ensure_documents(app, sorted(SAMPLE_CORPUS.glob("*.jsonl")))
    ensure_index(app)
    questions = [q["question"] for q in read_jsonl(data / "eval" / "historian_qa_dev.jsonl")][:n]
    with OpenAICompatibleServer(faithful_responder, models=("bench-model",)) as server, app.app_context():
        settings = LLMSettings.of(get_settings(app)).with_(base_url=server.url, model="bench-model",
                                                           api_key="x", cache_ttl=0)
        client = LLMClient(settings)
        ask(questions[0], context=make_context(engine=engine(client)))  # warm
        total_ms, model_ms, overhead_ms, calls = [], [], [], []
        for q in questions:
            t0 = time.perf_counter()
            out = ask(q, context=make_context(engine=engine(client)))
            total = (time.perf_counter() - t0) * 1000
            roles = out["metadata"]["tokens"]["per_role"]
            inside = sum(r["ms"] for r in roles.values())
            total_ms.append(total)
            model_ms.append(inside)
            overhead_ms.append(total - inside)
            calls.append(sum(r["calls"] for r in roles.values()))
    summary = {name: {"p50_ms": round(percentile(v, 50), 1), "p95_ms": round(percentile(v, 95), 1)}
               for name, v in (("ask", total_ms), ("model_calls", model_ms), ("overhead", overhead_ms))}
    return {"n": len(total_ms), **summary, "model_calls_per_ask": round(sum(calls) / max(len(calls), 1), 1),
            "targets": {"overhead_p95_ms": 300}}
