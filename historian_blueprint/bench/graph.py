"""Warm end-to-end latency on the sample corpus: ``ask`` and ``verify`` of a five-sentence draft."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from historian_blueprint.bench.common import SAMPLE_CORPUS, ensure_documents, ensure_index, percentile, read_jsonl, workspace
from historian_blueprint.bench.fake_llm_server import OpenAICompatibleServer, faithful_responder
from historian_blueprint.graph.run import ask, engine, make_context
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


def run(root: Path, data: Path, n: int = 30) -> dict[str, Any]:
    app = workspace(root, "sample")
    ensure_documents(app, sorted(SAMPLE_CORPUS.glob("*.jsonl")))
    ensure_index(app)
    items = list(read_jsonl(data / "eval" / "historian_qa_dev.jsonl"))[:n]
    questions = [q["question"] for q in items]
    drafts = five_sentence_drafts(data, n)
    out: dict[str, Any] = {}
    qa = {"answerable": 0, "answered": 0, "cited_gold_source": 0, "unanswerable": 0, "refused": 0, "schema_valid": 0}
    with app.app_context():
        ask(questions[0])  # warm: model, index, caches
        check_draft(drafts[0])
        ask_ms, statuses = [], {}
        for item in items:
            t0 = time.perf_counter()
            result = ask(item["question"])
            ask_ms.append((time.perf_counter() - t0) * 1000)
            statuses[result["status"]] = statuses.get(result["status"], 0) + 1
            qa["schema_valid"] += _valid(result)
            if item.get("gold"):
                qa["answerable"] += 1
                qa["answered"] += bool(result["citations"]) and not result["metadata"]["refusal"]  # not an error either
                gold = {g["source_id"] for g in item["gold"]}
                qa["cited_gold_source"] += any(c["source_id"] in gold for c in result["citations"])
            else:
                qa["unanswerable"] += 1
                qa["refused"] += bool(result["metadata"]["refusal"])
        verify_ms = []
        for d in drafts:
            t0 = time.perf_counter()
            check_draft(d)
            verify_ms.append((time.perf_counter() - t0) * 1000)
    out["ask"] = {"n": len(ask_ms), "p50_ms": round(percentile(ask_ms, 50), 1), "p95_ms": round(percentile(ask_ms, 95), 1), "statuses": statuses}
    out["historian_qa"] = qa
    out["verify_five_sentences"] = {"n": len(verify_ms), "p50_ms": round(percentile(verify_ms, 50), 1), "p95_ms": round(percentile(verify_ms, 95), 1)}
    out["targets"] = {"ask_p95_ms": 2000, "verify_p95_ms": 1000}
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
        settings = LLMSettings.from_config(app.config).with_(base_url=server.url, model="bench-model", api_key="x", cache_ttl=0)
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
