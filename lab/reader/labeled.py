"""The reader on the project's labeled files, alone (a development figure: these files are the project's development
sets, split into fit and check halves by item id; the threshold is fitted on the fit half only).

    python lab/reader/labeled.py --model historian_blueprint/verify/reader_model [--eval DIR]

For each item: p(entails) of the claim against its evidence, read as the verifier would read a cited passage: the
cited span when the item names one, else the best of the document's windows of three sentences (the maximum over
windows). The threshold is the lowest p at which the fit half's false-supported rate stays within the limit the
verifier uses for that file; the check half then gives false-supported and coverage at it, and the ROC-AUC.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from evaluate import Reader, auc  # noqa: E402 - after the path above
from historian_lab.evaluation.harness import half  # noqa: E402 - the product's own fit/check split
from historian_blueprint.text.spans import sentence_spans  # noqa: E402 - after the path above
from historian_blueprint.verify.combination import DEFAULT_FALSE_SUPPORTED_LIMIT, FALSE_SUPPORTED_LIMITS  # noqa: E402 - after the path above

FILES = ("historian_claims_dev", "halueval_qa_dev", "begin_dev", "wice_dev")


def windows(text: str, size: int = 3) -> list[str]:
    spans = list(sentence_spans(text)) or [(0, len(text))]
    return [text[spans[i][0]:spans[min(i + size, len(spans)) - 1][1]] for i in range(0, len(spans), max(1, size - 1))]


def evidence(item: dict, corpus: dict[str, str]) -> list[str]:
    if item.get("cited"):
        return [corpus[c["source_id"]][c["start"]:c["end"]] for c in item["cited"] if c["source_id"] in corpus]
    return [w for d in item["documents"] for w in windows(d.get("content") or corpus.get(d["_id"], ""))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--eval", type=Path, default=ROOT.parent / "shared" / "data" / "eval")
    args = parser.parse_args()
    reader = Reader(args.model)
    from sealed import corpus as sample_corpus

    texts = sample_corpus()
    out = {}
    for name in FILES:
        path = args.eval / f"{name}.jsonl"
        if not path.exists():
            continue
        items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        pairs, owner = [], []
        for n, item in enumerate(items):
            claim = f"{item['question']} {item['claim']}" if item.get("question") else item["claim"]
            for window in evidence(item, texts) or [""]:
                pairs.append((window, claim))
                owner.append(n)
        probs, _ = reader.run(pairs)
        best = np.full(len(items), -1.0)
        for n, p in zip(owner, probs[:, 0]):
            best[n] = max(best[n], float(p))
        truth = np.array([item["label"] == "supported" for item in items])
        halves = np.array([half(item) for item in items])
        limit = FALSE_SUPPORTED_LIMITS.get(name, DEFAULT_FALSE_SUPPORTED_LIMIT)
        fit, check = halves == "fit", halves == "check"
        threshold = 1.0
        for t in sorted(set(np.round(best[fit], 4)), reverse=True):
            called = fit & (best >= t)
            if (called & ~truth).sum() / max(1, (fit & ~truth).sum()) > limit:
                break
            threshold = float(t)
        called = check & (best >= threshold)
        out[name] = {
            "n_check": int(check.sum()), "threshold_from_fit": round(threshold, 4),
            "check_false_supported": round(float((called & ~truth).sum() / max(1, (check & ~truth).sum())), 3),
            "check_coverage": round(float((called & truth).sum() / max(1, (check & truth).sum())), 3),
            "check_auc": auc(best[check], truth[check]),
        }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
