"""The embedded store shared by several processes on one machine: writes hold an inter-process lock."""

from __future__ import annotations

import multiprocessing
import time

import pytest

from historian_blueprint.locking import LOCK_FILE, StoreBusy, StoreLock
from historian_blueprint.store import FieldMapping, StoreFactory

WORKERS = 3
INCREMENTS = 50


def _factory(folder: str) -> StoreFactory:
    return StoreFactory(uri=None, db_name="historian", collection="documents", fields=FieldMapping(),
                        prefix="historian_", data_dir=folder)


def _increment(folder: str, n: int, ready, start) -> None:
    store = _factory(folder).open()
    store.meta.find_one({"_id": "counter"})  # opened and warm before the race starts
    ready.release()
    start.wait(60)
    try:
        for _ in range(n):
            store.meta.update_one({"_id": "counter"}, {"$inc": {"n": 1}}, upsert=True)
    finally:
        store.close()


def _hold_lock(folder: str, held, release) -> None:
    store = _factory(folder).open()
    with store.write_lock():
        held.set()
        release.wait(30)
    store.close()


def test_three_processes_times_fifty_increments_give_150(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    setup = _factory(str(tmp_path)).open()
    setup.meta.insert_one({"_id": "counter", "n": 0})
    setup.close()
    ready, start = ctx.Semaphore(0), ctx.Event()
    procs = [ctx.Process(target=_increment, args=(str(tmp_path), INCREMENTS, ready, start)) for _ in range(WORKERS)]
    for p in procs:
        p.start()
    for _ in procs:
        assert ready.acquire(timeout=60)
    start.set()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    store = _factory(str(tmp_path)).open()
    assert store.meta.find_one({"_id": "counter"})["n"] == WORKERS * INCREMENTS
    store.close()
    assert (tmp_path / "store" / LOCK_FILE).exists()


def test_a_writer_waits_for_another_process_then_fails_fast_with_the_cause_and_the_fix(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    held, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold_lock, args=(str(tmp_path), held, release))
    holder.start()
    try:
        assert held.wait(60)
        lock = StoreLock((tmp_path / "store").resolve(), wait_s=0.3)
        began = time.monotonic()
        with pytest.raises(StoreBusy, match="locked by another writer.*HISTORIAN_MONGODB_URI"):
            lock.acquire()
        assert time.monotonic() - began < 5
        # threads of this process queued behind the other process share one deadline, not one each in turn
        failures = []

        def writer() -> None:
            try:
                lock.acquire()
            except StoreBusy:
                failures.append(time.monotonic())

        import threading

        began = time.monotonic()
        threads = [threading.Thread(target=writer) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        assert len(failures) == 3 and max(failures) - began < 0.75
        # the in-process lock was given back: this thread can take it once the other process lets go
        release.set()
        holder.join(30)
        with lock:
            with lock:  # reentrant in one thread
                pass
    finally:
        release.set()
        holder.join(30)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _token(html: str) -> str:
    import re

    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)


def _indexed_demo_home(tmp_path):
    """A demo home on a few short documents, indexed; the environment that serves it."""
    import os

    from historian_blueprint import get_store
    from historian_blueprint.demo import create_app
    from tests.conftest import small_docs
    from tests.test_index import run_reindex

    home = tmp_path / "home"
    env = dict(os.environ, HISTORIAN_DEMO_HOME=str(home), HISTORIAN_DEMO_USERS="alice:alice-pw:researcher")
    app = create_app({"DEMO_HOME": str(home), "DEMO_LOAD_CORPUS": False})
    with app.app_context():
        store = get_store()
        store.documents.insert_many(small_docs(per_file=2, chars=1200))
        store.meta.insert_one({"_id": "demo:sample_corpus", "kind": "demo"})  # the server must not load it
    assert run_reindex(app)["state"] == "succeeded"
    return app, env


@pytest.mark.parametrize("workers", [1, 2])
def test_a_served_instance_beside_a_cli_reindex_loses_no_run_and_no_job(tmp_path, workers):
    """The documented admin flow: `historian reindex` (a second process) while the server answers asks; with
    `--workers 2`, two gunicorn workers forked from a master that preloaded the models and the serving generation,
    that each load the new generation when it is swapped in, and that stop when told to."""
    import json
    import signal
    import subprocess
    import sys
    import threading
    import urllib.request
    from http.cookiejar import CookieJar
    from pathlib import Path
    from urllib.parse import urlencode

    from historian_blueprint import get_store

    app, env = _indexed_demo_home(tmp_path)

    bin_dir = Path(sys.executable).parent
    port = _free_port()
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        server = subprocess.Popen([str(bin_dir / "historian"), "serve", "--port", str(port), "--workers", str(workers)],
                                  env=env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
        deadline = time.time() + 60
        while True:
            try:
                login_page = opener.open(f"{base}/login", timeout=2).read().decode()
                break
            except OSError:
                assert time.time() < deadline and server.poll() is None, "the server did not start"
                time.sleep(0.3)
        form = {"username": "alice", "password": "alice-pw"}
        if 'name="csrf_token"' in login_page:
            form["csrf_token"] = _token(login_page)
        opener.open(f"{base}/login", data=urlencode(form).encode(), timeout=10).read()
        token = _token(opener.open(f"{base}/historian/ask", timeout=10).read().decode())

        asked: list[str] = []
        failures: list[str] = []
        cli_done = threading.Event()

        def ask_until_reindexed() -> None:
            questions = ["What did the president say about railroads?", "What happened to the tariff?"]
            i = 0
            while not cli_done.is_set() or i < 3:
                body = json.dumps({"question": questions[i % 2]}).encode()
                request = urllib.request.Request(f"{base}/historian/api/ask", data=body, method="POST",
                                                 headers={"Content-Type": "application/json", "X-CSRFToken": token})
                try:
                    out = json.loads(opener.open(request, timeout=60).read())
                    asked.append(out["metadata"]["run_id"])
                except Exception as exc:  # noqa: BLE001 - every failure is the finding
                    failures.append(repr(exc))
                i += 1

        askers = [threading.Thread(target=ask_until_reindexed) for _ in range(2)]
        for t in askers:
            t.start()
        cli = subprocess.run([str(bin_dir / "historian"), "reindex", "--full"], env=env, capture_output=True,
                             text=True, timeout=300)
        cli_done.set()
        for t in askers:
            t.join(120)
        assert cli.returncode == 0, cli.stderr
        assert "succeeded" in cli.stdout
        if workers > 1:  # gunicorn's workers serve, the master does not
            from historian_lab.bench.load import _children
            assert len(_children(server.pid)) == workers
    finally:
        server.terminate()
        server.wait(timeout=20)  # a worker forked from a master that loaded ONNX Runtime once hung at exit for 30 s

    # gunicorn stops its workers and exits 0 (Flask's server just dies of the signal); no worker had to be killed
    assert server.returncode == (0 if workers > 1 else -signal.SIGTERM) and "was sent SIG" not in log.read_text()
    assert failures == []
    assert len(asked) >= 6
    with app.app_context():
        store = get_store()
        stored = {r["_id"] for r in store.runs.find({}, {"_id": 1})}
        assert set(asked) <= stored and len(stored) == len(asked)
        jobs = list(store.jobs.find({}))
        assert len(jobs) == 2 and all(j["state"] == "succeeded" for j in jobs)


def test_bench_load_serves_the_demo_drives_askers_through_a_reindex_and_cleans_up(tmp_path):
    import json
    import subprocess
    import sys
    from pathlib import Path

    from historian_blueprint import get_store

    app, env = _indexed_demo_home(tmp_path)
    done = subprocess.run([str(Path(sys.executable).parent / "historian"), "bench", "load", "--users", "3",
                           "--duration", "4", "--warm", "2", "--reindex", "--json"],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    assert out["users"] == 3 and out["load"]["asks"] >= 3 and out["load"]["errors"] == 0
    assert out["load"]["throughput_per_s"] > 0 and out["load"]["latency_ms"]["p95"] > 0
    assert out["single_user"]["ok"] == 2 and out["single_user"]["server_cpu_s_per_ask"] > 0
    assert out["reindex"]["state"] == "succeeded" and out["reindex"]["failed_during"] == 0
    assert out["reindex"]["asks_during"] >= 1
    with app.app_context():  # the temporary account and its runs are gone
        store = get_store()
        assert not [u["_id"] for u in store.database["users"].find({}) if u["_id"].startswith("bench-")]
        assert store.runs.count_documents({}) == 0
