"""Data access: the host's documents through a field mapping, and Historian's own collections.

Only the plain pymongo API is used, so a real MongoDB, ``mongomock`` and the embedded ``litemongo``
store all work. litemongo's SQLite objects are bound to the thread that opened them and its updates
are read-modify-write, so each thread opens its own client (``embedded``: the host's documents are read by
id in one long-lived thread) and every write holds a lock that spans threads and processes (a ``flock`` on a
file beside the store): the server, a CLI reindex and several workers on one machine may share it. Several
machines need a real MongoDB.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pymongo.errors import PyMongoError

from historian_blueprint.config import DEFAULT_FIELDS
from historian_blueprint.embedded import DocumentReader, PerThreadDatabase
from historian_blueprint.locking import StoreBusy, StoreLock, lock_for

__all__ = ["STORE_ERRORS", "Document", "FieldMapping", "Store", "StoreBusy", "StoreFactory", "StoreLock",
           "store_problem"]


STORE_ERRORS: tuple[type[BaseException], ...] = (sqlite3.Error, PyMongoError)  # the embedded SQLite's, or MongoDB's
UNWRITABLE = "the database cannot be written (disk full?)"
PROBED = ("meta", "runs", "jobs", "active", "history", "history_journal")  # Historian's collections health reads
PROBE_WRITE_EVERY_S = 10.0  # how often health's probe record is written, at most, once one write worked
_probe_written: dict[str, float] = {}  # per database and prefix: when this process's probe last wrote


def store_problem(exc: BaseException) -> str:
    """What a researcher or an admin is told when the store fails: cannot be written, damaged, or unreachable."""
    text = str(exc).lower()
    if any(w in text for w in ("full", "disk i/o", "readonly", "read-only", "no space", "quota")):
        return f"{UNWRITABLE}: {type(exc).__name__}"
    if isinstance(exc, sqlite3.DatabaseError) and any(w in text for w in ("malformed", "not a database", "corrupt")):
        return f"the database is damaged ({type(exc).__name__}: {exc}): restore it from a backup"
    return f"the database cannot be reached ({type(exc).__name__})"


WRITE_METHODS = frozenset({
    "insert_one", "insert_many", "replace_one", "update_one", "update_many", "delete_one", "delete_many",
    "find_one_and_update", "find_one_and_replace", "find_one_and_delete", "bulk_write", "create_index", "drop_index",
    "drop"})


class SerializedCollection:
    """A collection whose writes hold the store's write lock (for stores without atomic updates)."""

    def __init__(self, collection: Any, lock: StoreLock) -> None:
        self._collection = collection
        self._lock = lock

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._collection, name)
        if name not in WRITE_METHODS:
            return attr

        def locked(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return attr(*args, **kwargs)

        return locked

    @property
    def name(self) -> str:
        return self._collection.name

    def __repr__(self) -> str:
        return f"SerializedCollection({self._collection.name!r})"


@dataclass(frozen=True)
class Document:
    """One host document seen through the field mapping."""

    id: str
    title: str
    text: str
    author: str | None = None
    date: str | None = None
    url: str | None = None
    pages: list[Any] | None = None
    year: int | None = None
    collection: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


def get_path(record: Mapping[str, Any], path: str) -> Any:
    """Read a possibly dotted field (``meta.title``) from a record."""
    value: Any = record
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def first_of(record: Mapping[str, Any], paths: str | Sequence[str] | None) -> Any:
    """The value of ``paths`` in the record: one path's value as it is, or the first non-empty of a list."""
    if isinstance(paths, str):
        return get_path(record, paths)
    for path in paths or ():
        value = get_path(record, path)
        if value is not None and value != "":
            return value
    return None


class FieldMapping:
    """Map the host's schema onto Historian's document fields. A field maps to one path, to a list of paths (the
    first the record fills wins: ``"author": ["speaker", "creator"]``, so that an uploader in ``author`` is never
    cited as the writer), or to None (not read)."""

    def __init__(self, fields: Mapping[str, str | Sequence[str] | None] | None = None) -> None:
        merged: dict[str, Any] = dict(DEFAULT_FIELDS)
        merged.update(fields or {})
        self.fields = merged

    def __getitem__(self, name: str) -> Any:
        return self.fields.get(name)

    def paths(self) -> list[str]:
        """Every path read, in any field."""
        return [p for spec in self.fields.values() for p in ([spec] if isinstance(spec, str) else (spec or ()))]

    def projection(self) -> dict[str, int]:
        """Return a projection with every mapped field (top-level parts)."""
        return {path.split(".")[0]: 1 for path in self.paths() if path}

    def problems(self, record: Mapping[str, Any]) -> list[str]:
        """Return why a raw record cannot be read as a document (empty when it can)."""
        out = []
        if not isinstance(record, Mapping):
            return ["record is not a JSON object"]
        doc_id = get_path(record, self.fields["id"])
        if doc_id is None or doc_id == "":
            out.append(f"missing id field {self.fields['id']!r}")
        elif not isinstance(doc_id, (str, int)) or isinstance(doc_id, bool):
            if type(doc_id).__name__ != "ObjectId":
                out.append(f"id field {self.fields['id']!r} must be a string or an integer")
        title = first_of(record, self.fields["title"])
        if not isinstance(title, str) or not title.strip():
            out.append(f"missing or empty title field {self.fields['title']!r}")
        text = first_of(record, self.fields["text"])
        if not isinstance(text, str):
            out.append(f"missing text field {self.fields['text']!r} (must be a string)")
        year = first_of(record, self.fields.get("year"))
        if year is not None and (isinstance(year, bool) or not isinstance(year, int)):
            out.append(f"year field {self.fields['year']!r} must be an integer")
        return out

    def document(self, record: Mapping[str, Any]) -> Document:
        """Build a Document from a raw record."""

        def get(name: str) -> Any:
            return first_of(record, self.fields.get(name))

        mapped_tops = {p.split(".")[0] for p in self.paths() if p}
        year = get("year")
        date = get("date")
        return Document(
            id=str(get("id")),
            title=str(get("title") or ""),
            text=get("text") or "",
            author=_str_or_none(get("author")),
            date=_str_or_none(date),
            url=_str_or_none(get("url")),
            pages=get("pages") if isinstance(get("pages"), list) else None,
            year=year if isinstance(year, int) and not isinstance(year, bool) else _year_from(date),
            collection=_str_or_none(get("collection")),
            extra={k: v for k, v in record.items() if k not in mapped_tops},
        )


def _str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _year_from(date: Any) -> int | None:
    text = str(date or "")
    return int(text[:4]) if len(text) >= 4 and text[:4].isascii() and text[:4].isdigit() else None


class Store:
    """Historian's view of one database: the host's documents and the plugin's own collections."""

    def __init__(
        self,
        database: Any,
        documents: Any,
        fields: FieldMapping,
        prefix: str = "historian_",
        lock: StoreLock | None = None,
        client: Any = None,
        reader: DocumentReader | None = None,
    ) -> None:
        self.database = database
        self.fields = fields
        self.prefix = prefix
        self._lock = lock
        self._client = client  # closed by close() when this store owns it
        self._reader = reader  # the embedded store's one thread that reads documents by id
        self.documents = self._wrap(documents)

    def _wrap(self, collection: Any) -> Any:
        return SerializedCollection(collection, self._lock) if self._lock else collection

    def collection(self, name: str) -> Any:
        """Return one of Historian's own collections (``runs``, ``jobs``, ``meta``...)."""
        return self._wrap(self.database[self.prefix + name])

    @property
    def runs(self) -> Any:
        return self.collection("runs")

    @property
    def jobs(self) -> Any:
        return self.collection("jobs")

    @property
    def meta(self) -> Any:
        return self.collection("meta")

    @property
    def serializes_writes(self) -> bool:
        """True when write_lock() holds other writers off (the embedded store), False on a server (a no-op)."""
        return self._lock is not None

    def write_lock(self) -> StoreLock | _NullLock:
        """Return the lock that serializes multi-step writes (across processes, for the embedded store)."""
        return self._lock or _NullLock()

    def _id_query(self, source_id: str) -> dict[str, Any]:
        id_field = self.fields["id"]
        candidates: list[Any] = [source_id]
        digits = source_id.removeprefix("-")
        if digits.isascii() and digits.isdigit() and len(digits) <= 19:  # an int64 id; not "²", not 5,000 digits
            candidates.append(int(source_id))
        try:
            from bson import ObjectId

            if ObjectId.is_valid(source_id):
                candidates.append(ObjectId(source_id))
        except ImportError:  # pragma: no cover - bson ships with pymongo
            pass
        return {id_field: candidates[0]} if len(candidates) == 1 else {id_field: {"$in": candidates}}

    def get_document(self, source_id: str) -> Document | None:
        """Return the host document with this id (as a string), or None."""
        query = self._id_query(str(source_id))
        if self._reader is not None:
            record = self._reader(lambda documents: documents.find_one(query))
        else:
            record = self.documents.find_one(query)
        return self.fields.document(record) if record else None

    def iter_documents(self, query: Mapping[str, Any] | None = None, batch_size: int = 200) -> Iterator[Document]:
        """Yield every host document (mapped fields only)."""
        cursor = self.documents.find(dict(query or {}), self.fields.projection()).batch_size(batch_size)
        for record in cursor:
            yield self.fields.document(record)

    def count_documents(self, query: Mapping[str, Any] | None = None) -> int:
        return self.documents.count_documents(dict(query or {}))

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def probe(self) -> str | None:
        """Read each of Historian's collections and write one record: None when all work, else what fails (a
        health check's question: can runs be stored, reindex jobs recorded, history listed). The write is made at
        most once every PROBE_WRITE_EVERY_S per process after one that worked (a flood of health checks does not
        queue the real writes behind its own); a failed one is tried again at the next check."""
        try:
            for name in PROBED:
                self.collection(name).find_one({}, {"_id": 1})
            key = f"{getattr(self.database, 'name', '')}/{self.prefix}"
            if time.monotonic() - _probe_written.get(key, -PROBE_WRITE_EVERY_S) >= PROBE_WRITE_EVERY_S:
                self.meta.replace_one({"_id": "health"}, {"_id": "health", "at": time.time()}, upsert=True)
                _probe_written[key] = time.monotonic()
        except STORE_ERRORS as exc:
            return store_problem(exc)
        return None


class _NullLock:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


class StoreFactory:
    """Open Stores for one app: a shared pymongo client, a host collection, or litemongo per thread."""

    def __init__(
        self,
        *,
        uri: str | None,
        db_name: str,
        collection: str,
        fields: FieldMapping,
        prefix: str,
        data_dir: Path,
        host_collection: Any = None,
    ) -> None:
        self.uri = uri
        self.db_name = db_name
        self.collection_name = collection
        self.fields = fields
        self.prefix = prefix
        self.data_dir = Path(data_dir)
        self.host_collection = host_collection
        self._client: Any = None
        self._client_guard = threading.Lock()
        self._reader: DocumentReader | None = None

    @property
    def kind(self) -> str:
        if self.host_collection is not None:
            return "host collection"
        return "mongodb" if self.uri else "litemongo"

    @property
    def litemongo_path(self) -> Path:
        return self.data_dir / "store"

    def open(self) -> Store:
        """Open a Store usable from the calling thread; close it when done."""
        if self.host_collection is not None:
            coll = self.host_collection
            return Store(coll.database, coll, self.fields, self.prefix)
        if self.uri:
            with self._client_guard:
                if self._client is None:
                    import pymongo

                    self._client = pymongo.MongoClient(self.uri, serverSelectionTimeoutMS=5000, tz_aware=True)
            db = self._client[self.db_name]
            return Store(db, db[self.collection_name], self.fields, self.prefix)
        path = self.litemongo_path
        path.mkdir(parents=True, exist_ok=True)
        db = PerThreadDatabase(path, self.db_name)
        with self._client_guard:
            if self._reader is None:
                self._reader = DocumentReader(path, self.db_name, self.collection_name)
                weakref.finalize(self, self._reader.stop)  # an app let go of (tests make hundreds) ends its thread
        return Store(db, db[self.collection_name], self.fields, self.prefix, lock=lock_for(path), client=db,
                     reader=self._reader)

    def close(self) -> None:
        """Close the shared pymongo client, if one was opened, and end the embedded store's document reader."""
        with self._client_guard:
            if self._client is not None:
                self._client.close()
                self._client = None
            if self._reader is not None:  # a master that forks after this holds no reader thread
                self._reader.stop(wait=5.0)
