"""``historian train-checker``: fit the support combination (``--stage fit``: the weights, threshold and isotonic
calibration of ``verify/support.py`` into ``verify/model/combiner.json``) and the reader's two cuts (``--stage
reader``: ``verify/reader_model/thresholds.json``) on the *fit* halves of the labeled files. The check halves are
not read here."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from historian_blueprint.evaluation import harness
from historian_blueprint.verify import reader, support


def fit_stage(eval_dir: Path) -> dict[str, Any]:
    """Fit the support combination (word-level features) on the fit halves and write ``combiner.json``."""
    t0 = time.time()
    target = support.COMBINER_DIR / support.COMBINER_FILE
    target.unlink(missing_ok=True)  # the features do not depend on it; a stale one would refuse to load
    support._combiner_at.cache_clear()
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
                            "limits": support.FALSE_SUPPORTED_LIMITS}
    combiner = harness.fit_combiner(rows, groups, info)
    target.write_text(json.dumps(combiner.to_json(), indent=2), encoding="utf-8")
    support._combiner_at.cache_clear()
    return {"combiner": combiner.to_json(), "seconds": round(time.time() - t0)}


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
