"""Verification as the app sees it: documents from the store, the collection searched through the index."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from historian_blueprint.services import get_services, get_store
from historian_blueprint.index import service
from historian_blueprint.limits import Deadline
from historian_blueprint.schema import SourceText, Verification
from historian_blueprint.settings import Caps
from historian_blueprint.text.questions import CONTROL, clean_question
from historian_blueprint.verify.draft import verify_draft


def as_source(doc) -> SourceText:
    """A host document (store.Document) as the checks read it."""
    narrator = (getattr(doc, "extra", None) or {}).get("interviewee")
    return SourceText(doc.id, doc.text, doc.title, doc.author, str(narrator) if narrator else None)


def all_documents() -> list[SourceText]:
    """Every document of the collection."""
    return [as_source(d) for d in get_store().iter_documents()]


def document_getter():
    """Return a cached ``source_id -> SourceText`` reader for this request."""
    store = get_store()

    @lru_cache(maxsize=256)
    def get(source_id: str) -> SourceText | None:
        doc = store.get_document(source_id)
        return as_source(doc) if doc else None

    return get


def collection_search(get=None, k: int = 5):
    """Search the collection for documents that could hold a claim: the index when built, else BM25 over documents.

    ``get`` is the request's document reader, so that search results and citations share one cache."""
    get = get or document_getter()
    searched = service.serving()
    if searched is not None and searched.status().state != "building":
        def search(claim: str) -> Sequence[SourceText]:
            hits = service.retrieve(claim, top_k=k * 3)
            ids = list(dict.fromkeys(h.source_id for h in hits))[:k]
            return [d for d in map(get, ids) if d is not None]

        return search
    state = get_services()
    count = get_store().count_documents()
    cached = state.extras.get("document_search")
    if cached is None or cached[0] != count:
        cached = (count, service.search_documents(all_documents(), k=k))
        state.extras["document_search"] = cached
    return cached[1]


def check_draft(text: str, sources: Sequence[str] = (), question: str | None = None) -> Verification:
    """Verify a draft against the collection (the function the API and the CLI call); with ``question``, a
    bare yes or no is verified as the answer to it."""
    settings = get_services().settings
    limit = settings.limits_max_draft_chars
    text = CONTROL.sub("", text or "")  # NUL, ESC and the like are no part of a draft (line breaks are kept)
    if not text or not text.strip():
        raise ValueError("the draft is empty")
    if len(text) > limit:
        raise ValueError(f"the draft is {len(text)} characters; the limit is {limit} "
                         "(HISTORIAN_LIMITS_MAX_DRAFT_CHARS)")
    get = document_getter()
    unknown = [s for s in sources if get(s) is None]
    if unknown:
        raise ValueError(f"no document with id {', '.join(unknown)}")
    if question is not None and question.strip():
        question = clean_question(question, settings.limits_max_question_chars)
    deadline = Deadline(settings.limits_timeout_s)  # set before the search is made ready: that counts too
    return verify_draft(text, sources=sources, get_document=get, search=collection_search(get),
                        caps=Caps.of(settings), question=(question or "").strip() or None, deadline=deadline,
                        max_claims=settings.limits_max_claims)
