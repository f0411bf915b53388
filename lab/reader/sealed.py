"""The reader's sealed sets, measured once: the model beside the rules and the bundled bi-encoder, on the same items.

    python lab/reader/sealed.py --model historian_blueprint/verify/reader_model [--sealed tests/data/sealed]

Prints figures only, never an item (the sets were written by someone who does not train the model, and are read by
this program alone):
- ``reader_claims.jsonl`` (a claim against a period passage: supported / contradicted / neither): the rules'
  verdict (the product's verifier, the claim cited at the passage), the model's p(entails) and p(contradicts), the
  bi-encoder's cosine; ROC-AUC of each for "supported", precision/coverage at the thresholds given, and the model's
  contradiction precision and recall;
- ``reader_questions.jsonl`` (a question and a window of sentences, one or two answering): whether the first
  sentence is an answering one, ranked by the product's extractive scorer, by the bi-encoder, by the model;
- ``reader_pairs.jsonl`` (two statements: agree / disagree / unrelated): the model's contradiction (either order)
  precision and recall for "disagree", and the bi-encoder's cosine AUC for "agree or disagree" against "unrelated".
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from evaluate import Reader, auc  # noqa: E402 - this folder's measuring tools

SEALED = ROOT / "tests" / "data" / "sealed"


def corpus() -> dict[str, str]:
    out = {}
    for path in sorted((ROOT / "historian_blueprint" / "demo" / "corpus").glob("*.jsonl")):
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                doc = json.loads(line)
                out[doc["_id"]] = doc["content"]
    return out


def read(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def cosine(encoder: Any, left: list[str], right: list[str]) -> np.ndarray:
    a, b = encoder.encode(left), encoder.encode(right)
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return (a * b).sum(axis=1)


def at(scores: np.ndarray, truth: np.ndarray, threshold: float) -> dict[str, float | int]:
    called = scores >= threshold
    return {"threshold": threshold, "called": int(called.sum()),
            "precision": round(float(truth[called].mean()), 3) if called.any() else None,
            "coverage": round(float(called[truth].mean()), 3) if truth.any() else None,
            "false_called": int((called & ~truth).sum())}


def _verdicts(items: list[dict[str, Any]], texts: dict[str, str], with_reader: bool) -> list[str]:
    from historian_blueprint.schema import Cited, SourceText
    from historian_blueprint.verify import reader as product_reader
    from historian_blueprint.verify.grounding import verify_claim

    was = product_reader.reader_in_use()
    product_reader.use_reader(with_reader)
    try:
        return [verify_claim(i["claim"], [SourceText(i["source_id"], texts[i["source_id"]], "")],
                             [Cited(i["source_id"], i["start"], i["end"])]).verdict for i in items]
    finally:
        product_reader.use_reader(was)


def _verifier_figures(verdicts: list[str], truth: np.ndarray, contra: np.ndarray,
                      items: list[dict[str, Any]]) -> dict[str, Any]:
    supported = np.array([v == "supported" for v in verdicts])
    contradicted = np.array([v in ("contradicted", "misquote", "misattributed") for v in verdicts])
    paraphrase = np.array([i.get("kind") == "paraphrase" for i in items])
    return {"supported_called": int(supported.sum()), "false_supported": int((supported & ~truth).sum()),
            "false_supported_rate": round(float(supported[~truth].mean()), 3),
            "coverage": round(float(supported[truth].mean()), 3),
            "paraphrase_coverage": round(float(supported[paraphrase].mean()), 3) if paraphrase.any() else None,
            "contradicted_called": int(contradicted.sum()),
            "contradiction_precision": round(float(contra[contradicted].mean()), 3) if contradicted.any() else None,
            "contradiction_recall": round(float(contradicted[contra].mean()), 3),
            "false_supported_by_kind": {k: int(sum(1 for i, c in zip(items, supported & ~truth) if c
                                               and f"{i['label']}/{i.get('kind')}" == k))
                                        for k in sorted({f"{i['label']}/{i.get('kind')}" for i in items})
                                        if any(c and f"{i['label']}/{i.get('kind')}" == k
                                               for i, c in zip(items, supported & ~truth))}}


def claims(items: list[dict[str, Any]], texts: dict[str, str], reader: Reader | None, encoder: Any,
           thresholds: list[float]) -> dict[str, Any]:
    truth = np.array([i["label"] == "supported" for i in items])
    contra = np.array([i["label"] == "contradicted" for i in items])
    out: dict[str, Any] = {
        "n": len(items), "supported": int(truth.sum()), "contradicted": int(contra.sum()),
        "rules": _verifier_figures(_verdicts(items, texts, False), truth, contra, items),
        "product": _verifier_figures(_verdicts(items, texts, True), truth, contra, items),
    }
    cos = cosine(encoder, [i["passage"] for i in items], [i["claim"] for i in items])
    out["bi_encoder"] = {"auc_supported": auc(cos, truth)}
    if reader is not None:
        probs, _ = reader.run([(i["passage"], i["claim"]) for i in items])
        said = probs.argmax(axis=1)
        out["model"] = {"auc_supported": auc(probs[:, 0], truth), "at": [at(probs[:, 0], truth, t) for t in thresholds],
                        "contradiction_precision": (round(float(contra[said == 1].mean()), 3)
                                                    if (said == 1).any() else None),
                        "contradiction_recall": round(float((said == 1)[contra].mean()), 3)}
        kinds: dict[str, list[bool]] = {}
        for item, p in zip(items, probs[:, 0]):
            kinds.setdefault(f"{item['label']}/{item['kind']}", []).append(bool(p >= thresholds[0]))
        out["model"]["called_supported_by_kind"] = {k: f"{sum(v)}/{len(v)}" for k, v in sorted(kinds.items())}
    return out


def questions(items: list[dict[str, Any]], texts: dict[str, str], reader: Reader | None,
              encoder: Any) -> dict[str, Any]:
    from historian_blueprint.questions.reading import read_question
    from historian_blueprint.ask.roles.extractive import extract

    from historian_blueprint.verify import reader as product_reader

    was = product_reader.reader_in_use()
    firsts: dict[str, list[bool]] = {"rules": [], "product": [], "bi_encoder": [], "model": []}
    for item in items:
        content = texts[item["source_id"]]
        spans = [(s["start"], s["end"]) for s in item["sentences"]]
        sentences = [content[s:e] for s, e in spans]
        answering = set(item["answer"])
        start, end = spans[0][0], spans[-1][1]
        hit = {"source_id": item["source_id"], "title": "", "author": None, "year": None, "start": start,
               "end": end, "text": content[start:end], "locator": "", "score": 1.0}
        for name, on in (("rules", False), ("product", True)):
            product_reader.use_reader(on)
            facts = extract(read_question(item["question"]), [hit])
            first = None
            if facts:
                at_ = facts[0].start
                first = next((n for n, (s, e) in enumerate(spans) if s <= at_ < e), None)
            firsts[name].append(first in answering)
        product_reader.use_reader(was)
        cos = cosine(encoder, [item["question"]] * len(sentences), sentences)
        firsts["bi_encoder"].append(int(cos.argmax()) in answering)
        if reader is not None:
            _, logits = reader.run([(item["question"], s) for s in sentences])
            firsts["model"].append(int(logits.argmax()) in answering)
    return {"n": len(items), **{k: f"{sum(v)}/{len(v)} ({sum(v) / len(v):.2f})" for k, v in firsts.items() if v}}


def pairs(items: list[dict[str, Any]], reader: Reader | None, encoder: Any) -> dict[str, Any]:
    a = [i["a"]["text"] for i in items]
    b = [i["b"]["text"] for i in items]
    disagree = np.array([i["label"] == "disagree" for i in items])
    related = np.array([i["label"] != "unrelated" for i in items])
    out: dict[str, Any] = {"n": len(items), "disagree": int(disagree.sum()),
                           "bi_encoder": {"auc_related": auc(cosine(encoder, a, b), related)}}
    out["map_compare"] = {name: _compared(items, encoder, on) for name, on in (("rules", False), ("product", True))}
    if reader is not None:
        forward, _ = reader.run(list(zip(a, b)))
        backward, _ = reader.run(list(zip(b, a)))
        said = (forward.argmax(axis=1) == 1) | (backward.argmax(axis=1) == 1)
        out["model"] = {"called_disagree": int(said.sum()),
                        "precision": round(float(disagree[said].mean()), 3) if said.any() else None,
                        "recall": round(float(said[disagree].mean()), 3),
                        "auc_disagree": auc(np.maximum(forward[:, 1], backward[:, 1]), disagree)}
    return out


def _compared(items: list[dict[str, Any]], encoder: Any, with_reader: bool) -> dict[str, Any]:
    """The map's compare step on each pair (the two texts as two sources): a conflict between them or not."""
    from historian_blueprint.mapping.compare import compare
    from historian_blueprint.mapping.nlp import read_passages
    from historian_blueprint.verify import reader as product_reader

    was = product_reader.reader_in_use()
    product_reader.use_reader(with_reader)
    said = []
    try:
        for item in items:
            statements = []
            for side in ("a", "b"):
                text = item[side]["text"]
                statements += read_passages(f"pair-{side}", text, [(0, len(text))]).statements
            said.append(bool(compare(statements, encoder.encode).conflicts))
    finally:
        product_reader.use_reader(was)
    said_ = np.array(said)
    disagree = np.array([i["label"] == "disagree" for i in items])
    return {"called_disagree": int(said_.sum()),
            "precision": round(float(disagree[said_].mean()), 3) if said_.any() else None,
            "recall": round(float(said_[disagree].mean()), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, default=None, help="the exported reader (without: rules and bi-encoder)")
    parser.add_argument("--sealed", type=Path, default=SEALED)
    parser.add_argument("--threshold", type=float, action="append", default=None,
                        help="p(entails) thresholds to report (fitted on fit halves elsewhere; repeatable)")
    args = parser.parse_args()
    from historian_blueprint.index.embedding import get_embedder

    reader = Reader(args.model) if args.model else None
    encoder = get_embedder(None, "exact")
    texts = corpus()
    out = {
        "claims": claims(read(args.sealed / "reader_claims.jsonl"), texts, reader, encoder,
                         args.threshold or [0.5, 0.8, 0.9]),
        "questions": questions(read(args.sealed / "reader_questions.jsonl"), texts, reader, encoder),
        "pairs": pairs(read(args.sealed / "reader_pairs.jsonl"), reader, encoder),
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
