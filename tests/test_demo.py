"""The demo document reader: login, list, search, read; first start and restarts; the console script."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path
from urllib.parse import urlencode

import pytest

from historian_blueprint import get_store
from historian_lab.bench.load import _children
from historian_blueprint.demo import create_app, parse_users
from tests.conftest import form_token, login


def test_anonymous_users_are_sent_to_login(client):
    for path in ("/", "/documents/sotu-1860-james-buchanan", "/historian/"):
        response = client.get(path)
        assert response.status_code == 302
        assert response.headers["Location"].startswith("/login")


def test_wrong_password_is_refused(client):
    response = client.post("/login", data={"username": "alice", "password": "nope", "csrf_token": form_token(client)})
    assert response.status_code == 401
    assert b"wrong password" in response.data


def test_all_319_sample_documents_are_listed_and_paged(researcher):
    first = researcher.get("/")
    assert b"319 documents" in first.data
    assert b"Page 1 of 16" in first.data
    titles = set()
    for page in range(1, 17):
        html = researcher.get(f"/?page={page}").data.decode()
        titles.update(re.findall(r'href="/documents/([^"]+)"', html))
    assert len(titles) == 319


def test_search_titles_and_full_text(researcher):
    by_title = researcher.get("/?q=Interview with Benjamin Russell").data.decode()
    assert "1 document matching" in by_title
    full_text = researcher.get("/?q=transcontinental").data.decode()
    count = int(re.search(r"(\d+) documents? matching", full_text).group(1))
    assert 0 < count < 319
    odd = researcher.get("/?q=" + "(unbalanced[").data.decode()
    assert "0 documents matching" in odd


def test_document_page_shows_the_full_text(app, researcher):
    with app.app_context():
        doc = get_store().get_document("sotu-1860-james-buchanan")
    page = researcher.get("/documents/sotu-1860-james-buchanan").data.decode()
    assert "Annual Message to Congress (1860)" in page
    assert "James Buchanan" in page
    assert "Throughout the year since our last meeting" in page
    assert len(doc.text) > 10000
    assert researcher.get("/documents/no-such-doc").status_code == 404


def test_document_text_is_escaped(app, researcher):
    with app.app_context():
        get_store().documents.insert_one({"_id": "xss", "title": "<script>alert(1)</script>", "content": "<b>bold</b>"})
    page = researcher.get("/documents/xss").data.decode()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_restart_keeps_data_and_does_not_load_twice(tmp_path, demo_users, capsys):
    home = str(tmp_path / "home")
    first = create_app({"TESTING": True, "DEMO_HOME": home})
    assert "loaded the sample corpus" in capsys.readouterr().err
    with first.app_context():
        get_store().documents.update_one({"_id": "sotu-1860-james-buchanan"},
                                         {"$set": {"title": "Edited by a curator"}})
    second = create_app({"TESTING": True, "DEMO_HOME": home})
    assert "loaded the sample corpus" not in capsys.readouterr().err
    with second.app_context():
        store = get_store()
        assert store.count_documents() == 319
        assert store.get_document("sotu-1860-james-buchanan").title == "Edited by a curator"


def test_first_start_creates_users_with_random_passwords_once(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("HISTORIAN_DEMO_USERS", raising=False)
    home = str(tmp_path / "home")
    app = create_app({"TESTING": True, "DEMO_HOME": home, "DEMO_LOAD_CORPUS": False})
    out = capsys.readouterr().err
    passwords = dict(re.findall(r"^\s+(researcher|admin)\s+password: (\S+)$", out, re.M))
    assert set(passwords) == {"researcher", "admin"}
    with app.app_context():
        stored = get_store().database["users"].find_one({"_id": "admin"})
        assert passwords["admin"] not in str(stored)  # hashed, not stored in clear
    login(app.test_client(), "admin", passwords["admin"])
    create_app({"TESTING": True, "DEMO_HOME": home, "DEMO_LOAD_CORPUS": False})
    assert "password" not in capsys.readouterr().err


def test_demo_users_spec_is_validated():
    assert parse_users("a:pw:admin, b:x:researcher") == [("a", "pw", "admin"), ("b", "x", "researcher")]
    with pytest.raises(ValueError, match="role 'boss'"):
        parse_users("a:pw:boss")
    with pytest.raises(ValueError, match="name:password:role"):
        parse_users("a:pw")


def test_admin_sees_historian_inside_the_host_layout(admin):
    page = admin.get("/historian/").data.decode()
    assert "Document reader" in page  # the host's navigation, from HISTORIAN_BASE_TEMPLATE
    assert 'data-testid="doc-count">319<' in page


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_historian_serve_runs_the_demo_on_localhost(tmp_path):
    port = _free_port()
    env = dict(os.environ, HISTORIAN_DEMO_HOME=str(tmp_path / "home"), HISTORIAN_DEMO_USERS="alice:pw:researcher")
    script = Path(sys.executable).parent / "historian"
    proc = subprocess.Popen([str(script), "serve", "--port", str(port), "--workers", "2"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
        deadline = time.time() + 60
        while True:
            try:
                banner = opener.open(f"http://127.0.0.1:{port}/login", timeout=2).headers.get("Server", "")
                break
            except OSError:
                if time.time() > deadline or proc.poll() is not None:
                    raise AssertionError(proc.stdout.read() if proc.poll() is not None
                                         else "server did not start") from None
                time.sleep(0.3)
        token = re.search(r'name="csrf_token" value="([^"]+)"',
                          opener.open(f"http://127.0.0.1:{port}/login", timeout=10).read().decode()).group(1)
        body = urlencode({"username": "alice", "password": "pw", "csrf_token": token}).encode()
        page = opener.open(f"http://127.0.0.1:{port}/login", data=body, timeout=10).read().decode()
        assert "319 documents" in page
        assert "Werkzeug" not in banner and "Python" not in banner
        builders = [pid for pid in _children(proc.pid) if "reindex" in _cmdline(pid)]  # the first build, beside it
        assert len(builders) == 1
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        proc.stdout.close()
    deadline = time.time() + 30
    while any(_alive(pid) for pid in builders) and time.time() < deadline:
        time.sleep(0.2)
    assert not any(_alive(pid) for pid in builders), "the first build went on after the server stopped"


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_the_demo_reader_links_odd_ids_to_themselves_too(researcher, app):
    with app.app_context():
        get_store().documents.insert_one({"_id": "evil/../x", "title": "Odd one", "content": "Held."})
    listing = researcher.get("/?q=Odd one").get_data(as_text=True)
    assert 'href="/documents/evil%2F..%2Fx"' in listing
    assert "Held." in researcher.get("/documents/evil%2F..%2Fx").get_data(as_text=True)


def test_help_writes_nothing(tmp_path):
    """`historian --help` and `historian serve --help` print their help without making a demo home, users or a
    store (the app is made only when a command runs)."""
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HISTORIAN_")}
    env.update(HISTORIAN_DEMO_HOME=str(home), HOME=str(tmp_path / "user"))
    script = Path(sys.executable).with_name("historian")
    for args in (["--help"], ["serve", "--help"], ["reindex", "--help"], ["bench", "--help"]):
        done = subprocess.run([str(script), *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and "Usage: historian" in done.stdout, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "a --help wrote files"
