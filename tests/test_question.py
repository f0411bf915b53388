"""An answer must address its question: constraints nothing cited mentions are named (verify/question.py)."""

from __future__ import annotations

from historian_blueprint.schema import SourceText
from historian_blueprint.settings import Caps
from historian_blueprint.verify.draft import verify_draft
from historian_blueprint.verify.question import constraints, premise, unmet

LINCOLN = ("It is proclaimed that all persons held as slaves within any State the people whereof shall then be in "
           "rebellion against the United States shall be then, thenceforward, and forever free.")
BYLINE = "Annual Message to Congress (1862) Abraham Lincoln"


def kinds(question: str) -> dict[str, str]:
    return {c.text: c.kind for c in constraints(question)}


def test_constraints_are_names_dates_places_and_qualifiers():
    assert kinds("When did Lincoln sign the Emancipation Proclamation on the moon?") == {
        "Lincoln": "name", "Emancipation Proclamation": "name", "on the moon": "qualifier"}
    assert kinds("What did Grover Cleveland say in his 1893 annual message about silver?") == {
        "Grover Cleveland": "name", "1893": "date"}  # "in his message" points at the document, not the world
    assert "the first" in kinds("Who was the first governor of the territory?")


def test_the_false_premise_is_named_and_the_met_constraints_are_not():
    missing = unmet("When did Lincoln sign the Emancipation Proclamation on the moon?", [f"{LINCOLN} {BYLINE}"])
    assert "on the moon" in [c.text for c in missing]
    assert "Lincoln" not in [c.text for c in missing]  # the document's author names him
    found = premise("When did Lincoln sign the Emancipation Proclamation on the moon?", [(LINCOLN, BYLINE)])
    assert found is not None and "on the moon" in found["finding"] and "false premise" in found["finding"]
    assert not found["refuse"]  # Lincoln is there: flag, do not refuse


def test_a_wrong_year_and_a_person_never_mentioned():
    assert [c.text for c in unmet("What did Lincoln proclaim in 1864 about slaves?", [f"{LINCOLN} {BYLINE}"])] == ["1864"]
    found = premise("What did Harriet Tubman say about the slaves held in rebellion?", [(LINCOLN, BYLINE)])
    assert found is not None and found["refuse"]  # the only name the question asks about is nowhere


def test_an_answer_that_mentions_everything_has_no_premise_finding():
    assert premise("What did Lincoln proclaim in 1862 about slaves in States in rebellion?", [(LINCOLN, BYLINE)]) is None


def test_check_a_draft_with_a_question_flags_the_unsupported_constraint():
    doc = SourceText("sotu-1862", f"Some words first. {LINCOLN} More words after.", "Annual Message to Congress (1862)", "Abraham Lincoln")
    draft = "Lincoln proclaimed that all persons held as slaves within any State in rebellion shall be forever free. [sotu-1862]"
    plain = verify_draft(draft, get_document={"sotu-1862": doc}.get, search=None, caps=Caps())
    asked = verify_draft(draft, get_document={"sotu-1862": doc}.get, search=None, caps=Caps(),
                         question="When did Lincoln sign the Emancipation Proclamation on the moon?")
    assert plain.premise is None
    assert asked.premise is not None and asked.status != "verified"
    assert "on the moon" in asked.premise["finding"]
