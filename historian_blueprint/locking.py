"""The embedded store's write lock: one lock across the threads of a process and across the processes of
one machine, so the server, a CLI reindex and several workers may write the same litemongo store."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

try:  # POSIX; elsewhere the lock spans the threads of one process only
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = ".historian-write.lock"
LOCK_WAIT_S = 30.0


class StoreBusy(RuntimeError):
    """Another process held the embedded store's write lock for longer than we wait."""

    def __init__(self, path: Path, waited: float) -> None:
        super().__init__(
            f"the embedded store {path} stayed locked by another writer (another process, or a thread of this "
            f"one waiting on it) for {waited:.0f} s; "
            "a process may be hung while writing (find it with `fuser` on the lock file and stop it), "
            "or the load needs a real MongoDB (set HISTORIAN_MONGODB_URI)"
        )


class StoreLock:
    """A reentrant write lock over one embedded store, held across the threads of this process (an RLock)
    and across processes (an exclusive ``flock`` on a file in the store's folder, taken by the outermost
    holder). A process forked while holding nothing reopens the file, so forked workers never share one
    open lock file (flock locks belong to the open file, which fork would share)."""

    def __init__(self, folder: Path, wait_s: float = LOCK_WAIT_S) -> None:
        self.folder = folder
        self.wait_s = wait_s
        self._rlock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None
        self._pid = 0

    def _file(self) -> int:
        if self._fd is None or self._pid != os.getpid():
            self._fd = os.open(self.folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
            self._pid = os.getpid()
        return self._fd

    def acquire(self) -> None:
        """Take the lock, or raise StoreBusy after ``wait_s`` in all (the queue of this process's threads
        and the other process's hold share one deadline)."""
        deadline = time.monotonic() + self.wait_s
        if not self._rlock.acquire(timeout=self.wait_s):
            raise StoreBusy(self.folder, self.wait_s)
        if self._depth == 0 and fcntl is not None:
            try:
                self._lock_file(deadline)
            except BaseException:
                self._rlock.release()
                raise
        self._depth += 1

    def _lock_file(self, deadline: float) -> None:
        fd = self._file()
        delay = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise StoreBusy(self.folder, self.wait_s) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)

    def release(self) -> None:
        self._depth -= 1
        if self._depth == 0 and fcntl is not None and self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        self._rlock.release()

    def __enter__(self) -> StoreLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


_LOCKS: dict[str, StoreLock] = {}
_LOCKS_GUARD = threading.Lock()


def _reset_after_fork() -> None:
    # A thread of the parent may have held a lock, or the registry's guard, at the fork; the child starts
    # with every lock free.
    global _LOCKS_GUARD
    _LOCKS_GUARD = threading.Lock()
    for lock in _LOCKS.values():
        if lock._fd is not None:
            os.close(lock._fd)
        lock._rlock, lock._depth, lock._fd = threading.RLock(), 0, None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def lock_for(path: Path) -> StoreLock:
    """The one lock of the store in this folder, for this process."""
    key = str(path.resolve())
    with _LOCKS_GUARD:
        if key not in _LOCKS:
            _LOCKS[key] = StoreLock(Path(key))
        return _LOCKS[key]
