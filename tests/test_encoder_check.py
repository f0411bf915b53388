"""A build whose vectors are not the exact model's on a CPU (int8, static, a GPU) reports how far its search is from
that model's (index/agreement.py); a build by the exact model reports nothing and changes nothing."""

from __future__ import annotations

import pytest

from historian_blueprint import get_store
from historian_blueprint.index import agreement, embedding, service
from historian_blueprint.index import generation as gen
from tests.conftest import make_plain_app, small_docs
from tests.test_index import run_reindex


def build(tmp_path, encoder, **config):
    app = make_plain_app(tmp_path / encoder, small_docs(per_file=8, chars=8000), HISTORIAN_INDEX_ENCODER=encoder,
                         HISTORIAN_INDEX_ENCODER_CHECK=120, HISTORIAN_API_TOKENS={"tok": {"role": "admin"}}, **config)
    job = run_reindex(app)
    assert job["state"] == "succeeded", job
    return app, job


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    root = tmp_path_factory.mktemp("checks")
    return {encoder: build(root, encoder) for encoder in ("int8", "static")}


def test_a_build_by_a_coarser_encoder_reports_a_larger_recall_cost(builds):
    found = {}
    for encoder, (app, job) in builds.items():
        check = job["encoder_check"]
        with app.app_context():
            serving = gen.current_generation(get_store())
            manifest = service.get_index().manifest
        assert check == manifest["encoder_check"] == serving["encoder_check"]
        assert check["encoder"] == embedding.get_embedder(None, encoder).name and check["device"] == "cpu"
        assert check["against"] == "all-MiniLM-L6-v2 on the CPU" and check["chunks"] == 120 and check["probes"] == 12
        found[encoder] = check
        assert job["timings"]["check_s"] > 0
    # int8 vectors are within rounding of the model's; the static table only near them: a cost a user must see
    assert found["int8"]["cosine"] > 0.97 and found["int8"]["recall_at_10"] >= 0.8
    assert found["static"]["cosine"] < found["int8"]["cosine"] - 0.1
    assert found["static"]["recall_at_10"] < found["int8"]["recall_at_10"]


def test_the_exact_model_reports_nothing(tmp_path):
    app, job = build(tmp_path, "auto")
    assert job["encoder_check"] is None and "check_s" in job["timings"]
    with app.app_context():
        assert service.get_index().manifest["encoder_check"] is None
    assert not agreement.needed("auto", embedding.get_embedder(None, "auto"))
    gpu = type("GPU", (), {"device": "cuda", "name": "all-MiniLM-L6-v2"})()
    assert agreement.needed("auto", gpu)  # the same model on a GPU is checked against the CPU's vectors


def test_a_small_incremental_build_keeps_the_check_and_a_failed_check_does_not_fail_the_build(builds, monkeypatch):
    app, first = builds["int8"]
    with app.app_context():
        get_store().documents.insert_one({"_id": "late", "title": "Late", "content": "A short late page. " * 20})
    job = run_reindex(app)
    assert job["state"] == "succeeded" and job["counts"]["new"] == 1
    assert job["encoder_check"] == first["encoder_check"]  # one chunk is no sample: the serving one is kept

    def broken(*args, **kwargs):
        raise OSError("no exact model here")

    monkeypatch.setattr(embedding, "get_embedder", broken)
    with app.app_context():
        get_store().documents.update_one({"_id": "late"}, {"$set": {"content": "A page rewritten at length. " * 4000}})
    job = run_reindex(app)
    assert job["state"] == "succeeded"
    assert "not measured" in job["encoder_check"]["error"] and "recall_at_10" not in job["encoder_check"]
    monkeypatch.undo()  # the exact model is back: the next build, though smaller than a sample, measures again
    with app.app_context():
        get_store().documents.insert_one({"_id": "later", "title": "Later", "content": "Another page of text. " * 500})
    job = run_reindex(app)
    assert job["state"] == "succeeded" and "error" not in job["encoder_check"]
    assert 10 < job["encoder_check"]["chunks"] < 120 and 0 <= job["encoder_check"]["recall_at_10"] <= 1


def test_the_check_reuses_the_meaning_model_when_it_runs_on_the_cpu(monkeypatch):
    from types import SimpleNamespace

    import numpy as np

    asked = []
    model = SimpleNamespace(name="all-MiniLM-L6-v2", device="cpu", encode=lambda texts, batch_size=32: np.eye(
        len(texts), 16, dtype=np.float32))
    monkeypatch.setattr(embedding, "get_embedder", lambda path, kind, cache, device: asked.append(device) or model)
    settings = SimpleNamespace(model_path=None, encoder_cache=None, device="auto", encoder="int8", encoder_check=50)
    built = SimpleNamespace(name="all-MiniLM-L6-v2-int8", device="cpu", encode=model.encode)
    encoded = SimpleNamespace(vectors={"d": np.eye(30, 16, dtype=np.float32)}, broken={})
    check = agreement.for_build(settings, built, {"d": [f"text {i} of a page" for i in range(30)]}, encoded, None)
    assert asked == ["auto"] and check["chunks"] == 30  # the model meanings use (device auto, on a CPU): not a copy


def test_the_admin_page_shows_the_encoder_and_its_cost(builds):
    app, job = builds["static"]
    page = app.test_client().get("/historian/admin/reindex", headers={"Authorization": "Bearer tok"})
    assert page.status_code == 200
    page = page.get_data(as_text=True)
    assert "all-MiniLM-L6-v2-static" in page and "top 10 agree with the exact model" in page
    assert f"{round(100 * job['encoder_check']['recall_at_10'])}%" in page
