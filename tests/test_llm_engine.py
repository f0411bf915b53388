"""The LLM engine with scripted chat models for every role: it writes, the floor still rules."""

from __future__ import annotations

import json

import pytest

from historian_blueprint import get_settings
from historian_blueprint.ask.run import ask, engine, make_context
from historian_blueprint.llm.budget import fit
from historian_blueprint.llm.client import LLMClient, ResponseCache
from historian_blueprint.llm.parsing import ParseError, extract_json
from historian_blueprint.settings import LLMSettings
from tests import llm_fakes as fx
from tests.test_graph import corpus_docs
from tests.conftest import make_plain_app
from tests.test_index import run_reindex

QUESTION = "List three causes of the depression"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    app = make_plain_app(tmp_path_factory.mktemp("llm"), corpus_docs(), HISTORIAN_ENGINE="llm",
                         HISTORIAN_LLM_BASE_URL="http://127.0.0.1:9/v1")
    run_reindex(app)
    return app


def run(app, models, **settings):
    """Ask with scripted role models (no sleeping between retries)."""
    with app.app_context():
        base = LLMSettings.of(get_settings(app)).with_(backoff=0.0, **settings)
        client = LLMClient(base, factory=fx.factory(models), sleep=lambda s: None)
        out = ask(QUESTION, context=make_context(engine=engine(client)))
        content = {c["id"]: c for c in out["citations"]}
        from historian_blueprint.verify.service import document_getter

        get = document_getter()
        for c in content.values():  # every citation is the source's text at its offsets
            assert get(c["source_id"]).text[c["start"]:c["end"]] == c["text"]
        return out


def test_happy_path_every_role_is_asked_and_tokens_are_counted(app):
    models = fx.scripted_roles()
    out = run(app, models)
    assert out["status"] == "verified", out["verification"]["judge"]
    assert len(out["bullets"]) == 3 and len(out["citations"]) == 3
    assert all(c["verdict"] == "supported" for c in out["claims"])
    per_role = out["metadata"]["tokens"]["per_role"]
    assert set(per_role) == {"planner", "composer", "challenger", "interrogator", "counter_arguer", "judge"}
    assert per_role["composer"]["prompt_tokens"] == 120 and out["metadata"]["tokens"]["prompt"] == 720
    assert out["metadata"]["engine"] == "llm" and out["metadata"]["prompt_version"].startswith("llm-")
    system = models["composer"].calls[0][0].content
    assert "Answer only from the documents" in system and "insufficient" in system  # persona, rules, few-shot


def test_a_hallucinating_composer_is_caught_by_the_floor(app):
    models = fx.scripted_roles(composer=[fx.hallucinating_composer], refiner=[fx.hallucinating_composer],
                               judge=[fx.judge_says("verified", 0.99)])
    out = run(app, models)
    assert out["status"] in ("needs_revision", "human_review")
    assert all(c["verdict"] != "supported" for c in out["claims"])
    assert out["confidence"] < 0.6


def test_malformed_json_is_reprompted_once_then_fails_safe(app):
    models = fx.scripted_roles(challenger=["Sure! Here are my thoughts: the answer looks fine."])
    out = run(app, models)
    assert len(models["challenger"].calls) == 2  # the re-prompt carried the schema
    assert "JSON schema" in models["challenger"].calls[1][-1].content
    assert out["status"] == "human_review"
    assert any("challenger: unparseable" in f for f in out["verification"]["model_failures"])


def test_fenced_json_with_prose_is_parsed_without_a_reprompt(app):
    reply = "Here you go:\n```json\n" + fx.NO_WEAKNESS + "\n```\nHope this helps {not json}."
    models = fx.scripted_roles(challenger=[reply])
    out = run(app, models)
    assert len(models["challenger"].calls) == 1 and out["status"] == "verified"


def test_a_429_then_success_is_retried(app):
    models = fx.scripted_roles(composer=[fx.rate_limited(), fx.honest_composer])
    out = run(app, models)
    assert out["status"] == "verified"
    assert out["metadata"]["tokens"]["per_role"]["composer"]["retries"] == 1


def test_a_timeout_fails_safe(app):
    models = fx.scripted_roles(interrogator=[fx.timed_out()])
    out = run(app, models, max_retries=1)
    assert len(models["interrogator"].calls) == 2
    assert out["status"] == "human_review"
    assert any("interrogator: timed out" in f for f in out["verification"]["model_failures"])


def test_an_invented_evidence_id_is_rejected(app):
    models = fx.scripted_roles(composer=[fx.inventing_composer])
    out = run(app, models)
    assert len(out["citations"]) == 3
    notes = out["verification"]["composer_notes"]
    assert any("'E99', which was not given: rejected" in n for n in notes)


def test_an_unanchorable_quote_is_a_failed_citation(app):
    def misquoting(messages):
        reply = json.loads(fx.honest_composer(messages))
        reply["findings"][1]["quote"] = "Words the source never contained at all, invented by the model."
        return json.dumps(reply)

    out = run(app, fx.scripted_roles(composer=[misquoting], refiner=[misquoting]))
    assert out["claims"][1]["verdict"] == "misquote"
    assert out["status"] != "verified"


def test_the_judge_cannot_raise_a_floored_status(app):
    models = fx.scripted_roles(composer=[fx.hallucinating_composer], refiner=[fx.hallucinating_composer],
                               judge=[fx.judge_says("verified", 1.0)])
    out = run(app, models, max_retries=0)
    judge = out["verification"]["judge"]
    assert judge["status"] != "verified" and judge["confidence"] < 0.6
    lowered = run(app, fx.scripted_roles(judge=[fx.judge_says("flagged", 0.7)]))
    assert lowered["status"] == "flagged" and lowered["confidence"] == 0.7  # lowering is allowed


def test_asking_again_is_served_from_the_cache(app, tmp_path):
    import mongomock

    cache = ResponseCache(mongomock.MongoClient().db.cache, ttl=60)
    with app.app_context():
        settings = LLMSettings.of(get_settings(app))
        models = fx.scripted_roles()
        client = LLMClient(settings, factory=fx.factory(models), cache=cache)
        first = ask(QUESTION, context=make_context(engine=engine(client)))
        calls = {role: len(m.calls) for role, m in models.items()}
        second = ask(QUESTION, context=make_context(engine=engine(client)))
    assert {role: len(m.calls) for role, m in models.items()} == calls  # no model was called again
    assert second["answer"] == first["answer"]
    assert second["metadata"]["tokens"]["prompt"] == 0
    assert second["metadata"]["tokens"]["per_role"]["composer"]["cached"] == 1


def test_robust_parser_and_budget():
    assert extract_json('Answer: {"a": {"b": "}"}} and then {"c": 1}') == {"a": {"b": "}"}}
    with pytest.raises(ParseError):
        extract_json("no braces here")
    history, evidence, dropped = fit(100, ["old turn " * 50, "new turn " * 50],
                                     ["e1 " * 100, "e2 " * 100, "e3 " * 100], 400)
    # evidence tail first, then history
    assert evidence == ["e1 " * 100] and history == ["new turn " * 50] and dropped == 3


def test_a_failed_composer_falls_back_to_the_extractive_answer_unverified(app):
    out = run(app, fx.scripted_roles(composer=[fx.timed_out()]), max_retries=0)
    assert out["status"] == "human_review"
    assert len(out["citations"]) >= 3 and all("“" in b for b in out["bullets"])  # the extractive, quoted findings
    assert any(f.startswith("composer: timed out") for f in out["verification"]["model_failures"])


def test_the_prose_is_checked_sentence_by_sentence_not_only_the_findings(app):
    """A model's prose may not say what no source says: each sentence is a claim of its own."""
    models = fx.scripted_roles(composer=[fx.rambling_composer], refiner=[fx.rambling_composer])
    out = run(app, models)
    assert out["status"] == "human_review" and out["confidence"] < 0.4
    prose = [c for c in out["claims"] if c["part"] == "narrative"]
    assert len(prose) == 4 and all(c["verdict"] != "supported" for c in prose), prose
    assert "1901" in prose[0]["text"] and prose[0]["cited_source_ids"]  # checked against what [E1] cites
    assert prose[-1]["cited_source_ids"]  # an uncited sentence is checked against every cited source
    assert all(c["verdict"] == "supported" for c in out["claims"] if c["part"] == "finding")


def test_one_unsupported_sentence_is_revised_away(app):
    models = fx.scripted_roles(composer=[fx.embellishing_composer], refiner=[fx.honest_composer])
    out = run(app, models)
    assert out["metadata"]["revisions"] >= 1 and "1901" not in out["answer"]
    assert out["status"] == "verified" and all(c["part"] == "finding" for c in out["claims"])
    refiner_prompt = models["refiner"].calls[0][-1].content
    assert "Sentence of your answer" in refiner_prompt and "FLAGGED" in refiner_prompt


def test_offline_revision_replaces_failed_prose_with_the_findings_that_remain():
    from historian_blueprint.ask.roles import extractive as offline
    from historian_blueprint.schema import Answer, Cited, Citation

    cites = [Citation(id=n, source_id="d", title="t", author=None, year=None, locator="para 1", text=f"fact {n}",
                      start=0, end=6) for n in (1, 2, 3)]
    draft = Answer(answer="The first fact is here [1]. Something unsupported was said.",
                   bullets=[f"fact {n} [{n}]" for n in (1, 2, 3)],
                   citations=cites, claims=["fact 1", "fact 2", "fact 3"])
    revised = offline.revise(draft, {4})
    assert "unsupported" not in revised.answer and revised.answer.startswith("After verification, 3 findings remain")
    assert offline.revise(draft, set()) is draft
    from historian_blueprint.verify.composed import narrative_claims

    assert [c for c, _ in narrative_claims(draft)] == ["The first fact is here.", "Something unsupported was said."]
    assert narrative_claims(draft)[0][1] == [Cited("d", 0, 6)]  # the span [1] names; unmarked: every citation
    assert len(narrative_claims(draft)[1][1]) == 3
    assert narrative_claims(revised) == []  # Historian's own summary is not checked as model prose
    nothing = offline.revise(draft, {1, 2, 3, 4})
    assert nothing.answer == "None of the findings could be verified." and nothing.summary
