"""The answer's standing in plain words: one vocabulary, no contradiction between a status and its sentence."""

from historian_blueprint.present.report import confidence_words, report_views, source_label, status_words
from historian_blueprint.verify.reports import clip


def output(status="verified", verdicts=("supported", "supported"), refusal=False, premise=None, citations=True):
    claims = [{"id": n, "text": f"claim {n}", "verdict": v} for n, v in enumerate(verdicts, start=1)]
    verification = {"premise": premise} if premise else {}
    return {"status": status, "confidence": 0.99, "claims": claims, "verification": verification,
            "citations": [{"id": 1, "source_id": "d"}] if citations else [],
            "metadata": {"refusal": refusal, "collection": {"documents": 319, "years": [1860, 1945]}}}


def test_a_refusal_is_not_in_this_collection_and_says_what_the_collection_covers():
    words = status_words(output(status="human_review", refusal=True, citations=False))
    assert words.group == "absent" and words.label == "not in this collection"
    assert "its 319 documents date from 1860 to 1945" in words.sentence


def test_a_failure_is_not_dressed_as_a_refusal():
    assert status_words(output(status="human_review", citations=False)).group == "failed"


def test_verified_only_when_the_status_is_and_a_premise_miss_says_why_despite_a_high_confidence():
    assert status_words(output()).label == "verified"
    missed = status_words(output(status="flagged",
                                 premise={"finding": "the question's “1941” is not mentioned by any cited evidence"}))
    assert missed.group == "check" and "verified" not in missed.label and "“1941” is not mentioned" in missed.sentence
    flagged = status_words(output(status="flagged", verdicts=("supported", "unconfirmed", "contradicted")))
    assert flagged.label == "check before use" and "1 of 3 claims are supported" in flagged.sentence
    assert "1 is contradicted by a source" in flagged.sentence


def test_words_carry_no_field_names_or_underscores():
    for o in (output(), output(status="needs_revision", verdicts=("unconfirmed",)),
              output(status="human_review", refusal=True)):
        words = status_words(o)
        assert "_" not in words.label + words.sentence
    assert confidence_words(0.99) == "high (0.99)" and confidence_words(0.3) == "low (0.30)"


def test_reports_read_as_paragraphs_with_tables():
    o = output(status="flagged", verdicts=("supported", "unconfirmed"))
    o["verification"] = {
        "challenge": {"weaknesses": [{"claim_id": 2, "issue": "unconfirmed: few of its words", "severity": "medium"}],
                      "critical": False},
        "interrogation": {"citations": [{"claim_id": 1, "source_id": "d", "assessment": "exact"},
                                        {"claim_id": 2, "source_id": "d", "assessment": "out_of_context"}]},
        "counter": {"opposing_reading": None, "evidence": []},
        "judge": {"base": 0.8, "confidence": 0.6, "status": "flagged",
                  "required_revisions": ["claim 2: few of its words"]},
    }
    views = {v.key: v for v in report_views(o)}
    assert views["challenge"].paragraph.endswith("found 1 weak point.") and views["challenge"].rows[0][1] == "claim 2"
    assert ("1 of 2 do" in views["interrogation"].paragraph
            and views["interrogation"].rows[1][3] == "does not say what the claim says")
    assert "found none" in views["counter"].paragraph
    assert "leaving 0.60. Its standing: check before use." in views["judge"].paragraph


def test_a_source_is_labelled_by_who_speaks_what_and_where():
    c = {"source_id": "wpa-x", "title": "Interview with Rachel Adams, Georgia", "author": "Federal Writers' Project",
         "year": 1937, "locator": "para 3"}

    class Doc:
        extra = {"interviewee": "Rachel Adams"}

    assert source_label(c, Doc()) == "Rachel Adams, interviewed by the Federal Writers' Project, 1937, para 3"
    assert (source_label({"source_id": "s", "title": "Annual Message to Congress (1893)", "author": "Grover Cleveland",
                          "year": 1893, "locator": "sentence 4"})
            == "Grover Cleveland, Annual Message to Congress (1893), sentence 4")


def test_a_long_reading_is_cut_at_a_word_boundary_never_mid_word():
    text = "word " * 200
    cut = clip(text, 300)
    assert cut.endswith("word…") and len(cut) <= 301
    assert clip("short enough", 300) == "short enough"
