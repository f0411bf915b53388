"""A stance the question takes for granted and the cited passages reverse (questions.stance)."""

from __future__ import annotations

from historian_blueprint.questions.stance import reversed_stance, stance_of
from historian_blueprint.schema import Citation


def cite(n: int, text: str) -> Citation:
    return Citation(id=n, source_id=f"doc-{n}", title="Annual Message", author="Herbert Hoover", year=1931,
                    start=0, end=len(text), text=text, locator=f"sentence {n}")


def test_a_stance_is_read_with_its_negation():
    assert stance_of("Why did Hoover support a federal dole?") == ("for", ["a", "federal", "dole"])
    assert stance_of("I am opposed to any direct or indirect Government dole.")[0] == "against"
    assert stance_of("I would not advise their forced removal and colonization.")[0] == "against"  # "not advise"
    assert stance_of("What did Hoover say about the dole?")[0] is None                # no stance taken
    assert stance_of("He favored the tariff and opposed the income tax.")[0] is None  # both sides: none


def test_the_passage_that_takes_the_other_side_is_named():
    question = "Why did Hoover support a federal dole for the unemployed?"
    turned = reversed_stance(question, [cite(1, "The unemployed are being cared for by local committees."),
                                        cite(2, "I am opposed to any direct or indirect Government dole.")])
    assert (turned.asked, turned.said, turned.citation.id) == ("support", "opposed", 2)
    johnson = "Why did Andrew Johnson favor the forced removal and colonization of the freedmen?"
    said = "While their right of voluntary migration is not to be questioned, I would not advise their forced removal."
    assert reversed_stance(johnson, [cite(1, said)]).said == "advise"


def test_nothing_is_reversed_when_a_passage_agrees_speaks_of_another_thing_or_takes_no_side():
    question = "Why did Hoover oppose a federal dole?"
    agrees = [cite(1, "I recommend a federal dole."), cite(2, "I am opposed to any federal dole.")]
    assert reversed_stance(question, agrees) is None                       # one passage takes the question's side
    assert reversed_stance(question, [cite(1, "I recommend the tariff commission.")]) is None  # another thing
    assert reversed_stance(question, [cite(1, "The dole was debated at length.")]) is None     # no side taken
    assert reversed_stance("What did Hoover say about a dole?", [cite(1, "I recommend a dole.")]) is None


def test_what_a_stance_is_about_is_the_head_of_its_object():
    from historian_blueprint.questions.stance import head_of
    from historian_blueprint.text.words import words

    assert head_of(words("a federal dole for the unemployed")) == "dole"
    assert head_of(words("any plan to free the slaves")) == "plan"
    assert head_of(words("a large standing army")) == "army"
    assert head_of(words("that Congress declare war")) is None  # a clause, not a thing
