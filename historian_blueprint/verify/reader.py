"""The reader: Historian's own small model for "does this passage say that" and "does this sentence answer the
question" (a MiniLM-L6 cross-encoder with two heads, int8 ONNX, shipped in ``verify/reader_model/``; trained by
``lab/reader``, docs/verification.md "The reader").

It never decides alone. The verifier asks it only when no conflict check fails and the rules do not carry the
claim: the claim is ``supported`` when its p(entails) clears a cut fitted for precision on the fit halves of the
labelled files (``historian train-checker --stage reader`` writes ``thresholds.json``), ``contradicted`` when its
p(contradicts) clears its own cut. It is read only with ``HISTORIAN_READER=on`` (opt-in until it beats the rules:
docs/verification.md); without the thresholds file the verifier reads it but it decides nothing; a model that cannot
be loaded is named on the claim, and the rules decide.
"""

from __future__ import annotations

import json
import math
import re
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from historian_blueprint.schema import SourceText
from historian_blueprint.text.words import capitalized_terms, number_vocabulary, numbers, words
from historian_blueprint.verify.windows import WINDOW_CHARS, Window, windows

READER_DIR = Path(__file__).resolve().parent / "reader_model"
THRESHOLDS_FILE = "thresholds.json"
MAX_DOCUMENTS = 3      # documents whose windows are read per claim (the cited ones first)
_BATCH_TOKENS = 4096   # pairs per ONNX run are capped so that batch * longest stays near this
_CACHE_PAIRS = 4096    # readings kept (a draft is re-checked as it is edited; an answer's claims share windows)

_on = {"reader": False}


class ReaderUnavailable(RuntimeError):
    """The reader's files are missing or cannot be loaded."""


def load_tokenizer(path: Path, max_len: int) -> Any:
    """The model's WordPiece tokenizer: no padding, pairs cut longest-first to ``max_len`` tokens."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path))
    tok.no_padding()
    tok.enable_truncation(max_length=max_len, strategy="longest_first")
    return tok


def encode(tokenizer: Any, first: Sequence[str], second: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Token ids, attention mask and token types of (first, second) pairs, padded to the longest."""
    encoded = tokenizer.encode_batch(list(zip(first, second)))
    width = max(len(e.ids) for e in encoded)
    ids = np.zeros((len(encoded), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    types = np.zeros_like(ids)
    for row, e in enumerate(encoded):
        n = len(e.ids)
        ids[row, :n], mask[row, :n], types[row, :n] = e.ids, e.attention_mask, e.type_ids
    return ids, mask, types


def use_reader(on: bool) -> None:
    """Read claims with the reader (``HISTORIAN_READER``; set once at start-up)."""
    _on["reader"] = bool(on)


def reader_in_use() -> bool:
    return _on["reader"]


@dataclass(frozen=True)
class Thresholds:
    """The cuts on p(entails) and p(contradicts), fitted on fit halves for the model whose digest they carry."""

    entails: float
    contradicts: float
    info: dict[str, Any]


@dataclass(frozen=True)
class ClaimReading:
    """What the reader read of one claim: its best window for "entails" and for "contradicts"."""

    entails: float
    contradicts: float
    entails_at: tuple[str, Window] | None     # (source id, window)
    contradicts_at: tuple[str, Window] | None
    pairs: int


class Reader:
    """The model: (passage, claim) -> p(entails, contradicts, neither); (question, sentence) -> p(answers).
    Thread-safe (one ONNX Runtime session, whose run is; the cache has a lock)."""

    def __init__(self, directory: Path = READER_DIR) -> None:
        model = directory / "model.onnx"
        if not model.exists():
            raise ReaderUnavailable(f"no reader model at {model}")
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = min(2, os.cpu_count() or 1)
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        self.meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
        self.max_tokens = int(self.meta.get("max_tokens", 160))
        self.tokenizer = load_tokenizer(directory / "tokenizer.json", self.max_tokens)
        self.digest = str(self.meta.get("model_sha256", ""))
        self._cache: OrderedDict[tuple[str, str, str], Any] = OrderedDict()
        self._lock = threading.Lock()

    def _run(self, head: str, pairs: Sequence[tuple[str, str]]) -> list[Any]:
        out: list[Any] = [None] * len(pairs)
        todo = []
        with self._lock:
            for i, (a, b) in enumerate(pairs):
                hit = self._cache.get((head, a, b))
                if hit is None:
                    todo.append(i)
                else:
                    self._cache.move_to_end((head, a, b))
                    out[i] = hit
        order = sorted(todo, key=lambda k: len(pairs[k][0]) + len(pairs[k][1]))
        i = 0
        while i < len(order):
            j = i + 1
            while j < len(order) and (j - i + 1) * min(self.max_tokens, _chars(pairs[order[j]]) // 3 + 8) <= _BATCH_TOKENS:
                j += 1
            chunk = order[i:j]
            ids, mask, types = encode(self.tokenizer, [pairs[k][0] for k in chunk], [pairs[k][1] for k in chunk])
            nli, answer = self.session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})
            for row, k in enumerate(chunk):
                out[k] = _softmax(nli[row]) if head == "nli" else _sigmoid(float(answer[row]))
            i = j
        with self._lock:
            for k in todo:
                self._cache[(head, *pairs[k])] = out[k]
            while len(self._cache) > _CACHE_PAIRS:
                self._cache.popitem(last=False)
        return out

    def nli(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[float, float, float]]:
        """(p(entails), p(contradicts), p(neither)) of each (passage, claim) pair, in order."""
        return [tuple(float(x) for x in row) for row in self._run("nli", pairs)]  # type: ignore[misc]

    def answers(self, question: str, sentences: Sequence[str]) -> list[float]:
        """p(the sentence answers the question), for each sentence, in order."""
        return [float(p) for p in self._run("answer", [(question, s) for s in sentences])]


def _chars(pair: tuple[str, str]) -> int:
    return len(pair[0]) + len(pair[1])


def _softmax(row: Any) -> np.ndarray:
    row = np.asarray(row, dtype=np.float64)
    if not np.all(np.isfinite(row)):
        return np.array([0.0, 0.0, 1.0])  # a broken reading is "neither": it never supports or contradicts
    e = np.exp(row - row.max())
    return e / e.sum()


def _sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-max(-30.0, min(30.0, z)))) if math.isfinite(z) else 0.0


_loaded: dict[str, Any] = {}
_load_lock = threading.Lock()


def default_reader() -> Reader:
    """The shipped reader, loaded once per process; a failure to load is remembered and raised every time."""
    with _load_lock:
        if "reader" not in _loaded:
            try:
                _loaded["reader"] = Reader(READER_DIR)
            except ReaderUnavailable as exc:
                _loaded["reader"] = exc
            except Exception as exc:  # noqa: BLE001 - a corrupt file, a missing runtime: the same for the verifier
                _loaded["reader"] = ReaderUnavailable(f"the reader at {READER_DIR} cannot be loaded: {type(exc).__name__}: {exc}")
        found = _loaded["reader"]
    if isinstance(found, ReaderUnavailable):
        raise found
    return found


def thresholds() -> Thresholds | None:
    """The fitted cuts, or None when none are fitted for the shipped model (then the reader decides nothing)."""
    with _load_lock:
        if "thresholds" not in _loaded:
            _loaded["thresholds"] = _read_thresholds(READER_DIR / THRESHOLDS_FILE)
        return _loaded["thresholds"]


def _read_thresholds(path: Path) -> Thresholds | None:
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        meta = json.loads((path.parent / "meta.json").read_text(encoding="utf-8"))
        if data.get("model_sha256") != meta.get("model_sha256"):
            return None  # fitted on another model: not used
        return Thresholds(float(data["entails"]), float(data["contradicts"]), dict(data))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # a corrupt file fails safe: the reader decides nothing


def forget_loaded() -> None:
    """Load the files again on next use (after ``historian train-checker --stage reader`` wrote new cuts)."""
    with _load_lock:
        _loaded.clear()


def read_claim(claim: str, documents: Sequence[SourceText], cited: Sequence[tuple[str, int, int]] = ()) -> ClaimReading:
    """The reader's best window of the first documents (cited ones first, cited spans first) for "entails" and
    for "contradicts". (Read by sentence or two instead, as the model was trained, it did no better on the fit
    halves: docs/verification.md.)"""
    reader = default_reader()
    jobs: list[tuple[str, Window]] = []
    for doc in list(documents)[:MAX_DOCUMENTS]:
        spans = [(s, e) for source_id, s, e in cited if source_id == doc.source_id and e - s <= 2 * WINDOW_CHARS]
        jobs += [(doc.source_id, w) for w in windows(claim, doc.text, spans, 3 if len(documents) == 1 else 2)]
    if not jobs:
        return ClaimReading(0.0, 0.0, None, None, 0)
    probs = reader.nli([(w.text, claim) for _, w in jobs])
    e = max(range(len(jobs)), key=lambda i: probs[i][0])
    c = max(range(len(jobs)), key=lambda i: probs[i][1])
    return ClaimReading(round(probs[e][0], 4), round(probs[c][1], 4), jobs[e], jobs[c], len(jobs))


def held_details(claim: str, passage: str, title: str = "", document: str = "") -> bool:
    """Whether the passage (or its document's title) holds every figure and every name of the claim: a figure
    or a name is not said in other words, so the reader's "entails" never stands for one the passage lacks.
    The claim's capitalized first word counts as a name unless the document writes it in lower case too."""
    where = f"{title} {passage}"
    if not numbers(claim) <= number_vocabulary(where):
        return False
    held = set(words(where))
    first = next(iter(words(claim)), "")
    common = bool(first) and re.search(rf"(?<![\w'-]){re.escape(first)}(?![\w'-])", f"{passage} {document}") is not None
    return all(name in held for name in capitalized_terms(claim) if not (name == first and common))


def reader_features(claim: str, documents: Sequence[SourceText], read_by: ClaimReading) -> dict[str, float]:
    """What the decision (and the fit of its cuts) reads of the reader: its two probabilities, and whether the
    window it found "entails" in holds every name and figure of the claim (``held_details``)."""
    held = 0.0
    if read_by.entails_at is not None:
        source_id, window = read_by.entails_at
        doc = next((d for d in documents if d.source_id == source_id), None)
        held = float(held_details(claim, window.text, doc.title if doc is not None else "", doc.text if doc is not None else ""))
    return {"reader_entails": read_by.entails, "reader_contradicts": read_by.contradicts, "reader_details_held": held}


# The most false claims "supported" each labeled file's fit half may hold once the reader reads (the rules' own
# included): the figures a historian is promised (docs/verification.md); a file not named here gets the least.
FALSE_SUPPORTED_CAPS = {"historian_claims_dev": 0.01, "halueval_qa_dev": 0.02, "begin_dev": 0.05, "wice_dev": 0.02}
TRUE_CONTRADICTED_LIMIT = 0.01   # true claims the reader may call contradicted, per file
CONTRADICTION_PRECISION = 0.95   # of what the reader contradicts, over all files


def fit_cuts(rows: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """The two cuts from (file, harness row) pairs read with the rules alone deciding (see ``checker/fit.py``)."""
    open_ = [(g, r) for g, r in rows if r.features is not None and not r.hard_failed and "reader_entails" in r.features
             and r.verdict != "supported"]  # what the rules leave open: the reader reads nothing else
    groups = sorted({g for g, _ in rows})
    n_false = {g: sum(1 for h, r in rows if h == g and not r.supported) for g in groups}
    n_true = {g: sum(1 for h, r in rows if h == g and r.supported) for g in groups}

    def contradicted(r: Any, cut: float) -> bool:
        f = r.features
        return f["reader_contradicts"] >= cut and f["reader_contradicts"] > f["reader_entails"]

    contra = 1.000001
    for cut in sorted({round(r.features["reader_contradicts"], 6) for _, r in open_} | {1.000001}):
        called = [(g, r) for g, r in open_ if contradicted(r, cut)]
        wrong = [g for g, r in called if r.supported]
        if all(wrong.count(g) <= TRUE_CONTRADICTED_LIMIT * n_true[g] for g in groups) and \
                len(wrong) <= (1 - CONTRADICTION_PRECISION) * len(called):
            contra = cut
            break
    base = {g: sum(1 for h, r in rows if h == g and not r.supported and r.verdict == "supported") for g in groups}
    upgradable = [(g, r) for g, r in open_ if not contradicted(r, contra)
                  and r.features.get("reader_details_held") == 1.0 and r.features.get("own_voice", 1.0) == 1.0]
    entails = 1.000001
    for cut in sorted({round(r.features["reader_entails"], 6) for _, r in upgradable} | {1.000001}):
        added = [(g, r) for g, r in upgradable if r.features["reader_entails"] >= cut]
        if all(base[g] + sum(1 for h, r in added if h == g and not r.supported)
               <= FALSE_SUPPORTED_CAPS.get(g, min(FALSE_SUPPORTED_CAPS.values())) * n_false[g] for g in groups):
            entails = cut
            break
    lifted = {id(r) for _, r in upgradable if r.features["reader_entails"] >= entails}
    per_file = {}
    for g in groups:
        mine = [r for h, r in rows if h == g]
        supported = [r for r in mine if r.verdict == "supported" or id(r) in lifted]
        called = [r for r in mine if _c(r, contradicted, contra)]
        per_file[g] = {"false_supported": round(sum(not r.supported for r in supported) / max(1, n_false[g]), 4),
                       "coverage": round(sum(r.supported for r in supported) / max(1, n_true[g]), 4),
                       "contradicted": len(called), "contradicted_true": sum(r.supported for r in called)}
    return {"entails": entails, "contradicts": contra, "caps": FALSE_SUPPORTED_CAPS,
            "true_contradicted_limit": TRUE_CONTRADICTED_LIMIT, "contradiction_precision": CONTRADICTION_PRECISION,
            "fit_rows": {g: n_true[g] + n_false[g] for g in groups}, "fit_half": per_file}


def _c(r: Any, contradicted: Any, cut: float) -> bool:
    return bool(r.features and "reader_entails" in r.features and not r.hard_failed and r.verdict != "supported"
                and contradicted(r, cut))
