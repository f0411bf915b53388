"""The embedded store from many threads: host documents are read by id in one long-lived thread, so a
request's or a graph's new thread does not pay for reading the whole collection again."""

from __future__ import annotations

import os
import threading
import time

import pytest
from flask import Flask

from historian_blueprint import Historian, get_services
from historian_blueprint.embedded import DocumentReader


def app_with(tmp_path, n: int) -> Flask:
    app = Flask("a", instance_path=str(tmp_path / "instance"))
    Historian(app)
    store = get_services(app).stores.open()
    store.documents.insert_many([{"_id": f"d{i}", "title": f"T{i}", "content": f"Body {i}"} for i in range(n)])
    store.close()
    return app


def in_new_threads(work, n: int) -> list:
    found: list = [None] * n

    def run(k: int) -> None:
        found[k] = work(k)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return found


def test_new_threads_read_documents_without_reading_the_whole_collection_again(tmp_path, monkeypatch):
    from litemongo import sqlite_store

    app = app_with(tmp_path, 300)
    scans = []
    whole = sqlite_store.CollectionStore._iter_items

    def counted(self):
        scans.append(self._path.name)
        yield from whole(self)

    monkeypatch.setattr(sqlite_store.CollectionStore, "_iter_items", counted)
    stores = get_services(app).stores

    def fetch(k: int):  # as a request would: its own thread, its own store
        store = stores.open()
        try:
            return store.get_document(f"d{k * 7}").title
        finally:
            store.close()

    assert in_new_threads(fetch, 8) == [f"T{k * 7}" for k in range(8)]
    assert len(scans) == 1, scans  # each thread's own client used to read all 300 documents first
    assert in_new_threads(fetch, 4) == [f"T{k * 7}" for k in range(4)] and len(scans) == 1


def test_a_document_written_after_the_reader_warmed_is_read(tmp_path):
    app = app_with(tmp_path, 5)
    stores = get_services(app).stores
    store = stores.open()
    assert store.get_document("d1").text == "Body 1"
    store.documents.insert_one({"_id": "late", "title": "Late", "content": "Written later"})
    store.documents.update_one({"_id": "d1"}, {"$set": {"content": "Corrected"}})
    assert store.get_document("late").text == "Written later"
    assert store.get_document("d1").text == "Corrected"
    store.documents.delete_one({"_id": "d2"})
    assert store.get_document("d2") is None
    store.close()


def test_a_failed_read_is_raised_in_the_thread_that_asked_and_the_reader_goes_on(tmp_path):
    reader = DocumentReader(tmp_path / "store", "db", "docs")

    def broken(collection):
        raise ValueError("bad query")

    with pytest.raises(ValueError, match="bad query"):
        reader(broken)
    assert reader(lambda c: c.count_documents({})) == 0


def test_the_reader_ends_when_idle_and_starts_again(tmp_path):
    reader = DocumentReader(tmp_path / "store", "db", "docs", idle_s=0.2)
    reader(lambda c: c.insert_one({"_id": 1}))
    assert reader.running
    deadline = time.monotonic() + 10
    while reader.running and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not reader.running  # its thread ended and closed its client
    assert reader(lambda c: c.find_one({"_id": 1})) == {"_id": 1}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this system")
def test_a_forked_worker_gets_its_own_reader_even_if_the_lock_was_held_at_the_fork(tmp_path):
    reader = DocumentReader(tmp_path / "store", "db", "docs")
    reader(lambda c: c.insert_one({"_id": 1, "title": "forked"}))
    assert reader.running
    read_end, write_end = os.pipe()
    with reader._guard:  # as when the master's reader thread takes its lock at the moment of the fork
        pid = os.fork()
        if pid == 0:  # the child: its reader has no thread, and a lock nobody holds
            try:
                os.write(write_end, reader(lambda c: c.find_one({"_id": 1}))["title"].encode())
            finally:
                os._exit(0)
    os.close(write_end)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and os.waitpid(pid, os.WNOHANG) == (0, 0):
        time.sleep(0.05)
    else:
        if time.monotonic() >= deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
    assert os.read(read_end, 100) == b"forked"  # the child read, instead of waiting forever on the copied lock
    os.close(read_end)
    assert reader(lambda c: c.find_one({"_id": 1}))["title"] == "forked"  # and the parent's reader goes on


def test_a_thread_that_cannot_start_loses_no_read(tmp_path, monkeypatch):
    reader = DocumentReader(tmp_path / "store", "db", "docs")
    real_start = threading.Thread.start

    def refused(self):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refused)
    with pytest.raises(RuntimeError, match="start new thread"):
        reader(lambda c: c.count_documents({}))
    monkeypatch.setattr(threading.Thread, "start", real_start)
    assert reader(lambda c: c.count_documents({})) == 0  # before: every later read waited forever


def test_a_store_file_replaced_under_the_reader_is_read_afresh(tmp_path):
    import shutil

    reader = DocumentReader(tmp_path / "store", "db", "docs")
    reader(lambda c: c.insert_one({"_id": 1, "title": "old"}))
    other = DocumentReader(tmp_path / "backup", "db", "docs")
    other(lambda c: c.insert_one({"_id": 1, "title": "restored"}))
    other.stop(wait=5)
    assert reader(lambda c: c.find_one({"_id": 1}))["title"] == "old"
    for name in ("docs", "docs-wal", "docs-shm"):  # a restore: the backup's files moved into place
        source = tmp_path / "backup" / "db" / name
        if source.exists():
            shutil.move(str(source), str(tmp_path / "store" / "db" / name))
        else:
            (tmp_path / "store" / "db" / name).unlink(missing_ok=True)
    assert reader(lambda c: c.find_one({"_id": 1}))["title"] == "restored"


def test_closing_the_store_factory_ends_the_reader_and_a_later_read_starts_it(tmp_path):
    app = app_with(tmp_path, 3)
    stores = get_services(app).stores
    store = stores.open()
    assert store.get_document("d1").title == "T1"
    reader = store._reader
    assert reader.running
    stores.close()
    deadline = time.monotonic() + 10
    while reader.running and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not reader.running
    assert store.get_document("d2").title == "T2" and reader.running
