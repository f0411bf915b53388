"""The retrieval interface: what every search backend gives the graphs, the verifier and the pages.

A ``Retriever`` searches one collection's passages: ``search(query, k, filters)`` returns ``Hit``s carrying the
source id, the exact offsets and the scores; ``status()`` says whether it is ``building`` (nothing to search yet),
``serving`` (meanings and words) or ``lexical-only`` (words: a first build before its vectors, or a backend of
words alone), with its generation and what it searches (documents, years, collections); ``authors_named(name)``
counts the searched documents a name is the author of (a question "what did Lincoln say" is about his own words)
and ``years_of(name)`` their years (a question about a year's message the collection lacks is told so).
Backends register by name (``@backend("local")``) and ``HISTORIAN_RETRIEVAL_BACKEND`` picks one; a new backend is
one module with one decorated factory (docs/architecture.md). Shipped: ``local`` (FAISS + BM25 over the serving
generation: hybrid, or words only while its vectors are made), ``lexical`` (words only, no encoder loaded) and
``atlas`` (MongoDB ``$vectorSearch`` and ``$search``; index/atlas.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from historian_blueprint.index.retriever import Filters, Hit, LoadedIndex, Mode

State = Literal["building", "serving", "lexical-only"]


@dataclass(frozen=True)
class RetrieverStatus:
    state: State
    generation: int | None = None
    documents: int = 0
    years: list[int] = field(default_factory=list)  # [first, last] of what it searches, when known
    collections: list[str] = field(default_factory=list)  # the collections it searches (the ask form's filter)


@runtime_checkable
class Retriever(Protocol):
    """What a search backend offers."""

    def search(self, query: str, k: int, filters: Filters = Filters(), mode: Mode = "hybrid") -> list[Hit]:
        """The ``k`` best passages for the query (``mode``: a backend of one kind answers every mode its way)."""

    def status(self) -> RetrieverStatus:
        """Building, serving or lexical-only, with the generation and its extent."""

    def authors_named(self, name: str) -> int:
        """How many searched documents ``name`` picks out as author or narrator (0: nobody's byline here)."""

    def years_of(self, name: str) -> list[int]:
        """The years of the searched documents ``name`` picks out as author or narrator, each once, in order (a
        question about "Roosevelt's 1933 message" is told which years the collection holds)."""


Factory = Callable[[Any], Retriever]  # (the Flask app) -> a retriever for this request
BACKENDS: dict[str, Factory] = {}


def backend(name: str) -> Callable[[Factory], Factory]:
    """Register a retriever factory under ``name`` (the value of HISTORIAN_RETRIEVAL_BACKEND that selects it)."""
    def register(factory: Factory) -> Factory:
        BACKENDS[name] = factory
        return factory
    return register


def _status(loaded: LoadedIndex, lexical: bool) -> RetrieverStatus:
    extent = loaded.extent
    return RetrieverStatus("lexical-only" if lexical or not loaded.dense else "serving", loaded.number,
                           extent["documents"], list(extent["years"]), list(extent["collections"]))


class _Generation:
    """What the two backends over a local generation share: its bylines."""

    loaded: LoadedIndex

    def authors_named(self, name: str) -> int:
        return self.loaded.authors_named(name)

    def years_of(self, name: str) -> list[int]:
        return self.loaded.years_of(name)


class LocalRetriever(_Generation):
    """FAISS + BM25 over the serving generation, fused with the configured weights; words only (BM25) while a
    first build's vectors are made."""

    def __init__(self, loaded: LoadedIndex, encode: Callable[[str], Any], dense_weight: float, bm25_weight: float):
        self.loaded, self.encode = loaded, encode
        self.dense_weight, self.bm25_weight = dense_weight, bm25_weight

    def search(self, query: str, k: int, filters: Filters = Filters(), mode: Mode = "hybrid") -> list[Hit]:
        vector = self.encode(query) if mode != "bm25" and self.loaded.dense else None
        return self.loaded.search(query, vector, top_k=k, mode=mode, dense_weight=self.dense_weight,
                                  bm25_weight=self.bm25_weight, filters=filters)

    def status(self) -> RetrieverStatus:
        return _status(self.loaded, lexical=False)


class LexicalRetriever(_Generation):
    """Words only (BM25) over the serving generation: no encoder is loaded, every mode is answered by words."""

    def __init__(self, loaded: LoadedIndex) -> None:
        self.loaded = loaded

    def search(self, query: str, k: int, filters: Filters = Filters(), mode: Mode = "hybrid") -> list[Hit]:
        return self.loaded.search(query, None, top_k=k, mode="bm25", dense_weight=0.0, bm25_weight=1.0,
                                  filters=filters)

    def status(self) -> RetrieverStatus:
        return _status(self.loaded, lexical=True)
