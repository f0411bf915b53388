"""What shape of answer a question asks for, and the answer's own words: a lead sentence that quotes a short
excerpt once, a comparison answered side by side, a list that says how many of the items asked it found."""

from __future__ import annotations

import pytest

from historian_blueprint.ask.roles import extractive
from historian_blueprint.questions.reading import read_question
from historian_blueprint.questions.lists import asked_count, list_found, list_items
from historian_blueprint.questions.shapes import belongs, described, shape_of, side_filters, with_bylines
from historian_blueprint.ask.roles.written import excerpt
from historian_blueprint.schema import Fact


@pytest.mark.parametrize("question, sides", [
    ("Theodore Roosevelt vs Wilson on the trusts", ["Theodore Roosevelt", "Wilson"]),
    ("How did Hoover and Franklin D. Roosevelt differ on relief for the unemployed?",
     ["Hoover", "Franklin D. Roosevelt"]),
    ("Compare Grant, Hayes and Arthur on civil service reform.", ["Grant", "Hayes", "Arthur"]),
    ("What did Cleveland and McKinley say about silver?", ["Cleveland", "McKinley"]),
    ("How did Lincoln's 1861 and 1864 messages differ on emancipation?", ["1861", "1864"]),
    ("Contrast Grover Cleveland's 1887 message and Benjamin Harrison's 1889 message on the tariff.",
     ["Grover Cleveland's 1887", "Benjamin Harrison's 1889"]),          # a name with its year is one side
    ("Hoover in 1931 vs. Roosevelt in 1935 on relief", ["Hoover in 1931", "Roosevelt in 1935"]),
    ("Compare Grant and Hayes.", ["Grant", "Hayes"]),
    ("What did Coolidge say about taxes in 1925 compared with 1927?", ["1925", "1927"]),
    ("How did Coolidge's 1925 and 1927 messages treat farm relief?", ["1925", "1927"]),
    ("How did President Harding differ from President Coolidge on immigration?", ["Harding", "Coolidge"]),  # no titles
    ("Cleveland or Harrison: who favored tariff reduction?", ["Cleveland", "Harrison"]),
    ("Compare Woodrow Wilson (1913) and Theodore Roosevelt (1908) on corporations.",
     ["Woodrow Wilson (1913)", "Theodore Roosevelt (1908)"]),
])
def test_a_comparison_names_its_sides_and_searches_each_without_the_others(question, sides):
    shape = shape_of(question)
    assert shape.kind == "comparison" and [s.label for s in shape.sides] == sides
    for side in shape.sides:
        others = [o.label for o in shape.sides if o is not side]
        assert side.label in side.query and not any(o in side.query.replace(side.label, "") for o in others), side.query
        assert " and ?" not in side.query and side.query.split()[-1] not in ("and", "vs")


@pytest.mark.parametrize("question", [
    "What happened between 1861 and 1865?",              # a span of years, not two sides
    "What did Lincoln say about Hayti and Liberia?",     # a topic of two names, no comparison asked
    "What did Cleveland say about the silver purchase law?",
])
def test_not_every_pair_of_names_is_a_comparison(question):
    assert shape_of(question).kind != "comparison"


@pytest.mark.parametrize("question, asked", [
    ("What were the four freedoms Roosevelt named in 1941?", 4),
    ("The four freedoms, 1941", 4),
    ("Name three reasons Hayes gave for civil service reform.", 3),
    ("Which two nations did Lincoln propose to recognize?", 2),
    ("What did Roosevelt propose about the three branches of government?", None),  # a topic, not a count asked
    ("How did the war last two years?", None),
    ("Summarize the six articles of the peace protocol.", 6),
    ("What did Hayes recommend in two years?", None),
])
def test_a_list_counts_what_it_asks_for(question, asked):
    assert asked_count(question) == asked


def test_list_items_are_ordinals_or_enumerated_names_and_the_heading_is_no_item():
    q = "What were the four freedoms Roosevelt named in 1941?"
    heading = "We look forward to a world founded upon four essential human freedoms."
    first = "The first is freedom of speech and expression-everywhere in the world."
    second = "The second is freedom of every person to worship God in his own way-everywhere in the world."
    topical = "This nation has placed its destiny in the hands of its millions of free men and women and their freedom."
    assert list_items(q, heading, 4) == [] and list_items(q, topical, 4) == []
    assert list_found(q, [heading, first, second, topical, first], 4) == 2  # the same item twice counts once
    q2 = "Which two nations did Lincoln propose to recognize?"
    assert list_found(q2, ["the independence and sovereignty of Hayti and Liberia, I am unable to discern it."], 2) == 2


def test_a_side_with_a_year_is_spoken_for_by_that_year_s_documents():
    shape = with_bylines(shape_of("Hoover in 1931 vs. Roosevelt in 1935 on relief"), lambda name: 1)
    hoover = shape.sides[0]
    assert hoover.year == 1931 and side_filters(hoover) == {"author": "Hoover", "year_from": 1931, "year_to": 1931}
    assert belongs(hoover, shape, byline="Herbert Hoover Annual Message", text="relief", year=1931)
    assert not belongs(hoover, shape, byline="Herbert Hoover Annual Message", text="relief", year=1930)


def test_a_byline_side_is_spoken_for_by_its_own_documents_only():
    shape = with_bylines(shape_of("Theodore Roosevelt vs Wilson on the trusts"), lambda name: 1)
    wilson = shape.sides[1]
    assert belongs(wilson, shape, byline="Woodrow Wilson Annual Message (1913)", text="the Sherman law", year=1913)
    assert not belongs(wilson, shape, byline="Theodore Roosevelt Annual Message (1905)",
                       text="as Wilson said", year=1905)
    table = described(shape, "Theodore Roosevelt vs Wilson on the trusts", [
        {"id": 1, "author": "Theodore Roosevelt", "title": "Annual Message", "year": 1901, "text": "the trusts"}])
    assert table == {"kind": "comparison", "sides": [
        {"label": "Theodore Roosevelt", "citations": [1], "found": True},
        {"label": "Wilson", "citations": [], "found": False}]}


def fact(text, author, year, n, score=0.9):
    return Fact(source_id=f"doc-{author}-{year}", title=f"Annual Message to Congress ({year})",
                author=author, year=year,
                start=n * 100, end=n * 100 + len(text), text=text, locator=f"sentence {n}", score=score, overlap=0.6)


def test_the_lead_is_in_historians_words_and_quotes_each_passage_once():
    q = "What did Grover Cleveland say about the repeal of the silver purchase law?"
    facts = [fact("The recent repeal of the provision of law requiring the purchase of silver bullion by the "
                  "Government as a feature of our monetary scheme has made an entire change in the complexion of our "
                  "currency affairs.", "Grover Cleveland", 1893, 1),
             fact("The purchases of silver under the law of July 14, 1890, during the last fiscal year aggregated "
                  "54,008,162 ounces.", "Grover Cleveland", 1893, 2, 0.8),
             fact("The silver purchase law was repealed in the hope of restoring confidence in the "
                  "currency of the nation.", "Grover Cleveland", 1894, 3, 0.7)]
    answer = extractive.compose(
        read_question(q), facts, [q], (3, ()),
        labels={"doc-Grover Cleveland-1893": "Grover Cleveland, Annual Message to Congress (1893)"})
    assert answer.answer.startswith("Grover Cleveland, Annual Message to Congress (1893), sentence 1, answers "
                                    "most directly: “")
    assert "[1]" in answer.answer and "2 more passages, from 1 other document, bear on the question." in answer.answer
    for c in answer.citations:  # no passage is quoted whole in the lead: the findings quote it, once
        assert c.text not in answer.answer
    assert len(answer.answer.split("“")[1].split("”")[0].split()) <= 18


def test_a_comparison_answer_has_a_finding_per_side_or_says_none_was_found():
    q = "Compare what Cleveland and Harrison said about the tariff."
    facts = [fact("A just and sensible revision of our tariff laws should be made for the relief of those of "
                  "our countrymen.", "Grover Cleveland", 1888, 1),
             fact("The tariff on wool was again raised in the interest of the producers of the country.",
                  "Grover Cleveland", 1887, 2, 0.85)]
    answer = extractive.compose(read_question(q, bylines=lambda name: 1), facts, [q], (3, ()))
    assert not answer.refusal and [c.author for c in answer.citations] == ["Grover Cleveland", "Grover Cleveland"]
    assert (answer.answer.startswith("Side by side:")
            and "for Harrison, nothing in the collection was found" in answer.answer)


def test_excerpt_keeps_the_words_of_the_question_and_marks_the_cut():
    text = " ".join(f"w{n}" for n in range(40)) + " silver repeal " + " ".join(f"x{n}" for n in range(20))
    cut = excerpt(text, {"silver", "repeal"})
    assert "silver repeal" in cut and cut.startswith("… ") and cut.endswith(" …") and len(cut.split()) <= 18


@pytest.mark.parametrize("text, items", [
    ("First. That the States shall be required to afford a good common-school education.", 1),
    ("Secondly, the tariff must be revised.", 1),
    ("We shall need (1) a larger army, (2) a stronger navy, and (3) new forts.", 3),
    ("He recommended the following: the repeal of the purchase clause; a revision of the tariff laws; and an "
     "increase of the navy.", 3),
    # a salutation
    ("To the Senate and House of Representatives: In submitting my message, in this year; I am glad.", 0),
    ("One hundred and nineteen national banks were organized during the year.", 0),   # a figure, not an item
    ("The four questions are these, and they are grave.", 0),                         # the list's heading
])
def test_written_enumerations_are_counted_as_items(text, items):
    assert len(list_items("What were the four questions Grant urged Congress to settle?", text, 4)) == items


def test_an_enumeration_is_read_on_past_the_sentence_found_bare_ordinals_heading_their_items():
    from historian_blueprint.ask.roles.written import enumeration
    from historian_blueprint.schema import SourceText

    text = ("I will recapitulate the questions which I deem of vital importance: First. That every child shall be "
            "taught to read. Second. No sectarian tenets shall be taught in any school. This is a grave matter. Third. "
            "Declare church and state forever separate. Fourth. Drive out licensed immorality. I close with thanks to "
            "Congress.")
    doc = SourceText("grant-1875", text, "Annual Message to Congress (1875)", "Ulysses S. Grant")
    head = text[:text.index("First.") + len("First.")]
    found = enumeration([fact(head, "Ulysses S. Grant", 1875, 0).model_copy(update={"source_id": doc.source_id,
                                                                                    "start": 0, "end": len(head)})],
                        lambda source_id: doc, asked=4)
    items = [f.text for f in found[1:]]
    assert [t.split(".")[0] for t in items] == ["First", "Second", "Third", "Fourth"]
    assert all(text[f.start:f.end] == f.text for f in found)  # exact spans: each cites what the source says
    q = "What were the four questions Grant urged Congress to settle?"
    assert list_found(q, items, 4) == 4 and list_found(q, items[:3], 4) == 3


def test_odd_comparisons_neither_crash_nor_overflow():
    for q in ("Compare Kansas City and Kansas on cattle.", "Compare New York City and New York on trade."):
        shape_of(q)  # two names found at one place once raised TypeError
    assert shape_of("Compare Washington, Adams, Jefferson, Madison and Monroe on the tariff.").kind != "comparison"
    assert shape_of("Compare " + " vs. ".join(str(1800 + n) for n in range(300)) + "?").kind != "comparison"
    assert ([s.label for s in shape_of("Compare Kansas City  and   Kansas on cattle.").sides]
            == ["Kansas City", "Kansas"])


def test_a_comparison_that_names_only_its_sides_is_answered_for_each():
    q = "Compare Wilson and Roosevelt."
    facts = [fact("We must free the business of the country from the trusts and from monopoly.",
                  "Woodrow Wilson", 1913, 1),
             fact("The great corporations known as trusts are in certain features hurtful to the general welfare.",
                  "Theodore Roosevelt", 1901, 2, 0.8)]
    answer = extractive.compose(read_question(q, bylines=lambda name: 1), facts, [q], (3, ()))
    assert not answer.refusal and [c.author for c in answer.citations] == ["Woodrow Wilson", "Theodore Roosevelt"]


def test_ordinary_sentences_are_no_list_items():
    q = "What were the four freedoms Roosevelt named in 1941?"
    for text in ("Next morning we went to church.", "Another day passed.", "First, I want to thank you.",
                 "Finally, the war ended.", "Last year the crops failed."):
        assert list_items(q, text, 4) == [], text
    assert len(list_items(q, "Secondly, the tariff must be revised.", 4)) == 1


def test_a_side_search_stays_within_the_askers_filters():
    from historian_blueprint.ask.nodes import narrowed

    assert narrowed({"author": "Wilson", "year_from": 1913, "year_to": 1916}, {"year_from": 1915, "year_to": 1920}) == {
        "author": "Wilson", "year_from": 1915, "year_to": 1916}
    assert (narrowed({"author": "Roosevelt"}, {"author": "Theodore Roosevelt"})["author"]
            == "Roosevelt Theodore Roosevelt")
