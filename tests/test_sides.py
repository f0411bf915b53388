"""A comparison's sides read whole (by their words and their meaning), comparisons written as historians write
them, lists that name no count, and people named by their initials."""

from __future__ import annotations

import pytest

from historian_blueprint.ask.roles import extractive
from historian_blueprint.questions.reading import read_question
from historian_blueprint.questions.lists import in_scope, list_found, list_items, listed, open_list
from historian_blueprint.questions.shapes import belongs, described, shape_of, side_filters, with_bylines
from historian_blueprint.ask.roles.sides import MIN_SIDE, per_side, sentences_of, topic_text
from historian_blueprint.schema import Fact
from historian_blueprint.text.names import initials, names
from historian_blueprint.text.words import content_words


@pytest.fixture(scope="module")
def embed():
    from historian_blueprint.index.embedding import get_embedder

    return get_embedder(None, "exact", None).encode


def fact(text, author, year, n, score=0.0):
    return Fact(source_id=f"doc-{author}-{year}", title=f"Annual Message to Congress ({year})",
                author=author, year=year,
                start=n * 1000, end=n * 1000 + len(text), text=text, locator=f"sentence {n}", score=score, overlap=0.0)


@pytest.mark.parametrize("question, sides", [
    ("Compare what Andrew Johnson said in 1867 with what Grant said in 1874 about Black men voting in the South.",
     ["Andrew Johnson in 1867", "Grant in 1874"]),                    # a reporting verb between a name and its year
    ("How did Chester Arthur in 1884 and Grover Cleveland in 1885 handle the restriction of Chinese immigration?",
     ["Chester Arthur in 1884", "Grover Cleveland in 1885"]),         # two dated subjects of one question
    ("What did Lincoln say in 1862 and Johnson in 1866 about the freedmen?", ["Lincoln in 1862", "Johnson in 1866"]),
    ("Did Douglas Dorsey or Hiram Mayes describe harsher punishment of slaves?", ["Douglas Dorsey", "Hiram Mayes"]),
    ("What did Grant tell Congress in 1874 and Hayes in 1877 about the South?", ["Grant in 1874", "Hayes in 1877"]),
])
def test_comparisons_as_historians_write_them(question, sides):
    shape = shape_of(question)
    assert shape.kind == "comparison" and [s.label for s in shape.sides] == sides
    for side in shape.sides:
        assert side.year is None or str(side.year) in side.label
        assert "what what" not in side.query and " with what " not in side.query, side.query


@pytest.mark.parametrize("question", [
    "What did Lincoln say in 1862 about Liberia and Hayti?",  # a topic of two names
    "Did Lincoln propose colonization in 1862?",
])
def test_no_comparison_where_none_is_asked(question):
    assert shape_of(question).kind != "comparison"


@pytest.mark.parametrize("question, listed", [
    ("Which countries did Harrison's 1891 message name as having concluded reciprocal trade arrangements?", True),
    ("What steps did Hoover recommend in 1929 to improve enforcement of the Prohibition laws?", True),
    ("What kinds of wild game did Joe Higgerson recall trapping?", True),
    ("Which of his earlier recommendations did Wilson renew in 1916?", True),
    ("List the measures Roosevelt asked for in 1944.", True),
    ("To which officials did the Commoner urge readers to write?", True),  # a preposition first
    ("In which year did Lincoln die?", False),                          # one thing, with its preposition
    ("By what means did Gragston escape?", False),                      # a plural that asks for one thing
    ("On what grounds did the court reject the appeal?", False),
    ("What surplus did Grover Cleveland report for 1888?", False),     # "-us" is no plural
    ("Name the author of the 1901 message.", False),                  # one thing named
    ("What does Lincoln say about Liberia?", False),
    ("What was the cause of the panic of 1893?", False),
    ("What Adams did about the tariff in 1825?", False),              # a name, not a plural
    ("What his views were on slavery?", False),
    ("What news do the papers have of the war?", False),
])
def test_a_list_that_names_no_count_is_an_open_list(question, listed):
    assert open_list(question) is listed
    shape = shape_of(question)
    assert (shape.kind == "list" and shape.asked is None) is listed
    if listed:  # the page says it is open, and states no count it cannot know
        assert described(shape, question, [{"id": 1, "text": "Mexico and Brazil"}]) == {
            "kind": "list", "asked": None, "found": None, "open": True}


def test_meaning_chooses_which_of_a_sides_sentences_speaks_to_the_topic_and_a_common_word_picks_nothing_out(embed):
    q = "Roosevelt in 1907 vs Taft in 1911: should the antitrust law be changed?"
    shape = with_bylines(shape_of(q), lambda name: 1)
    facts = [fact("The law of the sea governs the navigation of merchant vessels in time of war.",
                  "William H. Taft", 1911, 1, 0.9),
             fact("I am opposed to any amendment of the Sherman law against trusts and monopolies.",
                  "William H. Taft", 1911, 2, 0.5),
             fact("The receipts of the Post Office Department increased during the year.",
                  "William H. Taft", 1911, 3, 0.8),
             fact("The antitrust law should not be repealed; but it should be made both more efficient and more in "
                  "harmony with actual conditions.", "Theodore Roosevelt", 1907, 4),
             fact("The Army is too small for the needs of the nation.", "Theodore Roosevelt", 1907, 5)]
    words = set(read_question(q).words)
    chosen = [f.text for f in per_side(words, facts, shape, embed=embed)]
    assert chosen[0].startswith("The antitrust law should not be repealed")
    assert chosen[1].startswith("I am opposed to any amendment")  # "changing the antitrust law", in other words
    # "law" alone, the word three sentences share, is not the topic; nor the Army, nor the mails
    assert len(chosen) == 2
    lexical = [f.text for f in per_side(words, facts, shape)]  # without the encoder
    assert lexical == chosen[:1]  # the shared words alone cannot tell Taft's two "law" sentences apart: not found


def test_a_side_with_nothing_on_the_topic_is_not_found(embed):
    q = "What did Wilson and Harding each tell Congress about giving women the vote?"
    shape = with_bylines(shape_of(q), lambda name: 1)
    facts = [fact("I urge the Congress to give the vote to the women of the country, who have earned it in this war.",
                  "Woodrow Wilson", 1918, 1),
             fact("The railways must be returned to private ownership under proper regulation.",
                  "Warren G. Harding", 1921, 2),
             fact("Our merchant marine needs the support of the Government.", "Warren G. Harding", 1921, 3)]
    answer = extractive.compose(read_question(q, bylines=lambda name: 1), facts, [q], (3, ()), embed=embed)
    assert [c.author for c in answer.citations] == ["Woodrow Wilson"]
    table = described(shape, q, [c.model_dump() for c in answer.citations])
    assert [row["found"] for row in table["sides"]] == [True, False]
    assert "for Harding, nothing in the collection was found" in answer.answer


def test_topic_text_leaves_out_the_side():
    shape = shape_of("Roosevelt in 1907 vs Taft in 1911: should the antitrust law be changed?")
    assert topic_text(shape.sides[1]) == "should the antitrust law be changed?"
    assert 0 < MIN_SIDE < 1


def test_every_sentence_of_a_sides_passages_is_read():
    hit = {"source_id": "d", "title": "Annual Message", "author": "Taft", "year": 1911, "start": 500,
           "locator": "para 3",
           "text": "The law stands. This statute as construed by the Court must continue to be the line "
                   "of distinction."}
    found = sentences_of([hit])
    assert [f.text for f in found] == ["This statute as construed by the Court must continue to be the line "
                                       "of distinction."]
    assert found[0].start == 500 + hit["text"].index("This statute")


def test_the_sides_share_an_author_named_once():
    q = "What did Wilson's 1916 and 1917 messages say about Germany?"
    shape = with_bylines(shape_of(q), lambda name: 3 if name == "Wilson" else 0)
    assert [s.label for s in shape.sides] == ["1916", "1917"] and shape.author == "Wilson"
    first = shape.sides[0]
    assert side_filters(first, shape) == {"year_from": 1916, "year_to": 1916, "author": "Wilson"}
    assert belongs(first, shape, byline="Woodrow Wilson Annual Message", text="Germany", year=1916)
    assert not belongs(first, shape, byline="The Evening Star", text="Germany", year=1916)  # a newspaper of 1916
    assert with_bylines(shape_of(q), lambda name: 0).author is None
    two = with_bylines(shape_of("Compare the 1912 and 1913 messages of Taft and Wilson"), lambda name: 1)
    assert two.author is None  # two authors named: neither's documents alone
    about = with_bylines(shape_of("Compare what the 1937 and 1938 interviews say about Lincoln."), lambda name: 1)
    assert about.author is None  # the subject of the question is not its sides' author


def test_people_are_named_by_their_initials():
    assert names("FDR", "Franklin D. Roosevelt") and names("FDR", "Franklin D. Roosevelt Annual Message to Congress")
    assert not names("FDR", "Herbert Hoover") and not names("FDR", "Franklin Pierce")
    assert not names("FDR", "Fight Draws Record Crowd")    # initials of a whole name, not of any capitals in a row
    assert not names("US", "Ulysses S Grant") and not names("AM", "Annual Message")  # two letters name too much
    assert names("Rachel Adams", "Rachel Adams, interviewed") and not names("Adams Rachel Brown", "Rachel Adams")
    assert "FDR" in initials("by Franklin D. Roosevelt in 1944")
    from historian_blueprint.verify.question import constraints, unmet

    q = "What did FDR ask Congress to adopt in 1944?"
    assert ([c.text for c in unmet(q, ["Franklin D. Roosevelt Annual Message to Congress 1944 a realistic tax law"])]
            == [])
    assert [c.text for c in unmet(q, ["Herbert Hoover Annual Message 1944"])] == ["FDR"]
    assert [c.kind for c in constraints(q)] == ["name", "date"]


def test_a_list_counts_items_of_the_document_asked_about():
    q = "What three constitutional amendments did Lincoln propose in his 1862 annual message?"
    buchanan = ["1. An express recognition of the right of property in slaves in the States.",
                "2. The duty of protecting this right in all the common Territories."]
    assert list_found(q, buchanan, 3, [1860, 1860]) == 0  # another message's numbered points
    assert list_found(q, buchanan, 3, [1862, 1862]) == 2
    assert in_scope(q, "as Congress resolved in 1862", 1860) and not in_scope(q, "no year", 1860)
    assert in_scope(q, "a document of no known year", None)
    span = "Which states entered the Union between 1889 and 1907?"
    assert in_scope(span, "Idaho and Wyoming", 1890) and not in_scope(span, "Nebraska", 1867)
    assert in_scope("What did Grant in 1873 and Hayes in 1877 propose?", "anything", 1875)  # two years: no one year


def test_an_items_lettered_parts_are_its_own_and_a_colon_may_open_the_first():
    q = "What six measures did Roosevelt ask Congress to adopt in 1944?"
    item = ("(3) A cost of food law-which will enable the Government (a) to place a floor under prices; "
            "and (b) a ceiling.")
    assert len(list_items(q, item, 6)) == 1
    head = ("Therefore I recommend that the Congress adopt: (1) A realistic tax law-which will tax all "
            "unreasonable profits.")
    assert len(list_items(q, head, 6)) == 1
    assert len(list_items(q, "ART.-All slaves who shall have enjoyed actual freedom shall be forever free.", 3)) == 1
    assert len(list_items(q, "We shall need (1) a larger army, (2) a stronger navy, and (3) new forts.", 6)) == 3
    assert list_items(q, "The petition was signed: A. Lincoln, and it was granted.", 6) == []  # a signature, no item


def test_the_findings_a_list_chooses_hold_the_items_it_counts():
    q = read_question("What four freedoms did Roosevelt name in his 1941 annual message?")
    texts = ["In the future days we look forward to a world founded upon four essential human freedoms.",
             "The first is freedom of speech and expression everywhere in the world.",
             "The second is freedom of every person to worship God in his own way everywhere in the world.",
             "Our national policy is this: first, by an impressive expression of the public will.",
             "The third is freedom from want everywhere in the world.",
             "The second is freedom of every person to worship God in his own way everywhere in the world."]
    facts = [fact(t, "Franklin D. Roosevelt", 1941, n, score=1 - n / 10) for n, t in enumerate(texts)]
    chosen, found = listed(q.text, q.shape.asked, facts, 0.34, q.content)
    assert found == list_found(q.text, [f.text for f in chosen], q.shape.asked, [f.year for f in chosen]) == 3
    assert [f.start for f in chosen] == sorted(f.start for f in chosen)  # in the document's own order
    assert listed(q.text, q.shape.asked, facts[3:4], 0.34, q.content) == ([], 0)  # nothing recognisably an item


def test_a_finding_reads_its_own_words_once_and_a_copy_of_another_sentence_reads_its_own():
    first = fact("The tariff on wool was lowered.", "Grover Cleveland", 1887, 1)
    assert first.words == frozenset(content_words(first.text)) and "words" not in first.model_dump()
    other = first.model_copy(update={"text": "Silver coinage should stop.", "start": 5000})
    assert other.words == frozenset(content_words("Silver coinage should stop.")) and not other.words & first.words
    assert first.model_copy(update={"score": 2.0}).words == first.words
    assert fact("The tariff on wool is too high.", "Grover Cleveland", 1887, 2).repeats([first])
    assert not other.repeats([first])


def test_a_single_answers_first_findings_are_ranked_by_meaning_too(embed):
    """"Were lynchings rising or falling?": the sentence that answers in other words ("they have shown an
    increase") shares no word with the question; by words alone a sentence that repeats "lynching" leads, by meaning
    too the answer does. A list's items keep their own order, and without the encoder the words decide."""
    q = read_question("Were lynchings rising or falling according to Coolidge's 1927 message?")
    repeats = fact("The Congress should enact legislation against lynching under the Constitution.", "Calvin Coolidge",
                   1927, 1, 0.60)
    answers = fact("In the last year lynchings have shown an increase after several years of decline.",
                   "Calvin Coolidge", 1927, 2, 0.59)  # close by words: meaning decides
    ranked = extractive.by_meaning(q, [repeats, answers], embed)
    assert [f.text for f in ranked] == [answers.text, repeats.text]
    assert extractive.by_meaning(q, [repeats, answers], None) == [repeats, answers]
    listed_q = read_question("What three things did Coolidge say about lynching?")
    assert extractive.by_meaning(listed_q, [repeats, answers], embed) == [repeats, answers]
