"""The reader: Historian's own small model for "does this passage say that" and "does this sentence answer the
question" (a MiniLM-L6 cross-encoder with two heads, int8 ONNX, shipped in ``verify/reader_model/``; trained by
``lab/reader``, docs/verification.md "The reader").

The verifier asks it only about a claim the rules leave plainly unconfirmed (no conflict check fails, the rules do
not carry it, no reversed opinion, no speaker or quotation, evidence found): the claim is ``supported`` when its
p(entails) clears a cut fitted for precision on the fit halves of the labelled files (``historian train-checker
--stage reader`` writes ``thresholds.json``), every name and figure is in the window and the conflict checks find
nothing there; ``contradicted`` when its p(contradicts) clears its own cut and the window names whom the claim
names (``contradicts``, ``supports``: the one statement of both rules, read by the decision and by the fit of the
cuts). It is read only with ``HISTORIAN_READER=on`` (opt-in until it beats the rules: docs/verification.md);
without the thresholds file the verifier reads it but it decides nothing; a model that cannot be loaded is named
on the claim, and the rules decide.
"""

from __future__ import annotations

import json
import math
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from historian_blueprint.resources import file_digest
from historian_blueprint.schema import SourceText
from historian_blueprint.text.words import STOPWORDS, number_vocabulary, words
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
        self.digest = file_digest(model)
        if self.digest != self.meta.get("model_sha256"):
            raise ReaderUnavailable(f"{model} is not the model its meta.json describes (SHA-256 differs)")
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
            while j < len(order) and \
                    (j - i + 1) * min(self.max_tokens, _chars(pairs[order[j]]) // 3 + 8) <= _BATCH_TOKENS:
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
                _loaded["reader"] = ReaderUnavailable(
                    f"the reader at {READER_DIR} cannot be loaded: {type(exc).__name__}: {exc}")
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
    """The cuts, when they were fitted for this model and this support combination and are numbers in [0, 1]
    (1.000001: "never"); otherwise None, and the reader decides nothing."""
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        meta = json.loads((path.parent / "meta.json").read_text(encoding="utf-8"))
        digest = data.get("model_sha256")
        if not digest or digest != meta.get("model_sha256"):
            return None  # fitted on another model
        if data.get("combiner_sha256") != combiner_digest():
            return None  # fitted with another support combination: what the rules leave open has changed
        cuts = float(data["entails"]), float(data["contradicts"])
        if not all(math.isfinite(c) and 0.0 <= c <= 1.000001 for c in cuts):
            return None
        return Thresholds(cuts[0], cuts[1], dict(data))
    except Exception:  # noqa: BLE001 - any unreadable file fails safe: the reader decides nothing
        return None


def combiner_digest() -> str:
    """SHA-256 of the support combination the cuts were fitted beside (``verify/model/combiner.json``)."""
    from historian_blueprint.verify.combination import COMBINER_DIR, COMBINER_FILE

    path = COMBINER_DIR / COMBINER_FILE
    return file_digest(path) if path.exists() else ""


def contradicts(f: dict[str, float], cut: float) -> bool:
    """The reader's "contradicted" on a claim's features: p(contradicts) at the cut or above it and above
    p(entails), and the window names whom the claim names."""
    return (f["reader_contradicts"] >= cut and f["reader_contradicts"] > f["reader_entails"]
            and f.get("reader_names_held") == 1.0)


def supports(f: dict[str, float], cut: float) -> bool:
    """The reader's "supported" on a claim's features (asked only where it does not contradict): p(entails) at
    the cut or above, every name and figure held in the window, and no conflict check firing on it."""
    return f["reader_entails"] >= cut and f.get("reader_details_held") == 1.0 and f.get("reader_window_clear") == 1.0


@contextmanager
def deciding_nothing() -> Iterator[None]:
    """The reader reads but decides nothing while the cuts are fitted (the rows are the rules' own verdicts)."""
    with _load_lock:
        _loaded["thresholds"] = None
    try:
        yield
    finally:
        forget_loaded()


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


_RUN = re.compile(r"[A-Z][\w'’.-]*(?:\s+(?:of\s+|de\s+|van\s+)?[A-Z][\w'’.-]*)*")
_DECADE = re.compile(r"\b\d{3}0['’]?s\b")
_ORDINALS = frozenset("first second third fourth fifth sixth seventh eighth ninth tenth last once twice".split())


def names_held(claim: str, where: str, document: str = "") -> bool:
    """Every name of the claim (a run of capitalized words, as written: "Andrew Jackson" is not held by "Andrew
    Johnson ... Jackson") is in ``where``. The claim's first word is no name when the document writes it in lower
    case more often than capitalized within a sentence ("Free speech ..."; "Grant ordered ..." in a document about
    Grant is a name). Names written in lower case are not found here: a limit of the check."""
    flat = " ".join(where.split())
    runs = [(m.start(), m.group().rstrip(".")) for m in _RUN.finditer(claim)]
    out = []
    for at, run in runs:
        if at == len(claim) - len(claim.lstrip()) and _common_word(run.split()[0], document):
            run = run.partition(" ")[2]  # the sentence's first word set aside, the rest of the run kept
        if run:
            out.append(run)
    return all(run in flat for run in out)


def _common_word(word: str, document: str) -> bool:
    if word.lower() in STOPWORDS:
        return True
    lower = len(re.findall(rf"(?<![\w'-]){re.escape(word.lower())}(?![\w'-])", document))
    within = len(re.findall(rf"(?<![.!?]\s)(?<![.!?]\s\s)(?<!^)\b{re.escape(word)}(?![\w'-])", document))
    return lower > within


def figures_held(claim: str, passage: str) -> bool:
    """Every figure of the claim is in the passage: numbers in digits or words, decades ("the 1850s"), and the
    ordinal and frequency words ("first", "twice") a paraphrase cannot change without changing the fact."""
    if not number_vocabulary(claim) <= number_vocabulary(passage):
        return False
    said = set(words(passage))
    if any(w in _ORDINALS and w not in said for w in words(claim)):
        return False
    def decades(text: str) -> set[str]:
        return {d.replace("’", "'") for d in _DECADE.findall(text)}

    return decades(claim) <= decades(passage)


def held_details(frame: str, said: str, passage: str, byline: str = "", document: str = "") -> bool:
    """Whether a claim's names and figures are all where the reader found it said: those of its frame ("In his 1893
    message, Cleveland reported that") in the passage or the document's title and author, those of what it reports
    in the passage (names may also be the document's title or author). A name or a figure is not said in other
    words, so the reader's "entails" never stands for one the passage lacks."""
    return (names_held(frame, f"{passage} {byline}", document) and figures_held(frame, f"{passage} {byline}")
            and names_held(said, f"{passage} {byline}", document) and figures_held(said, passage))


def reader_features(frame: str, said: str, documents: Sequence[SourceText], read_by: ClaimReading) -> dict[str, float]:
    """What the decision (and the fit of its cuts) reads of the reader: its two probabilities; whether the window
    it found "entails" in holds every name and figure of the claim (``held_details``); whether the window it found
    "contradicts" in names everyone the claim names (a claim about someone the passage does not name is not
    contradicted by it)."""
    by_id = {d.source_id: d for d in documents}
    held = named = 0.0
    if read_by.entails_at is not None:
        doc = by_id.get(read_by.entails_at[0])
        held = float(doc is not None and held_details(frame, said, read_by.entails_at[1].text, doc.byline, doc.text))
    if read_by.contradicts_at is not None:
        doc = by_id.get(read_by.contradicts_at[0])
        where = f"{read_by.contradicts_at[1].text} {doc.byline}" if doc is not None else ""
        named = float(doc is not None and names_held(f"{frame} {said}".strip(), where, doc.text))
    return {"reader_entails": read_by.entails, "reader_contradicts": read_by.contradicts, "reader_details_held": held,
            "reader_names_held": named}
