"""Where the grounding checks find documents: a fixed set, a store, and a lexical document search."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from historian_blueprint.index.bm25 import BM25Index, tokenize
from historian_blueprint.verify.grounding import SourceText


class DocumentSearch:
    """BM25 over whole documents: finds which documents could hold a claim's support."""

    def __init__(self, documents: Iterable[SourceText], k: int = 5) -> None:
        self.documents = list(documents)
        self.by_id = {d.source_id: d for d in self.documents}
        self.k = k
        self.bm25 = BM25Index.build([tokenize(f"{d.title} {d.text}") for d in self.documents])

    def __call__(self, query: str) -> Sequence[SourceText]:
        if not self.documents:
            return []
        scores = self.bm25.scores(query)
        top = np.argsort(-scores)[: self.k]
        return [self.documents[i] for i in top if scores[i] > 0]


def from_store(store, ids: Iterable[str] | None = None) -> list[SourceText]:
    """Read documents from a Store as SourceTexts (all of them, or the given ids)."""
    docs = [store.get_document(i) for i in ids] if ids is not None else store.iter_documents()
    return [SourceText(d.id, d.text, d.title, d.author) for d in docs if d is not None]
