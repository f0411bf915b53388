"""Words found by a 64-bit hash in a table sorted by hash (the search index's terms, the readings' vocabulary): a word
is looked up without the table's words being decoded, and the word itself is checked, so a hash two words share is
told apart."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np


def word_hash(word: str) -> int:
    """A word's 64-bit hash (BLAKE2b), signed as numpy's int64."""
    return int.from_bytes(hashlib.blake2b(word.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little",
                          signed=True)


def find(hashes: np.ndarray, ids: np.ndarray, key: int, word: str, word_of: Callable[[int], str]) -> int | None:
    """The id of ``word`` (hash ``key``) in ``hashes`` (sorted, contiguous) and ``ids`` beside them, or None;
    ``word_of(id)`` is the table's word of an id."""
    at = int(hashes.searchsorted(key)) if len(hashes) else 0
    while at < len(hashes) and int(hashes[at]) == key:
        if word_of(int(ids[at])) == word:
            return int(ids[at])
        at += 1
    return None
