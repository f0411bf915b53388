"""The document a question asks about (questions.scope): a byline's words of one year."""

from __future__ import annotations

import pytest

from historian_blueprint.questions.reading import read_question
from historian_blueprint.questions.scope import Scope, scope_of

YEARS = {"Franklin D. Roosevelt": [1934, 1935, 1945], "FDR": [1934, 1935, 1945], "Calvin Coolidge": [1923, 1927],
         "Woodrow Wilson": [1913, 1917], "Taft": [1912], "Grant": [1869, 1874],
         "Lincoln": [1862], "Hayes": [1878, 1879], "Wilson": [1913, 1917], "Harding": [1921, 1922],
         "Cleveland": [1893, 1894], "Roosevelt": [1934]}


def bylines(name: str) -> int:
    return len(YEARS.get(name, []))


def years_of(name: str) -> list[int]:
    return YEARS.get(name, [])


@pytest.mark.parametrize("question, name, year", [
    ("What did FDR's 1933 State of the Union say about banks?", "FDR", 1933),
    ("Were lynchings rising or falling according to Calvin Coolidge's 1927 message to Congress?", "Calvin Coolidge",
     1927),
    ("What catchphrase did Taft say in 1912 had been used to describe his foreign policy?", "Taft", 1912),
    ("In his 1913 annual message, where did Woodrow Wilson say the one cloud hung?", "Woodrow Wilson", 1913),
    ("What did Grant (1874) say about specie?", "Grant", 1874),
    ("Which of his earlier recommendations did Wilson renew in December 1916?", "Wilson", 1916),  # a verb of asking
    ("Why did Lincoln in 1862 oppose any plan to free the slaves?", "Lincoln", 1862),
])
def test_a_byline_with_its_year_is_the_document_asked_about(question, name, year):
    scope = scope_of(question, bylines, years_of)
    assert (scope.name, scope.year) == (name, year)
    assert scope.held == (year in YEARS[name])


@pytest.mark.parametrize("question", [
    "What aid did the government send during the 1878 yellow fever epidemic, according to Hayes?",  # the epidemic's
    "What did the President report about the Panic of 1893?",          # no byline
    "How did Lincoln in 1862 and Grant in 1874 differ on the currency?",  # two bylines: a comparison's sides
    "What did Wilson say in 1913 and in 1917 about the tariff?",        # two years
    "What did Harriet Tubman say in 1862 about the war?",               # nobody's byline here
    "What did Hayes predict in 1878 about resumption, and what did he report a year later?",  # past its year
    # a year of the person, or of words about them, not of their own words (a review of this work)
    "Who wrote to Lincoln in 1864?",
    "What did the press say about Wilson's 1917 address?",
    "How did Cleveland respond to the 1894 report of the Strike Commission?",
    "How did Americans react when Harding died in 1923?",
    "Was Lincoln born in 1809?",
    "What happened to Roosevelt in 1933?",
    "What did Harding say about the 1923 report?",
    "What did Harding's 1923 death mean to the party?",
])
def test_a_year_that_dates_something_else_scopes_nothing(question):
    assert scope_of(question, bylines, years_of) is None


def test_a_missing_document_is_named_with_the_years_held():
    scope = scope_of("What did FDR's 1933 State of the Union say about banks?", bylines, years_of)
    assert not scope.held
    assert scope.absent() == "the collection has no document by FDR of 1933 (it holds theirs of 1934–1935, 1945)"
    assert Scope("Taft", 1910, (1912,)).absent() == ("the collection has no document by Taft of 1910 (it holds "
                                                     "theirs of 1912)")


def test_the_question_value_carries_its_scope_and_a_comparison_none():
    single = read_question("What did Taft say in 1912 about the tariff?", bylines=bylines, years_of=years_of)
    assert single.scope == Scope("Taft", 1912, (1912,))
    both = read_question("Compare Lincoln in 1862 and Grant in 1874 on the currency.", bylines=bylines,
                         years_of=years_of)
    assert both.shape.comparison and both.scope is None


def test_a_follow_up_keeps_its_threads_document_unless_it_names_another():
    thread = [{"question": "What had happened to the amendment abolishing slavery, according to Lincoln's December "
                           "1864 message?"}]
    follow = read_question("So what did he ask the House to do about it?", thread, bylines=bylines,
                           years_of=years_of)
    assert (follow.scope.name, follow.scope.year) == ("Lincoln", 1864) and not follow.scope.held
    for own in ("And what did Taft say about it?", "And in 1865?"):  # a byline or a year of its own: not carried
        assert read_question(own, thread, bylines=bylines, years_of=years_of).scope is None
    for elsewhere in ("How did the newspapers react to it?", "What did Congress do about it?",
                      "What did Jefferson Davis say in reply?"):  # another subject: not Lincoln's words
        assert read_question(elsewhere, thread, bylines=bylines, years_of=years_of).scope is None
    nurses = [{"question": "How short of nurses did FDR say the Army was in his January 1945 message?"}]
    assert read_question("And what did he ask Congress to do to get them?", nurses, bylines=bylines).scope.year == 1945
