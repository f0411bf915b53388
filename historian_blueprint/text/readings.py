"""Each document's sentences read once, when its index generation is written, instead of cold on a request.

A reading is what the verifier takes from a whole document: its sentence spans (``claim_sentence_spans``), each
sentence's content words and name words, and the document's own content words. They are pure functions of the
text, so the table keys them by the text's hash: a document changed since the generation is simply not found and
is read on the spot. The table holds only for the code that wrote it: its fingerprint hashes the source of the
modules that cut sentences and read words and Python's Unicode tables, and a table with another fingerprint is
ignored, never trusted. Readings equal a fresh reading word for word (``tests/test_readings.py``).
"""

from __future__ import annotations

import hashlib
import sys
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from historian_blueprint.resources import mapped_npz, save_aligned_npz
from historian_blueprint.text import hashed, spans, words
from historian_blueprint.text.spans import claim_sentence_spans
from historian_blueprint.text.words import content_words, name_words

FILE = "readings.npz"
MIN_CHARS = 2000  # shorter texts (evidence windows, short documents) are read on the spot in a millisecond or less

Sentences = tuple[tuple[int, int, frozenset[str]], ...]


class Reading(NamedTuple):
    sentences: Sentences                   # (start, end, content words) per sentence
    names: tuple[frozenset[str], ...]      # each sentence's whole words (name_words)
    words: frozenset[str]                  # the whole text's content words


def fingerprint() -> str:
    """A hash of the code a reading depends on: a table written by other code is not used."""
    digest = hashlib.sha256(f"{sys.version_info[:2]} {unicodedata.unidata_version}".encode())
    for module in (spans, words):  # normalizing is words'
        digest.update(Path(module.__file__).read_bytes())
    return digest.hexdigest()


def sentences(text: str) -> Sentences:
    """Each sentence of a text (``claim_sentence_spans``) with its content words, read afresh."""
    return tuple((s, e, frozenset(content_words(text[s:e]))) for s, e in claim_sentence_spans(text))


def names(text: str, cuts: Sentences) -> tuple[frozenset[str], ...]:
    """Each of these sentences' whole words (``name_words``), read afresh."""
    return tuple(name_words(text[s:e]) for s, e, _ in cuts)


def read(text: str) -> Reading:
    """A document read afresh."""
    cuts = sentences(text)
    return Reading(cuts, names(text, cuts), frozenset(content_words(text)))


def _key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


_word_hash = hashed.word_hash


class _Vocabulary:
    """The word ids of a table being written: the previous table's words keep theirs (found by hash, never all
    decoded), new words are numbered after them."""

    def __init__(self, previous: Table | None) -> None:
        self.previous = previous
        self.base = len(previous.vocab) if previous is not None else 0
        hashes = previous.a.get("vocab_hash") if previous is not None else None
        self.hashes = np.asarray(hashes).view(np.ndarray) if hashes is not None else None  # no memmap wrapping
        self.ids = np.asarray(previous.a["vocab_ids"]).view(np.ndarray) if hashes is not None else None
        self.known: dict[str, int | None] = {}  # each word looked up once
        self.decoded = ({w: i for i, w in enumerate(previous.vocab)}
                        if previous is not None and self.hashes is None else {})  # a table written before hashes
        self.added: dict[str, int] = {}

    def id(self, word: str) -> int:
        found = self.added.get(word, self.decoded.get(word))
        if found is None and self.hashes is not None and len(self.hashes):
            if word in self.known:
                found = self.known[word]
            else:
                found = self.known[word] = hashed.find(self.hashes, self.ids, _word_hash(word), word,
                                                       self.previous.vocab.__getitem__)
        if found is None:
            found = self.added[word] = self.base + len(self.added)
        return found

    def arrays(self) -> dict[str, np.ndarray]:
        """The vocabulary blob (one word a line) and its words' hashes, sorted, with their ids."""
        old = np.asarray(self.previous.vocab.blob) if self.previous is not None else np.zeros(0, np.uint8)
        new = "\n".join(self.added).encode("utf-8", "surrogatepass")
        blob = np.concatenate([old, np.frombuffer(b"\n" + new if len(old) and new else new, np.uint8)])
        if self.hashes is not None:
            old_hashes, old_ids = self.hashes, self.ids
        else:
            words = list(self.decoded) if self.decoded else []
            old_hashes = np.fromiter((_word_hash(w) for w in words), np.int64, len(words))
            old_ids = np.fromiter((self.decoded[w] for w in words), np.int64, len(words))
        hashes = np.concatenate([old_hashes, np.fromiter((_word_hash(w) for w in self.added), np.int64,
                                                         len(self.added))])
        ids = np.concatenate([old_ids, np.fromiter(self.added.values(), np.int64, len(self.added))])
        order = np.argsort(hashes, kind="stable")
        return {"vocab": blob, "vocab_hash": hashes[order], "vocab_ids": ids[order]}


_PARTS = ("spans", "sentences", "word_lens", "word_ids", "name_lens", "name_ids", "doc_lens", "doc_ids")


def save(directory: Path, texts: Iterable[str], previous: Table | None = None) -> int:
    """Read every text of at least MIN_CHARS characters and write the table into ``directory``; return how many.
    ``previous``: the last generation's table, whose readings of unchanged texts are taken over as they are stored
    (their arrays copied in runs, never decoded: an incremental build reads only what changed; the vocabulary keeps the
    previous one's words in their places and adds new ones after them)."""
    vocab = _Vocabulary(previous)
    keys: list[bytes] = []
    parts: dict[str, list[np.ndarray]] = {k: [] for k in _PARTS}
    run: list[int] = []  # consecutive rows of the previous table, copied at once

    def ids(found: Iterable[str]) -> np.ndarray:
        return np.fromiter((vocab.id(w) for w in sorted(found)), np.int32)

    def flush() -> None:
        if run:
            for name, array in previous.arrays_of(run[0], run[-1] + 1).items():
                parts[name].append(array)
            run.clear()

    for text in dict.fromkeys(t for t in texts if len(t) >= MIN_CHARS):
        key = _key(text)
        keys.append(key)
        row = previous.rows.get(key) if previous is not None else None
        if row is not None:
            if run and row != run[-1] + 1:
                flush()
            run.append(row)
            continue
        flush()
        reading = read(text)
        word_sets = [ids(found) for _, _, found in reading.sentences]
        name_sets = [ids(found) for found in reading.names]
        doc = ids(reading.words)
        got = {"spans": np.array([(s, e) for s, e, _ in reading.sentences], np.int32).reshape(-1, 2),
               "sentences": np.array([len(reading.sentences)], np.int64),
               "word_lens": np.array([len(w) for w in word_sets], np.int64),
               "word_ids": np.concatenate(word_sets) if word_sets else np.zeros(0, np.int32),
               "name_lens": np.array([len(w) for w in name_sets], np.int64),
               "name_ids": np.concatenate(name_sets) if name_sets else np.zeros(0, np.int32),
               "doc_lens": np.array([len(doc)], np.int64), "doc_ids": doc}
        for name in _PARTS:
            parts[name].append(got[name])
    flush()

    def joined(name: str, dtype: type, width: int = 0) -> np.ndarray:
        empty = np.zeros((0, width) if width else 0, dtype)
        return np.concatenate(parts[name]).astype(dtype, copy=False) if parts[name] else empty  # one copy, not two

    def offsets(name: str) -> np.ndarray:
        counts = joined(name, np.int64)
        found = np.zeros(len(counts) + 1, np.int64)
        np.cumsum(counts, out=found[1:])
        return found

    arrays = {"keys": np.frombuffer(b"".join(keys), np.uint8).reshape(-1, 16), "sent_off": offsets("sentences"),
              "spans": joined("spans", np.int32, 2), "word_off": offsets("word_lens"),
              "word_ids": joined("word_ids", np.int32), "name_off": offsets("name_lens"),
              "name_ids": joined("name_ids", np.int32), "doc_off": offsets("doc_lens"),
              "doc_ids": joined("doc_ids", np.int32)}
    save_aligned_npz(directory / FILE, fingerprint=np.frombuffer(fingerprint().encode(), np.uint8), **vocab.arrays(),
                     **arrays)
    return len(keys)


class _Words(Sequence):
    """The table's words, one per line of a (memory-mapped) UTF-8 blob, each decoded when it is asked for."""

    def __init__(self, blob: np.ndarray) -> None:
        self.blob = blob
        self._decoded: dict[int, str] = {}
        breaks = np.flatnonzero(np.asarray(blob) == 10) if len(blob) else np.zeros(0, np.int64)
        self.starts = np.concatenate([[0], breaks + 1]).astype(np.int64) if len(blob) else np.zeros(0, np.int64)
        self.ends = np.concatenate([breaks, [len(blob)]]).astype(np.int64) if len(blob) else np.zeros(0, np.int64)

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        word = self._decoded.get(index)
        if word is None:  # each word decoded once: a worker keeps the words its documents were read with
            word = sys.intern(bytes(self.blob[self.starts[index]:self.ends[index]]).decode("utf-8", "surrogatepass"))
            self._decoded[index] = word
        return word


class Table:
    """A generation's readings, by text."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self.vocab = _Words(arrays["vocab"])
        self.rows = {bytes(k): i for i, k in enumerate(arrays["keys"])}
        self.a = {k: v for k, v in arrays.items() if k not in ("vocab", "fingerprint", "keys")}  # vocab_hash/_ids too

    def __len__(self) -> int:
        return len(self.rows)

    def arrays_of(self, first: int, last: int) -> dict[str, np.ndarray]:
        """The stored readings of rows ``first`` to ``last`` (excluded) as arrays, in this table's vocabulary: their
        sentences' spans, word and name ids per sentence with their counts, each text's sentence count and own words."""
        a = self.a
        start, end = int(a["sent_off"][first]), int(a["sent_off"][last])
        word_off, name_off = a["word_off"][start:end + 1], a["name_off"][start:end + 1]
        doc_off = a["doc_off"][first:last + 1]
        return {"spans": a["spans"][start:end], "sentences": np.diff(a["sent_off"][first:last + 1]),
                "word_lens": np.diff(word_off), "word_ids": a["word_ids"][word_off[0]:word_off[-1]],
                "name_lens": np.diff(name_off), "name_ids": a["name_ids"][name_off[0]:name_off[-1]],
                "doc_lens": np.diff(doc_off), "doc_ids": a["doc_ids"][doc_off[0]:doc_off[-1]]}

    def get(self, text: str) -> Reading | None:
        if len(text) < MIN_CHARS:
            return None
        row = self.rows.get(_key(text))
        if row is None:
            return None
        a, vocab = self.a, self.vocab
        first, last = int(a["sent_off"][row]), int(a["sent_off"][row + 1])

        def per_sentence(offsets: np.ndarray, ids: np.ndarray) -> list[frozenset[str]]:
            bounds = offsets[first:last + 1].tolist()  # one slice per document, not per sentence
            own = [vocab[j] for j in ids[bounds[0]:bounds[-1]].tolist()]
            return [frozenset(own[b - bounds[0]:c - bounds[0]]) for b, c in zip(bounds, bounds[1:])]

        found = per_sentence(a["word_off"], a["word_ids"])
        cuts = a["spans"][first:last].tolist()
        whole = a["doc_ids"][int(a["doc_off"][row]):int(a["doc_off"][row + 1])].tolist()
        return Reading(tuple((s, e, w) for (s, e), w in zip(cuts, found)),
                       tuple(per_sentence(a["name_off"], a["name_ids"])), frozenset(vocab[j] for j in whole))


def load(directory: Path) -> Table | None:
    """The table of a generation, or None when it has none or another version of the code wrote it."""
    path = directory / FILE
    if not path.is_file():
        return None
    try:
        data = mapped_npz(path)  # shared by the workers serving the generation, read as documents are asked for
        if np.asarray(data["fingerprint"]).tobytes().decode() != fingerprint():
            return None
        return Table(data)
    except (OSError, ValueError, KeyError, UnicodeDecodeError):  # unreadable: read the documents afresh instead
        return None


_serving: Table | None = None


def serve(table: Table | None) -> None:
    """Make ``table`` the one looked in (the serving generation's; None: read everything afresh)."""
    global _serving
    _serving = table


def stored(text: str) -> Reading | None:
    """The serving table's reading of this text, if it has one."""
    table = _serving
    return table.get(text) if table is not None else None
