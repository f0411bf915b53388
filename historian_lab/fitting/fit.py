"""``historian train-checker``: fit the support combination (``--stage fit``: the weights, threshold and isotonic
calibration of ``verify/combination.py`` into ``verify/model/combiner.json``) and the reader's two cuts (``--stage
reader``: ``verify/reader_model/thresholds.json``) on the *fit* halves of the labeled files. The check halves are
not read here."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from historian_lab.evaluation import harness
from historian_blueprint.verify import combination, reader


def fit_stage(eval_dir: Path) -> dict[str, Any]:
    """Fit the support combination (word-level features) on the fit halves and write ``combiner.json``."""
    t0 = time.time()
    target = combination.COMBINER_DIR / combination.COMBINER_FILE
    target.unlink(missing_ok=True)  # the features do not depend on it; a stale one would refuse to load
    combination._combiner_at.cache_clear()
    was = reader.reader_in_use()
    reader.use_reader(False)  # the combination is the rules' own reading
    rows, groups = [], []
    try:
        for path in harness.labeled_files(eval_dir):
            _, fit_rows = harness.collect(path, halves=("fit",))  # the check half is not read
            rows += fit_rows
            groups += [path.stem] * len(fit_rows)
    finally:
        reader.use_reader(was)
    counts = {g: groups.count(g) for g in sorted(set(groups))}
    info: dict[str, Any] = {"fit_rows": counts, "fitted_at": time.strftime("%Y-%m-%d"),
                            "limits": combination.FALSE_SUPPORTED_LIMITS}
    combiner = harness.fit_combiner(rows, groups, info)
    target.write_text(json.dumps(combiner.to_json(), indent=2), encoding="utf-8")
    combination._combiner_at.cache_clear()
    return {"combiner": combiner.to_json(), "seconds": round(time.time() - t0)}


def reader_stage(eval_dir: Path) -> dict[str, Any]:
    """Fit the reader's two cuts on the fit halves (``verify/reader_model/thresholds.json``, for this model and this
    support combination): the lowest p(entails) at which, on every labeled file, the claims the rules already
    support and those the reader would add keep false-supported within ``FALSE_SUPPORTED_CAPS``; the lowest
    p(contradicts) at which, on every file, at most ``TRUE_CONTRADICTED_LIMIT`` of true claims are
    contradicted and, over all files, the lower bound of its precision is at least ``CONTRADICTION_PRECISION``.
    The rows are read with the rules alone deciding; the check halves are not read. The file is replaced only
    when the fit ends."""
    t0 = time.time()
    target = reader.READER_DIR / reader.THRESHOLDS_FILE
    reader.forget_loaded()
    was = reader.reader_in_use()
    reader.use_reader(True)
    rows: list[tuple[str, harness.Row]] = []
    try:
        with reader.deciding_nothing():
            for path in harness.labeled_files(eval_dir):
                _, fit_rows = harness.collect(path, halves=("fit",))
                rows += [(path.stem, r) for r in fit_rows]
    finally:
        reader.use_reader(was)
    cuts = fit_cuts(rows)
    cuts["model_sha256"] = reader.default_reader().digest
    cuts["combiner_sha256"] = reader.combiner_digest()
    cuts["fitted_at"] = time.strftime("%Y-%m-%d")
    partial = target.with_suffix(".partial")
    partial.write_text(json.dumps(cuts, indent=2), encoding="utf-8")
    partial.replace(target)
    reader.forget_loaded()
    return {**cuts, "seconds": round(time.time() - t0)}


# The most false claims "supported" each labeled file's fit half may hold once the reader reads (the rules' own
# included): the figures a historian is promised (docs/verification.md); a file not named here gets the least.
FALSE_SUPPORTED_CAPS = {"historian_claims_dev": 0.01, "halueval_qa_dev": 0.02, "begin_dev": 0.05, "wice_dev": 0.02}
TRUE_CONTRADICTED_LIMIT = 0.01   # true claims the reader may call contradicted, per file
CONTRADICTION_PRECISION = 0.90   # the lower 95% (one-sided) Wilson bound of its precision, over all files


def fit_cuts(rows: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """The two cuts from (file, harness row) pairs read with the rules alone deciding (``reader_stage``), under the
    decision's own rules (``reader.contradicts``, ``reader.supports``)."""
    open_ = [(g, r) for g, r in rows if r.features is not None and not r.hard_failed and "reader_entails" in r.features
             and r.verdict == "unconfirmed"]  # what the rules leave open: the reader reads nothing else
    groups = sorted({g for g, _ in rows})
    n_false = {g: sum(1 for h, r in rows if h == g and not r.supported) for g in groups}
    n_true = {g: sum(1 for h, r in rows if h == g and r.supported) for g in groups}
    contra = 1.000001
    for cut in sorted({round(r.features["reader_contradicts"], 6) for _, r in open_} | {1.000001}):
        called = [(g, r) for g, r in open_ if reader.contradicts(r.features, cut)]
        wrong = [g for g, r in called if r.supported]
        if all(wrong.count(g) <= TRUE_CONTRADICTED_LIMIT * n_true[g] for g in groups) and \
                wilson_low(len(called) - len(wrong), len(called)) >= CONTRADICTION_PRECISION:
            contra = cut
            break
    base = {g: sum(1 for h, r in rows if h == g and not r.supported and r.verdict == "supported") for g in groups}
    upgradable = [(g, r) for g, r in open_ if not reader.contradicts(r.features, contra)
                  and reader.supports(r.features, 0.0)]  # every name and figure held, the window clear
    entails = 1.000001
    for cut in sorted({round(r.features["reader_entails"], 6) for _, r in upgradable} | {1.000001}):
        added = [(g, r) for g, r in upgradable if reader.supports(r.features, cut)]
        if all(base[g] + sum(1 for h, r in added if h == g and not r.supported)
               <= FALSE_SUPPORTED_CAPS.get(g, min(FALSE_SUPPORTED_CAPS.values())) * n_false[g] for g in groups):
            entails = cut
            break
    lifted = {id(r) for _, r in upgradable if reader.supports(r.features, entails)}
    contradicted = {id(r) for _, r in open_ if reader.contradicts(r.features, contra)}
    per_file = {}
    for g in groups:
        mine = [r for h, r in rows if h == g]
        supported = [r for r in mine if r.verdict == "supported" or id(r) in lifted]
        called = [r for r in mine if id(r) in contradicted]
        per_file[g] = {"false_supported": round(sum(not r.supported for r in supported) / max(1, n_false[g]), 4),
                       "coverage": round(sum(r.supported for r in supported) / max(1, n_true[g]), 4),
                       "contradicted": len(called), "contradicted_true": sum(r.supported for r in called)}
    return {"entails": entails, "contradicts": contra, "caps": FALSE_SUPPORTED_CAPS,
            "true_contradicted_limit": TRUE_CONTRADICTED_LIMIT, "contradiction_precision": CONTRADICTION_PRECISION,
            "fit_rows": {g: n_true[g] + n_false[g] for g in groups}, "fit_half": per_file}


def wilson_low(right: int, n: int, z: float = 1.645) -> float:
    """The Wilson score interval's lower end for ``right`` of ``n`` (0 for none): 8 of 8 is about 0.75, not 1."""
    if n == 0:
        return 0.0
    p = right / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - spread) / (1 + z * z / n)
