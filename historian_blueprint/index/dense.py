"""A generation's dense index: an exact scan below a size, an approximate one above it.

- ``flat``: every query reads every vector (exact inner product; the vectors are normalized).
- ``ivf``: FAISS IVF with 8-bit scalar-quantized codes (a quarter of the vectors' size, memory-mapped and shared by
  every worker serving the generation): a query reads the ``nprobe`` lists nearest to it; the retriever re-scores
  what it returns with the exact vectors (``vectors.npy``, memory-mapped). An incremental build updates it in place
  of a rebuild: the changed and deleted documents' rows are removed, the kept rows renumbered, the new rows added.
  It is trained again (a whole build) when the collection has grown past ``REFIT_GROWTH`` times what it was trained on.
- ``hnsw``: FAISS HNSW (the earlier approximate index; no removal, so every build rebuilds it).

``auto`` (the default, ``HISTORIAN_INDEX_DENSE``) is ``flat`` up to ``HISTORIAN_INDEX_APPROXIMATE_ABOVE`` chunks and
``ivf`` above. The figures that chose the lists and the probes are in docs/search-index.md ("A collection a hundred
times larger").
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

KINDS = ("auto", "flat", "ivf", "hnsw")
TRAIN_PER_LIST = 40   # training vectors per list (a deterministic sample; FAISS asks for at least 39)
REFIT_GROWTH = 4.0    # an IVF index trained on n rows is trained again past this many times n


def choose(kind: str, rows: int, approximate_above: int) -> str:
    """The index kind a generation of ``rows`` chunks gets."""
    if kind == "auto":
        return "ivf" if rows > approximate_above else "flat"
    if kind not in KINDS:
        raise ValueError(f"unknown dense index kind {kind!r} (one of {', '.join(KINDS)})")
    return kind


def lists_for(rows: int) -> int:
    """IVF lists for a collection: the power of two nearest 4·√rows (1M chunks: 4,096), at least 16."""
    return max(16, 2 ** round(math.log2(4 * math.sqrt(max(rows, 1)))))


def probes_for(lists: int, nprobe: int = 0) -> int:
    """Lists read per query: the setting when given, else three in eight and at least 32 (all of them if fewer). At a
    million chunks (4,096 lists), recall@10 against an exact scan on the fit half of the bench's 200 questions (the
    109 whose text's CRC-32 is even): one in four 0.978, three in eight 0.995, one in two 0.999; the rule reads the
    fewest of those with at least 0.99 (docs/search-index.md)."""
    return min(lists, nprobe if nprobe > 0 else max(32, lists * 3 // 8))


def build(vectors: np.ndarray, dimension: int, kind: str, nprobe: int = 0) -> tuple[Any, dict[str, Any]]:
    """A new index of ``kind`` (not ``auto``) over the vectors, row i with id i; and what the manifest records of it."""
    import faiss

    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if kind == "ivf":
        lists = lists_for(len(vectors))
        index = faiss.IndexIVFScalarQuantizer(faiss.IndexFlatIP(dimension), dimension, lists,
                                              faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT)
        sample = vectors
        if len(vectors) > lists * TRAIN_PER_LIST:
            chosen = np.random.default_rng(0).choice(len(vectors), lists * TRAIN_PER_LIST, replace=False)
            sample = vectors[np.sort(chosen)]
        index.train(sample)
        index.add_with_ids(vectors, np.arange(len(vectors), dtype=np.int64))
        index.nprobe = probes_for(lists, nprobe)
        return index, {"kind": "ivf", "lists": lists, "nprobe": index.nprobe, "trained_on": len(vectors)}
    if kind == "hnsw":
        index = faiss.IndexHNSWFlat(dimension, 32, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = 80
        index.hnsw.efSearch = 96
    else:
        index = faiss.IndexFlatIP(dimension)
    if len(vectors):
        index.add(vectors)
    return index, {"kind": kind}


def updatable(previous: dict[str, Any] | None, kind: str, rows: int) -> bool:
    """Whether the previous generation's index (its manifest record) can be updated instead of rebuilt."""
    return (kind == "ivf" and isinstance(previous, dict) and previous.get("kind") == "ivf"
            and rows <= REFIT_GROWTH * max(1, int(previous.get("trained_on", 0))))


def update(index: Any, record: dict[str, Any], remap: np.ndarray, added: np.ndarray, added_rows: np.ndarray,
           nprobe: int = 0) -> tuple[Any, dict[str, Any]]:
    """The previous generation's IVF index made this one's: ``remap`` gives each old row its new row (-1: gone),
    ``added`` are the new rows' vectors, ``added_rows`` their rows."""
    import faiss

    gone = np.flatnonzero(remap < 0).astype(np.int64)
    if len(gone):
        index.remove_ids(faiss.IDSelectorBatch(len(gone), faiss.swig_ptr(gone)))
    invlists = faiss.extract_index_ivf(index).invlists
    for number in range(invlists.nlist):
        size = invlists.list_size(number)
        if size:
            ids = faiss.rev_swig_ptr(invlists.get_ids(number), size)
            ids[:] = remap[ids]
    if len(added):
        index.add_with_ids(np.ascontiguousarray(added, dtype=np.float32), added_rows.astype(np.int64))
    index.nprobe = probes_for(record["lists"], nprobe)
    return index, {**record, "nprobe": index.nprobe}


def read(path: Any, *, shared: bool) -> Any:
    """The index from its file: memory-mapped read-only where FAISS can (``shared``: every worker serving the
    generation shares one copy of its codes), else read into memory."""
    import faiss

    index = None
    if shared:
        try:
            index = faiss.read_index(str(path), faiss.IO_FLAG_MMAP_IFC | faiss.IO_FLAG_READ_ONLY)
        except (RuntimeError, AttributeError):
            pass
    if index is None:
        index = faiss.read_index(str(path))
    ivf = faiss.try_extract_index_ivf(index)
    # one question's lists read by every core: at a million chunks 31 -> 16 ms for one question at a time; with two or
    # four at once the same throughput and latency as one core each (65 questions/s on two cores either way)
    if ivf is not None:
        ivf.parallel_mode = 1
    return index
