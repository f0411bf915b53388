"""Train the reader on a lent GPU for as many epochs over all the data as a time budget allows, then export it.

    python lab/reader/train_gpu.py --base BASE --out RUN --budget-s 170 [--exclude swap_names swap_figures]

The same model, heads, losses and data as ``train.py`` (it imports them), changed only where a GPU pays:
- the pairs are tokenized once, up front, and every epoch re-shuffles them into one-task batches (seed + epoch);
- bf16 autocast on CUDA; the nli loss vectorized;
- the number of steps is set from the rate since step 10 (after the GPU's warm-up) and the budget, re-estimated every
  500 steps, and the final count written to ``run.json``, with a linear warm-up (``--warmup`` steps) and decay over
  exactly those steps, so that ``--steps N`` repeats a run without the budget;
- no checkpoints in between (a lent machine is held for minutes, not hours): the weights at the end only.

The device machine has torch, transformers, tokenizers and onnxruntime but not the product's dependencies, so this
script imports nothing from ``historian_blueprint``: its tokenizer call is the product's (``verify/reader.py``
``load_tokenizer``/``encode``: no padding, longest-first truncation of the pair), checked equal by the smoke run
(``--check-codec``, here). ``--export`` writes int8 ONNX as ``train.export`` does (inputs and outputs as the
product's reader reads them) with ``meta.json``; ``--split`` cuts ``model.onnx`` into parts under 16 MiB for the
trip back (``cat model.onnx.part-* > model.onnx``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from train import NLI, batches, build_model, export_meta, read_pairs, write_int8_onnx  # noqa: E402 - this folder, after the path above

log = logging.getLogger("reader.train_gpu")


def load_tokenizer(path: Path, max_len: int) -> Any:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path))
    tok.no_padding()
    tok.enable_truncation(max_length=max_len, strategy="longest_first")
    return tok


def pad(encoded: list[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    width = max(len(e[0]) for e in encoded)
    ids = np.zeros((len(encoded), width), dtype=np.int64)
    mask, types = np.zeros_like(ids), np.zeros_like(ids)
    for row, (i, m, t) in enumerate(encoded):
        ids[row, :len(i)], mask[row, :len(i)], types[row, :len(i)] = i, m, t
    return ids, mask, types


def tokenized(tokenizer: Any, pairs: list[dict[str, Any]]) -> list[tuple[list[int], list[int], list[int]]]:
    out = []
    for start in range(0, len(pairs), 4096):
        chunk = pairs[start:start + 4096]
        for e in tokenizer.encode_batch([(p["a"], p["b"]) for p in chunk]):
            out.append((e.ids, e.attention_mask, e.type_ids))
    return out


def epoch_batches(pairs: list[dict[str, Any]], size: int, seed: int, epoch: int) -> list[list[int]]:
    """One epoch's one-task batches, shuffled anew each epoch (``train.batches`` with the seed and the epoch)."""
    return batches(pairs, size, f"{seed}:{epoch}")


def nli_targets(labels: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Class index per row (-1 for "not_entails") and whether the row is a two-way "does not entail"."""
    two_way = np.array([label == "not_entails" for label in labels])
    return np.array([-1 if label == "not_entails" else NLI[label] for label in labels]), two_way


def loss_of(task: str, labels: list[str], nli_logits: Any, answer_logits: Any) -> Any:
    """``train.loss_of`` vectorized: the same losses."""
    import torch

    if task == "answer":
        target = torch.tensor([1.0 if label == "answers" else 0.0 for label in labels], device=answer_logits.device)
        return torch.nn.functional.binary_cross_entropy_with_logits(answer_logits.float(), target)
    classes, two_way = nli_targets(labels)
    log_p = torch.log_softmax(nli_logits.float(), dim=-1)
    index = torch.from_numpy(np.where(two_way, 0, classes)).to(log_p.device)
    picked = log_p.gather(1, index.unsqueeze(1)).squeeze(1)
    not_entails = -torch.log1p(-picked.exp().clamp(max=1 - 1e-6))
    return torch.where(torch.from_numpy(two_way).to(log_p.device), not_entails, -picked).mean()


def train(args: argparse.Namespace) -> dict[str, Any]:
    import torch

    torch.manual_seed(args.seed)
    device = torch.device(args.device if args.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu"))
    tokenizer = load_tokenizer(args.base / "tokenizer.json", args.max_tokens)
    pairs = [p for p in read_pairs([args.data / "train.jsonl.gz"], args.limit_per_task)
             if (p.get("source") or "") not in set(args.exclude)]
    t0 = time.time()
    tokens = tokenized(tokenizer, pairs)
    log.warning("%d pairs tokenized in %.1f s", len(pairs), time.time() - t0)
    model = build_model(args.base).to(device).float()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    per_epoch = len(epoch_batches(pairs, args.batch, args.seed, 0))
    steps = args.steps or 10**9
    warmup = args.warmup
    scale = lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / max(1, steps - warmup)))  # noqa: E731
    model.train()
    step, epoch, seen, start = 0, 0, 0, time.time()
    timed = start
    autocast = (torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda"
                else torch.autocast("cpu", enabled=False))
    while step < steps:
        for batch in epoch_batches(pairs, args.batch, args.seed, epoch):
            if step >= steps:
                break
            if not args.steps and (step in (10, 40) or (step > 40 and step % 500 == 0)):
                # the run's length from the rate since step 10 (after the GPU's warm-up) and the time left,
                # re-estimated every 500 steps (the rate climbs as the kernels for each length are ready)
                if device.type == "cuda":
                    torch.cuda.synchronize()
                if step == 10:
                    timed = time.time()
                else:
                    rate = (step - 10) / (time.time() - timed)
                    steps = max(60, int(rate * (args.budget_s - (time.time() - start))) + step)
                    log.warning("%.1f steps/s: %d steps (%.2f epochs of %d batches)", rate, steps,
                                steps / per_epoch, per_epoch)
            for group in optimizer.param_groups:
                group["lr"] = args.lr * scale(step)
            ids, mask, types = (torch.from_numpy(x).to(device, non_blocking=True)
                                for x in pad([tokens[i] for i in batch]))
            with autocast:
                nli_logits, answer_logits = model(ids, mask, types)
            loss = loss_of(pairs[batch[0]]["task"], [pairs[i]["label"] for i in batch], nli_logits, answer_logits)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            seen += len(batch)
            if step % args.log_every == 0:
                log.warning("step %d/%d epoch %d loss %.4f  %.0f pairs/s", step, steps, epoch, float(loss),
                            seen / (time.time() - start))
        epoch += 1
    args.out.mkdir(parents=True, exist_ok=True)
    torch.save({"model": model.state_dict()}, args.out / "checkpoint.pt")
    counts: dict[str, int] = {}
    for pair in pairs:
        key = f"{pair.get('source')}:{pair['label']}"
        counts[key] = counts.get(key, 0) + 1
    summary = {"steps": steps, "epochs": round(steps / per_epoch, 2), "pairs": len(pairs),
               "train_seconds": round(time.time() - start),
               "device": torch.cuda.get_device_name() if device.type == "cuda" else "cpu",
               "counts": dict(sorted(counts.items())),
               "settings": {"batch": args.batch, "warmup": args.warmup, "lr": args.lr, "seed": args.seed,
                            "max_tokens": args.max_tokens,
                            "exclude": list(args.exclude), "budget_s": args.budget_s, "bf16": device.type == "cuda",
                            "data": {"train.jsonl.gz": _sha256(args.data / "train.jsonl.gz")}},
               "repeat": f"--steps {steps}"}
    (args.out / "run.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return summary


def _sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def export(args: argparse.Namespace) -> dict[str, Any]:
    """int8 ONNX of the run, as ``train.export`` writes it."""
    import torch

    model = build_model(args.base).float()
    model.load_state_dict(torch.load(args.out / "checkpoint.pt", map_location="cpu", weights_only=False)["model"])
    model.eval()
    to = args.export
    to.mkdir(parents=True, exist_ok=True)
    ids, mask, types = pad([(e.ids, e.attention_mask, e.type_ids) for e in load_tokenizer(
        args.base / "tokenizer.json",
        args.max_tokens).encode_batch([("The treaty was signed in 1848.", "A treaty was signed.")])])
    write_int8_onnx(model, (ids, mask, types), to / "model.onnx")
    shutil.copy(args.base / "tokenizer.json", to / "tokenizer.json")
    meta = export_meta(json.loads((args.out / "run.json").read_text(encoding="utf-8")), args.max_tokens,
                       to / "model.onnx", _sha256,
                       "python lab/reader/build_data.py && python lab/reader/train_gpu.py --base BASE --out RUN "
                       "--steps N [--exclude ...] && python lab/reader/train_gpu.py --base BASE --out RUN --export DIR")
    (to / "meta.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    if args.split:
        data = (to / "model.onnx").read_bytes()
        part = 15 * 2**20
        for n, offset in enumerate(range(0, len(data), part)):
            (to / f"model.onnx.part-{n}").write_bytes(data[offset:offset + part])
        (to / "model.onnx").unlink()
    return {k: meta[k] for k in ("model_sha256", "max_tokens")}


def check_codec(args: argparse.Namespace) -> None:
    """Here, with the product beside: this script tokenizes pairs exactly as ``verify/reader.py`` does."""
    sys.path.insert(0, str(HERE.parents[1]))
    from historian_blueprint.verify import reader as S

    pairs = read_pairs([args.data / "train.jsonl.gz"], 200)
    ours = pad(tokenized(load_tokenizer(args.base / "tokenizer.json", args.max_tokens), pairs))
    theirs = S.encode(S.load_tokenizer(args.base / "tokenizer.json", args.max_tokens), [p["a"] for p in pairs],
                      [p["b"] for p in pairs])
    assert all(np.array_equal(a, b) for a, b in zip(ours, theirs)), "the tokenizer call differs from the product's"
    print(f"codec: {len(pairs)} pairs tokenized as the product does")


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, required=True,
                        help="the MiniLM-L6 folder (config, weights, tokenizer.json)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--budget-s", type=float, default=170.0)
    parser.add_argument("--steps", type=int, default=None, help="a fixed number of steps instead of the budget")
    parser.add_argument("--exclude", nargs="*", default=[], help="sources left out (e.g. swap_names swap_figures)")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--warmup", type=int, default=300, help="steps of linear warm-up")
    parser.add_argument("--lr", type=float, default=4e-5)
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--limit-per-task", type=int, default=None)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--log-every", type=int, default=200)
    parser.add_argument("--export", type=Path, default=None)
    parser.add_argument("--split", action="store_true")
    parser.add_argument("--check-codec", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s")
    if args.check_codec:
        check_codec(args)
    elif args.export:
        print(json.dumps(export(args), indent=2))
    else:
        print(json.dumps(train(args), indent=2))


if __name__ == "__main__":
    main()
