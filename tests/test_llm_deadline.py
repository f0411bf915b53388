"""Issue 38 (4): a model endpoint that drips one byte at a time holds neither a run past its time limit nor a
user's slot: every model call ends by its deadline (the role's timeout or the run's, whichever comes first), the
run ends ``human_review`` or ``flagged``, never ``verified``, and a user never has more runs going than allowed,
because a slot is renewed while its run lives and given back when it ends."""

from __future__ import annotations

import threading
import time

import pytest

from historian_blueprint import get_store
from historian_lab.bench.fake_llm_server import OpenAICompatibleServer, faithful_responder
from historian_blueprint.limits import Busy, Slots
from historian_blueprint.llm.prompts import TASKS
from tests.conftest import make_plain_app, small_docs
from tests.test_index import run_reindex

LLM_TIMEOUT_S, RUN_LIMIT_S, PER_USER, DRIP_S = 2, 4, 2, 0.5
QUESTION = "What happened to the banks?"


@pytest.fixture(scope="module")
def dripping():
    """An endpoint that answers every role one byte every half second, status line and headers included."""
    with OpenAICompatibleServer(faithful_responder, models=("test-model",), drip_s=DRIP_S,
                                faults={role: "drip" for role in [*TASKS, "unknown"]}) as server:
        yield server


@pytest.fixture(scope="module")
def app(tmp_path_factory, dripping):
    app = make_plain_app(
        tmp_path_factory.mktemp("drip"), small_docs(per_file=2), WTF_CSRF_ENABLED=False, HISTORIAN_ENGINE="llm",
        HISTORIAN_LLM_BASE_URL=dripping.url, HISTORIAN_LLM_MODEL="test-model", HISTORIAN_LLM_API_KEY="not-needed",
        HISTORIAN_LLM_TIMEOUT_S=LLM_TIMEOUT_S, HISTORIAN_LLM_MAX_RETRIES=3, HISTORIAN_LLM_BACKOFF_S=0.05,
        HISTORIAN_LLM_CACHE_TTL_S=0, HISTORIAN_LIMITS_TIMEOUT_S=RUN_LIMIT_S,
        HISTORIAN_LIMITS_MAX_RUNNING_PER_USER=PER_USER,
    )
    assert run_reindex(app)["state"] == "succeeded"
    return app


def settled(server: OpenAICompatibleServer, within_s: float = 4 * DRIP_S) -> bool:
    """Whether every dripped response has ended: the client closed its socket (the server's next byte fails)."""
    end = time.monotonic() + within_s
    while server.dripping and time.monotonic() < end:
        time.sleep(0.05)
    return server.dripping == 0


def test_an_ask_against_a_dripping_endpoint_ends_by_its_time_limit_and_is_not_verified(app, dripping):
    before = len(dripping.drips)
    t0 = time.monotonic()
    response = app.test_client().post("/historian/api/ask", json={"question": QUESTION})
    took = time.monotonic() - t0
    assert response.status_code == 200
    out = response.get_json()
    assert took < RUN_LIMIT_S + 2, took
    assert out["status"] == "human_review" and out["verification"]["time_limit"]["seconds"] == RUN_LIMIT_S
    failures = out["verification"]["model_failures"]
    assert failures and all("timed out" in f or "not asked" in f for f in failures), failures
    assert any("planner: timed out" in f for f in failures)
    drips = dripping.drips[before:]
    assert drips and all(d["sent"] < 100 for d in drips)  # no reply got through: each was cut, not answered
    assert settled(dripping)  # and every socket it opened is closed
    with app.app_context():
        run = get_store().runs.find_one({"_id": out["metadata"]["run_id"]})
        assert run["output"]["status"] == out["status"]
        assert get_store().collection("active").count_documents({}) == 0  # its slot came back


def test_parallel_asks_never_hold_more_slots_than_allowed_and_each_ends_by_its_limit(app, dripping, monkeypatch):
    """Four askers (one user) against a limit of two: at most two runs go at once, every slot is renewed under
    its run and given back after it, and every run ends within its time limit and two seconds."""
    from historian_blueprint.ask import run as graph_run

    running, most, lock = [0], [0], threading.Lock()
    ask = graph_run.ask

    def counted(*args, **kwargs):  # the runs going at once, counted inside their slots
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            return ask(*args, **kwargs)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(graph_run, "ask", counted)
    stop, slots_seen, renewed = threading.Event(), [0], [0.0]
    lifetime = Slots(None, PER_USER, RUN_LIMIT_S).lifetime

    def sample() -> None:
        with app.app_context():
            store = get_store()
            while not stop.wait(0.05):
                with store.write_lock():  # a refused request's slot lives only inside the lock: not a held one
                    held = list(store.collection("active").find({}))
                slots_seen[0] = max(slots_seen[0], len(held))
                renewed[0] = max([renewed[0], *(s["expires"] - s["started"] - lifetime for s in held)])

    durations: list[float] = []
    statuses: list[str] = []
    refused = [0]

    together = threading.Barrier(4)

    def asker() -> None:
        client = app.test_client()
        together.wait(timeout=30)  # the four ask at once (a loaded machine starts threads late)
        give_up = time.monotonic() + 4 * (RUN_LIMIT_S + 2)
        while time.monotonic() < give_up:
            t0 = time.monotonic()
            response = client.post("/historian/api/ask", json={"question": QUESTION})
            if response.status_code == 429:
                refused[0] += 1
                time.sleep(0.2)
                continue
            assert response.status_code == 200, response.data
            durations.append(time.monotonic() - t0)
            statuses.append(response.get_json()["status"])
            return

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    askers = [threading.Thread(target=asker, daemon=True) for _ in range(4)]
    for t in askers:
        t.start()
    for t in askers:
        t.join(timeout=5 * (RUN_LIMIT_S + 2))
    stop.set()
    sampler.join(timeout=5)
    assert not any(t.is_alive() for t in askers)
    assert len(durations) == 4 and refused[0] >= 1  # all four ran, the later ones after a 429
    assert most[0] == PER_USER and slots_seen[0] <= PER_USER, (most, slots_seen)
    assert max(durations) < RUN_LIMIT_S + 2, durations
    assert "verified" not in statuses
    assert renewed[0] > 0  # a slot's expiry was pushed forward while its run went on
    assert settled(dripping)
    with app.app_context():
        assert get_store().collection("active").count_documents({}) == 0


def test_a_slot_is_renewed_under_a_run_longer_than_its_expiry_and_a_dropped_one_expires(app):
    with app.app_context():
        store = get_store()
        slots = Slots(store, 1, timeout_s=0.2, grace_s=0.2)  # a slot lives 0.4 s without a renewal
        token = slots.take("long-runner", "ask")
        end = time.monotonic() + 4 * slots.lifetime
        while time.monotonic() < end:  # another request of the same user, while the run goes on
            with pytest.raises(Busy):
                slots.take("long-runner", "map")
            time.sleep(0.05)
        slots.give_back(token)
        kept = slots.take("long-runner", "map")  # given back: free at once
        slots.give_back(kept)

        slots.take("crashed", "ask")  # its holder drops the token: nothing renews it (so a crashed process's)
        with pytest.raises(Busy):
            slots.take("crashed", "ask")
        time.sleep(slots.lifetime + 0.2)
        slots.give_back(slots.take("crashed", "ask"))  # expired: taken again
