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
from array import array
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

import numpy as np

from historian_blueprint.text import spans, words
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


def save(directory: Path, texts: Iterable[str], previous: Table | None = None) -> int:
    """Read every text of at least MIN_CHARS characters and write the table into ``directory``; return how many.
    ``previous``: the last generation's table, whose readings of unchanged texts are taken over (an incremental
    build reads only what changed)."""
    vocab: dict[str, int] = {}
    keys: list[bytes] = []
    # compact arrays, not lists of Python ints: a large collection's ids run to hundreds of millions
    spans_, word_ids, name_ids, doc_ids = array("i"), array("i"), array("i"), array("i")
    sent_off, word_off, name_off, doc_off = array("q", [0]), array("q", [0]), array("q", [0]), array("q", [0])

    def ids(found: Iterable[str], into: array, offsets: array) -> None:
        into.extend(vocab.setdefault(w, len(vocab)) for w in sorted(found))
        offsets.append(len(into))

    for text in dict.fromkeys(t for t in texts if len(t) >= MIN_CHARS):
        reading = (previous.get(text) if previous is not None else None) or read(text)
        keys.append(_key(text))
        for (s, e, found), names in zip(reading.sentences, reading.names):
            spans_.extend((s, e))
            ids(found, word_ids, word_off)
            ids(names, name_ids, name_off)
        sent_off.append(len(spans_) // 2)
        ids(reading.words, doc_ids, doc_off)
    arrays = {"keys": np.frombuffer(b"".join(keys), np.uint8).reshape(-1, 16), "sent_off": sent_off,
              "spans": np.frombuffer(spans_, np.int32).reshape(-1, 2), "word_off": word_off, "word_ids": word_ids,
              "name_off": name_off, "name_ids": name_ids, "doc_off": doc_off, "doc_ids": doc_ids}
    np.savez(directory / FILE, fingerprint=np.frombuffer(fingerprint().encode(), np.uint8),
             vocab=np.frombuffer("\n".join(vocab).encode("utf-8", "surrogatepass"), np.uint8),
             **{k: np.frombuffer(v, np.int64 if k.endswith("_off") else np.int32) if isinstance(v, array) else v
                for k, v in arrays.items()})
    return len(keys)


class Table:
    """A generation's readings, by text."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        raw = arrays["vocab"].tobytes().decode("utf-8", "surrogatepass")
        self.vocab = [sys.intern(w) for w in raw.split("\n")] if raw else []
        self.rows = {bytes(k): i for i, k in enumerate(arrays["keys"])}
        self.a = {k: v for k, v in arrays.items() if k not in ("vocab", "fingerprint", "keys")}

    def __len__(self) -> int:
        return len(self.rows)

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
        with np.load(path) as data:
            if data["fingerprint"].tobytes().decode() != fingerprint():
                return None
            return Table({k: data[k] for k in data.files})
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
