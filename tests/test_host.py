"""A host of its own, as the README tells one to add Historian: its login, its layout, documents written after start;
a verified answer inside the host's layout, and a new document answerable after `historian sync` (no full
reindex)."""

from __future__ import annotations

import re

from flask import Flask, redirect, request
from flask_login import LoginManager, UserMixin, login_user
from jinja2 import DictLoader

from historian_blueprint import Historian, get_store

LAYOUT = """<!doctype html><html><head><title>{% block title %}{% endblock %} - Railroad Reader</title>
{% block head %}{% endblock %}</head><body><nav data-testid="host-nav">Railroad Reader</nav>
<main>{% block content %}{% endblock %}</main></body></html>"""

PULLMAN = ("The strike at the Pullman works started on May 11, 1894, when some three thousand employees of the Pullman "
           "Palace Car Company walked out over cuts in their wages. The Pullman company had cut wages but not the "
           "rents of the company houses in the town of Pullman. The strike spread when the American Railway Union "
           "refused to handle Pullman cars in June 1894. The strike of the Pullman works stopped traffic west of "
           "Chicago for weeks. Federal troops were sent to Chicago in July, and the strike at the Pullman works "
           "ended in defeat for the union.")
HOMESTEAD = ("The Homestead strike started on June 30, 1892, when the Carnegie Steel Company locked out the workers "
             "of its mill at Homestead, Pennsylvania. The Homestead strike followed a quarrel over the wage scale of "
             "the skilled workers. On July 6 a battle with Pinkerton guards on the river left several men dead on "
             "both sides. The militia of Pennsylvania then occupied Homestead, and the Homestead strike ended in "
             "November 1892 with the union broken.")


class Reader(UserMixin):
    def __init__(self, user_id: str, role: str) -> None:
        self.id, self.role = user_id, role


def make_host(tmp_path) -> Flask:
    app = Flask("railroad_reader", instance_path=str(tmp_path / "instance"))
    app.config.update(SECRET_KEY="host-secret", WTF_CSRF_ENABLED=False, HISTORIAN_AUTO_MIGRATE=True,
                      HISTORIAN_BASE_TEMPLATE="layout.html", HISTORIAN_DATA_DIR=str(tmp_path / "data"))
    app.jinja_loader = DictLoader({"layout.html": LAYOUT})
    users = {"ada": Reader("ada", "researcher"), "root": Reader("root", "admin")}
    manager = LoginManager(app)
    manager.login_view = "login"
    manager.user_loader(users.get)

    @app.route("/login", methods=["GET", "POST"])
    def login():
        if request.method == "POST":
            login_user(users[request.form["name"]])
            return redirect(request.args.get("next") or "/")
        return "the host's own login form"

    Historian(app)
    return app


def ask(client, question: str) -> str:
    posted = client.post("/historian/ask", data={"question": question})
    assert posted.status_code == 303, posted.data[:300]
    return client.get(posted.headers["Location"]).get_data(as_text=True)


def status_of(page: str) -> str:
    return re.search(r'data-testid="status"[^>]*>\s*([^<]+?)\s*<', page).group(1).lower()


def test_a_host_of_its_own_reaches_a_verified_answer_and_syncs_a_new_document(tmp_path):
    app = make_host(tmp_path)
    client = app.test_client()
    assert client.get("/historian/ask").status_code == 302  # the host's login first
    client.post("/login?next=/historian/ask", data={"name": "ada"})
    with app.app_context():  # documents the host writes after start
        get_store().documents.insert_one({"_id": "pullman", "title": "The Pullman strike", "content": PULLMAN,
                                          "author": "A correspondent", "date": "1894-07-20"})
    runner = app.test_cli_runner()
    first = runner.invoke(args=["historian", "sync"])
    assert first.exit_code == 0 and "succeeded" in first.output, first.output

    page = ask(client, "When did the strike at the Pullman works start?")
    assert 'data-testid="host-nav"' in page and "- Railroad Reader</title>" in page  # inside the host's layout
    assert status_of(page) == "verified" and "May 11, 1894" in page

    with app.app_context():
        get_store().documents.insert_one({"_id": "homestead", "title": "The Homestead strike", "content": HOMESTEAD,
                                          "author": "A correspondent", "date": "1892-07-10"})
    second = runner.invoke(args=["historian", "sync"])
    assert second.exit_code == 0, second.output
    counts = re.search(r"\((.*?)\)", second.output.splitlines()[-1]).group(1)
    assert "new 1" in counts and "unchanged 1" in counts  # the Pullman document kept its vectors
    page = ask(client, "When did the Homestead strike start?")
    assert status_of(page) == "verified" and "June 30, 1892" in page


def test_documents_changed_brings_the_index_in_step_in_the_background(tmp_path):
    import time

    from historian_blueprint import documents_changed
    from historian_blueprint.index import service

    app = make_host(tmp_path)
    with app.app_context():
        get_store().documents.insert_one({"_id": "pullman", "title": "The Pullman strike", "content": PULLMAN})
        first = documents_changed()
        get_store().documents.insert_one({"_id": "homestead", "title": "The Homestead strike", "content": HOMESTEAD})
        assert documents_changed() is None  # a build is running: one more follows it
        deadline = time.time() + 240
        while time.time() < deadline:
            record = service.current_generation(get_store())
            if record and record["documents"] == 2 and record.get("dense"):
                break
            time.sleep(0.5)
        else:
            raise AssertionError("the second document never reached the index")
        assert service.find_job(first)["state"] == "succeeded"
        hits = service.retrieve("Homestead strike Carnegie Pinkerton", top_k=3)
        assert hits and hits[0].source_id == "homestead"


def test_a_build_whose_model_cannot_load_fails_and_frees_the_claim(tmp_path):
    import threading

    from flask import Flask

    from historian_blueprint.index import service

    bad = Flask("bad_model", instance_path=str(tmp_path / "instance"))
    bad.config.update(SECRET_KEY="s", HISTORIAN_AUTO_MIGRATE=True, HISTORIAN_LOGIN_REQUIRED=False,
                      HISTORIAN_DATA_DIR=str(tmp_path / "data"), HISTORIAN_INDEX_EMBEDDING_MODEL=str(tmp_path / "none"))
    Historian(bad)
    with bad.app_context():
        get_store().documents.insert_one({"_id": "pullman", "title": "The Pullman strike", "content": PULLMAN})
    done: list = []
    runner = threading.Thread(target=lambda: done.append(bad.test_cli_runner().invoke(args=["historian", "sync"])),
                              daemon=True)
    runner.start()
    runner.join(120)
    assert done, "sync hung on a model that cannot load"
    assert done[0].exit_code == 1 and "failed" in done[0].output
    with bad.app_context():
        assert service.documents_changed() is not None  # the claim was released: a new build can start


def test_one_services_object_hands_out_what_the_layers_use(tmp_path):
    import pytest

    from historian_blueprint import get_services
    from historian_blueprint.index.service import IndexNotBuilt

    app = make_host(tmp_path)
    with app.app_context():
        services = get_services()
        assert services.app is app and services.settings.base_template == "layout.html"
        assert services.store() is get_store() and services.llm() is services.llm()  # one LLM client per app
        assert services.engine().composer is not None  # the offline engine: no model, no network
        with pytest.raises(IndexNotBuilt, match="reindex"):  # nothing indexed yet: said, not guessed
            services.retriever()
        get_store().documents.insert_one({"_id": "pullman", "title": "The Pullman strike", "content": PULLMAN})
    assert app.test_cli_runner().invoke(args=["historian", "sync"]).exit_code == 0
    with app.app_context():
        assert get_services().retriever().status().state == "serving"
