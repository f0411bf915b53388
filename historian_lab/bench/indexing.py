"""Indexing throughput: full build vs raw encode of the same chunks, no-op and 1%-change reindex."""

from __future__ import annotations

import math
import random
import time
from pathlib import Path
from typing import Any

from historian_blueprint.services import get_settings, get_store
from historian_lab.bench.common import SAMPLE_CORPUS, ensure_documents, ensure_index, workspace
from historian_blueprint.index import service

CHANGE_MARK = " [Benchmark edit: this sentence was appended to change the document.]"


def run(root: Path, limit_docs: int | None = None, seed: int = 7) -> dict[str, Any]:
    app = workspace(root, "index_bench")
    ensure_documents(app, sorted(SAMPLE_CORPUS.glob("*.jsonl")))
    with app.app_context():
        store = get_store()
        # undo the edits of an interrupted earlier run
        for doc in store.documents.find({"content": {"$regex": "Benchmark edit"}}):
            store.documents.update_one({"_id": doc["_id"]},
                                       {"$set": {"content": doc["content"].replace(CHANGE_MARK, "")}})
        if limit_docs is not None:
            ids = sorted(d["_id"] for d in store.documents.find({}, {"_id": 1}))
            store.documents.delete_many({"_id": {"$in": ids[limit_docs:]}})
        n_docs = store.count_documents()

    full = ensure_index(app, full=True)
    with app.app_context():
        loaded = service.get_index()
        # the raw encode sees exactly what the build encoded: each chunk with its context header
        use_header = loaded.manifest.get("context_header", False)
        texts = [
            service.indexed_text(service.context_header(loaded.documents[s]) if use_header else "", t)
            for s, t in zip(loaded.rows.source_ids, loaded.rows.texts)
        ]
        model = service.embedder()
        batch = get_settings(app).index_batch_size
        t0 = time.perf_counter()
        model.encode(texts, batch_size=batch)
        raw_s = time.perf_counter() - t0

    noop = ensure_index(app)

    with app.app_context():
        store = get_store()
        ids = sorted(d["_id"] for d in store.documents.find({}, {"_id": 1}))
        changed = random.Random(seed).sample(ids, max(1, math.ceil(0.01 * len(ids))))
        originals = {}
        for doc_id in changed:
            doc = store.documents.find_one({"_id": doc_id})
            originals[doc_id] = doc["content"]
            store.documents.update_one({"_id": doc_id}, {"$set": {"content": doc["content"] + CHANGE_MARK}})
    one_percent = ensure_index(app)
    with app.app_context():
        store = get_store()
        for doc_id, content in originals.items():
            store.documents.update_one({"_id": doc_id}, {"$set": {"content": content}})

    full_s = full["timings"]["total_s"]
    chunks = full["counts"]["chunks"]
    return {
        "documents": n_docs,
        "chunks": chunks,
        "full_build_s": round(full_s, 2),
        "full_build_chunks_per_s": round(chunks / full_s, 2),
        "full_build_encode_s": round(full["timings"]["encode_s"], 2),
        "raw_encode_s": round(raw_s, 2),
        "raw_encode_chunks_per_s": round(len(texts) / raw_s, 2),
        "build_over_raw_encode": round(full_s / raw_s, 3),
        "noop_reindex_s": round(noop["timings"]["total_s"], 3),
        "noop_over_full": round(noop["timings"]["total_s"] / full_s, 4),
        "one_percent_docs_changed": len(changed),
        "one_percent_reindex_s": round(one_percent["timings"]["total_s"], 2),
        "one_percent_embedded_chunks": one_percent["counts"]["embedded_chunks"],
        "one_percent_over_full": round(one_percent["timings"]["total_s"] / full_s, 4),
        "targets": {"build_over_raw_encode": 1.3, "noop_over_full": 0.03, "one_percent_over_full": 0.10},
    }
