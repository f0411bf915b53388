"""A generation's chunk rows: each chunk's document, ordinal, span, locator and text, in row order (row i is vector i).

Written as ``rows.npy`` with ``texts.bin`` and ``locators.bin`` and read memory-mapped (``MappedRows``: a million
chunks cost a worker nothing until a text is asked for); generations written before that hold ``chunks.jsonl``, read
whole into ``ChunkRows``.
"""

from __future__ import annotations

import bisect
import json
import mmap
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


@dataclass
class ChunkRows:
    """Column-wise chunk records, in row order (row i is vector i)."""

    source_ids: list[str]
    ordinals: list[int]
    starts: list[int]
    ends: list[int]
    locators: list[str]
    texts: list[str]

    @classmethod
    def empty(cls) -> ChunkRows:
        return cls([], [], [], [], [], [])

    def __len__(self) -> int:
        return len(self.texts)

    def extend(self, other: ChunkRows | MappedRows, start: int = 0, end: int | None = None) -> None:
        for name in ("source_ids", "ordinals", "starts", "ends", "locators", "texts"):
            getattr(self, name).extend(getattr(other, name)[start:end])

    def doc_index(self, documents: Sequence[str]) -> np.ndarray:
        """Each row's document, as its place in ``documents``."""
        place = {source_id: n for n, source_id in enumerate(documents)}
        return np.array([place[s] for s in self.source_ids], dtype=np.int64)

    def problems(self) -> str | None:
        """A chunk whose text is not as long as its span (texts moved or edited)."""
        if any(e - s != len(t) for s, e, t in zip(self.starts, self.ends, self.texts)):
            return "a chunk's text is not as long as its span (texts moved or edited)"
        return None


ROW_COLUMNS = ("doc", "ordinal", "start", "end", "text_end", "locator_end")  # rows.npy, one int64 row per chunk


class _Column(Sequence):
    """A read-only sequence whose items are made when asked for (a mapped file's column, decoded one at a time)."""

    def __init__(self, length: int, item: Callable[[int], Any]) -> None:
        self._length, self._item = length, item

    def __len__(self) -> int:
        return self._length

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and not isinstance(other, str) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # compared by value, as the lists it stands for

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self._item(i) for i in range(*index.indices(self._length))]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError(index)
        return self._item(index)


def _mapped_bytes(path: Path) -> Any:
    """A file's bytes, memory-mapped read-only (shared by every process that maps it); b"" for an empty file."""
    if path.stat().st_size == 0:
        return b""
    with open(path, "rb") as fh:
        return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)


class MappedRows:
    """A generation's chunk rows as written (``rows.npy``: per chunk its document, ordinal, start, end and where its
    text and locator end in ``texts.bin`` and ``locators.bin``), memory-mapped: nothing is decoded until it is asked
    for, and every worker serving the generation shares one copy. Reads like ``ChunkRows``."""

    def __init__(self, directory: Path, documents: Sequence[str]) -> None:
        self.table = np.load(directory / "rows.npy", mmap_mode="r")
        if self.table.ndim != 2 or self.table.shape[1] != len(ROW_COLUMNS):
            raise ValueError(f"rows.npy is {self.table.shape}, not (chunks, {len(ROW_COLUMNS)})")
        self.documents = list(documents)
        self._texts = _mapped_bytes(directory / "texts.bin")
        self._locators = _mapped_bytes(directory / "locators.bin")
        n, table = len(self.table), self.table
        self.source_ids = _Column(n, lambda i: self.documents[int(table[i, 0])])
        self.ordinals = _Column(n, lambda i: int(table[i, 1]))
        self.starts = _Column(n, lambda i: int(table[i, 2]))
        self.ends = _Column(n, lambda i: int(table[i, 3]))
        self.texts = _Column(n, lambda i: self._slice(self._texts, 4, i))
        self.locators = _Column(n, lambda i: self._slice(self._locators, 5, i))

    def _slice(self, blob: Any, column: int, i: int) -> str:
        start = int(self.table[i - 1, column]) if i else 0
        return blob[start:int(self.table[i, column])].decode("utf-8", "surrogatepass")

    def __len__(self) -> int:
        return len(self.table)

    def doc_index(self) -> np.ndarray:
        """Each row's document, as its place in the generation's documents."""
        return np.asarray(self.table[:, 0], dtype=np.int64)

    def problems(self) -> str | None:
        """What does not hold together, checked without decoding a text: spans, text and locator ends, documents."""
        table, n = self.table, len(self.table)
        if not n:
            return None
        if (table[:, 3] < table[:, 2]).any() or (table[:, 2] < 0).any():
            return "a chunk's span ends before it starts"
        if (table[:, 0] < 0).any() or (table[:, 0] >= len(self.documents)).any():
            return "chunks name documents it does not list"
        for column, blob, name in ((4, self._texts, "texts.bin"), (5, self._locators, "locators.bin")):
            ends = table[:, column]
            if (np.diff(ends) < 0).any() or ends[0] < 0 or int(ends[-1]) != len(blob):
                return f"its ends do not fit {name}"
        return None


@dataclass(frozen=True)
class Kept:
    """Rows ``start``..``end`` of the serving generation's mapped rows, taken over as they are (an incremental build's
    unchanged documents): written by copying their bytes, never decoded."""

    source: MappedRows
    start: int
    end: int

    def __len__(self) -> int:
        return self.end - self.start


class Assembled:
    """A new generation's rows in order: new chunks (ChunkRows) and rows kept from the serving generation (Kept, runs
    that follow each other merged into one), read where a build needs to (a row's text, every row's document and
    text) and written by copying what was kept (``write_rows``)."""

    def __init__(self) -> None:
        self.parts: list[ChunkRows | Kept] = []
        self._starts: list[int] = []
        self._length = 0

    def add(self, rows: ChunkRows | Kept) -> None:
        if not len(rows):
            return
        last = self.parts[-1] if self.parts else None
        if isinstance(rows, Kept) and isinstance(last, Kept) and last.source is rows.source and last.end == rows.start:
            self.parts[-1] = Kept(last.source, last.start, rows.end)
        else:
            self.parts.append(rows)
            self._starts.append(self._length)
        self._length += len(rows)

    def __len__(self) -> int:
        return self._length

    def text(self, row: int) -> str:
        n = bisect.bisect_right(self._starts, row) - 1
        part, offset = self.parts[n], row - self._starts[n]
        return part.source.texts[part.start + offset] if isinstance(part, Kept) else part.texts[offset]

    def pairs(self) -> Iterator[tuple[str, str]]:
        """Every row's document and text, in order."""
        for part in self.parts:
            if isinstance(part, Kept):
                for i in range(part.start, part.end):
                    yield part.source.source_ids[i], part.source.texts[i]
            else:
                yield from zip(part.source_ids, part.texts)


def write_rows(directory: Path, rows: Assembled | ChunkRows | MappedRows, documents: Sequence[str]) -> None:
    """Write ``rows.npy``, ``texts.bin`` and ``locators.bin`` (see MappedRows); ``documents``: their order. Kept rows
    are copied as they were written (their ends moved, their documents renumbered)."""
    place = {source_id: n for n, source_id in enumerate(documents)}
    parts = rows.parts if isinstance(rows, Assembled) else [Kept(rows, 0, len(rows)) if isinstance(rows, MappedRows)
                                                             else rows]
    table = np.zeros((len(rows), len(ROW_COLUMNS)), dtype=np.int64)
    renumbered: dict[int, np.ndarray] = {}  # per kept generation: its documents' places in this one (-1: gone)
    ends = [0, 0]  # where texts.bin and locators.bin end so far
    row = 0
    with open(directory / "texts.bin", "wb") as texts, open(directory / "locators.bin", "wb") as locators:
        for part in parts:
            n = len(part)
            if not n:
                continue
            block = table[row:row + n]
            if isinstance(part, Kept):
                source = part.source
                old = np.asarray(source.table[part.start:part.end])
                if id(source) not in renumbered:
                    renumbered[id(source)] = np.array([place.get(s, -1) for s in source.documents], dtype=np.int64)
                block[:, 0] = renumbered[id(source)][old[:, 0]]
                block[:, 1:4] = old[:, 1:4]
                for k, (column, blob, out) in enumerate(((4, source._texts, texts), (5, source._locators, locators))):
                    first = int(source.table[part.start - 1, column]) if part.start else 0
                    out.write(blob[first:int(old[-1, column])])
                    block[:, column] = old[:, column] - first + ends[k]
                    ends[k] += int(old[-1, column]) - first
            else:
                block[:, 0] = [place[s] for s in part.source_ids]
                block[:, 1] = part.ordinals
                block[:, 2] = part.starts
                block[:, 3] = part.ends
                for k, (column, values, out) in enumerate(((4, part.texts, texts), (5, part.locators, locators))):
                    encoded = [v.encode("utf-8", "surrogatepass") for v in values]
                    block[:, column] = np.cumsum([len(e) for e in encoded]) + ends[k]
                    out.write(b"".join(encoded))
                    ends[k] = int(block[-1, column])
            row += n
    np.save(directory / "rows.npy", table)


def read_rows(directory: Path) -> ChunkRows | MappedRows:
    """A generation's chunk rows: mapped (``rows.npy``; written since issue 43), or read whole from the
    ``chunks.jsonl`` of an earlier generation."""
    if (directory / "rows.npy").is_file():
        return MappedRows(directory, list(json.loads((directory / "documents.json").read_text(encoding="utf-8"))))
    rows = ChunkRows.empty()
    with open(directory / "chunks.jsonl", encoding="utf-8") as fh:
        for line in fh:
            sid, ordinal, start, end, locator, text = json.loads(line)
            rows.source_ids.append(sid)
            rows.ordinals.append(ordinal)
            rows.starts.append(start)
            rows.ends.append(end)
            rows.locators.append(locator)
            rows.texts.append(text)
    return rows

