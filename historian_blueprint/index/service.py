"""The index's front door, as the app sees it: the configured embedder, the serving generation, retrieval,
reindex jobs and the errors callers handle. Web pages, commands, the graph and verification use this
module only, never the index's other modules.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from flask import Flask, current_app

from historian_blueprint.services import Services, get_settings, get_services, get_store, provide
from historian_blueprint.config import ConfigError
from historian_blueprint.index import jobs
from historian_blueprint.index.atlas import AtlasRetriever, export_chunks
from historian_blueprint.index.builder import context_header, indexed_text
from historian_blueprint.index.documents import DocumentSearch
from historian_blueprint.index.embedding import APPROXIMATE, Embedder, get_embedder
from historian_blueprint.index.generation import IndexDamaged, IndexMismatch, current_generation
from historian_blueprint.index.jobs import ReindexBusy
from historian_blueprint.index.retriever import Filters, Hit, IndexHolder, IndexNotBuilt, LoadedIndex, Mode, rerank
from historian_blueprint.index.retrievers import (
    BACKENDS, LexicalRetriever, LocalRetriever, Retriever, RetrieverStatus, backend,
)
from historian_blueprint.schema import SourceText
from historian_blueprint.settings import IndexSettings, RetrievalSettings, read

__all__ = [
    "DocumentSearch", "Filters", "Hit", "IndexDamaged", "IndexMismatch", "IndexNotBuilt", "IndexSettings",
    "ReindexBusy",
    "BACKENDS", "Retriever", "RetrieverStatus", "atlas_chunks", "backend", "backend_named", "export_chunks",
    "retriever",
    "context_header", "current_generation", "documents_changed", "embedder", "failed_documents", "find_job",
    "get_index", "holder", "index_dir", "indexed_text", "preload", "recent_jobs", "retrieve", "run_claimed",
    "request_build", "search_documents", "start_reindex", "take_follow_up",
]


def index_dir(app: Flask | None = None) -> Path:
    return get_services(app).data_dir / "index"


def embedder(app: Flask | None = None) -> Embedder:
    """Return the configured search encoder (HISTORIAN_INDEX_ENCODER: the exact fp32 ONNX export by default, the
    shipped int8 graph when chosen), the one that embeds the index and the queries."""
    settings = read(IndexSettings, get_settings(app))
    return get_embedder(settings.model_path, settings.encoder, settings.encoder_cache, settings.device)


def meaning(app: Flask | None = None) -> Embedder:
    """The encoder that compares statements by meaning (the map's conflicts, a comparison's sides): the configured
    model's exact vectors (fp32 ONNX, else PyTorch), whose thresholds were fit on them; the index's int8 or static
    encoder is for search only."""
    settings = read(IndexSettings, get_settings(app))
    if settings.encoder not in APPROXIMATE:  # the search encoder gives the exact vectors: one model in memory
        return embedder(app)
    return get_embedder(settings.model_path, "exact", settings.encoder_cache, settings.device)


def holder(app: Flask | None = None) -> IndexHolder:
    state = get_services(app)
    if "index_holder" not in state.extras:
        state.extras["index_holder"] = IndexHolder(index_dir(app))
    return state.extras["index_holder"]


def get_index() -> LoadedIndex:
    """Return the serving generation (raises IndexNotBuilt / IndexMismatch with what to do)."""
    loaded = holder().get(get_store())
    if loaded.dense:  # a words-only generation needs no encoder (a first build serves before the model loads)
        model = embedder()
        loaded.check_model(model.name, model.dimension)
    return loaded


def index_health(app: Flask | None = None) -> dict[str, Any]:
    """The serving index as health and the admin page report it. ``state``: ``ok``; ``not_built``; ``mismatch`` (built
    with another model); ``damaged`` (the generation named to serve is damaged and no earlier good one is on disk:
    nothing is searched); ``serving_previous`` (it is damaged and an earlier good generation serves meanwhile). With
    the damaged files and the command that rebuilds."""
    held = holder(app)
    try:
        loaded = held.get(get_store())
        if loaded.dense:  # as every search checks it (the encoder loads once per process)
            model = embedder(app)
            loaded.check_model(model.name, model.dimension)
    except IndexDamaged:
        pass
    except IndexNotBuilt:
        return {"state": "not_built"}
    except IndexMismatch as exc:
        return {"state": "mismatch", "message": str(exc)}
    health = held.health()
    state = "ok" if not health.damage else ("serving_previous" if health.serving is not None else "damaged")
    return {"state": state, **health.as_dict()}


def search_status() -> dict[str, Any]:
    """How the serving generation searches: ``dense`` false while a first build's vectors are made (words only,
    BM25), with ``vectors_built``, the share of them made so far (None when no build is running); the model the
    generation's vectors come from."""
    loaded = holder().get(get_store())
    status: dict[str, Any] = {"dense": loaded.dense, "model": loaded.manifest["model"]["name"]}
    if not loaded.dense:
        running = get_store().jobs.find_one({"kind": "reindex", "state": "running"}, {"phase": 1, "progress": 1})
        progress = (running or {}).get("progress") or {}
        done = progress.get("total") and (running or {}).get("phase") == "embed"
        status["vectors_built"] = round(progress["done"] / progress["total"], 3) if done else None
    return status


def backend_named(name: str) -> Any:
    """The factory of the retrieval backend registered as ``name``; ConfigError naming the known ones if none is."""
    factory = BACKENDS.get(name)
    if factory is None:
        raise ConfigError(f"HISTORIAN_RETRIEVAL_BACKEND={name!r}: not one of {', '.join(sorted(BACKENDS))}")
    return factory


def retriever(app: Flask | None = None) -> Retriever:
    """The configured search backend (HISTORIAN_RETRIEVAL_BACKEND) for this request."""
    return backend_named(get_settings(app).retrieval_backend)(app or current_app)


def serving(app: Flask | None = None) -> Retriever | None:
    """The configured backend, or None while there is nothing to search (no generation yet, or one built with
    another model): the one place that tells "not built" from a backend to ask."""
    try:
        return retriever(app)
    except (IndexNotBuilt, IndexMismatch):
        return None


def generation(app: Flask | None = None) -> int | None:
    """The generation the search backend serves (None before one, or for a backend without generations)."""
    searched = serving(app)
    return searched.status().generation if searched else None


@provide("retriever")
def _retriever_service(services: Services) -> Retriever:
    return retriever(services.app)


def retrieve(
    query: str,
    *,
    top_k: int | None = None,
    rerank_k: int | None = None,
    mode: Mode = "hybrid",
    filters: Filters = Filters(),
) -> list[Hit]:
    """Rank passages for a query with the configured backend; rerank to ``rerank_k`` when given."""
    hits = retriever().search(query, top_k or get_settings().retrieval_top_k, filters, mode)
    return rerank(hits, rerank_k) if rerank_k else hits


def _weights(app: Flask) -> dict[str, float]:
    settings = read(RetrievalSettings, get_settings(app))
    return {"dense_weight": settings.dense_weight, "bm25_weight": settings.bm25_weight}


def _encode(app: Flask) -> Any:
    """The search encoder as a backend uses it: one query in, its vector out."""
    return lambda query: embedder(app).encode([query])[0]


def atlas_chunks(app: Flask | None = None) -> Any:
    """The `atlas` backend's chunk collection (HISTORIAN_RETRIEVAL_ATLAS_COLLECTION, else ``<prefix>chunks``)."""
    settings = get_settings(app)
    return get_store().database[settings.retrieval_atlas_collection or f"{settings.collection_prefix}chunks"]


@backend("local")
def _local(app: Flask) -> Retriever:
    return LocalRetriever(get_index(), _encode(app), **_weights(app))


@backend("lexical")
def _lexical(app: Flask) -> Retriever:
    return LexicalRetriever(holder(app).get(get_store()))  # no encoder: words only, whatever the generation holds


@backend("atlas")
def _atlas(app: Flask) -> Retriever:
    settings = get_settings(app)
    return AtlasRetriever(atlas_chunks(app), _encode(app), vector_index=settings.retrieval_atlas_vector_index,
                          search_index=settings.retrieval_atlas_search_index, **_weights(app))


def preload(app: Flask) -> dict[str, Any]:
    """Load, before a pre-forking server (gunicorn ``preload_app``) forks its workers, what every worker would
    otherwise load for itself: the serving generation, the search encoder's model (its session only: nothing is
    encoded, so no Python thread starts; ONNX Runtime's own native thread is why serving.worker_exit exists), the
    exact model that compares meanings when the search encoder is another (int8, static) and the spaCy pipeline. The
    workers then share these pages with the master until they write to them. Connections to the store are closed:
    each worker opens its own."""
    from historian_blueprint.text import parse

    loaded: dict[str, Any] = {"generation": None, "encoder": None}
    with app.app_context():
        try:
            index = get_index()
            loaded["generation"] = index.number
            if index.dense:
                loaded["encoder"] = embedder(app).name
        except (IndexNotBuilt, IndexMismatch):  # the workers load it when it is built
            pass
        if read(IndexSettings, get_settings(app)).encoder in APPROXIMATE:  # meanings: the exact model's
            loaded["meaning"] = meaning(app).name
    parse.pipeline()
    get_services(app).stores.close()
    return loaded


def search_documents(documents: Sequence[SourceText], k: int = 5) -> DocumentSearch:
    """A lexical search over these documents, for when no index generation serves."""
    return DocumentSearch(documents, k=k)


# ----------------------------------------------------------------------------- reindex jobs
def start_reindex(*, full: bool = False, retry_failed: bool = False, user: str | None = None,
                  background: bool = True) -> str:
    """Claim and start a reindex job; in the background (a thread) by default. Return the job id."""
    app = current_app._get_current_object()
    store = get_store()
    only = jobs.failed_documents(store) if retry_failed else None
    if retry_failed and not only:
        raise ValueError("the last reindex had no failed documents to retry")
    job_id = jobs.claim(store, full=full, only=only, user=user)
    if not background:
        return job_id

    def work() -> None:
        with app.app_context():
            own = get_services(app).stores.open()
            try:
                current = job_id
                while current:  # documents written during a build are picked up by one more incremental build
                    try:
                        jobs.run(own, current, index_dir(app), read(IndexSettings, get_settings(app)),
                                 lambda: embedder(app))
                    except Exception:  # recorded in the job by jobs.run
                        pass
                    holder(app).invalidate()
                    current = _follow_up(own)
            finally:
                own.close()
                holder(app).invalidate()

    threading.Thread(target=work, name=f"historian-reindex-{job_id[:8]}", daemon=True).start()
    return job_id


def documents_changed() -> str | None:
    """The host's hook after it writes documents (insert, update, delete): bring the index in step in the
    background, by an incremental build (only new and changed documents are embedded). Return the job started, or
    None when a build is running: one more incremental build follows it (in this process, or at the end of the
    ``historian sync`` / ``reindex`` that runs it). The request is recorded before the claim is tried, and a build
    clears it only when it starts reading the documents, so no write is left out."""
    request_build()
    try:
        return start_reindex(user="sync")
    except ReindexBusy:
        return None


def request_build() -> None:
    """Record that documents changed: the next build to start reads them, or one follows the running build."""
    get_store().meta.update_one({"_id": jobs.SYNC_ID}, {"$set": {"pending": True}}, upsert=True)


def _follow_up(store: Any) -> str | None:
    """Claim the incremental build asked for while the last one ran, if one was asked for."""
    asked = store.meta.find_one({"_id": jobs.SYNC_ID, "pending": True})
    if not asked:
        return None  # (the flag is cleared by the build that claims, when it starts reading)
    try:
        return jobs.claim(store, user="sync")
    except ReindexBusy:  # someone else's build started meanwhile: it reads the same documents
        return None


def take_follow_up() -> str | None:
    """For a command that ran a build itself: claim the build documents_changed() asked for meanwhile."""
    return _follow_up(get_store())


def run_claimed(job_id: str, progress_store: Any = None) -> Any:
    """Run a claimed job in the calling thread (the CLI)."""
    app = current_app._get_current_object()
    try:
        return jobs.run(progress_store or get_store(), job_id, index_dir(app), read(IndexSettings, get_settings(app)),
                        lambda: embedder(app))
    finally:
        holder(app).invalidate()


def find_job(job_id: str) -> dict[str, Any] | None:
    """A reindex job's record (without its traceback), or None."""
    job = get_store().jobs.find_one({"_id": job_id}, {"traceback": 0})
    return jobs.settled(get_store(), job) if job is not None else None


def failed_documents() -> list[str]:
    """The documents the last reindex could not index (what "retry failed" would retry)."""
    return jobs.failed_documents(get_store())


def recent_jobs(limit: int = 20) -> list[dict[str, Any]]:
    """The latest reindex jobs, newest first."""
    return jobs.recent(get_store(), limit)
