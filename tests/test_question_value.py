"""The question is read once, where a run starts, and every role reads that value (issue 40)."""

from __future__ import annotations

import pytest

from historian_blueprint.questions.reading import Focus, read_question


def test_a_question_is_read_into_one_value_with_what_it_asks():
    q = read_question("What were the three causes of the Panic of 1893 that Cleveland named?")
    assert q.count == 3 and q.shape.kind == "list" and q.shape.asked == 3
    assert {"cause", "panic", "1893", "cleveland"} <= q.words and "three" not in q.words and "3" not in q.words
    assert q.route == "complex"
    assert {c.kind for c in q.constraints} >= {"name", "date"}
    assert "cleveland" in q.names


def test_the_type_asked_and_the_focus_are_part_of_the_value():
    when = read_question("When did the Lusitania sink?")
    assert when.kind == "date" and when.shape.kind == "single" and when.route == "simple"
    vote = read_question("What was the Senate vote on the repeal?")
    assert vote.focus == Focus(frozenset({"vote"}), "vote", False)
    named = read_question("What was the name of Julia Malone's mother?")
    assert named.focus.name and named.focus.noun


def test_a_follow_up_carries_the_subject_of_its_thread():
    history = [{"question": "What did Herbert Hoover say about the depression?", "answer": "..."}]
    q = read_question("What did he say about the banks?", history)
    assert q.thread == {"herbert", "hoover", "depression"}
    assert not read_question("What did he say about the banks?").thread


def test_a_comparison_reads_its_sides_and_their_bylines_once():
    q = read_question("Compare what Cleveland and Harrison said about the tariff.", bylines=lambda name: 1)
    assert q.shape.comparison and [s.label for s in q.shape.sides] == ["Cleveland", "Harrison"]
    assert all(s.byline for s in q.shape.sides)
    assert not any(s.byline for s in read_question(q.text).shape.sides)  # no bylines given: none assumed


def test_a_comparisons_sides_are_read_with_it_each_as_a_question_of_its_own():
    q = read_question("Compare what Cleveland and Harrison said about the tariff.", bylines=lambda name: 1)
    assert [s.text for s in q.sides] == [side.query for side in q.shape.sides] and len(q.sides) == 2
    assert all(not s.sides for s in q.sides) and all("tariff" in s.words for s in q.sides)
    assert not read_question("When did the Lusitania sink?").sides


def test_the_value_is_immutable():
    q = read_question("Who wrote the Emancipation Proclamation?")
    with pytest.raises(AttributeError):
        q.text = "something else"  # type: ignore[misc]


def test_a_follow_up_carries_the_person_its_thread_asked_about():
    from historian_blueprint.questions.premises import lost_subject
    from historian_blueprint.schema import Citation

    bylines = {"Arnold Gragston": 1, "Gragston": 1}.get
    thread = [{"question": "How did Arnold Gragston help slaves escape across the Ohio River?"}]
    follow = read_question("Where did he settle after the war?", thread, bylines=lambda n: bylines(n, 0))
    assert follow.subject == "Arnold Gragston"
    named = read_question("Where did Julia Bunch settle after the war?", thread, bylines=lambda n: bylines(n, 0))
    assert named.subject is None  # a person of its own

    def cite(author, title, text):
        return Citation(id=1, source_id="d", title=title, author=author, year=1937, start=0, end=len(text), text=text,
                        locator="para 1")

    other = cite("Federal Writers' Project", "Interview with Julia Bunch", "Uncle brought him back after the war.")
    his = cite("Federal Writers' Project", "Interview with Arnold Gragston", "I went on to Detroit.")
    about = cite("Tribune", "Front page", "Mr. Gragston, who rowed hundreds across, lives in Detroit.")
    assert lost_subject(follow, [other])["refuse"] is True
    assert lost_subject(follow, [other, his]) is None and lost_subject(follow, [about]) is None
