"""Stage 2 of ``historian train-checker``: fit the combination weights, the threshold and the isotonic
calibration of ``verify/support.py`` on the *fit* halves of the labeled files, and write them beside the
model (``verify/model/combiner.json``, with the model's SHA-256: a combiner fitted on another model is refused
at load). The check halves are not read here."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from historian_blueprint.evaluation import harness
from historian_blueprint.verify import reader, scorer, support


def fit_stage(eval_dir: Path, with_scorer: bool = False) -> dict[str, Any]:
    """Fit the default combination (word-level features: ``combiner.json``) and, with ``with_scorer``, the
    opt-in one that reads the scorer's logit too (``combiner_scorer.json``)."""
    t0 = time.time()
    out: dict[str, Any] = {}
    was = support.scorer_in_use()
    try:
        for on in ((False, True) if with_scorer else (False,)):
            support.use_scorer(on)
            target = scorer.MODEL_DIR / (support.SCORER_COMBINER_FILE if on else support.COMBINER_FILE)
            target.unlink(missing_ok=True)  # the features do not depend on it; a stale one would refuse to load
            support._combiner_at.cache_clear()
            scorer.forget_loaded()
            rows, groups = [], []
            for path in harness.labeled_files(eval_dir):
                _, fit_rows = harness.collect(path, halves=("fit",))  # the check half is not read
                rows += fit_rows
                groups += [path.stem] * len(fit_rows)
            counts = {g: groups.count(g) for g in sorted(set(groups))}
            info: dict[str, Any] = {"fit_rows": counts, "fitted_at": time.strftime("%Y-%m-%d"),
                                    "limits": support.FALSE_SUPPORTED_LIMITS}
            if on:
                info["model_sha256"] = support.model_digest(scorer.MODEL_DIR)
            combiner = harness.fit_combiner(rows, groups, info, scorer=on)
            target.write_text(json.dumps(combiner.to_json(), indent=2), encoding="utf-8")
            support._combiner_at.cache_clear()
            out["scorer" if on else "combiner"] = combiner.to_json()
    finally:
        support.use_scorer(was)
    return {**out, "seconds": round(time.time() - t0)}


def reader_stage(eval_dir: Path) -> dict[str, Any]:
    """Fit the reader's two cuts on the fit halves (``verify/reader_model/thresholds.json``): the lowest
    p(entails) at which, on every labeled file, the claims the rules already support and those the reader would
    add keep false-supported within ``reader.FALSE_SUPPORTED_CAPS``; the lowest p(contradicts) at which, on every
    file, at most ``reader.TRUE_CONTRADICTED_LIMIT`` of true claims and, over all files, at most
    1 - ``reader.CONTRADICTION_PRECISION`` of what it contradicts are true. The check halves are not read."""
    t0 = time.time()
    target = reader.READER_DIR / reader.THRESHOLDS_FILE
    target.unlink(missing_ok=True)  # the rows are read with the rules alone deciding
    reader.forget_loaded()
    was = reader.reader_in_use()
    reader.use_reader(True)
    rows: list[tuple[str, harness.Row]] = []
    try:
        for path in harness.labeled_files(eval_dir):
            _, fit_rows = harness.collect(path, halves=("fit",))
            rows += [(path.stem, r) for r in fit_rows]
    finally:
        reader.use_reader(was)
    cuts = reader.fit_cuts(rows)
    cuts["model_sha256"] = reader.default_reader().digest
    cuts["fitted_at"] = time.strftime("%Y-%m-%d")
    target.write_text(json.dumps(cuts, indent=2), encoding="utf-8")
    reader.forget_loaded()
    return {**cuts, "seconds": round(time.time() - t0)}
