"""Is the claim supported: what the evidence carries of it, measured (coverage, one-sentence coverage, an
answer beside its question's words, words nothing carries) (docs/design.md, "How verification is judged").

Gates (a minimum per feature) chosen for precision, a logistic regression and an isotonic calibration (the
claim's confidence) and its cut are fitted on the *fit* halves of the labeled files only (``historian
train-checker --stage fit``) and stored in ``verify/model/combiner.json``. The conflict checks may still
contradict a claim that clears them; nothing here ever overrules a conflict check. (The reader model, which
reads what these measurements leave open, is ``verify/reader.py``.)
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

COMBINER_DIR = Path(__file__).resolve().parent / "model"
COMBINER_FILE = "combiner.json"  # the support reading's fitted combination of word-level measurements
LEXICAL_FEATURES = ("coverage", "local", "answered", "unexplained", "known_words", "has_question", "context_size",
                    "claim_size")
FEATURES = LEXICAL_FEATURES
# The most false claims "supported" the threshold may let through on each labeled file's fit half: the
# decision is asymmetric (docs/design.md): a false "supported" costs a historian far more than an "unconfirmed".
FALSE_SUPPORTED_LIMITS = {"historian_claims_dev": 0.02, "halueval_qa_dev": 0.02, "begin_dev": 0.05, "wice_dev": 0.05}
DEFAULT_FALSE_SUPPORTED_LIMIT = 0.02


class CombinerUnavailable(RuntimeError):
    """The fitted combination cannot be read (the verifier then fails safe: claims are not verified)."""


def features(
    coverage: float, local: float, answered: float, unexplained: int, known_words: float, has_question: bool,
    n_sentences: int, claim_words: int,
) -> dict[str, float]:
    """The support decision's inputs: how much of the claim the evidence window holds (``coverage``), how much
    one or two adjacent sentences of it hold (``local``: a claim pieced together from words spread over a
    passage is not carried by any sentence of it), how much of an answer and its question one or two adjacent
    sentences hold (``answered``: the answer must sit where the question's words are), how many of the claim's words
    neither the window nor a related form or synonym of its words carries (``unexplained``), whether the rest is in the
    document."""
    out = {
        "coverage": coverage,
        "local": local,
        "answered": answered,
        "unexplained": min(unexplained, 5) / 5,
        "known_words": known_words,
        "has_question": float(has_question),
        "context_size": math.log1p(n_sentences) / 5,
        "claim_size": min(claim_words, 60) / 30,
    }
    return {k: (v if math.isfinite(v) else 0.0) if k != "coverage" else v for k, v in out.items()}


@dataclass(frozen=True)
class Combiner:
    """Logistic regression then isotonic calibration; ``threshold`` on the calibrated probability."""

    weights: tuple[float, ...]
    bias: float
    iso_x: tuple[float, ...]
    iso_y: tuple[float, ...]
    threshold: float
    info: dict[str, Any]
    names: tuple[str, ...] = LEXICAL_FEATURES
    minimums: tuple[tuple[str, float], ...] = ()  # gates chosen for precision: each feature at least this

    def passes(self, f: dict[str, float]) -> bool:
        """The claim clears every gate and the probability cut (a feature not measured fails its gate)."""
        return all(f.get(name, -1.0) >= low for name, low in self.minimums) and self.probability(f) >= self.threshold

    def carries(self, f: dict[str, float]) -> bool:
        """The one statement of "the evidence carries the claim" from its reading alone: it passes, no word of it is
        unexplained and it does not speak for its writer where the source does not (the decision and the fit both
        read it)."""
        return self.passes(f) and f.get("unexplained", 0.0) == 0.0 and f.get("own_voice", 1.0) == 1.0

    def below_cut(self, p: float) -> float:
        """A probability shown for a claim the reading does not carry: never at or above the cut."""
        return round(min(p, self.threshold * 0.99), 4)

    def raw(self, f: dict[str, float]) -> float:
        try:
            z = self.bias + sum(w * f[name] for w, name in zip(self.weights, self.names))
        except KeyError:
            return 0.0  # a feature this combination needs was not measured: never supported
        if not math.isfinite(z):
            return 0.0  # a feature that is not a number never makes a claim supported
        return 1 / (1 + math.exp(-max(-30.0, min(30.0, z))))

    def probability(self, f: dict[str, float]) -> float:
        if not self.iso_x:
            return self.raw(f)
        return float(np.interp(self.raw(f), self.iso_x, self.iso_y))

    def to_json(self) -> dict[str, Any]:
        return {"features": list(self.names), "minimums": dict(self.minimums), "weights": list(self.weights),
                "bias": self.bias, "isotonic": {"x": list(self.iso_x), "y": list(self.iso_y)},
                "threshold": self.threshold, "info": self.info}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Combiner:
        names = tuple(data["features"])
        if names != LEXICAL_FEATURES:
            raise CombinerUnavailable(f"the combination was fitted on features {list(names)}, "
                                      f"not {list(LEXICAL_FEATURES)}")
        return cls(tuple(data["weights"]), float(data["bias"]), tuple(data["isotonic"]["x"]),
                   tuple(data["isotonic"]["y"]), float(data["threshold"]), dict(data.get("info") or {}), names,
                   tuple((str(k), float(v)) for k, v in (data.get("minimums") or {}).items()))


# Before a combiner is fitted: the evidence's coverage alone, strict (every word, no unexplained word).
UNFITTED = Combiner(tuple(12.0 if n == "coverage" else (-12.0 if n == "unexplained" else 0.0)
                          for n in LEXICAL_FEATURES), -11.5, (), (), 0.5, {"fitted": False})


@lru_cache(maxsize=1)
def _combiner_at(path: Path) -> Combiner | CombinerUnavailable:
    if not path.exists():
        return UNFITTED
    try:
        return Combiner.from_json(json.loads(path.read_text(encoding="utf-8")))
    except CombinerUnavailable as exc:
        return exc
    except Exception as exc:  # noqa: BLE001 - a corrupt file fails safe, it does not pass claims
        return CombinerUnavailable(f"{path} cannot be read: {type(exc).__name__}: {exc}")


def default_combiner() -> Combiner:
    """The fitted combination (UNFITTED before one is fitted); raises CombinerUnavailable when it cannot be read."""
    found = _combiner_at(COMBINER_DIR / COMBINER_FILE)
    if isinstance(found, CombinerUnavailable):
        raise found
    return found


def fit(
    rows: Sequence[dict[str, float]], labels: Sequence[bool], groups: Sequence[str], info: dict[str, Any] | None = None,
    names: tuple[str, ...] = LEXICAL_FEATURES, limits: dict[str, float] | None = None,
) -> Combiner:
    """Fit weights, calibration and threshold on fit-half rows. Each group (labeled file) weighs the same, so
    that a large file does not decide the weights alone. The threshold is chosen for precision: the lowest
    cut at which, on every group, at most its limit (``FALSE_SUPPORTED_LIMITS``) of false claims is supported."""
    from sklearn.isotonic import IsotonicRegression
    from sklearn.linear_model import LogisticRegression

    if len(set(labels)) < 2:  # too few rows left to fit on (a small --limit): the strict unfitted reading
        return Combiner(tuple(12.0 if n == "coverage" else (-12.0 if n == "unexplained" else 0.0) for n in names),
                        -11.5, (), (), 0.5, {"fitted": False, "reason": "one class in the fit rows", **(info or {})},
                        names, tuple((n, max(v)) for n, v in GATE_GRID.items()))
    x = np.array([[r[n] for n in names] for r in rows])
    y = np.array(labels, dtype=int)
    sizes = {g: sum(1 for h in groups if h == g) for g in set(groups)}
    weight = np.array([len(y) / (len(sizes) * sizes[g]) for g in groups])
    lr = LogisticRegression(C=1.0, max_iter=2000)
    lr.fit(x, y, sample_weight=weight)
    partial = Combiner(tuple(float(w) for w in lr.coef_[0]), float(lr.intercept_[0]), (), (), 0.5, {}, names)
    raw = np.array([partial.raw(r) for r in rows])
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip")
    iso.fit(raw, y, sample_weight=weight)
    xs, ys = _thin(iso.X_thresholds_, iso.y_thresholds_)
    calibrated = Combiner(partial.weights, partial.bias, xs, ys, 0.5, {}, names)
    gates = precision_gates(rows, y, groups, limits or FALSE_SUPPORTED_LIMITS)
    passed = np.array([all(r[n] >= low for n, low in gates) for r in rows])
    probs = np.array([calibrated.probability(r) if ok else -1.0 for r, ok in zip(rows, passed)])
    threshold = precision_threshold(probs, y, groups, limits or FALSE_SUPPORTED_LIMITS)
    g = np.array(groups)
    chosen = probs >= threshold
    per_group = {k: {"false_supported": round(float((chosen & (y == 0) & (g == k)).sum()
                                                    / max(1, ((y == 0) & (g == k)).sum())), 4),
                     "coverage": round(float((chosen & (y == 1) & (g == k)).sum()
                                             / max(1, ((y == 1) & (g == k)).sum())), 4)}
                 for k in sorted(set(groups))}
    return Combiner(partial.weights, partial.bias, xs, ys, float(threshold),
                    {"fitted": True, "fit_half_eligible": per_group, **(info or {})}, names, gates)


GATE_GRID = {  # the features a gate may be set on, and the values tried (fit halves only)
    "coverage": (0.75, 0.8, 0.85, 0.9, 0.95, 1.0),
    "local": (0.0, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0),
    "answered": (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0),
    "claim_size": tuple(n / 30 for n in (0, 1, 2, 3, 4, 5, 6)),
}


def precision_gates(rows: Sequence[dict[str, float]], y: np.ndarray, groups: Sequence[str],
                    limits: dict[str, float]) -> tuple[tuple[str, float], ...]:
    """The gates (a minimum per feature) that keep every group's false-supported share within its limit
    and, among those, keep the most true claims (mean coverage over groups; ties: the lower gates)."""
    import itertools

    g = np.array(groups)
    names = list(GATE_GRID)
    x = {n: np.array([r[n] for r in rows]) for n in names}
    falses = {k: max(1, int(((y == 0) & (g == k)).sum())) for k in set(groups)}
    trues = {k: max(1, int(((y == 1) & (g == k)).sum())) for k in set(groups)}
    best: tuple[float, tuple[float, ...]] | None = None
    for values in itertools.product(*(GATE_GRID[n] for n in names)):
        keep = np.ones(len(rows), dtype=bool)
        for n, v in zip(names, values):
            keep &= x[n] >= v - 1e-9
        if any((keep & (y == 0) & (g == k)).sum() > limits.get(k, DEFAULT_FALSE_SUPPORTED_LIMIT) * falses[k]
               for k in falses):
            continue
        score = float(np.mean([(keep & (y == 1) & (g == k)).sum() / trues[k] for k in trues]))
        if best is None or score > best[0] + 1e-12:
            best = (score, values)
    chosen = best[1] if best is not None else tuple(max(GATE_GRID[n]) for n in names)
    return tuple((n, float(v)) for n, v in zip(names, chosen))


def precision_threshold(probs: np.ndarray, y: np.ndarray, groups: Sequence[str], limits: dict[str, float]) -> float:
    """The lowest cut on ``probs`` at which every group supports at most its limit of its false claims."""
    g = np.array(groups)
    candidates = sorted(set(np.round(probs, 6).tolist()) | {1.000001})
    for t in candidates:
        if all(((probs >= t) & (y == 0) & (g == group)).sum() <= limits.get(group, DEFAULT_FALSE_SUPPORTED_LIMIT)
               * ((y == 0) & (g == group)).sum() for group in set(groups)):
            return float(t)
    return 1.000001


def _thin(xs: np.ndarray, ys: np.ndarray) -> tuple[tuple[float, ...], tuple[float, ...]]:
    return tuple(float(v) for v in xs), tuple(round(float(v), 6) for v in ys)
