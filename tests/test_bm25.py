"""BM25: the sparse implementation gives rank-bm25's BM25Okapi scores on the same tokens."""

from __future__ import annotations

import json

import numpy as np
from rank_bm25 import BM25Okapi

from historian_blueprint.index.bm25 import BM25Index, tokenize
from tests.conftest import REPO


def test_scores_equal_rank_bm25_on_real_text():
    with open(REPO / "historian_blueprint/demo/corpus/wpa_slave_narratives.jsonl", encoding="utf-8") as fh:
        docs = [json.loads(line)["content"] for line in list(fh)[:40]]
    chunks = [d[i:i + 700] for d in docs for i in range(0, len(d), 550)]
    tokens = [tokenize(c) for c in chunks]
    ours = BM25Index.build(tokens)
    reference = BM25Okapi(tokens)
    for query in ("cotton plantation master", "freedom came after the war", "meat meat hog", "zzzunknown"):
        q = tokenize(query)
        np.testing.assert_allclose(ours.scores(q), reference.get_scores(q), rtol=1e-4, atol=1e-4)


def test_tokenizer_drops_stopwords_and_folds_plurals():
    assert tokenize("The Railroads of the Companies") == ["railroad", "company"]


def test_save_and_load_round_trip(tmp_path):
    index = BM25Index.build([tokenize("railroad strike"), tokenize("cotton crop"), tokenize("war news")])
    index.save(tmp_path)
    again = BM25Index.load(tmp_path)
    np.testing.assert_allclose(again.scores("railroad"), index.scores("railroad"))
    assert again.scores("railroad")[0] > 0 and again.scores("railroad")[1] == 0
