"""Measure an exported reader (int8 ONNX, as it would ship) on held-out pairs: each training source's held 5%, and
ANLI dev (never trained on, non-commercial: a check only).

    python lab/reader/evaluate.py --model historian_blueprint/verify/reader_model [--limit 600] [--json]

Per source, for the nli head: 3-way accuracy where the source has three labels; "entails" against the rest as the
verifier uses it (precision, recall and ROC-AUC of p(entails)); where the source has contradictions, precision and
recall of "contradicts" as the arg-max. For the answer head: ROC-AUC and, per question, whether the best-scored
sentence answers it (top-1). Prints a table; figures go to docs/verification.md with the date and machine.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from historian_blueprint.verify import reader as S  # noqa: E402 - the lab imports the product

NLI = ("entails", "contradicts", "neither")


class Reader:
    """The exported model: nli probabilities and answer logits of many pairs, batched by length."""

    def __init__(self, folder: Path) -> None:
        import onnxruntime as ort

        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        self.tokenizer = S.load_tokenizer(folder / "tokenizer.json", int(meta.get("max_tokens", 160)))
        options = ort.SessionOptions()
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"])

    def run(self, pairs: list[tuple[str, str]], batch: int = 32) -> tuple[np.ndarray, np.ndarray]:
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        nli = np.zeros((len(pairs), 3), np.float32)
        answer = np.zeros(len(pairs), np.float32)
        for start in range(0, len(order), batch):
            chunk = order[start:start + batch]
            ids, mask, types = S.encode(self.tokenizer, [pairs[i][0] for i in chunk], [pairs[i][1] for i in chunk])
            logits, answers = self.session.run(None,
                                               {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})
            exp = np.exp(logits - logits.max(axis=1, keepdims=True))
            nli[chunk] = exp / exp.sum(axis=1, keepdims=True)
            answer[chunk] = answers
        return nli, answer


def auc(scores: np.ndarray, positive: np.ndarray) -> float | None:
    """ROC-AUC by ranks (ties share their mean rank); None without both classes."""
    pos, neg = int(positive.sum()), int((~positive).sum())
    if not pos or not neg:
        return None
    order = scores.argsort(kind="stable")
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    for value in np.unique(scores):
        same = scores == value
        ranks[same] = ranks[same].mean()
    return float((ranks[positive].sum() - pos * (pos + 1) / 2) / (pos * neg))


def measure(reader: Reader, pairs: list[dict[str, Any]]) -> dict[str, Any]:
    nli_pairs = [p for p in pairs if p["task"] == "nli"]
    answer_pairs = [p for p in pairs if p["task"] == "answer" and p.get("unit", "sentence") == "sentence"]
    out: dict[str, Any] = {}
    if nli_pairs:
        probs, _ = reader.run([(p["a"], p["b"]) for p in nli_pairs])
        labels = [p["label"] for p in nli_pairs]
        entails = np.array([label == "entails" for label in labels])
        said = probs.argmax(axis=1)
        out["n"] = len(nli_pairs)
        three = [i for i, label in enumerate(labels) if label in NLI]
        if {labels[i] for i in three} >= {"contradicts", "neither"}:
            out["accuracy_3way"] = round(float(np.mean([NLI[said[i]] == labels[i] for i in three])), 3)
        called = said == 0
        out["entails_precision"] = round(float(entails[called].mean()), 3) if called.any() else None
        out["entails_recall"] = round(float(called[entails].mean()), 3) if entails.any() else None
        out["entails_auc"] = auc(probs[:, 0], entails)
        contradicts = np.array([label == "contradicts" for label in labels])
        if contradicts.any():
            flagged = said == 1
            out["contradicts_precision"] = round(float(contradicts[flagged].mean()), 3) if flagged.any() else None
            out["contradicts_recall"] = round(float(flagged[contradicts].mean()), 3)
    if answer_pairs:
        _, logits = reader.run([(p["a"], p["b"]) for p in answer_pairs])
        answers = np.array([p["label"] == "answers" for p in answer_pairs])
        out["answer_n"] = len(answer_pairs)
        out["answer_auc"] = auc(logits, answers)
        by_question: dict[str, list[int]] = defaultdict(list)
        for i, p in enumerate(answer_pairs):
            by_question[p["a"]].append(i)
        tops = [answers[max(rows, key=lambda r: logits[r])] for rows in by_question.values() if answers[rows].any()]
        out["answer_top1"] = round(float(np.mean(tops)), 3) if tops else None
        out["questions"] = len(tops)
    return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--limit", type=int, default=None, help="at most N pairs per source, spread over its file")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    reader = Reader(args.model)
    sets: dict[str, list[dict[str, Any]]] = defaultdict(list)
    with gzip.open(args.data / "held.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            pair = json.loads(line)
            sets[pair.get("source") or pair["id"].rsplit("-", 1)[0]].append(pair)
    anli = HERE / "sources" / "anli_dev_check.jsonl.gz"
    if anli.exists():
        with gzip.open(anli, "rt", encoding="utf-8") as fh:
            sets["anli_dev (check only)"] = [json.loads(line) for line in fh]
    spread = ((lambda rows: rows[:: max(1, len(rows) // args.limit)][: args.limit]) if args.limit
              else (lambda rows: rows))
    results = {name: measure(reader, spread(rows)) for name, rows in sorted(sets.items())}
    if args.json:
        print(json.dumps(results, indent=1))
        return
    columns = ("n", "accuracy_3way", "entails_precision", "entails_recall", "entails_auc", "contradicts_precision",
               "contradicts_recall", "answer_n", "answer_auc", "answer_top1")
    print("set".ljust(26) + "".join(c.replace("_", " ")[:11].rjust(12) for c in columns))
    for name, row in results.items():
        print(name.ljust(26) + "".join(("" if row.get(c) is None else f"{row[c]}").rjust(12) for c in columns))


if __name__ == "__main__":
    main()
