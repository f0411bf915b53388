"""Lexical search over whole documents: which documents could hold a claim's support (no index needed)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from historian_blueprint.index.bm25 import BM25Index
from historian_blueprint.schema import SourceText
from historian_blueprint.text.words import tokenize


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
