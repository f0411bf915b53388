"""The embedded store (``litemongo``) from many threads.

litemongo's SQLite objects are bound to the thread that opened them, so each thread gets its own client
(PerThreadDatabase). Every client also builds, on its first query of a collection, an in-memory index of that
collection by reading every document in it (and again after another connection writes to it): at 24,000 stored
front pages that is ~0.4 s. A request thread, or a graph's worker thread, that fetched a host document with its
own client paid it on every first fetch. Reads of the host's documents by id therefore go to one long-lived
thread per app (DocumentReader), whose client keeps its index for as long as the documents do not change; the
thread ends, closing its client, after ``IDLE_S`` without a read (or when its app's store factory is closed or
collected), and starts again on the next one.
"""

from __future__ import annotations

import os
import queue
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["DocumentReader", "PerThreadCollection", "PerThreadDatabase"]

T = TypeVar("T")


def connect(path: Path) -> Any:
    import litemongo

    return litemongo.connect(str(path))


class PerThreadDatabase:
    """A litemongo database usable from any thread: each thread gets its own client (SQLite objects are
    bound to the thread that opened them). LangGraph runs nodes in worker threads, so one run touches
    the store from several threads."""

    def __init__(self, path: Path, name: str) -> None:
        self.path = path
        self.name = name
        self._clients: dict[int, Any] = {}
        self._guard = threading.Lock()

    def current(self) -> Any:
        ident = threading.get_ident()
        with self._guard:
            client = self._clients.get(ident)
        if client is None:
            client = connect(self.path)
            with self._guard:
                self._clients[ident] = client
        return client[self.name]

    def __getitem__(self, collection: str) -> PerThreadCollection:
        return PerThreadCollection(self, collection)

    def close(self) -> None:
        """Close this thread's client; drop the others (SQLite lets them be freed from any thread)."""
        with self._guard:
            clients, self._clients = self._clients, {}
        mine = clients.pop(threading.get_ident(), None)
        if mine is not None:
            mine.close()


class PerThreadCollection:
    """A collection of a PerThreadDatabase, resolved in the calling thread on every use."""

    def __init__(self, database: PerThreadDatabase, name: str) -> None:
        self.database = database
        self.name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.database.current()[self.name], attr)


class DocumentReader:
    """One long-lived thread that runs reads of one collection with its own client, for every thread of the
    process: ``reader(lambda collection: collection.find_one(query))``. What it is given must return plain
    values (a document, a count), never a cursor, which would be read in another thread. Reads wait their turn
    (one at a time); a read's error is raised in the thread that asked, and the client is opened afresh for the next
    read (a damaged or unreachable file is not kept), as it is when the collection's file was replaced (a restore
    that moved a backup into place: a new inode)."""

    IDLE_S = 600.0

    def __init__(self, path: Path, database: str, collection: str, idle_s: float | None = None) -> None:
        self.path = path
        self.database = database
        self.collection = collection
        self.idle_s = self.IDLE_S if idle_s is None else idle_s
        self._start()
        _READERS.add(self)

    def _start(self) -> None:
        """A fresh state: no thread, an empty queue, an unheld lock (also in a forked child, whose copy of the lock
        may have been held by a thread that does not exist there)."""
        self._guard = threading.Lock()
        self._queue: queue.Queue[tuple[Callable[[Any], Any], Future[Any]] | None] = queue.Queue()
        self._thread: threading.Thread | None = None

    def __call__(self, read: Callable[[Any], T]) -> T:
        future: Future[T] = Future()
        with self._guard:
            if self._thread is None:  # started before anything is queued: a thread that cannot start loses nothing
                thread = threading.Thread(target=self._serve, name="historian-documents", daemon=True)
                thread.start()
                self._thread = thread
            self._queue.put((read, future))  # the thread cannot end meanwhile: its idle end takes the lock
        return future.result()

    def stop(self, wait: float = 0.0) -> None:
        """End the thread (it closes its client) once what is queued is read, waiting up to ``wait`` seconds for it;
        the next read starts it again."""
        with self._guard:
            thread = self._thread
            if thread is not None:
                self._queue.put(None)
        if thread is not None and wait > 0:
            thread.join(wait)

    @property
    def running(self) -> bool:
        """True while the reader's thread (and its client) is alive."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    def _file(self) -> tuple[int, int] | None:
        """The collection file's identity (device, inode); None before it exists."""
        try:
            found = os.stat(Path(self.path) / self.database / self.collection)
        except OSError:
            return None
        return found.st_dev, found.st_ino

    def _serve(self) -> None:
        client, opened = None, None
        try:
            while True:
                try:
                    item = self._queue.get(timeout=self.idle_s)
                except queue.Empty:
                    item = None
                if item is None:  # idle, or stopped
                    with self._guard:  # nothing can be queued between this check and the end of the thread
                        if self._queue.empty():
                            self._thread = None
                            return
                    continue
                read, future = item
                if not future.set_running_or_notify_cancel():
                    continue
                try:
                    if client is not None and self._file() != opened:  # replaced under us: open the new file
                        client.close()
                        client = None
                    if client is None:
                        client = connect(self.path)
                        opened = self._file()
                    future.set_result(read(client[self.database][self.collection]))
                except BaseException as exc:  # noqa: BLE001 - handed to the thread that asked
                    if client is not None:  # not kept: the next read opens the store afresh
                        client.close()
                        client = None
                    future.set_exception(exc)
        finally:
            with self._guard:
                if self._thread is threading.current_thread():
                    self._thread = None
            if client is not None:
                client.close()


_READERS: weakref.WeakSet[DocumentReader] = weakref.WeakSet()


def _reset_after_fork() -> None:
    for reader in list(_READERS):
        reader._start()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)
