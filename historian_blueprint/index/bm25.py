"""BM25 over chunks from each term's postings: the scores of rank-bm25's ``BM25Okapi``, computed fast.

rank-bm25 scores each query term with a Python loop over every document, which costs hundreds of milliseconds at
~90,000 chunks. Here each term's postings (the chunks that hold it, and how often: a CSC matrix, chunks x terms) and
each chunk's length are kept; a query reads its terms' postings and weighs them (idf, length-normalized tf) as it
goes, so nothing has to be recomputed when the collection changes. An incremental build takes the postings of
unchanged chunks over (``assemble``: rows renumbered, the changed and deleted documents' taken out, the new ones'
added) and tokenizes only the changed documents' chunks.

A generation holds ``bm25_postings.npz`` (indptr, rows, tfs, lengths, and where each term ends in the terms file),
``bm25_words.bin`` (the terms, one a line: a term's column is its line) and ``bm25_terms.npy`` (each term's 64-bit
hash and column, by hash): a serving worker maps all three and looks a query's terms up by hash, so a million chunks'
terms (millions with OCR noise) cost it nothing until asked for. Generations written before issue 43 hold the weights
(``bm25.npz``) and a JSON vocabulary; they are read as they were (``WeightedBM25``).
"""

from __future__ import annotations

import json
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

from historian_blueprint.resources import mapped_npz, save_aligned_npz
from historian_blueprint.text import hashed
from historian_blueprint.text.words import tokenize

K1, B, EPSILON = 1.5, 0.75, 0.25
POSTINGS_FILE, WORDS_FILE, TERMS_FILE = "bm25_postings.npz", "bm25_words.bin", "bm25_terms.npy"
FILES = (POSTINGS_FILE, WORDS_FILE, TERMS_FILE)
LEGACY_FILES = ("bm25.npz", "bm25_vocab.json")
TF_MAX = 65_535  # a count kept in 16 bits (BM25's term frequency saturates long before: k1 = 1.5)
_KNOWN = 200_000  # terms a Terms remembers having looked up
_UNSEEN = object()


term_hash = hashed.word_hash  # the key of ``bm25_terms.npy``


class Terms(Mapping):
    """Term -> column, from the terms in column order (a blob, one a line, ``ends`` where each ends) and a table of
    hashes and columns (2 x terms) sorted by hash: a term is found by its hash and checked against its line, so no
    term is decoded or held until a query asks for it. ``added`` holds the terms a build adds after them."""

    def __init__(self, blob: Any, ends: np.ndarray, table: np.ndarray) -> None:
        self.blob, self.ends = blob, ends
        # two contiguous rows (hashes, columns): searching a strided column would copy it on every lookup
        self.hashes, self.columns = np.asarray(table[0]).view(np.ndarray), np.asarray(table[1]).view(np.ndarray)
        self.added: dict[str, int] = {}
        self._known: dict[str, int | None] = {}  # terms looked up, found or not (cleared past _KNOWN)

    @classmethod
    def of(cls, words: Sequence[str]) -> Terms:
        encoded = [w.encode("utf-8", "surrogatepass") + b"\n" for w in words]
        ends = np.cumsum([len(e) for e in encoded], dtype=np.int64) if encoded else np.zeros(0, np.int64)
        hashes = np.fromiter((term_hash(w) for w in words), np.int64, len(words))
        order = np.argsort(hashes, kind="stable")
        return cls(np.frombuffer(b"".join(encoded), np.uint8), ends, np.stack([hashes[order], order.astype(np.int64)]))

    def word(self, column: int) -> str:
        start = int(self.ends[column - 1]) if column else 0
        return bytes(self.blob[start:int(self.ends[column]) - 1]).decode("utf-8", "surrogatepass")

    def _find(self, term: str) -> int | None:
        found = self.added.get(term)
        if found is not None:
            return found
        known = self._known.get(term, _UNSEEN)
        if known is not _UNSEEN:
            return known  # type: ignore[return-value]
        found = hashed.find(self.hashes, self.columns, term_hash(term), term, self.word)
        if len(self._known) >= _KNOWN:
            self._known.clear()
        self._known[term] = found
        return found

    def __getitem__(self, term: str) -> int:
        found = self._find(term)
        if found is None:
            raise KeyError(term)
        return found

    def __contains__(self, term: object) -> bool:
        return isinstance(term, str) and self._find(term) is not None

    def __len__(self) -> int:
        return len(self.ends) + len(self.added)

    def __iter__(self) -> Iterator[str]:
        for column in range(len(self.ends)):
            yield self.word(column)
        yield from self.added

    def column(self, term: str) -> int:
        """The term's column, a new one after the others when it is new."""
        found = self._find(term)
        if found is None:
            found = self.added[term] = len(self)
        return found

    def save(self, directory: Path) -> np.ndarray:
        """Write the terms file and the hash table with the added terms after the others; return every term's end."""
        new = [w.encode("utf-8", "surrogatepass") + b"\n" for w in self.added]
        with open(directory / WORDS_FILE, "wb") as fh:
            fh.write(memoryview(np.asarray(self.blob, dtype=np.uint8)).tobytes() if len(self.ends) else b"")
            fh.write(b"".join(new))
        base = int(self.ends[-1]) if len(self.ends) else 0
        ends = np.concatenate([np.asarray(self.ends, np.int64),
                               base + np.cumsum([len(e) for e in new], dtype=np.int64)]) if new else \
            np.asarray(self.ends, np.int64)
        hashes = np.concatenate([self.hashes, np.fromiter((term_hash(w) for w in self.added), np.int64,
                                                          len(self.added))])
        columns = np.concatenate([self.columns, np.fromiter(self.added.values(), np.int64, len(self.added))])
        order = np.argsort(hashes, kind="stable")
        np.save(directory / TERMS_FILE, np.stack([hashes[order], columns[order]]))  # (2, terms): rows contiguous
        return ends


class BM25Index:
    """BM25Okapi (k1=1.5, b=0.75, epsilon=0.25) over tokenized chunks, from postings (see the module)."""

    def __init__(self, indptr: np.ndarray, rows: np.ndarray, tfs: np.ndarray, lengths: np.ndarray,
                 vocabulary: Terms) -> None:
        self.indptr, self.rows, self.tfs, self.lengths, self.vocabulary = indptr, rows, tfs, lengths, vocabulary
        n = len(lengths)
        df = np.diff(np.asarray(indptr)).astype(np.float64)
        idf = np.log(n - df + 0.5) - np.log(df + 0.5)
        held = df > 0  # a term no chunk holds any more (an incremental build keeps its column) weighs nothing
        if held.any():
            average = idf[held].mean()
            idf[held & (idf < 0)] = EPSILON * average
        self.idf = idf
        self._lengths = np.asarray(lengths, dtype=np.float64)  # read per query term
        total = float(self._lengths.sum()) if n else 0.0
        self.avgdl = total / n if n and total else 1.0

    def __len__(self) -> int:
        return len(self.lengths)

    @staticmethod
    def _counts(token_lists: Iterable[Sequence[str]], terms: Terms) -> tuple[sparse.csr_matrix, np.ndarray]:
        """The chunks' term counts (chunks x terms, CSR) and lengths, new terms added to ``terms``."""
        indptr, cols, tfs, lengths = array("q", [0]), array("i"), array("i"), array("i")
        for tokens in token_lists:
            counted = Counter(tokens)
            cols.extend(terms.column(term) for term in counted)
            tfs.extend(counted.values())
            indptr.append(len(cols))
            lengths.append(len(tokens))
        counts = sparse.csr_matrix((np.frombuffer(tfs, np.int32), np.frombuffer(cols, np.int32),
                                    np.frombuffer(indptr, np.int64)), shape=(len(indptr) - 1, len(terms)))
        return counts, np.frombuffer(lengths, np.int32).copy()

    @classmethod
    def build(cls, token_lists: Iterable[Sequence[str]]) -> BM25Index:
        """Build the index from each chunk's tokens (read once: a generator keeps one chunk's in memory)."""
        terms = Terms.of([])
        counts, lengths = cls._counts(token_lists, terms)
        postings = counts.tocsc()
        return cls(postings.indptr.astype(np.int64), postings.indices.astype(np.int32),
                   np.minimum(postings.data, TF_MAX).astype(np.uint16), lengths, terms)

    def assemble(self, remap: np.ndarray, new_rows: np.ndarray, token_lists: Sequence[Sequence[str]],
                 size: int) -> BM25Index:
        """This index's chunks in a generation of ``size`` chunks: ``remap`` gives each of its rows its new row (-1:
        gone), ``new_rows`` the rows of new chunks whose tokens are ``token_lists``; nothing is tokenized again."""
        terms = Terms(self.vocabulary.blob, self.vocabulary.ends,
                      np.stack([self.vocabulary.hashes, self.vocabulary.columns]))
        terms.added = dict(self.vocabulary.added)
        counts, new_lengths = self._counts(token_lists, terms)
        coo = counts.tocoo()
        width = len(terms)
        new_cols, new_row_ids, new_tfs = coo.col.astype(np.int64), np.asarray(new_rows)[coo.row], coo.data
        old_indptr = np.asarray(self.indptr, dtype=np.int64)
        moved = np.asarray(remap, dtype=np.int64)[np.asarray(self.rows)]
        keep = moved >= 0
        # per term, its postings kept: all of them but the few of gone chunks (no running sum over every posting)
        gone = np.flatnonzero(~keep)
        kept = np.zeros(width, np.int64)
        kept[:len(old_indptr) - 1] = np.diff(old_indptr) - np.bincount(
            np.searchsorted(old_indptr, gone, side="right") - 1, minlength=len(old_indptr) - 1)
        added = np.bincount(new_cols, minlength=width).astype(np.int64)
        indptr = np.concatenate([[0], np.cumsum(kept + added)]).astype(np.int64)
        # each term's new postings go after its kept ones, in row order: inserted into the kept ones in one pass
        order = np.lexsort((new_row_ids, new_cols))
        at = np.cumsum(kept)[new_cols[order]]
        rows = np.insert(moved[keep].astype(np.int32), at, new_row_ids[order].astype(np.int32))
        tfs = np.insert(np.asarray(self.tfs)[keep], at, np.minimum(new_tfs[order], TF_MAX).astype(np.uint16))
        lengths = np.zeros(size, np.int32)
        survivors = np.flatnonzero(np.asarray(remap) >= 0)
        lengths[np.asarray(remap)[survivors]] = np.asarray(self.lengths)[survivors]
        lengths[np.asarray(new_rows)] = new_lengths
        return BM25Index(indptr, rows, tfs, lengths, terms)

    def scores(self, query: str | Sequence[str]) -> np.ndarray:
        """One BM25 score per chunk (repeated query terms count again, as in rank-bm25)."""
        tokens = tokenize(query) if isinstance(query, str) else list(query)
        counts = Counter(self.vocabulary[t] for t in tokens if t in self.vocabulary)
        out = np.zeros(len(self.lengths), dtype=np.float32)
        for column, times in counts.items():
            start, end = int(self.indptr[column]), int(self.indptr[column + 1])
            if start == end:
                continue
            rows = np.asarray(self.rows[start:end], dtype=np.int64)
            tf = np.asarray(self.tfs[start:end], dtype=np.float64)
            norm = K1 * (1 - B + B * self._lengths[rows] / self.avgdl)
            weights = (self.idf[column] * tf * (K1 + 1) / (tf + norm)).astype(np.float32)
            out[rows] += weights * np.float32(times)  # a chunk is once in a term's postings
        return out

    def save(self, directory: Path) -> None:
        ends = self.vocabulary.save(directory)
        save_aligned_npz(directory / POSTINGS_FILE, indptr=np.asarray(self.indptr, np.int64),
                         rows=np.asarray(self.rows, np.int32), tfs=np.asarray(self.tfs, np.uint16),
                         lengths=np.asarray(self.lengths, np.int32), word_ends=ends)

    @classmethod
    def load(cls, directory: Path) -> BM25Index | WeightedBM25:
        """The index of a generation, its files memory-mapped (a serving worker shares them with the others, and an
        incremental build reads from them only what it keeps); an earlier generation's weights read whole."""
        if not (directory / POSTINGS_FILE).is_file():
            return WeightedBM25.load(directory)
        arrays = mapped_npz(directory / POSTINGS_FILE)
        blob = np.memmap(directory / WORDS_FILE, dtype=np.uint8, mode="r") \
            if (directory / WORDS_FILE).stat().st_size else np.zeros(0, np.uint8)
        terms = Terms(blob, arrays["word_ends"], np.load(directory / TERMS_FILE, mmap_mode="r").reshape(2, -1))
        return cls(arrays["indptr"], arrays["rows"], arrays["tfs"], arrays["lengths"], terms)


class WeightedBM25:
    """A generation's BM25 as written before issue 43: per-(term, chunk) weights precomputed into a CSC matrix."""

    def __init__(self, weights: sparse.csc_matrix, vocabulary: dict[str, int]) -> None:
        self.weights = weights
        self.vocabulary = vocabulary

    def __len__(self) -> int:
        return self.weights.shape[0]

    def scores(self, query: str | Sequence[str]) -> np.ndarray:
        tokens = tokenize(query) if isinstance(query, str) else list(query)
        counts = Counter(self.vocabulary[t] for t in tokens if t in self.vocabulary)
        n = self.weights.shape[0]
        if not counts:
            return np.zeros(n, dtype=np.float32)
        cols = np.fromiter(counts.keys(), dtype=np.int64)
        mult = np.fromiter(counts.values(), dtype=np.float32)
        return np.asarray(self.weights[:, cols] @ mult).ravel().astype(np.float32)

    @classmethod
    def load(cls, directory: Path) -> WeightedBM25:
        weights = sparse.load_npz(directory / "bm25.npz").tocsc()
        vocabulary = json.loads((directory / "bm25_vocab.json").read_text(encoding="utf-8"))
        return cls(weights, vocabulary)
