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


def test_the_encoder_runs_on_a_gpu_only_where_one_can_run_it(monkeypatch):
    import onnxruntime as ort

    monkeypatch.setattr(ort, "get_available_providers", lambda: ["CPUExecutionProvider"])
    assert embedding.device_for("auto", onnx=True) == "cpu"
    with pytest.raises(embedding.NoGPU, match="onnxruntime-gpu"):
        embedding.device_for("cuda", onnx=True)
    monkeypatch.setattr(ort, "get_available_providers", lambda: ["CUDAExecutionProvider", "CPUExecutionProvider"])
    assert embedding.device_for("auto", onnx=True) == "cuda"
    assert embedding.device_for("cpu", onnx=True) == "cpu"  # forced


def test_a_gpu_encoder_asks_onnx_runtime_for_its_cuda_provider(monkeypatch):
    """No GPU here: the session is opened on the CPU, and the test checks what was asked for and that it encodes as the
    CPU encoder does."""
    import onnxruntime as ort

    asked = []
    real_session = ort.InferenceSession

    def session(path, options, providers):
        asked.append(list(providers))
        return real_session(path, options, providers=["CPUExecutionProvider"])

    monkeypatch.setattr(ort, "get_available_providers", lambda: ["CUDAExecutionProvider", "CPUExecutionProvider"])
    monkeypatch.setattr(ort, "InferenceSession", session)
    gpu = embedding.load_embedder(None, "int8", device="auto")
    cpu = embedding.load_embedder(None, "int8", device="cpu")
    assert asked == [["CUDAExecutionProvider", "CPUExecutionProvider"], ["CPUExecutionProvider"]]
    assert gpu.device == "cuda" and gpu.workers == 1 and cpu.device == "cpu"
    texts = ["The Pacific railroad bill passed.", "Fellow-Citizens of the Senate and House of Representatives:" * 4]
    assert np.allclose(gpu.encode(texts), cpu.encode(texts), atol=1e-5)


def test_the_static_encoder_is_a_table_that_still_ranks_by_meaning():
    static = embedding.load_embedder(None, "static")
    texts = ["The Pacific railroad was finished and trains ran to the coast.",
             "Duties on imported wool were raised by the new tariff.", ""]
    vectors = static.encode(texts)
    assert vectors.shape == (3, 384) and np.allclose(np.linalg.norm(vectors[:2], axis=1), 1, atol=1e-5)
    assert not vectors[2].any()  # nothing to average: no direction
    assert np.array_equal(vectors, static.encode(texts))
    query = static.encode(["locomotives and the transcontinental line"])[0]
    assert query @ vectors[0] > query @ vectors[1]
    assert static.name == "all-MiniLM-L6-v2-static"  # a generation of its vectors is never searched with another's


def test_meanings_are_compared_with_the_exact_model_whatever_encoder_searches(tmp_path):
    from historian_blueprint.index import service
    from tests.conftest import make_plain_app

    for encoder in ("int8", "static"):
        app = make_plain_app(tmp_path / encoder, HISTORIAN_INDEX_ENCODER=encoder)
        with app.app_context():
            assert service.embedder().name != "all-MiniLM-L6-v2"  # the search encoder: another model's vectors
            assert service.meaning().name == "all-MiniLM-L6-v2"  # the map's thresholds were fit on these
