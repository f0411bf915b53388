"""The LLM judge may confirm an unconfirmed claim only by quoting the words of its cited source that carry it.

The composer here cites, for one finding, a sentence of Hoover's 1931 message that lacks a word of the claim
(the floor leaves it unconfirmed); the same message says the claim word for word elsewhere, far from the
citation. A judge that quotes those words confirms the claim; one that only says "supported", or quotes
words the source does not have, changes nothing; no quote overrides a conflict the checks found.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from historian_lab.bench.fake_llm_server import OpenAICompatibleServer, faithful_responder
from historian_blueprint.ask.roles.anchoring import MAX_CONFIRMING_QUOTE, anchor, confirm
from historian_blueprint.ask.roles.replies import Confirmation
from historian_blueprint.schema import ClaimVerdict, EvidenceSpan, SourceText
from historian_blueprint.verify.service import document_getter
from tests import llm_fakes as fx
from tests.test_index import run_reindex
from tests.test_llm_engine import app, run  # noqa: F401 - app: a module's LLM-engine host on the sample corpus
from tests.test_llm_http import llm_app

HOOVER, WILSON = "sotu-1931-herbert-hoover", "sotu-1919-woodrow-wilson"
# The composer cites the message's opening sentence (it has "transmit" and "Congress", not "shall") ...
DUTY = ("It is my duty under the Constitution to transmit to the Congress information on the state of the Union "
        "and to recommend for its consideration necessary and expedient measures.")
# ... for a claim the message makes word for word some 29,000 characters later.
SHALL = "I shall transmit the recommendations to the Congress."
# A figure the message gives, and the claim that changes it.
MONETARY = ("In 14 countries, embracing a quarter of the world's population, former monetary standards have been "
            "temporarily abandoned.")
CHANGED = MONETARY.replace("14", "41")


def composing(claim: str, quote: str):
    """Two honest findings and a third, ``claim``, citing a passage of Hoover's message with ``quote``."""

    def reply(prompt: str) -> str:
        honest = json.loads(faithful_responder("composer", [{"content": prompt}]))["findings"][:2]
        hoover = re.search(rf"^(E\d+) \([^\n]*; {HOOVER}\):", prompt, re.M).group(1)
        findings = honest + [{"claim": claim, "evidence_id": hoover, "quote": quote}]
        return json.dumps({"answer": " ".join(f"{f['claim']} [{f['evidence_id']}]" for f in findings),
                           "findings": findings})

    return reply


def judging(claim: str, source_id: str | None = None, quote: str | None = None):
    """A judge that calls the answer verified and, given a quote, offers it as the words that carry ``claim``."""

    def reply(prompt: str) -> str:
        n = int(re.search(r"^Claim (\d+): " + re.escape(claim), prompt, re.M).group(1))
        confirmations = [{"claim_id": n, "source_id": source_id, "quote": quote}] if quote else []
        return json.dumps({"status": "verified", "confidence": 0.99, "required_revisions": [],
                           "reasoning": "every claim is supported", "confirmations": confirmations})

    return reply


def scripted(reply):
    return lambda messages: reply(messages[-1].content)


def roles(claim: str, quote: str, judge) -> dict[str, fx.Scripted]:
    """The composer and refiner both write the planted finding, so it is still there when the run ends."""
    compose = scripted(composing(claim, quote))
    return fx.scripted_roles(composer=[compose], refiner=[compose], judge=[scripted(judge)])


def the_claim(out: dict[str, Any], text: str) -> dict[str, Any]:
    return next(c for c in out["claims"] if c["text"] == text)


def document(app, source_id: str) -> SourceText:
    with app.app_context():
        return document_getter()(source_id)


@pytest.mark.parametrize("source_id,quote,note", [
    (None, None, None),                                           # "supported", and no quote at all
    (HOOVER, "I shall send every recommendation to the Congress.", f"judge quote not found in {HOOVER}"),
    (WILSON, SHALL, f"the judge quotes {WILSON}, which the claim does not cite"),
])
def test_a_judge_without_an_anchorable_quote_leaves_the_claim_unconfirmed(app, source_id, quote, note):
    models = roles(SHALL, DUTY, judging(SHALL, source_id, quote))
    out = run(app, models)
    claim = the_claim(out, SHALL)
    assert claim["verdict"] == "unconfirmed" and claim["decided_by"] != "judge quote", claim
    assert claim["evidence"]["source_id"] == HOOVER and SHALL not in claim["evidence"]["text"]
    assert out["status"] != "verified" and out["verification"]["judge"]["status"] != "verified"
    assert claim["id"] in out["verification"]["challenge"]["unsupported_claims"]
    if note:
        assert note in out["verification"]["judge"]["summary"]
    prompt = models["judge"].calls[0][-1].content
    assert f"Claim {claim['id']}: {SHALL}" in prompt and "Retrieved passages" in prompt  # shown what to quote from


def test_a_judge_that_quotes_the_carrying_words_confirms_the_claim(app):
    models = roles(SHALL, DUTY, judging(SHALL, HOOVER, SHALL))
    out = run(app, models)
    claim = the_claim(out, SHALL)
    assert claim["verdict"] == "supported" and claim["decided_by"] == "judge quote", claim
    evidence = claim["evidence"]
    content = document(app, HOOVER).text
    assert evidence["source_id"] == HOOVER and evidence["text"] == content[evidence["start"]:evidence["end"]] == SHALL
    assert SHALL in claim["reason"] and claim["cited_source_ids"] == [HOOVER]
    # it was the only claim the floor left unconfirmed: the answer is verified, its reports agree
    assert all(c["verdict"] == "supported" for c in out["claims"])
    assert out["status"] == "verified", out["verification"]["judge"]
    assert out["verification"]["challenge"]["unsupported_claims"] == []
    assert (f"claim {claim['id']} confirmed by the judge's quote from {HOOVER}"
            in out["verification"]["judge"]["summary"])
    first = models["judge"].calls[0]
    assert "verbatim" in first[0].content and '"confirmations"' in first[0].content  # the task and its JSON shape
    assert f"Claim {claim['id']}: {SHALL}" in first[-1].content and "Floor verdict: unconfirmed" in first[-1].content


def test_a_quote_cannot_override_a_contradiction(app):
    models = roles(CHANGED, MONETARY, judging(CHANGED, HOOVER, MONETARY))
    out = run(app, models)
    claim = the_claim(out, CHANGED)
    assert claim["verdict"] == "contradicted" and claim["decided_by"] != "judge quote", claim
    assert out["status"] != "verified"
    assert "14" in claim["evidence"]["text"] and "41" not in claim["evidence"]["text"]  # what the source says
    assert f"claim {claim['id']} is contradicted: a quote cannot confirm it" in out["verification"]["judge"]["summary"]
    assert "Floor verdict: contradicted" in models["judge"].calls[0][-1].content


def test_over_http_the_judges_quote_confirms_the_claim(tmp_path, monkeypatch):
    compose, judge = composing(SHALL, DUTY), judging(SHALL, HOOVER, SHALL)

    def responder(role: str, messages: list[dict[str, Any]]) -> str:
        prompt = str(messages[-1].get("content") or "")
        if role in ("composer", "refiner"):
            return compose(prompt)
        return judge(prompt) if role == "judge" else faithful_responder(role, messages)

    with OpenAICompatibleServer(responder, models=("test-model",), api_key="sk-test") as server:
        app = llm_app(tmp_path, server, monkeypatch)
        run_reindex(app)
        result = app.test_cli_runner().invoke(args=["historian", "ask", "List three causes of the depression",
                                                    "--output", "json", "--quiet"])
        judged = [r for r in server.requests if "confirmations" in json.dumps(r["messages"][0])]
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    claim = the_claim(out, SHALL)
    assert claim["verdict"] == "supported" and claim["decided_by"] == "judge quote"
    assert claim["evidence"]["text"] == document(app, HOOVER).text[claim["evidence"]["start"]:claim["evidence"]["end"]]
    assert out["status"] == "verified" and judged  # the judge was asked over HTTP, with the confirmations schema


def test_only_an_exact_quote_of_a_sentence_or_two_is_checked(app):
    """A quote anchored only fuzzily, or one long enough to piece a claim together from a page, confirms nothing."""
    doc = document(app, HOOVER)
    at = doc.text.index(SHALL)
    claim = ClaimVerdict(id=1, text=SHALL, verdict="unconfirmed", type="unverified_detail", severity="medium",
                         confidence=0.4, support=0.9, reason="the cited passage does not say 'shall'",
                         cited_source_ids=[HOOVER],
                         evidence=EvidenceSpan(source_id=HOOVER, start=at - 200, end=at + 200,
                                               text=doc.text[at - 200:at + 200]))
    nearly = SHALL.replace("recommendations", "recommendation")  # ≥ 90% alike: the composer's fuzzy anchor takes it
    page = doc.text[at - MAX_CONFIRMING_QUOTE:at + len(SHALL)]
    assert anchor(doc, nearly, at - 200, at + 200)[2] == "fuzzy"
    claims, notes = confirm([claim], [Confirmation(claim_id=1, source_id=HOOVER, quote=nearly),
                                      Confirmation(claim_id=1, source_id=HOOVER, quote=page)], lambda sid: doc)
    assert claims == [claim]
    assert notes == [f"claim 1: judge quote not found in {HOOVER}",
                     f"claim 1: judge quote longer than {MAX_CONFIRMING_QUOTE} characters"]


def test_a_quote_must_carry_the_claim_within_a_sentence_or_two():
    """Words of the claim scattered over a quote of five sentences do not carry it; the same words in one do."""
    from historian_blueprint.verify.grounding import confirm_by_quote

    claim = "The railway company paid the striking miners their wages in gold."
    scattered = ("The railway company met on Monday. The weather was fair and the roads were dry. "
                 "Later the striking miners gathered at the hall. Nothing was settled that week. "
                 "Their wages were at last paid in gold.")
    whole = scattered + " In the end the railway company paid the striking miners their wages in gold."
    doc = SourceText("doc", whole, "A letter", "A clerk")
    far = confirm_by_quote(claim, doc, 0, len(scattered))
    assert far.verdict == "unconfirmed" and "one or two sentences" in far.reason
    at = whole.index("In the end")
    near = confirm_by_quote(claim, doc, at, len(whole))
    assert near.verdict == "supported", near.reason
