"""The verification graph with the offline engine, on real documents of the sample corpus."""

from __future__ import annotations

import json

import pytest

from historian_blueprint import get_store
from historian_blueprint.ask.run import ask, make_context
from historian_blueprint.questions.reading import read_question
from historian_blueprint.schema import REFUSAL_PREFIX, Output
from historian_blueprint.verify.service import check_draft
from tests.conftest import REPO, make_plain_app, small_docs
from tests.test_index import run_reindex

FULL_DOCS = ("sotu-1931-herbert-hoover", "sotu-1919-woodrow-wilson", "sotu-1893-grover-cleveland")


def corpus_docs():
    docs = small_docs(per_file=3)
    with open(REPO / "historian_blueprint/demo/corpus/sotu_1860_1945.jsonl", encoding="utf-8") as fh:
        docs += [d for d in map(json.loads, fh) if d["_id"] in FULL_DOCS]
    return docs


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    app = make_plain_app(tmp_path_factory.mktemp("graph"), corpus_docs())
    run_reindex(app)
    return app


def test_list_three_causes_gives_three_cited_bullets(app):
    with app.app_context():
        events = []
        out = ask("List three causes of the depression", on_event=events.append)
    Output.model_validate(out)
    json.dumps(out)  # valid JSON
    assert len(out["bullets"]) == 3
    assert len(out["citations"]) >= 3
    # a list says how many of the items asked it found, and is not verified with fewer
    assert out["shape"]["kind"] == "list" and out["shape"]["asked"] == 3 and 0 <= out["shape"]["found"] <= 3
    assert out["shape"]["found"] == 3 or out["status"] != "verified"
    assert "of the 3 asked for" in out["answer"] or "None of the 3 asked for" in out["answer"]
    assert all(c["source_id"] and c["locator"] for c in out["citations"])
    assert "sotu-1931-herbert-hoover" in {c["source_id"] for c in out["citations"]}
    # every node reported progress as it finished, in order
    nodes = [e["node"] for e in events]
    assert nodes[:7] == ["ingest", "route", "plan", "retrieve", "extract", "compose", "validate"]
    assert {"challenge", "interrogate", "counter_argue", "judge", "finalize"} <= set(nodes)


def test_a_known_source_is_cited_at_its_exact_offsets(app):
    with app.app_context():
        out = ask("What did Grover Cleveland say about the repeal of the provision requiring the purchase of "
                  "silver bullion?")
        store = get_store()
        assert "sotu-1893-grover-cleveland" in [c["source_id"] for c in out["citations"]]
        for c in out["citations"]:
            assert store.get_document(c["source_id"]).text[c["start"]:c["end"]] == c["text"]
        assert out["status"] == "verified" and out["metadata"]["refusal"] is False


def test_runs_are_stored_with_trace_and_generation(app):
    with app.app_context():
        out = ask("What are the causes of this unrest?", user_id="alice")
        run = get_store().runs.find_one({"_id": out["metadata"]["run_id"]})
    assert run["question"] == "What are the causes of this unrest?" and run["user_id"] == "alice"
    assert run["output"]["status"] == out["status"]
    assert [t["node"] for t in run["trace"]][0] == "ingest"
    assert run["index_generation"] == 2 and run["engine"] == "embedded"  # words only (1), then whole (2)
    assert set(out["metadata"]["latency_ms"]) >= {"total", "retrieve", "compose", "judge"}


def test_unanswerable_question_gets_the_refusal(app):
    with app.app_context():
        out = ask("What is the price of bitcoin on Mars?")
        first, last = make_context().years
    assert out["answer"].startswith(REFUSAL_PREFIX)
    assert f"documents ({first}–{last}) for:" in out["answer"]  # what the collection spans, said with the refusal
    assert "Searched" in out["answer"] and out["citations"] == [] and out["status"] == "human_review"
    assert out["metadata"]["refusal"] is True
    Output.model_validate(out)


def test_empty_and_oversized_questions_fail_clearly(app):
    with app.app_context():
        assert ask("   ")["answer"].startswith("Historian could not run: the question is empty")
        assert "longer than 2000" in ask("x " * 1500)["answer"]


PLANTED = (
    "Herbert Hoover said that all of the causes of our depression were due to the Great War in Europe "
    "[sotu-1931-herbert-hoover]. He reported that 95 national banks failed in the single month of October "
    "[sotu-1931-herbert-hoover]. Woodrow Wilson declared that the causes of this unrest are deep-seated "
    "rather than superficial [sotu-1919-woodrow-wilson]."
)
WELL_CITED = (
    "Herbert Hoover said that some of the causes of our depression are due to speculation, inflation of securities "
    "and real estate, unsound foreign investments, and mismanagement of financial institutions "
    "[sotu-1931-herbert-hoover]. Woodrow Wilson called attention to the widespread condition of political "
    "restlessness in our body politic [sotu-1919-woodrow-wilson]. The causes of this unrest, while various and "
    "complicated, are superficial rather than deep-seated [sotu-1919-woodrow-wilson]."
)


def test_a_planted_hallucination_is_caught(app):
    with app.app_context():
        result = check_draft(PLANTED)
    assert result.challenge.weaknesses and result.challenge.critical
    assert result.interrogation.integrity < 1
    assert result.confidence < 0.60
    assert result.status in ("needs_revision", "human_review")
    verdicts = [c.verdict for c in result.claims]
    assert verdicts.count("supported") == 0, verdicts


def test_a_well_cited_draft_is_verified(app):
    with app.app_context():
        result = check_draft(WELL_CITED)
    assert [c.verdict for c in result.claims] == ["supported"] * 3
    assert not result.challenge.critical and not result.challenge.weaknesses
    assert result.interrogation.integrity >= 0.95
    assert result.confidence >= 0.80
    assert result.status == "verified"


def test_a_failing_check_never_verifies(app):
    def broken(*args, **kwargs):
        raise RuntimeError("grounding check crashed")

    with app.app_context():
        from historian_blueprint.verify.draft import verify_draft
        from historian_blueprint.settings import Caps
        from historian_blueprint.verify.service import collection_search, document_getter

        result = verify_draft(WELL_CITED, get_document=document_getter(), search=collection_search(), caps=Caps(),
                              checker=broken)
        assert result.status == "human_review" and result.confidence < 0.6
        assert all(c.verdict == "unconfirmed" for c in result.claims)
        out = ask("List three causes of the depression", context=make_context(checker=broken))
        assert out["status"] != "verified"
        assert all(c["verdict"] != "supported" for c in out["claims"])


def test_verify_and_ask_commands(app):
    runner = app.test_cli_runner()
    result = runner.invoke(args=["historian", "verify", "--text", PLANTED, "--output", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["status"] in ("needs_revision", "human_review")
    outcomes = {c["verdict"]: c["outcome"] for c in data["claims"]}  # the plain words beside the machine verdict
    assert (outcomes.get("supported", "supported") == "supported"
            and outcomes.get("contradicted") == "contradicted by the source")
    shown = runner.invoke(args=["historian", "verify", "--text", PLANTED])
    assert (shown.exit_code == 0 and "contradicted by the source: " in shown.output
            and "the source says " in shown.output)
    assert " supported, " in shown.output.splitlines()[1] and "contradicted" in data["challenge"]["summary"]
    missing = runner.invoke(args=["historian", "verify", "--text", "Some claim here today.", "--source", "no-such-doc"])
    assert missing.exit_code == 1 and "no document with id no-such-doc" in missing.output
    named = runner.invoke(args=["historian", "verify", "--text", PLANTED, "--output", "markdown"])
    assert named.exit_code == 2 and "md, json" in named.output  # the formats of checked drafts, named
    bare = runner.invoke(args=["historian", "verify", "--text", "yes", "--question", "What caused it?"])
    assert bare.exit_code == 1 and "needs a yes/no question" in bare.output
    answered = runner.invoke(args=["historian", "verify", "--text", "No", "--source", "sotu-1931-herbert-hoover",
                                   "--question", "Did Herbert Hoover say that the depression was due to the Great War?",
                                   "--output", "json"])
    assert answered.exit_code == 0, answered.output
    assert json.loads(answered.output)["claims"][0]["text"] == "No"
    asked = runner.invoke(args=["historian", "ask", "List three causes of the depression", "--output", "md", "--quiet"])
    assert asked.exit_code == 0 and "## Findings" in asked.output and "[1]" in asked.output


def test_a_follow_up_prefers_evidence_about_what_the_thread_is_about():
    from historian_blueprint.ask.roles import extractive as offline

    def hit(source_id, author, text):
        return {"source_id": source_id, "title": f"Annual Message by {author}", "author": author, "year": 1931,
                "text": text, "start": 0, "end": len(text), "locator": "para 1", "score": 0.8}

    hits = [
        hit("cleveland", "Grover Cleveland",
            "The banks of the country suffered heavy losses in the panic of that year."),
        hit("hoover", "Herbert Hoover",
            "The banks of the country suffered heavy losses in the depression of that year."),
    ]
    question = "What did he say about the banks?"
    history = [{"question": "What did Herbert Hoover say about the depression?", "answer": "..."}]
    assert read_question(question, history).thread == {"herbert", "hoover", "depression"}
    alone = offline.extract(read_question(question), hits)
    assert alone[0].source_id == "cleveland"  # alone, the better-ranked hit wins
    context = read_question(question, history).thread
    assert offline.extract(read_question(question), hits, context=context)[0].source_id == "hoover"
    assert read_question("Describe and summarize the causes of the panic").words == {"cause", "panic"}


def test_a_run_reads_its_question_once(app, monkeypatch):
    """The route node reads the question into one value (questions.reading); no role or node reads its shape,
    count or words from the text again (issue 40)."""
    from historian_blueprint.questions import reading
    from historian_blueprint.verify import question as premise_check

    read: list[str] = []
    shape_of, premises, constraints = reading.shape_of, reading.premises, premise_check.constraints
    monkeypatch.setattr(reading, "shape_of", lambda text: read.append(f"shape: {text}") or shape_of(text))
    monkeypatch.setattr(reading, "premises", lambda text: read.append(f"premises: {text}") or premises(text))
    monkeypatch.setattr(premise_check, "constraints", lambda text: read.append(f"constraints: {text}")
                        or constraints(text))
    question = "What did Grover Cleveland say about the repeal of the silver purchase law?"
    with app.app_context():
        out = ask(question)
    # its shape and its premises once each, when the run starts: the composer and the premise check read those
    assert out["citations"] and read == [f"shape: {question}", f"premises: {question}", f"constraints: {question}"]
    read.clear()
    compared = "Compare what Cleveland and Harrison said about the tariff."
    with app.app_context():
        ask(compared)
    shapes = [r for r in read if r.startswith("shape: ")]
    # the comparison and each of its sides once, when the run starts; the sides' search, extraction and premise
    # check read those
    assert len(shapes) == 3 and len(set(shapes)) == 3 and shapes[0] == f"shape: {compared}", read
    assert [r.split(":")[0] for r in read].count("premises") == 3, read
    assert [r.split(":")[0] for r in read].count("constraints") == 3, read  # the premise check reads none again


def test_an_answer_that_misses_its_question_is_not_verified_and_names_the_constraint(app):
    """The issue's false premise, on the same passage the previous test verifies."""
    with app.app_context():
        out = ask("What did Grover Cleveland say on the moon about the repeal of the provision requiring the purchase "
                  "of silver bullion?")
        gone = ask("What did Harriet Tubman say about the repeal of the provision requiring the purchase of "
                   "silver bullion?")
    assert out["status"] != "verified"  # refused by the composer (no evidence found is on the moon) or flagged
    assert "on the moon" in json.dumps(out["verification"].get("premise"), ensure_ascii=False) + out["answer"]
    assert (gone["status"] != "verified"
            and "Harriet Tubman" in json.dumps(gone["verification"].get("premise")) + gone["answer"])


def test_a_sentence_that_matches_the_question_but_lacks_its_answer_reads_on_into_the_next():
    """"Where ...?": the sentence with the question's words has no place; the next one ("That ... hangs over
    Mexico") has it, so the evidence is the two sentences together, at their exact offsets."""
    from historian_blueprint.ask.roles import extractive as offline

    text = ("The country is at peace. There is but one cloud upon our horizon. "
            "That has shown itself to the south of us, and hangs over Mexico. The revenues are ample.")
    hit = {"source_id": "sotu", "title": "Annual Message", "author": "Woodrow Wilson", "year": 1913, "text": text,
           "start": 100, "locator": "para 1", "score": 1.0}
    facts = offline.extract(read_question("Where did Woodrow Wilson say the one cloud upon our horizon hung?"), [hit])
    assert facts[0].text.startswith("There is but one cloud") and facts[0].text.endswith("hangs over Mexico.")
    assert text[facts[0].start - 100:facts[0].end - 100] == facts[0].text
    plain = offline.extract(read_question("What did Woodrow Wilson say about the one cloud upon our horizon?"), [hit])
    assert plain[0].text == "There is but one cloud upon our horizon."  # no type asked: the sentence alone


def test_a_question_about_a_document_the_collection_lacks_is_told_so(app):
    """"Hoover's 1933 message": the collection holds his messages of other years, not that one; the answer names
    the missing document and the years it holds instead of quoting another year's words, and is never verified."""
    with app.app_context():
        years = make_context().years_of("Herbert Hoover")
        out = ask("What did Herbert Hoover say about the banks in his 1933 annual message?")
    assert years and 1933 not in years and 1931 in years
    assert out["metadata"]["refusal"] and out["status"] != "verified" and not out["citations"]
    assert "the collection has no document by Herbert Hoover of 1933" in out["answer"]
    assert f"{years[0]}" in out["answer"] and out["verification"]["premise"]["asks"] == "document"


def test_a_question_about_one_document_is_answered_from_it(app):
    """"Hoover in 1931": every passage quoted is of his 1931 message, none of another year's or author's."""
    with app.app_context():
        out = ask("What did Herbert Hoover say in 1931 about unemployment and relief?")
    assert not out["metadata"]["refusal"] and out["citations"]
    assert {c["source_id"] for c in out["citations"]} == {"sotu-1931-herbert-hoover"}


def test_a_stance_the_passages_reverse_is_said_and_never_verified(app):
    """"Why did Hoover support a federal dole?": his 1931 message says "I am opposed to any direct or indirect
    Government dole"; the answer says the passages take the other side, and is not verified."""
    with app.app_context():
        out = ask("Why did Herbert Hoover support a federal dole for the unemployed in 1931?")
    premise = out["verification"]["premise"]
    assert out["status"] != "verified" and {"text": "support", "kind": "stance"} in premise["unmet"]
    assert "the passages say the opposite of “support”" in premise["finding"] and "opposed" in premise["finding"]


def test_a_follow_up_answered_from_someone_else_is_refused_naming_whom_it_asks_about(app):
    """"What did he say about the repeal of the silver purchase law?" after a question on Woodrow Wilson: the
    passages on that repeal are Cleveland's; quoting them would answer for another man, so the answer says whom the
    follow-up is about and that nothing found is by or about him (the issue's Gragston follow-up, quoted from three
    other narrators and called verified)."""
    with app.app_context():
        first = ask("What did Woodrow Wilson say about the railroads?")
        out = ask("What did he say about the repeal of the silver purchase law?", parent_id=first["metadata"]["run_id"])
    assert out["metadata"]["refusal"] and out["status"] != "verified"
    assert out["verification"]["premise"]["asks"] == "subject"
    assert "goes on asking about Woodrow Wilson" in out["answer"]
