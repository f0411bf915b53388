"""load-corpus and migrate: bad lines reported, reruns change nothing, migrations applied once."""

from __future__ import annotations

import json

import pytest
from flask import Flask

from historian_blueprint import Historian, get_services, get_store


def plain_app(tmp_path, **config):
    app = Flask("host", instance_path=str(tmp_path / "instance"))
    app.config.update(SECRET_KEY="t", HISTORIAN_LOGIN_REQUIRED=False, **config)
    Historian(app)
    return app


def write_jsonl(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_load_corpus_reports_bad_lines_and_loads_the_rest(tmp_path):
    app = plain_app(tmp_path, HISTORIAN_AUTO_MIGRATE=True)
    good = [json.dumps({"_id": f"d{i}", "title": f"Doc {i}", "content": f"Text {i}"}) for i in range(3)]
    path = write_jsonl(
        tmp_path / "docs.jsonl",
        [
            good[0],
            '{"_id": "broken", "title": "Half',                          # line 2: not JSON
            json.dumps({"_id": "d-no-text", "title": "No text"}),         # line 3: no content
            good[1],
            json.dumps(["not", "an", "object"]),                         # line 5
            json.dumps({"title": "No id", "content": "x"}),               # line 6
            good[2],
        ],
    )
    result = app.test_cli_runner().invoke(args=["historian", "load-corpus", str(path)])
    assert result.exit_code == 1
    assert f"{path}:line 2: invalid JSON" in result.output
    assert f"{path}:line 3: missing text field 'content'" in result.output
    assert f"{path}:line 5: record is not a JSON object" in result.output
    assert f"{path}:line 6: missing id field '_id'" in result.output
    assert "read 7, inserted 3, updated 0, unchanged 0, rejected 4" in result.output
    with app.app_context():
        store = get_store()
        assert sorted(d.id for d in store.iter_documents()) == ["d0", "d1", "d2"]
        assert store.get_document("broken") is None and store.get_document("d-no-text") is None

    again = app.test_cli_runner().invoke(args=["historian", "load-corpus", str(path)])
    assert "inserted 0, updated 0, unchanged 3, rejected 4" in again.output
    with app.app_context():
        assert get_store().count_documents() == 3


def test_load_corpus_updates_changed_documents_and_reads_json_arrays(tmp_path):
    app = plain_app(tmp_path, HISTORIAN_AUTO_MIGRATE=True)
    first = tmp_path / "a.json"
    first.write_text(json.dumps([{"_id": "x", "title": "X", "content": "old"},
                                 {"_id": "y", "title": "Y", "content": "y"}]))
    runner = app.test_cli_runner()
    assert "inserted 2" in runner.invoke(args=["historian", "load-corpus", str(first)]).output
    first.write_text(json.dumps([{"_id": "x", "title": "X", "content": "new"},
                                 {"_id": "y", "title": "Y", "content": "y"}]))
    out = runner.invoke(args=["historian", "load-corpus", str(first)]).output
    assert "inserted 0, updated 1, unchanged 1" in out
    with app.app_context():
        assert get_store().get_document("x").text == "new"


def test_load_corpus_honours_the_field_mapping(tmp_path):
    app = plain_app(tmp_path, HISTORIAN_AUTO_MIGRATE=True, HISTORIAN_FIELDS={"text": "body"})
    path = write_jsonl(
        tmp_path / "d.jsonl",
        [json.dumps({"_id": "a", "title": "A", "body": "text"}),
         json.dumps({"_id": "b", "title": "B", "content": "wrong field"})],
    )
    result = app.test_cli_runner().invoke(args=["historian", "load-corpus", str(path)])
    assert "line 2: missing text field 'body'" in result.output
    assert "inserted 1" in result.output


def test_missing_file_is_reported(tmp_path):
    app = plain_app(tmp_path, HISTORIAN_AUTO_MIGRATE=True)
    result = app.test_cli_runner().invoke(args=["historian", "load-corpus", str(tmp_path / "nope.jsonl")])
    assert result.exit_code == 1
    assert "no such file" in result.output


def test_migrate_applies_each_migration_once(tmp_path):
    app = plain_app(tmp_path)
    runner = app.test_cli_runner()
    first = runner.invoke(args=["historian", "migrate"])
    assert first.exit_code == 0
    assert "applied 0001_runs_indexes" in first.output
    assert "applied 0002_jobs_indexes" in first.output
    second = runner.invoke(args=["historian", "migrate"])
    assert "0 migration(s) applied; schema version 4" in second.output
    with app.app_context():
        records = list(get_store().meta.find({"kind": "migration"}))
        assert sorted(r["name"] for r in records) == ["0001_runs_indexes", "0002_jobs_indexes", "0003_runs_threads",
                                                      "0004_history"]
        assert "user_history" in get_store().runs.index_information()


def test_pending_migrations_are_reported_at_start_up_and_block_pages(tmp_path, caplog):
    app = plain_app(tmp_path)
    assert "4 pending migration(s)" in caplog.text
    assert get_services(app).pending_migrations == ["0001_runs_indexes", "0002_jobs_indexes", "0003_runs_threads",
                                                 "0004_history"]
    client = app.test_client()
    page = client.get("/historian/")
    assert page.status_code == 503
    assert b"flask historian migrate" in page.data
    health = client.get("/historian/api/health")
    assert health.status_code == 503 and health.json["status"] == "migrations_pending"
    app.test_cli_runner().invoke(args=["historian", "migrate"])
    assert client.get("/historian/").status_code == 200
    assert client.get("/historian/api/health").json["schema_version"] == 4


def test_the_history_migration_lists_runs_stored_before_it_and_deleting_keeps_it_exact(tmp_path):
    from historian_blueprint import history

    app = plain_app(tmp_path)
    with app.app_context():
        store = get_store()
        for n in range(130):  # runs stored by a version without the history: two buckets and a half
            store.runs.insert_one({"_id": f"r{n:03d}", "kind": "ask" if n % 10 else "map", "user_id": "ann",
                                   "question": f"Question {n:03d}", "created_at": 1_700_000_000 + n,
                                   "output": {"status": "flagged", "confidence": 0.6}})
        assert history.page(store, "ann", "ask") == ([], 0)
    app.test_cli_runner().invoke(args=["historian", "migrate"])
    with app.app_context():
        store = get_store()
        first, total = history.page(store, "ann", "ask", 1, 50)
        assert total == 117 and first[0]["_id"] == "r129" and first[0]["output"]["status"] == "flagged"
        assert [r["_id"] for r in history.page(store, "ann", "ask", 3, 50)[0]][-1] == "r001"
        assert history.page(store, "ann", "map")[1] == 13
        for run_id in ("r129", "r060", "r061", "r062"):  # the newest, and three from the middle bucket
            history.delete_run(store, store.runs.find_one({"_id": run_id}))
        everything = [r["_id"] for p in (1, 2, 3) for r in history.page(store, "ann", "ask", p, 50)[0]]
        expected = [f"r{n:03d}" for n in range(129, -1, -1) if n % 10 and n not in (129, 61, 62)]
        assert everything == expected and history.page(store, "ann", "ask")[1] == len(expected)
        assert store.runs.find_one({"_id": "r060"}) is None
        assert [r["_id"] for r in history.page(store, "ann", "ask", 1, 50, query="question 05")[0]] == [
            f"r{n:03d}" for n in range(59, 50, -1)]


def test_history_keys_never_meet_and_a_run_that_fails_to_store_leaves_no_entry(tmp_path):
    from pymongo.errors import DuplicateKeyError

    from historian_blueprint import history

    app = plain_app(tmp_path)
    app.test_cli_runner().invoke(args=["historian", "migrate"])
    with app.app_context():
        store = get_store()
        for user in ("x", "x:0", "~", None, "x#0"):
            history.record_run(store, {"_id": f"run-{user}", "kind": "ask", "user_id": user, "question": f"Q {user}",
                                       "created_at": 1.0})
        for user in ("x", "x:0", "~", None, "x#0"):
            items, total = history.page(store, user, "ask")
            assert total == 1 and [i["_id"] for i in items] == [f"run-{user}"], user
        with pytest.raises(DuplicateKeyError):
            history.record_run(store, {"_id": "run-x", "kind": "ask", "user_id": "x", "question": "again",
                                       "created_at": 2.0})
        assert history.page(store, "x", "ask")[1] == 1


def test_bench_history_lists_every_stored_run_and_prints_page_times(tmp_path):
    app = plain_app(tmp_path)
    result = app.test_cli_runner().invoke(args=["historian", "bench", "history", "--workdir", str(tmp_path / "bench"),
                                                "--runs", "120", "--repeat", "2", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["runs"] == 120 and out["total_on_page_1"] == 120
    assert set(out["pages"]) >= {"/historian/runs (page 1)", "/historian/runs?page=3 (last)"}
    assert all(figures["p95_ms"] > 0 for figures in out["pages"].values())
