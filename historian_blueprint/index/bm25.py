"""BM25 over chunks as a sparse matrix: the scores of rank-bm25's ``BM25Okapi``, computed fast.

rank-bm25 scores each query term with a Python loop over every document, which costs hundreds of
milliseconds at ~90,000 chunks; here the per-(term, chunk) weights are precomputed once into a CSC
matrix and a query is a sparse column slice and sum.
"""

from __future__ import annotations

import hashlib
import json
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
from scipy import sparse

from historian_blueprint.resources import mapped_npz
from historian_blueprint.text.words import tokenize

K1, B, EPSILON = 1.5, 0.75, 0.25


TF_FILE = "bm25_tf.npz"  # each chunk's term counts: what an incremental build keeps of unchanged documents
TERMS_FILE = "bm25_terms.npy"  # (hash, column) of every term, by hash: a worker's vocabulary, memory-mapped


def term_hash(term: str) -> int:
    """A term's 64-bit hash (BLAKE2b): the key of ``bm25_terms.npy``."""
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little",
                          signed=True)


class HashedTerms(Mapping):
    """The vocabulary as a sorted (hash, column) table, memory-mapped: a million chunks' terms (millions with OCR
    noise) cost a worker nothing until a query looks one up."""

    def __init__(self, table: np.ndarray) -> None:
        self.table = table

    def _find(self, term: str) -> int | None:
        key = term_hash(term)
        at = int(np.searchsorted(self.table[:, 0], key))
        return int(self.table[at, 1]) if at < len(self.table) and int(self.table[at, 0]) == key else None

    def __getitem__(self, term: str) -> int:
        found = self._find(term)
        if found is None:
            raise KeyError(term)
        return found

    def __contains__(self, term: object) -> bool:
        return isinstance(term, str) and self._find(term) is not None

    def __len__(self) -> int:
        return len(self.table)

    def __iter__(self) -> Iterator[str]:
        raise TypeError("a hashed vocabulary cannot list its terms (the JSON vocabulary can)")


class BM25Index:
    """BM25Okapi (k1=1.5, b=0.75, epsilon=0.25) over tokenized chunks.

    ``tf`` (chunks x terms, CSR) holds each chunk's term counts; ``weights`` (CSC) what a query sums, made from them
    at build time. An incremental build takes the counts of unchanged chunks over (``assemble``) and tokenizes only the
    changed documents' chunks."""

    def __init__(self, weights: sparse.csc_matrix, vocabulary: dict[str, int],
                 tf: sparse.csr_matrix | None = None) -> None:
        self.weights = weights
        self.vocabulary = vocabulary
        self.tf = tf

    @staticmethod
    def counts(token_lists: Iterable[Sequence[str]], vocabulary: dict[str, int]) -> sparse.csr_matrix:
        """The chunks' term counts as a CSR matrix, new terms added to ``vocabulary`` (in place)."""
        indptr, cols, tfs = array("q", [0]), array("i"), array("i")  # compact: a million chunks hold ~60M counts
        for tokens in token_lists:
            counted = Counter(tokens)
            cols.extend(vocabulary.setdefault(term, len(vocabulary)) for term in counted)
            tfs.extend(counted.values())
            indptr.append(len(cols))
        return sparse.csr_matrix((np.frombuffer(tfs, np.int32), np.frombuffer(cols, np.int32),
                                  np.frombuffer(indptr, np.int64)), shape=(len(indptr) - 1, len(vocabulary)))

    @classmethod
    def build(cls, token_lists: Iterable[Sequence[str]]) -> BM25Index:
        """Build the index from each chunk's tokens (read once: a generator keeps one chunk's in memory)."""
        vocabulary: dict[str, int] = {}
        return cls.from_counts(cls.counts(token_lists, vocabulary), vocabulary)

    @classmethod
    def assemble(cls, previous: BM25Index, order: np.ndarray, token_lists: Sequence[Sequence[str]]) -> BM25Index:
        """An index of the previous index's chunks ``order[i] >= 0`` (that row of it) and of new chunks
        (``order[i] == -1 - j``: ``token_lists[j]``), in that order; terms no chunk has any more are dropped."""
        vocabulary = dict(previous.vocabulary)
        fresh = cls.counts(token_lists, vocabulary)
        old = previous.tf
        width = len(vocabulary)
        old = sparse.csr_matrix((old.data, old.indices, old.indptr), shape=(old.shape[0], width))
        fresh = sparse.csr_matrix((fresh.data, fresh.indices, fresh.indptr), shape=(fresh.shape[0], width))
        stacked = sparse.vstack([old, fresh], format="csr")
        rows = np.where(order >= 0, order, old.shape[0] + (-1 - order)).astype(np.int64)
        tf = stacked[rows]
        used = np.bincount(tf.indices, minlength=width) > 0
        if not used.all():  # renumber the terms still used, in their order
            new_id = np.cumsum(used) - 1
            tf = sparse.csr_matrix((tf.data, new_id[tf.indices].astype(np.int32), tf.indptr),
                                   shape=(tf.shape[0], int(used.sum())))
            vocabulary = {term: int(new_id[i]) for term, i in vocabulary.items() if used[i]}
        return cls.from_counts(tf, vocabulary)

    @classmethod
    def from_counts(cls, tf: sparse.csr_matrix, vocabulary: dict[str, int]) -> BM25Index:
        """The weights of term counts (chunks x terms)."""
        tf = tf.tocsr()
        n = tf.shape[0]
        lengths = np.asarray(tf.sum(axis=1), dtype=np.float64).ravel()
        row_idx = np.repeat(np.arange(n, dtype=np.int64), np.diff(tf.indptr))
        col = tf.indices.astype(np.int64)
        counts = tf.data.astype(np.float64)
        df = np.bincount(col, minlength=len(vocabulary)).astype(np.float64)
        idf = np.log(n - df + 0.5) - np.log(df + 0.5)
        if len(idf):
            average = idf.mean()
            idf[idf < 0] = EPSILON * average
        avgdl = lengths.mean() if n and lengths.sum() else 1.0
        norm = K1 * (1 - B + B * lengths[row_idx] / avgdl)
        values = idf[col] * counts * (K1 + 1) / (counts + norm)
        weights = sparse.csr_matrix((values.astype(np.float32), tf.indices, tf.indptr),
                                    shape=(n, len(vocabulary))).tocsc()
        return cls(weights, vocabulary, tf)

    def scores(self, query: str | Sequence[str]) -> np.ndarray:
        """Return one BM25 score per chunk (repeated query terms count again, as in rank-bm25)."""
        tokens = tokenize(query) if isinstance(query, str) else list(query)
        counts = Counter(self.vocabulary[t] for t in tokens if t in self.vocabulary)
        n = self.weights.shape[0]
        if not counts:
            return np.zeros(n, dtype=np.float32)
        cols = np.fromiter(counts.keys(), dtype=np.int64)
        mult = np.fromiter(counts.values(), dtype=np.float32)
        return np.asarray(self.weights[:, cols] @ mult).ravel().astype(np.float32)

    def save(self, directory: Path) -> None:
        """Write the weights, the term counts, the vocabulary (JSON, for the next build) and the terms by hash (what a
        serving worker maps instead of loading the vocabulary)."""
        sparse.save_npz(directory / "bm25.npz", self.weights.tocsc(), compressed=False)
        if self.tf is not None:
            sparse.save_npz(directory / TF_FILE, self.tf, compressed=False)
        hashes = np.fromiter((term_hash(t) for t in self.vocabulary), np.int64, len(self.vocabulary))
        order = np.argsort(hashes, kind="stable")
        table = np.stack([hashes[order], np.fromiter(self.vocabulary.values(), np.int64, len(hashes))[order]], axis=1)
        if not len(table) or (np.diff(table[:, 0]) != 0).all():  # two terms of one hash: the JSON vocabulary serves
            np.save(directory / TERMS_FILE, table.reshape(-1, 2))
        (directory / "bm25_vocab.json").write_text(json.dumps(self.vocabulary), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path, *, mapped: bool = False) -> BM25Index:
        """The index of a generation; ``mapped``: its weights and its terms by hash memory-mapped (a serving worker:
        shared with the others, read as queries need them), else read whole with the JSON vocabulary (a build)."""
        if mapped and (directory / TERMS_FILE).is_file():
            arrays = mapped_npz(directory / "bm25.npz")
            if str(arrays["format"].astype(str)) == "csc":
                weights = sparse.csc_matrix((arrays["data"], arrays["indices"], arrays["indptr"]),
                                            shape=tuple(int(n) for n in arrays["shape"]), copy=False)
                return cls(weights, HashedTerms(np.load(directory / TERMS_FILE, mmap_mode="r")))
        weights = sparse.load_npz(directory / "bm25.npz").tocsc()
        vocabulary = json.loads((directory / "bm25_vocab.json").read_text(encoding="utf-8"))
        return cls(weights, vocabulary)

    @classmethod
    def load_counts(cls, directory: Path) -> BM25Index | None:
        """The index with its term counts, for an incremental build; None when the generation has no counts file
        (written before it was kept) or it does not fit the vocabulary."""
        if not (directory / TF_FILE).is_file():
            return None
        index = cls.load(directory)
        tf = sparse.load_npz(directory / TF_FILE).tocsr()
        if tf.shape != (index.weights.shape[0], len(index.vocabulary)):
            return None
        index.tf = tf
        return index

