"""Issue 14, the demo host's login: CSRF on login and logout, safe `next`, throttling, logout ends every
session of the user, security headers on every page, a SameSite session cookie. Issue 25: the throttle cannot
lock the owner out, a success elsewhere gives a guesser no more guesses, and timing does not tell names apart.
Issue 38: the name-wide slow-down refuses an early attempt at once (429 with Retry-After) instead of holding a
server thread, and gives the refused caller a turn that guesses from elsewhere cannot take."""

from __future__ import annotations


import pytest

from historian_blueprint.demo import create_app, safe_next
from tests.conftest import form_token, login


def test_login_and_logout_without_a_csrf_token_are_refused(client):
    cross_site = client.post("/login", data={"username": "alice", "password": "alice-pw"})
    assert cross_site.status_code == 400 and b"CSRF" in cross_site.data
    assert client.get("/").status_code == 302  # not logged in
    login(client)
    forged = client.post("/logout")
    assert forged.status_code == 400
    assert client.get("/").status_code == 200  # still logged in
    assert client.post("/logout", data={"csrf_token": form_token(client, "/")}).status_code == 302
    assert client.get("/").status_code == 302


@pytest.mark.parametrize("target", [
    "/%09/evil.example/", "/%0d/x", "/%0a/x", "//evil.example", "/\\evil.example", "https://evil.example/",
    "javascript:alert(1)", "/%E2%80%A8/evil", "%2F%2Fevil.example", "",
])
def test_login_never_redirects_off_site_or_into_a_header_error(client, target):
    response = client.post(f"/login?next={target}", data={"username": "alice", "password": "alice-pw",
                                                          "csrf_token": form_token(client)})
    assert response.status_code == 302
    assert response.headers["Location"] == "/"


def test_login_follows_a_local_next(client):
    response = client.post("/login?next=/historian/ask%3Fparent%3Dabc", data={
        "username": "alice", "password": "alice-pw", "csrf_token": form_token(client)})
    assert response.headers["Location"] == "/historian/ask?parent=abc"
    assert safe_next("/documents/a b") is None and safe_next("/documents/x") == "/documents/x"


def _try(client, name, password):
    return client.post("/login", data={"username": name, "password": password, "csrf_token": form_token(client)})


def _from(client, address, name, password):
    return client.post("/login", data={"username": name, "password": password, "csrf_token": form_token(client)},
                       environ_base={"REMOTE_ADDR": address})


def _throttle_app(tmp_path, monkeypatch, **config):
    """A demo app whose throttle clock is ``clock[0]`` (returned with it)."""
    from historian_blueprint.demo import login as throttle

    clock = [1_000_000.0]
    monkeypatch.setattr(throttle, "_now", lambda: clock[0])
    return create_app({"DEMO_HOME": str(tmp_path / "home"), "DEMO_LOAD_CORPUS": False, **config}), clock


def test_five_wrong_passwords_lock_the_user_where_they_were_guessed_then_the_window_frees_it(
    tmp_path, demo_users, monkeypatch,
):
    from historian_blueprint.demo import login as throttle

    clock = [1_000_000.0]
    monkeypatch.setattr(throttle, "_now", lambda: clock[0])  # the throttle's clock only
    app = create_app({"DEMO_HOME": str(tmp_path / "home"), "DEMO_LOAD_CORPUS": False, "DEMO_LOGIN_WINDOW_S": 600})
    guesser = app.test_client()
    for _ in range(5):
        assert _try(guesser, "alice", "guess").status_code == 401
    refused = _try(guesser, "alice", "alice-pw")  # the right password, from where the guesses came: too late
    assert refused.status_code == 429
    assert b"Too many failed logins for this user" in refused.data and b"Try again in 10 minutes" in refused.data
    clock[0] += 300
    assert b"Try again in 5 minutes" in _try(guesser, "alice", "alice-pw").data
    assert _try(guesser, "root", "root-pw").status_code == 302  # another user from that address is not locked
    # Issue 25 changed this: a new address used to get one guess, then be refused because the name had five
    # failures elsewhere; that name-wide refusal let anyone lock the owner out. Now an address is refused a name
    # only after its own failures on it (the name's failures elsewhere slow it down, see the slow-down test).
    other = app.test_client()
    assert _from(other, "10.0.0.10", "alice", "guess").status_code == 401
    slowed = _from(other, "10.0.0.10", "alice", "alice-pw")  # six failures on alice: the next waits 0.5 s
    assert slowed.status_code == 429 and slowed.headers["Retry-After"] == "1"
    clock[0] += 0.5
    assert _from(other, "10.0.0.10", "alice", "alice-pw").status_code == 302
    # the owner, from an address that has not failed on alice, still gets in after one step: guessing cannot lock
    # her out
    owner = app.test_client()
    assert _from(owner, "10.0.0.9", "alice", "alice-pw").status_code == 429
    clock[0] += 1
    assert _from(owner, "10.0.0.9", "alice", "alice-pw").status_code == 302
    clock[0] += 301  # the window has passed
    assert _try(guesser, "alice", "alice-pw").status_code == 302


def test_guesses_from_other_addresses_cannot_lock_the_owner_out(tmp_path, demo_users, monkeypatch):
    app, clock = _throttle_app(tmp_path, monkeypatch)
    owner = app.test_client()
    assert _from(owner, "10.0.0.1", "alice", "typo").status_code == 401  # the owner mistypes once
    for i in range(4):  # one wrong guess from each of four other addresses: five failures on alice
        assert _from(app.test_client(), f"10.0.1.{i}", "alice", "guess").status_code == 401
    assert _from(app.test_client(), "10.0.1.4", "alice", "guess").status_code == 429  # slowed: 0.25 s to wait
    waiting = _from(owner, "10.0.0.1", "alice", "alice-pw")
    assert waiting.status_code == 429 and waiting.headers["Retry-After"] == "1"  # a step to wait, not a lock
    clock[0] += 0.25
    assert _from(owner, "10.0.0.1", "alice", "alice-pw").status_code == 302  # the owner gets in


def test_the_owner_logging_in_elsewhere_gives_the_guesser_no_more_guesses(tmp_path, demo_users, monkeypatch):
    app, clock = _throttle_app(tmp_path, monkeypatch)
    guesser = app.test_client()
    for _ in range(5):  # the guesser's whole allowance for (alice, his address)
        assert _from(guesser, "10.0.9.9", "alice", "guess").status_code == 401
    assert _from(guesser, "10.0.9.9", "alice", "guess").status_code == 429
    clock[0] += 0.25  # five failures on alice: one slow-down step
    login(app.test_client(), "alice", "alice-pw")  # the owner, from elsewhere
    clock[0] += 0.5  # her attempt counted until it succeeded: one more step
    assert _from(app.test_client(), "10.0.0.1", "alice", "alice-pw").status_code == 302  # and again, another address
    refused = _from(guesser, "10.0.9.9", "alice", "alice-pw")  # still refused, even with the right password
    assert refused.status_code == 429 and b"Too many failed logins for this user" in refused.data
    assert _from(guesser, "10.0.9.9", "root", "root-pw").status_code == 302  # only for that name
    clock[0] += 901  # the window (900 s) has passed
    assert _from(guesser, "10.0.9.9", "alice", "guess").status_code == 401


def test_failures_on_a_name_slow_every_address_down_and_lock_none_out(tmp_path, demo_users, monkeypatch):
    app, clock = _throttle_app(tmp_path, monkeypatch)
    fresh = iter(f"10.0.3.{i}" for i in range(200))  # a new address for each guess
    for _ in range(5):  # five failures on alice, each from its own address: no slow-down yet
        assert _from(app.test_client(), next(fresh), "alice", "guess").status_code == 401
    steps = []
    for _ in range(6):  # more guesses on alice from fresh addresses: refused until the step has passed
        first = _from(app.test_client(), next(fresh), "alice", "guess")
        assert first.status_code == 429 and b"Too many failed sign-ins for this name; try again in" in first.data
        wait = int(first.headers["Retry-After"])
        waited = 0.0
        while _from(app.test_client(), next(fresh), "alice", "guess").status_code == 429:
            clock[0] += 0.125
            waited += 0.125
        assert 0 < waited <= wait
        steps.append(waited)
    assert steps == [0.25, 0.5, 1.0, 2.0, 4.0, 4.0]  # 0.25 s x 2^(failures - 5), at most 4 s
    owner = app.test_client()
    refused = _from(owner, "10.0.0.1", "alice", "alice-pw")  # the owner, now: told to come back in 4 s
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "4"
    assert _from(app.test_client(), "10.0.0.2", "nobody", "guess").status_code == 401  # other names do not wait
    assert _from(app.test_client(), "10.0.0.3", "root", "root-pw").status_code == 302
    clock[0] += 4
    assert _from(app.test_client(), next(fresh), "alice", "guess").status_code == 401  # a guesser takes the turn
    assert _from(app.test_client(), next(fresh), "alice", "guess").status_code == 429  # and pushes the name on
    assert _from(owner, "10.0.0.1", "alice", "alice-pw").status_code == 302  # the owner's turn held: she gets in
    clock[0] += 901
    assert _from(app.test_client(), "10.0.0.1", "alice", "alice-pw").status_code == 302  # the window has passed


def test_a_refused_attempt_answers_at_once_and_tells_nothing(tmp_path, demo_users, monkeypatch):
    import time

    app, clock = _throttle_app(tmp_path, monkeypatch)
    for i in range(10):  # guesses from ten addresses, a step apart: the name's step is now 4 s
        assert _from(app.test_client(), f"10.0.4.{i}", "alice", "guess").status_code == 401
        clock[0] += 4
    assert _from(app.test_client(), "10.0.4.99", "alice", "guess").status_code == 401
    owner = app.test_client()
    start = time.perf_counter()
    right = _from(owner, "10.0.0.1", "alice", "alice-pw")
    elapsed = time.perf_counter() - start
    wrong = _from(app.test_client(), "10.0.0.2", "alice", "guess")
    assert elapsed < 0.2, elapsed  # no wait on the server: the 4 s are the caller's
    assert right.status_code == wrong.status_code == 429  # the right password is not checked: no oracle
    assert right.headers["Retry-After"] == wrong.headers["Retry-After"] == "4"
    message = b"Too many failed sign-ins for this name; try again in 4 s."
    assert message in right.data and message in wrong.data
    clock[0] += 3.9
    assert _from(owner, "10.0.0.1", "alice", "alice-pw").headers["Retry-After"] == "1"  # still early
    clock[0] += 0.1
    assert _from(owner, "10.0.0.1", "alice", "alice-pw").status_code == 302


def test_a_turn_is_one_checked_attempt_from_the_address_it_was_given_to(tmp_path, demo_users, monkeypatch):
    app, clock = _throttle_app(tmp_path, monkeypatch)
    for i in range(10):  # the name's step is now 4 s
        assert _from(app.test_client(), f"10.0.6.{i}", "alice", "guess").status_code == 401
        clock[0] += 4
    guesser = app.test_client()
    assert _from(guesser, "10.0.7.1", "alice", "guess").status_code == 401  # checked: the name waits 4 s
    assert _from(guesser, "10.0.7.2", "alice", "guess").status_code == 429  # given a turn, for 10.0.7.2 only
    clock[0] += 4
    assert _from(app.test_client(), "10.0.7.3", "alice", "guess").status_code == 401  # someone else goes first
    thief = app.test_client()  # the same session (its turn) from another address: refused
    thief.set_cookie("session", guesser.get_cookie("session").value)
    assert _from(thief, "10.0.7.4", "alice", "guess").status_code == 429
    assert _from(guesser, "10.0.7.2", "alice", "guess").status_code == 401  # from its own: checked at once
    assert _from(guesser, "10.0.7.2", "alice", "guess").status_code == 429  # once


def test_a_turn_gives_an_address_that_has_guessed_wrong_no_extra_guess(tmp_path, demo_users, monkeypatch):
    """Turns are for an owner arriving: many guessing addresses holding turns get no more checked guesses than the
    name's pace gives them."""
    app, clock = _throttle_app(tmp_path, monkeypatch)
    for i in range(10):  # the name's step is now 4 s
        assert _from(app.test_client(), f"10.0.9.{i}", "alice", "guess").status_code == 401
        clock[0] += 4
    guessers = [app.test_client() for _ in range(8)]
    for n, guesser in enumerate(guessers):  # each has guessed wrong from its own address once already
        assert _from(guesser, f"10.1.0.{n}", "alice", "guess").status_code in (401, 429)
        clock[0] += 4
    clock[0] += 0.5
    for n, guesser in enumerate(guessers):  # each refused now, so each holds a turn
        _from(guesser, f"10.1.0.{n}", "alice", "guess")
    clock[0] += 4
    checked = sum(_from(g, f"10.1.0.{n}", "alice", "guess").status_code == 401 for n, g in enumerate(guessers))
    assert checked <= 1  # one step passed: at most one checked guess, turns or not


def test_two_workers_reading_the_same_time_take_one_turn(tmp_path, demo_users, monkeypatch):
    """Without a shared lock (a real MongoDB), the name's time moves only if it is still the time read."""
    from contextlib import nullcontext

    from historian_blueprint import get_store
    from historian_blueprint.demo.login import LoginThrottle

    app, clock = _throttle_app(tmp_path, monkeypatch)
    other: list = []
    with app.app_context():
        collection = get_store().database["login_failures"]

        class Raced:
            """The collection, with another worker's whole attempt landing just before this one moves the time."""

            def __getattr__(self, name):
                return getattr(collection, name)

            def update_one(self, query, change, **options):
                if "not_before" in query and not other:
                    other.append(LoginThrottle(collection, nullcontext(), 5, 20, 900).attempt("alice", "10.0.8.2"))
                return collection.update_one(query, change, **options)

        for i in range(5):  # five failures: the next attempt may come 0.25 s after the fifth
            assert LoginThrottle(collection, nullcontext(), 5, 20, 900).attempt("alice", f"10.0.8.1{i}").refused is None
        clock[0] += 0.25
        mine = LoginThrottle(Raced(), nullcontext(), 5, 20, 900).attempt("alice", "10.0.8.1")
    assert other[0].refused is None  # the other worker took the turn
    assert mine.refused and mine.retry_after == 1 and mine.turn == clock[0] + 0.5  # this one waits for the next


def test_unknown_and_known_names_take_as_long_to_refuse(tmp_path, demo_users):
    import statistics
    import time

    app = create_app({"DEMO_HOME": str(tmp_path / "home"), "DEMO_LOAD_CORPUS": False,
                      "DEMO_LOGIN_MAX_FAILURES": 1000, "DEMO_LOGIN_MAX_FAILURES_PER_ADDRESS": 1000})
    client = app.test_client()
    token = form_token(client)
    _try(client, "nobody", "guess")  # warm-up
    times: dict[str, list[float]] = {"known": [], "unknown": []}
    for i in range(20):  # interleaved, so both see the same machine
        for kind, name in (("known", "alice"), ("unknown", f"nobody{i}")):
            # the work done to refuse (this thread's CPU time): wall time also counts whatever else the machine runs
            start = time.thread_time()
            response = client.post("/login", data={"username": name, "password": "guess", "csrf_token": token})
            times[kind].append(time.thread_time() - start)
            assert response.status_code == 401
    known, unknown = statistics.median(times["known"]), statistics.median(times["unknown"])
    assert abs(known - unknown) < 0.2 * min(known, unknown), (known, unknown)


def test_parallel_guesses_all_count(tmp_path, demo_users):
    import threading

    app = create_app({"DEMO_HOME": str(tmp_path / "home"), "DEMO_LOAD_CORPUS": False, "DEMO_LOGIN_MAX_FAILURES": 3})
    clients = [app.test_client() for _ in range(10)]
    tokens = [form_token(c) for c in clients]
    codes = []

    def guess(client, token):
        codes.append(client.post("/login",
                                 data={"username": "alice", "password": "guess", "csrf_token": token}).status_code)

    threads = [threading.Thread(target=guess, args=pair) for pair in zip(clients, tokens)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(codes) == [401] * 3 + [429] * 7  # only three reached the password check


def test_many_names_from_one_address_lock_the_address(tmp_path, demo_users):
    app = create_app({"DEMO_HOME": str(tmp_path / "home"), "DEMO_LOAD_CORPUS": False,
                      "DEMO_LOGIN_MAX_FAILURES_PER_ADDRESS": 6})
    client = app.test_client()
    for i in range(6):
        assert _try(client, f"user{i}", "guess").status_code == 401
    refused = _try(client, "alice", "alice-pw")
    assert refused.status_code == 429 and b"from your address" in refused.data
    assert _from(app.test_client(), "10.0.0.7", "alice", "alice-pw").status_code == 302


def test_a_session_cookie_copied_before_logout_is_dead_after_it(app):
    first = login(app.test_client())
    copy = app.test_client()
    copy.set_cookie("session", first.get_cookie("session").value)
    assert copy.get("/").status_code == 200  # the copy works while the user is logged in
    assert first.post("/logout", data={"csrf_token": form_token(first, "/")}).status_code == 302
    assert copy.get("/").status_code == 302
    assert copy.get("/historian/api/runs").status_code == 401
    assert login(app.test_client()).get("/").status_code == 200  # logging in again works


def test_every_page_carries_the_security_headers_and_the_cookie_is_samesite(app):
    client = app.test_client()
    response = client.get("/login")
    assert "SameSite=Lax" in response.headers["Set-Cookie"] and "HttpOnly" in response.headers["Set-Cookie"]
    login(client)
    for path in ("/", "/login", "/historian/", "/historian/ask", "/historian/map", "/historian/api/runs",
                 "/historian/static/historian/ask.js", "/historian/api/nope"):
        response = client.get(path)
        response.close()
        headers = response.headers
        csp = headers["Content-Security-Policy"]
        assert "script-src 'self';" in csp and "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp, path
        assert headers["X-Content-Type-Options"] == "nosniff" and headers["X-Frame-Options"] == "DENY", path
        assert headers["Referrer-Policy"] == "same-origin", path


def test_pages_carry_no_inline_script_or_style(app):
    client = login(app.test_client(), "root", "root-pw")
    for path in ("/", "/historian/", "/historian/ask", "/historian/map", "/historian/verify", "/historian/runs",
                 "/historian/maps", "/historian/admin/reindex"):
        html = client.get(path).get_data(as_text=True)
        assert "<style" not in html and " style=" not in html, path
        for tag in html.split("<script")[1:]:
            assert tag.lstrip().startswith("src=") or " src=" in tag.split(">")[0], path
        assert " onclick=" not in html and " onload=" not in html, path


def test_historian_sets_the_headers_in_any_host(tmp_path):
    from tests.conftest import make_plain_app

    client = make_plain_app(tmp_path).test_client()
    for path in ("/historian/", "/historian/api/health", "/historian/api/nope"):
        headers = client.get(path).headers
        assert headers["Content-Security-Policy"].startswith("default-src 'self'; script-src 'self';"), path
        assert headers["X-Frame-Options"] == "DENY", path


def test_in_a_hosts_own_layout_the_policy_only_reports_until_the_host_sets_one(tmp_path):
    from tests.conftest import make_plain_app

    client = make_plain_app(tmp_path, HISTORIAN_BASE_TEMPLATE="historian/base.html").test_client()
    assert "Content-Security-Policy" in client.get("/historian/").headers
    hosted = make_plain_app(tmp_path / "h", HISTORIAN_BASE_TEMPLATE="demo/base.html").test_client()
    headers = hosted.get("/historian/api/health").headers
    assert "Content-Security-Policy" not in headers
    assert headers["Content-Security-Policy-Report-Only"].startswith("default-src 'self'; script-src 'self';")


def test_a_host_sets_its_own_policy_or_none(tmp_path, demo_users):
    own = create_app({"DEMO_HOME": str(tmp_path / "a"), "DEMO_LOAD_CORPUS": False,
                      "HISTORIAN_SECURITY_CSP": "default-src 'self' 'unsafe-inline'"})
    assert (own.test_client().get("/historian/api/health").headers["Content-Security-Policy"]
            == "default-src 'self' 'unsafe-inline'")
    off = create_app({"DEMO_HOME": str(tmp_path / "b"), "DEMO_LOAD_CORPUS": False, "HISTORIAN_SECURITY_HEADERS": False})
    assert "Content-Security-Policy" not in off.test_client().get("/historian/api/health").headers


def test_the_throttle_is_set_from_the_environment_and_checked(tmp_path, demo_users, monkeypatch):
    monkeypatch.setenv("HISTORIAN_DEMO_LOGIN_MAX_FAILURES", "2")
    app = create_app({"DEMO_HOME": str(tmp_path / "a"), "DEMO_LOAD_CORPUS": False})
    client = app.test_client()
    assert [_try(client, "alice", "x").status_code for _ in range(3)] == [401, 401, 429]
    monkeypatch.setenv("HISTORIAN_DEMO_LOGIN_WINDOW_S", "soon")
    with pytest.raises(ValueError, match="HISTORIAN_DEMO_LOGIN_WINDOW_S='soon'"):
        create_app({"DEMO_HOME": str(tmp_path / "b"), "DEMO_LOAD_CORPUS": False})


def test_a_users_runs_stay_theirs_across_logout_and_login(tmp_path, demo_users):
    from historian_blueprint import get_store
    from tests.conftest import small_docs
    from tests.test_index import run_reindex

    app = create_app({"DEMO_HOME": str(tmp_path / "home"), "DEMO_LOAD_CORPUS": False})
    with app.app_context():
        get_store().documents.insert_many(small_docs(per_file=1, chars=800))
    assert run_reindex(app)["state"] == "succeeded"
    client = login(app.test_client())
    token = form_token(client, "/historian/ask")
    run_id = client.post("/historian/api/ask", json={"question": "What did the president say about railroads?"},
                         headers={"X-CSRFToken": token}).get_json()["metadata"]["run_id"]
    assert client.post("/logout", data={"csrf_token": form_token(client, "/")}).status_code == 302
    login(client)
    runs = client.get("/historian/api/runs").get_json()
    assert runs["total"] == 1 and runs["runs"][0]["run_id"] == run_id
    assert client.get(f"/historian/runs/{run_id}").status_code == 200
    with app.app_context():
        assert get_store().runs.find_one({"_id": run_id})["user_id"] == "alice"


def test_a_host_without_a_login_manager_hears_the_fix_and_its_users_get_a_page(tmp_path, caplog):
    from flask import Flask

    from historian_blueprint import Historian

    app = Flask("host", instance_path=str(tmp_path / "instance"))
    app.config.update(SECRET_KEY="t", HISTORIAN_AUTO_MIGRATE=True)
    Historian(app)
    client = app.test_client()
    with caplog.at_level("WARNING", logger="historian"):
        page = client.get("/historian/")
        client.get("/historian/")
    warned = [r.getMessage() for r in caplog.records if "LoginManager" in r.getMessage()]
    assert len(warned) == 1 and "user_loader" in warned[0] and "HISTORIAN_LOGIN_REQUIRED=False" in warned[0]
    assert page.status_code == 401 and page.mimetype == "text/html" and b"Log in to use Historian" in page.data
    api = client.get("/historian/api/runs")
    assert api.status_code == 401 and api.json["error"]["code"] == "unauthorized"


def test_a_host_with_a_login_view_sends_people_to_it(tmp_path, caplog):
    from flask import Flask
    from flask_login import LoginManager

    from historian_blueprint import Historian

    app = Flask("host", instance_path=str(tmp_path / "instance"))
    app.config.update(SECRET_KEY="t", HISTORIAN_AUTO_MIGRATE=True)
    Historian(app)
    manager = LoginManager(app)  # after Historian: the check waits for the first request
    manager.user_loader(lambda user_id: None)
    manager.login_view = "login"
    app.add_url_rule("/login", "login", lambda: "the host's login")
    with caplog.at_level("WARNING", logger="historian"):
        page = app.test_client().get("/historian/")
    assert page.status_code == 302 and page.location.startswith("/login?next=")
    assert not [r for r in caplog.records if "LoginManager" in r.getMessage() or "login_view" in r.getMessage()]
