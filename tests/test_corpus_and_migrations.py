"""load-corpus and migrate: bad lines reported, reruns change nothing, migrations applied once."""

from __future__ import annotations

import json

from flask import Flask

from historian_blueprint import Historian, get_state, get_store


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
    first.write_text(json.dumps([{"_id": "x", "title": "X", "content": "old"}, {"_id": "y", "title": "Y", "content": "y"}]))
    runner = app.test_cli_runner()
    assert "inserted 2" in runner.invoke(args=["historian", "load-corpus", str(first)]).output
    first.write_text(json.dumps([{"_id": "x", "title": "X", "content": "new"}, {"_id": "y", "title": "Y", "content": "y"}]))
    out = runner.invoke(args=["historian", "load-corpus", str(first)]).output
    assert "inserted 0, updated 1, unchanged 1" in out
    with app.app_context():
        assert get_store().get_document("x").text == "new"


def test_load_corpus_honours_the_field_mapping(tmp_path):
    app = plain_app(tmp_path, HISTORIAN_AUTO_MIGRATE=True, HISTORIAN_FIELDS={"text": "body"})
    path = write_jsonl(
        tmp_path / "d.jsonl",
        [json.dumps({"_id": "a", "title": "A", "body": "text"}), json.dumps({"_id": "b", "title": "B", "content": "wrong field"})],
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
    assert "0 migration(s) applied; schema version 3" in second.output
    with app.app_context():
        records = list(get_store().meta.find({"kind": "migration"}))
        assert sorted(r["name"] for r in records) == ["0001_runs_indexes", "0002_jobs_indexes", "0003_runs_threads"]
        assert "user_history" in get_store().runs.index_information()


def test_pending_migrations_are_reported_at_start_up_and_block_pages(tmp_path, caplog):
    app = plain_app(tmp_path)
    assert "3 pending migration(s)" in caplog.text
    assert get_state(app).pending_migrations == ["0001_runs_indexes", "0002_jobs_indexes", "0003_runs_threads"]
    client = app.test_client()
    page = client.get("/historian/")
    assert page.status_code == 503
    assert b"flask historian migrate" in page.data
    health = client.get("/historian/api/health")
    assert health.status_code == 503 and health.json["status"] == "migrations_pending"
    app.test_cli_runner().invoke(args=["historian", "migrate"])
    assert client.get("/historian/").status_code == 200
    assert client.get("/historian/api/health").json["schema_version"] == 3
