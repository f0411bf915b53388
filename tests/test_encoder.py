"""The ONNX Runtime encoder gives the sentence-transformers vectors; ``auto`` falls back to PyTorch."""

from __future__ import annotations

import json

import numpy as np
import pytest

from historian_lab.bench.common import SAMPLE_CORPUS
from historian_blueprint.index import embedding
from historian_blueprint.index.chunking import chunk_document
from historian_blueprint.index.fast_encoder import FastEncoder, FastEncoderError


def _texts() -> list[str]:
    with open(sorted(SAMPLE_CORPUS.glob("*.jsonl"))[0], encoding="utf-8") as fh:
        doc = json.loads(fh.readline())
    chunks = [c.text for c in chunk_document(doc["_id"], doc["content"], 700, 150)][:40]
    return chunks + [
        "", "word " * 400,  # empty, and longer than the model's 256-token limit (truncated the same way)
        "Émile Zola écrivit « J'accuse » en 1898.", "東京の歴史資料", "tab\there\x00control\x1b chars",
    ]


def test_onnx_vectors_match_sentence_transformers():
    texts = _texts()
    fast = embedding.get_embedder(None, "onnx")
    assert isinstance(fast, FastEncoder) and fast.name == "all-MiniLM-L6-v2" and fast.dimension == 384
    want = embedding.Embedder(None).encode(texts, batch_size=8)
    got = fast.encode(texts, batch_size=8)
    assert got.shape == want.shape == (len(texts), 384)
    assert float(np.min(np.sum(got * want, axis=1))) > 0.99999
    assert float(np.max(np.abs(got - want))) < 1e-4
    # order is kept whatever the batching
    np.testing.assert_allclose(fast.encode(texts[::-1], batch_size=3)[::-1], got, atol=1e-5)


def test_auto_falls_back_to_pytorch_and_onnx_does_not(monkeypatch, tmp_path, caplog):
    def broken(*args, **kwargs):
        raise FastEncoderError("exported ONNX graph disagrees with torch")

    monkeypatch.setattr("historian_blueprint.index.fast_encoder.FastEncoder", broken)
    model = embedding.load_embedder(None, "auto", str(tmp_path))
    assert isinstance(model, embedding.Embedder)
    assert "encoding with PyTorch" in caplog.text
    with pytest.raises(FastEncoderError, match="disagrees"):
        embedding.load_embedder(None, "onnx", str(tmp_path))


def test_the_shipped_int8_encoder_is_close_to_fp32_and_never_mixed_with_it(tmp_path):
    """HISTORIAN_INDEX_ENCODER=int8: the shipped graph loads without an export, names itself apart (a generation it
    built asks for a full reindex under fp32), and its vectors stay near the exact ones."""
    from historian_blueprint.index.generation import IndexMismatch
    from historian_blueprint.index.retriever import LoadedIndex

    texts = _texts()
    int8 = embedding.get_embedder(None, "int8")
    exact = embedding.get_embedder(None, "onnx")
    assert int8.name == "all-MiniLM-L6-v2-int8" != exact.name and int8.onnx_path == embedding.INT8_GRAPH
    cosine = np.sum(int8.encode(texts) * exact.encode(texts), axis=1)
    assert float(cosine.min()) > 0.97 and float(cosine.mean()) > 0.985
    with pytest.raises(FastEncoderError, match="bundled"):
        embedding.load_embedder(str(tmp_path), "int8")
    index = LoadedIndex.__new__(LoadedIndex)
    index.manifest = {"model": {"name": int8.name, "dimension": 384}}
    with pytest.raises(IndexMismatch, match="reindex --full"):
        index.check_model(exact.name, exact.dimension)
