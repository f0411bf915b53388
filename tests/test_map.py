"""The knowledge map (issue 13): on a corpus written for it (tests/data/map_corpus.jsonl, three topics with
planted disagreements and one fact every document states), offline, with the real index and spaCy."""

from __future__ import annotations

import json
import re

import pytest

from historian_blueprint import get_store
from historian_lab.bench import map_corpora
from historian_blueprint.mapping.adversary import counter_queries
from historian_blueprint.mapping.topic import read_topic
from historian_blueprint.mapping.figures import Figure
from historian_blueprint.mapping.nlp import Statement, name_key, read_passages
from historian_blueprint.mapping.run import map_topic
from historian_blueprint.mapping.schema import MapOutput
from historian_blueprint.text.quantities import Quantity
from tests.conftest import REPO, make_plain_app
from tests.test_index import run_reindex

DATA = REPO / "tests" / "data"
TOPICS = json.loads((DATA / "map_topics.json").read_text(encoding="utf-8"))["topics"]


def map_docs() -> list[dict]:
    return [json.loads(line) for line in (DATA / "map_corpus.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]


@pytest.fixture(scope="module")
def maps(tmp_path_factory):
    app = make_plain_app(tmp_path_factory.mktemp("map"), map_docs())
    assert run_reindex(app)["state"] == "succeeded"
    out = {}
    with app.app_context():
        for topic in TOPICS:
            events: list[dict] = []
            out[topic["topic"]] = (map_topic(topic["topic"], user_id="u1", on_event=events.append), events)
    return app, out


def test_two_thirds_of_the_planted_conflicts_are_found_with_their_sides(maps):
    _, out = maps
    planted = [(t["topic"], c) for t in TOPICS for c in t["conflicts"]]
    found = [(topic, c["point"]) for topic, c in planted if map_corpora.found(c, out[topic][0]["conflicts"])]
    assert len(found) * 3 >= 2 * len(planted), (len(found), len(planted), found)


def test_no_conflict_between_statements_that_agree_or_across_topics(maps):
    _, out = maps
    for topic in TOPICS:
        docs = set(topic["documents"])
        for c in out[topic["topic"]][0]["conflicts"]:
            sides = map_corpora.sides(c)
            assert all(s <= docs for s in sides), (topic["topic"], c)  # never a side from another topic's documents
            assert any(map_corpora.found(p, [c])
                       for p in topic["conflicts"]), ("a conflict nobody planted", c["point"], sides)
        for a, b, _why in topic["agreements"]:  # "about 300" / "some three hundred": never opposed
            for c in out[topic["topic"]][0]["conflicts"]:
                sides = map_corpora.sides(c)
                assert not (any(a in s and b not in s for s in sides) and any(b in s and a not in s for s in sides)), c


def test_each_consensus_fact_is_found_with_at_least_three_of_its_sources(maps):
    _, out = maps
    for topic in TOPICS:
        for fact in topic["consensus"]:
            best = max((set(c["sources"]) & set(fact["sources"]) for c in out[topic["topic"]][0]["consensus"]),
                       key=len, default=set())
            assert len(best) >= 3, (topic["topic"], fact["fact"], out[topic["topic"]][0]["consensus"])


def test_every_span_is_the_documents_text_and_the_output_keeps_its_contract(maps):
    app, out = maps
    with app.app_context():
        content = {d["_id"]: d["content"] for d in map_docs()}
        for output, _ in out.values():
            MapOutput.model_validate(output)
            spans = [m for e in output["entities"] for m in e["mentions"]]
            spans += [r["citation"] for r in output["relations"]]
            spans += [c for x in output["conflicts"] for side in x["sides"] for c in side["citations"]]
            spans += [c for x in output["consensus"] for c in x["citations"]]
            assert spans
            for s in spans:
                assert content[s["source_id"]][s["start"]:s["end"]] == s["text"], s
            assert output["relations"] and output["entities"]
            for s in output["sources"]:
                assert 0 <= s["credibility"] <= 1 and {"document_type", "ocr_noise"} <= set(s["factors"])
                assert s["found_by"]  # the query that found it


def test_counter_queries_three_in_round_one_none_repeated_at_most_three_rounds(maps):
    _, out = maps
    for topic, (output, events) in out.items():
        queries = output["counter_queries"]
        assert sum(q["round"] == 1 for q in queries) >= 3, topic
        keys = [" ".join(q["query"].lower().split()) for q in queries] + output["metadata"]["facet_queries"]
        assert len(keys) == len(set(keys)), topic
        assert max(q["round"] for q in queries) <= 3
        assert all(isinstance(q["new_sources"], list) for q in queries)
        assert [e["node"] for e in events][:3] == ["scout", "mapper", "adversary_node"]
        assert events[-1]["node"] == "synthesize"


def test_credibility_separates_a_party_to_the_events(maps):
    _, out = maps
    sources = {s["source_id"]: s for s in out["the Johnstown Flood"][0]["sources"]}
    club = sources["johnstown-club-statement-1889"]
    assert club["factors"]["interested_party"]["value"] == 0.0
    assert club["credibility"] < sources["johnstown-relief-report-1890"]["credibility"]
    chicago = {s["source_id"]: s for s in out["the Great Chicago Fire of 1871"][0]["sources"]}
    assert (chicago["chicago-memoir-1911"]["factors"]["distance"]["value"]
            < chicago["chicago-marshal-report-1871"]["factors"]["distance"]["value"])


def test_the_map_is_stored_as_a_run_of_its_own_kind(maps):
    app, out = maps
    with app.app_context():
        output = out["the Johnstown Flood"][0]
        run = get_store().runs.find_one({"_id": output["metadata"]["run_id"]})
        assert run["kind"] == "map" and run["user_id"] == "u1" and run["output"]["topic"] == "the Johnstown Flood"
        assert "# Knowledge map: the Johnstown Flood" in output["report"] and "## Battleground" in output["report"]


def test_names_merge_without_honorifics_and_statements_are_exact_spans():
    assert name_key("Mrs. O'Leary's") == name_key("O'Leary") == "o'leary"
    assert name_key("General Philip Sheridan") == "philip sheridan"
    text = ("The fire was not started by Mrs. O'Leary's cow; the barn of the O'Learys burned first. Nearly one "
            "thousand persons perished.")
    reading = read_passages("d", text, [(0, len(text))])
    assert [s.text for s in reading.statements][:2] == ["The fire was not started by Mrs. O'Leary's cow",
                                                        "the barn of the O'Learys burned first."]
    assert all(text[s.start:s.end] == s.text for s in reading.statements)
    deaths = [f for s in reading.statements for f in s.figures]
    assert [(f.quantity.value, f.key) for f in deaths] == [(1000.0, "deaths")]


FUNCTION_WORDS = frozenset("a an the of to in on at by for from with and or but not no who whom whose what which how "
                           "many much that this".split())


def readable(query: str, claim: str) -> list[str]:
    """What makes a counter-query unreadable: a dangling function word, a spliced question word, a pasted
    sentence (six words running as in the claim), or a search too long to type."""
    words = query.lower().split()
    problems = []
    if words and (words[-1] in FUNCTION_WORDS or words[0] in FUNCTION_WORDS - {"a", "an", "the"}):
        problems.append("dangling function word")
    if re.search(r"\b(?:who|how many)\b", query, re.I):
        problems.append("question word spliced in")
    said = " ".join(re.findall(r"\w+", claim.lower()))
    run = [" ".join(re.findall(r"\w+", " ".join(words)))]
    grams = run[0].split()
    if any(" ".join(grams[i:i + 6]) in said for i in range(max(0, len(grams) - 5))):
        problems.append("pasted sentence")
    if len(words) > 14:
        problems.append("too long")
    return problems


def test_counter_queries_are_short_searches_naming_what_they_test():
    fig = Figure(Quantity(178.0, 1.0, False, False, False), "deaths", "count", noun="person")
    toll = Statement("a#0", "a", 0, 10, "The number of persons who lost their lives was 178.", figures=(fig,))
    said = Statement("b#0", "b", 0, 10, "It is commonly said that a spark from the mill started the fire.",
                     skeleton="It is commonly said that a spark from the mill started the fire.",
                     terms=("spark", "mill", "fire"))
    asked: set[str] = set()
    first = counter_queries(read_topic("the great fire at Carrowby in 1874"),
                            [("contested", toll), ("single source", said)], asked, 1)
    queries = [q["query"] for q in first]
    assert "Carrowby fire 1874 death toll disputed" in queries  # the topic as typed: its name, what, the year
    assert "Carrowby fire 1874 spark mill denied" in queries
    assert all(q["aimed_at"].endswith(("was 178.", "started the fire.")) for q in first[:4])
    second = counter_queries(read_topic("the great fire at Carrowby in 1874"), [("contested", toll)], asked, 2)
    assert len(first) >= 3 and not set(queries) & {q["query"] for q in second}
    for q in first + second:
        assert not readable(q["query"], str(q["aimed_at"])), q


def test_every_counter_query_of_a_map_is_readable(maps):
    _, out = maps
    for topic, (output, _) in out.items():
        for q in output["counter_queries"]:
            assert not readable(q["query"], q["aimed_at"]), (topic, q)
            assert q["aimed_at"], q
