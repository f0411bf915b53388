"""Storage: a host's own collection and field mapping, litemongo across threads, real MongoDB."""

from __future__ import annotations

import os
import threading
import uuid

import mongomock
import pytest
from flask import Flask

from historian_blueprint import Historian, get_services, get_store


def make_host(tmp_path, collection):
    """A host app of about fifteen lines: its own collection, its own schema."""
    app = Flask("archive_host", instance_path=str(tmp_path / "instance"))
    app.config.update(
        SECRET_KEY="test",
        HISTORIAN_AUTO_MIGRATE=True,
        HISTORIAN_LOGIN_REQUIRED=False,
        HISTORIAN_FIELDS={"id": "ref", "title": "headline", "text": "body", "author": "by", "date": "issued"},
    )
    Historian(app, collection=collection)

    @app.get("/")
    def home():
        return "archive"

    return app


def test_host_collection_with_its_own_field_mapping(tmp_path):
    papers = mongomock.MongoClient().archive.papers
    papers.insert_many(
        [
            {"ref": "p-1", "headline": "Strike at the depot", "body": "The men walked out on Monday.",
             "by": "A. Reporter", "issued": "1894-06-26"},
            {"ref": "p-2", "headline": "Rates hearing", "body": "The commission heard the shippers.", "by": None,
             "issued": "1887"},
        ]
    )
    app = make_host(tmp_path, papers)
    with app.app_context():
        store = get_store()
        doc = store.get_document("p-1")
        assert (doc.title, doc.text, doc.author, doc.date, doc.year) == (
            "Strike at the depot", "The men walked out on Monday.", "A. Reporter", "1894-06-26", 1894
        )
        assert sorted(d.id for d in store.iter_documents()) == ["p-1", "p-2"]
        # the plugin's own collections sit beside the host's, in the same database
        assert store.runs.name == "historian_runs"
        assert store.database.name == "archive"
    # the blueprint reads the host's documents too
    page = app.test_client().get("/historian/")
    assert page.status_code == 200
    assert b'data-testid="doc-count">2<' in page.data


def test_litemongo_store_survives_restart(tmp_path):
    app = Flask("a", instance_path=str(tmp_path / "instance"))
    Historian(app)
    with app.app_context():
        get_store().documents.insert_one({"_id": "d1", "title": "T", "content": "Body"})
    assert (tmp_path / "instance" / "historian" / "store").is_dir()
    again = Flask("b", instance_path=str(tmp_path / "instance"))
    Historian(again)
    with again.app_context():
        assert get_store().get_document("d1").text == "Body"


def test_litemongo_one_client_per_thread_and_serialized_writes(tmp_path):
    app = Flask("a", instance_path=str(tmp_path / "instance"))
    Historian(app)
    stores = get_services(app).stores
    setup = stores.open()
    setup.meta.insert_one({"_id": "counter", "n": 0})
    setup.close()
    errors = []

    def work():
        store = stores.open()
        try:
            for _ in range(50):
                store.meta.update_one({"_id": "counter"}, {"$inc": {"n": 1}})
        except Exception as exc:  # collected and asserted below
            errors.append(exc)
        finally:
            store.close()

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check = stores.open()
    assert errors == []
    assert check.meta.find_one({"_id": "counter"})["n"] == 150
    check.close()


def test_document_ids_match_as_strings_ints_and_object_ids(tmp_path):
    from bson import ObjectId

    coll = mongomock.MongoClient().db.docs
    oid = ObjectId()
    coll.insert_many([{"_id": oid, "title": "A", "content": "a"}, {"_id": 7, "title": "B", "content": "b"}])
    app = Flask("a", instance_path=str(tmp_path / "instance"))
    Historian(app, collection=coll)
    with app.app_context():
        assert get_store().get_document(str(oid)).title == "A"
        assert get_store().get_document("7").title == "B"
        assert get_store().get_document("missing") is None


@pytest.mark.skipif(not os.environ.get("HISTORIAN_TEST_MONGODB_URI"),
                    reason="set HISTORIAN_TEST_MONGODB_URI to test a real MongoDB")
def test_real_mongodb_server(tmp_path):
    db_name = f"historian_test_{uuid.uuid4().hex[:8]}"
    app = Flask("a", instance_path=str(tmp_path / "instance"))
    app.config.update(HISTORIAN_MONGODB_URI=os.environ["HISTORIAN_TEST_MONGODB_URI"], HISTORIAN_DB_NAME=db_name,
                      HISTORIAN_AUTO_MIGRATE=True)
    Historian(app)
    try:
        with app.app_context():
            store = get_store()
            store.documents.insert_one({"_id": "d1", "title": "T", "content": "Body"})
            assert store.get_document("d1").text == "Body"
            assert store.meta.count_documents({"kind": "migration"}) >= 2
    finally:
        stores = get_services(app).stores
        stores.open().database.client.drop_database(db_name)
        stores.close()


def test_a_field_may_name_several_paths_and_an_uploader_is_not_the_author():
    from historian_blueprint.store import FieldMapping

    fields = FieldMapping({"author": ["speaker", "creator"], "date": ["recorded", "date"]})
    upload = {"_id": "d1", "title": "Speech at Canton", "content": "...", "author": "ada", "date": "2026-03-01",
              "speaker": "Eugene V. Debs", "recorded": "1918-06-16"}
    doc = fields.document(upload)
    assert (doc.author, doc.date, doc.year) == ("Eugene V. Debs", "1918-06-16", 1918)
    assert doc.extra["author"] == "ada"  # kept with the record, never cited as its author
    no_speaker = fields.document({k: v for k, v in upload.items() if k not in ("speaker", "recorded")})
    assert no_speaker.author is None and no_speaker.year == 2026
    assert FieldMapping({"author": None}).document(upload).author is None
