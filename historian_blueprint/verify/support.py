"""Is the claim supported: the scorer's reading of the best evidence windows, combined with what the
grounding rules measured, as one calibrated probability (DESIGN.md, "How verification is judged").

The combination is a logistic regression over a few features, followed by an isotonic calibration, both
fitted on the *fit* halves of the labeled files only (``historian train-checker --stage fit``) and stored in
``verify/model/combiner.json``. The hard rules may still contradict a claim the probability calls supported;
the probability never overrules a hard rule.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from historian_blueprint.schema import SourceText
from historian_blueprint.verify.scorer import MODEL_DIR, ScorerUnavailable, default_scorer
from historian_blueprint.verify.windows import WINDOW_CHARS, Window, windows

COMBINER_FILE = "combiner.json"
FEATURES = ("logit", "coverage", "known_words", "hard_failed", "has_question", "context_size", "claim_size")
MAX_DOCUMENTS = 3  # documents whose windows are read per claim (the cited ones first)


@dataclass(frozen=True)
class Reading:
    """What the scorer read: its best logit, the window it found it in, and that window's document."""

    logit: float
    window: Window | None
    source_id: str | None
    pairs: int


def read(claim: str, documents: Sequence[SourceText], cited: Sequence[tuple[str, int, int]] = (), focused: bool = False) -> Reading:  # noqa: E501
    """The scorer's best logit over the windows of the first documents (cited spans first). ``focused``: the
    cited region already holds the claim's words, so only the window around each citation is read."""
    scorer = default_scorer()
    jobs: list[tuple[SourceText, Window]] = []
    for doc in list(documents)[:MAX_DOCUMENTS]:
        spans = [(s, e) for source_id, s, e in cited if source_id == doc.source_id]
        located = any(e - s <= 2 * WINDOW_CHARS for s, e in spans)
        per_doc = 1 if focused and located else (3 if len(documents) == 1 else 2)
        jobs += [(doc, w) for w in windows(claim, doc.text, spans, per_doc)]
    if not jobs:
        return Reading(-10.0, None, None, 0)
    logits = scorer.score([(w.text, claim) for _, w in jobs])
    best = max(range(len(jobs)), key=logits.__getitem__)
    return Reading(logits[best], jobs[best][1], jobs[best][0].source_id, len(jobs))


def features(
    reading: Reading, coverage: float, known_words: float, hard_failed: bool, has_question: bool,
    n_sentences: int, claim_words: int,
) -> dict[str, float]:
    return {
        "logit": max(-10.0, min(10.0, reading.logit)) if math.isfinite(reading.logit) else -10.0,
        "coverage": coverage,
        "known_words": known_words,
        "hard_failed": float(hard_failed),
        "has_question": float(has_question),
        "context_size": math.log1p(n_sentences) / 5,
        "claim_size": min(claim_words, 60) / 30,
    }


@dataclass(frozen=True)
class Combiner:
    """Logistic regression then isotonic calibration; ``threshold`` on the calibrated probability."""

    weights: tuple[float, ...]
    bias: float
    iso_x: tuple[float, ...]
    iso_y: tuple[float, ...]
    threshold: float
    info: dict[str, Any]

    def raw(self, f: dict[str, float]) -> float:
        z = self.bias + sum(w * f[name] for w, name in zip(self.weights, FEATURES))
        if not math.isfinite(z):
            return 0.0  # a feature that is not a number never makes a claim supported
        return 1 / (1 + math.exp(-max(-30.0, min(30.0, z))))

    def contradicted(self, p: float) -> float:
        """A claim a hard rule contradicted is never more likely than the cut, whatever its features say."""
        return min(p, self.threshold * 0.99)

    def probability(self, f: dict[str, float]) -> float:
        if not self.iso_x:
            return self.raw(f)
        return float(np.interp(self.raw(f), self.iso_x, self.iso_y))

    def to_json(self) -> dict[str, Any]:
        return {"features": list(FEATURES), "weights": list(self.weights), "bias": self.bias,
                "isotonic": {"x": list(self.iso_x), "y": list(self.iso_y)}, "threshold": self.threshold, "info": self.info}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Combiner:
        if list(data["features"]) != list(FEATURES):
            raise ScorerUnavailable(f"combiner.json was fitted on features {data['features']}, not {list(FEATURES)}")
        return cls(tuple(data["weights"]), float(data["bias"]), tuple(data["isotonic"]["x"]), tuple(data["isotonic"]["y"]),
                   float(data["threshold"]), dict(data.get("info") or {}))


# Before a combiner is fitted: the scorer alone, as a plain sigmoid, with the usual cut.
UNFITTED = Combiner(tuple(1.0 if n == "logit" else (-4.0 if n == "hard_failed" else 0.0) for n in FEATURES), 0.0, (), (), 0.5,
                    {"fitted": False})


@lru_cache(maxsize=1)
def _combiner_at(path: Path) -> Combiner | ScorerUnavailable:
    if not path.exists():
        return UNFITTED
    try:
        combiner = Combiner.from_json(json.loads(path.read_text(encoding="utf-8")))
    except ScorerUnavailable as exc:
        return exc
    except Exception as exc:  # noqa: BLE001 - a corrupt file fails safe, it does not pass claims
        return ScorerUnavailable(f"{path} cannot be read: {type(exc).__name__}: {exc}")
    digest = combiner.info.get("model_sha256")
    if digest and digest != model_digest(path.parent):
        return ScorerUnavailable(f"{path} was fitted on another model: run `historian train-checker --stage fit`")
    return combiner


def default_combiner() -> Combiner:
    """The fitted combination beside the model (UNFITTED before one is fitted); raises ScorerUnavailable when it
    cannot be read or was fitted on another model."""
    found = _combiner_at(MODEL_DIR / COMBINER_FILE)
    if isinstance(found, ScorerUnavailable):
        raise found
    return found


def model_digest(directory: Path) -> str:
    import hashlib

    path = directory / "model.onnx"
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else ""


def fit(rows: Sequence[dict[str, float]], labels: Sequence[bool], groups: Sequence[str], info: dict[str, Any] | None = None) -> Combiner:
    """Fit weights, calibration and threshold on fit-half rows. Each group (labeled file) weighs the same, so
    that a large file does not decide the weights alone; the threshold maximises the mean balanced accuracy
    over groups."""
    from sklearn.isotonic import IsotonicRegression
    from sklearn.linear_model import LogisticRegression

    x = np.array([[r[n] for n in FEATURES] for r in rows])
    y = np.array(labels, dtype=int)
    sizes = {g: sum(1 for h in groups if h == g) for g in set(groups)}
    weight = np.array([len(y) / (len(sizes) * sizes[g]) for g in groups])
    lr = LogisticRegression(C=1.0, max_iter=2000)
    lr.fit(x, y, sample_weight=weight)
    partial = Combiner(tuple(float(w) for w in lr.coef_[0]), float(lr.intercept_[0]), (), (), 0.5, {})
    raw = np.array([partial.raw(r) for r in rows])
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip")
    iso.fit(raw, y, sample_weight=weight)
    xs, ys = _thin(iso.X_thresholds_, iso.y_thresholds_)
    calibrated = Combiner(partial.weights, partial.bias, xs, ys, 0.5, {})
    probs = np.array([calibrated.probability(r) for r in rows])
    best = max(np.unique(np.round(probs, 3)), key=lambda t: _mean_balanced_accuracy(probs >= t, y, groups))
    return Combiner(partial.weights, partial.bias, xs, ys, float(best), {"fitted": True, **(info or {})})


def _thin(xs: np.ndarray, ys: np.ndarray) -> tuple[tuple[float, ...], tuple[float, ...]]:
    return tuple(float(v) for v in xs), tuple(round(float(v), 6) for v in ys)


def _mean_balanced_accuracy(predicted: np.ndarray, y: np.ndarray, groups: Sequence[str]) -> float:
    scores = []
    g = np.array(groups)
    for group in set(groups):
        m = g == group
        pos, neg = y[m] == 1, y[m] == 0
        if pos.any() and neg.any():
            scores.append((predicted[m][pos].mean() + (~predicted[m][neg]).mean()) / 2)
    return float(np.mean(scores)) if scores else 0.0
