"""Each grounding rule on its own: a claim where it fires, and a near miss where it must not.

The rules are called directly on a claim's context (``build_context``), then the same claim goes through
``check_claim`` to show the rule is the one that decides it in the full checklist.
"""

from __future__ import annotations

import pytest

from historian_blueprint.schema import Cited, SourceText
from historian_blueprint.verify.context import build_context
from historian_blueprint.verify.grounding import check_claim
from historian_blueprint.verify.findings import Check
from historian_blueprint.verify.rules import RULES, comparison, details, measures, polarity, quotation

RAILROAD = ("The railroad company laid track across the western plains in 1869. The workers were paid two dollars "
            "a day. The directors met in Omaha to plan the route.")


def doc(text: str, source_id: str = "d", title: str = "Report", author: str | None = None) -> SourceText:
    return SourceText(source_id, text, title, author)


def context(claim: str, *docs: SourceText, cited: tuple[Cited, ...] = ()):
    return build_context(claim, list(docs), cited)


def decided_by(claim: str, *docs: SourceText, cited: tuple[Cited, ...] = ()) -> tuple[str, str]:
    """(verdict, name of the last check) of the whole checklist."""
    result = check_claim(claim, list(docs), cited)
    if result.decided_by == "support" and result.flagged:  # the probability decided; a soft rule says why
        failed = [c.name for c in result.checks if not c.ok and c.name not in ("support", "unexplained_words")]
        return result.verdict, failed[0] if failed else "support"
    return result.verdict, result.decided_by


def test_the_checklist_is_in_order_and_every_rule_is_named():
    names = [rule.__name__ for rule in RULES]
    assert names[:2] == ["assertion", "misattributed"] and names.index("numbers") < names.index("coverage")
    assert {"affix_negation", "antonym", "near_spelled", "rather_than", "role_swap"} <= set(names)
    assert len(set(names)) == len(names)


def test_a_rule_added_as_documented_runs(monkeypatch):
    """The documented way to add a rule (decorate it) is the way rules run: check_claim reads the registry."""
    from historian_blueprint.verify.findings import failed
    from historian_blueprint.verify.rules import registry

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))

    @registry.rule("conflict", 99, needs="close")
    def says_zebra(ctx):
        if "zebra" in ctx.body.lower():
            return failed(Check("zebra", False), "contradicted", "fabrication", "high", "no zebras in this archive")
        return None

    source = doc("The railroad company laid track across the western plains in 1869. A zebra was seen.")
    result = check_claim("A zebra was seen.", [source])
    assert result.verdict == "contradicted" and result.decided_by == "zebra"
    assert (check_claim("The railroad company laid track across the western plains in 1869.", [source]).verdict
            == "supported")


# ----------------------------------------------------------------------------- support
def test_assertion_fires_on_a_question_and_not_on_a_quoted_one():
    source = doc('Lincoln asked "who will sign it?" and then signed the proclamation.')
    fired = measures.assertion(context("Did Lincoln sign the proclamation?", source))
    assert fired.verdict == "unconfirmed" and fired.checks[0].name == "assertion"
    assert measures.assertion(context('Lincoln asked "who will sign it?" and then signed the proclamation.',
                                     source)) is None


def test_evidence_fires_when_no_sentence_shares_a_word_and_not_when_one_does():
    fired = measures.evidence(context("Zebras graze quietly at dusk.", doc(RAILROAD)))
    assert fired.verdict == "unconfirmed" and fired.type == "fabrication"
    result = check_claim("Zebras graze quietly at dusk.", [doc(RAILROAD)])  # the probability decides, the rule explains
    assert result.verdict == "unconfirmed" and "nothing in the sources supports" in result.reason
    assert measures.evidence(context("Zebras crossed the western plains.", doc(RAILROAD))) is None


def test_coverage_fires_when_the_evidence_lacks_most_words_and_not_for_a_related_form():
    source = doc("The commission created a new board of arbitration for the railroads in 1888.")
    fired = measures.coverage(context("The governor vetoed a strike settlement for the miners.", source))
    assert fired.verdict == "unconfirmed" and fired.checks[0].name == "coverage"
    near = measures.coverage(context("The commission's creation of a new board of arbitration for the railroads.",
                                    source))
    assert near.verdict is None and near.checks[0].ok  # "creation" is a related form of "created"


def test_novel_words_fires_on_a_word_the_document_never_has_and_not_on_one_it_has_elsewhere():
    claim = "The railroad company laid golden track across the western plains."
    fired = measures.novel_words(context(claim, doc(RAILROAD)))
    assert fired.verdict == "unconfirmed" and "golden" in fired.reason
    # novel words are a soft rule now: they lower the support probability, they no longer decide alone
    plain = check_claim("The railroad company laid track across the western plains.", [doc(RAILROAD)])
    assert check_claim(claim, [doc(RAILROAD)]).probability < plain.probability
    elsewhere = doc(RAILROAD + " Gold was found near the golden spike.")
    assert measures.novel_words(context(claim, elsewhere)).verdict is None


def test_misattribution_fires_when_another_document_carries_the_claim_clearly_better():
    cited, other = doc("The weather was mild that winter.", "a"), doc(RAILROAD, "b")
    claim = "The railroad company laid track across the western plains in 1869."
    fired = context(claim, cited, other, cited=(Cited("a", 0, 10),))
    finding = measures.evidence(fired) or measures.coverage(fired)
    assert finding.verdict == "misattributed" and finding.evidence.source_id == "b"
    assert decided_by(claim, cited, other, cited=(Cited("a", 0, 10),))[0] == "misattributed"
    # the cited document carries it too: no misattribution, whatever the other says
    both = doc(RAILROAD, "a")
    assert check_claim(claim, [both, other], [Cited("a", 0, 60)]).verdict == "supported"


# ----------------------------------------------------------------------------- quotations
def test_quotation_fires_on_changed_quoted_words_and_not_on_typographic_differences():
    source = doc("In his letter he wrote that the union must be preserved, whatever the cost.")
    fired = quotation.quotation(context('He wrote that "the union must be saved, whatever the cost".', source))
    assert fired.verdict == "misquote"
    near = quotation.quotation(context("He wrote that “the Union must be preserved, whatever the cost”.", source))
    assert near.verdict is None and near.checks[0].ok


def test_speaker_fires_when_the_source_is_by_someone_else_and_not_when_it_names_the_speaker():
    source = doc("The union must be preserved, whatever the cost.", title="Letter to Greeley", author="Abraham Lincoln")
    fired = quotation.speaker(context('Douglas said "the union must be preserved".', source))
    assert fired.verdict == "misattributed" and "Douglas" in fired.reason
    assert decided_by('Douglas said "the union must be preserved".', source) == ("misattributed", "speaker")
    assert quotation.speaker(context('Lincoln said "the union must be preserved".', source)).verdict is None


# ----------------------------------------------------------------------------- details
def test_numbers_fires_on_a_changed_figure_and_not_on_the_same_figure_written_otherwise():
    source = doc("The workers laid twelve miles of track in that year, at a cost of $1,081,000.")
    fired = details.numbers(context("The workers laid 14 miles of track in that year.", source))
    assert fired.verdict == "contradicted" and "14" in fired.reason
    assert decided_by("The workers laid 14 miles of track in that year.", source) == ("contradicted", "numbers")
    near = "The workers laid 12 miles of track in that year, at a cost of 1,081,000 dollars."
    assert details.numbers(context(near, source)).verdict is None


def test_names_fires_on_a_name_the_evidence_lacks_and_not_on_the_voice_of_a_first_person_source():
    source = doc("General Sherman ordered the railroad company to lay track across the western plains.")
    claim = "General Grant ordered the railroad company to lay track across the western plains."
    fired = details.names(context(claim, source))
    assert fired.verdict == "unconfirmed" and "Grant" in fired.reason
    message = doc("I recommend that the railroad company lay track across the western plains.", title="Annual Message")
    near = details.names(context("The President recommended that the railroad company lay track across the "
                                 "western plains.", message))
    assert near.verdict is None


def test_names_together_fires_on_names_the_source_keeps_apart_and_not_on_names_in_neighbouring_sentences():
    apart = doc("Lincoln spoke at Springfield in June. " + "The crops were poor that year. " * 4
                + "Douglas spoke at Chicago.")
    fired = details.names_together(context("Lincoln spoke with Douglas at Springfield.", apart))
    assert fired.verdict == "unconfirmed" and "together" in fired.reason
    near = doc("Lincoln spoke at Springfield in June. Douglas answered him there.")
    assert details.names_together(context("Lincoln spoke with Douglas at Springfield.", near)).verdict is None


# ----------------------------------------------------------------------------- polarity
def test_negation_fires_on_an_added_not_and_not_on_a_reworded_one():
    source = doc("The committee approved the railroad bill in March.")
    fired = polarity.negation(context("The committee had not approved the railroad bill in March.", source))
    assert fired.verdict == "contradicted" and "adds 'not'" in fired.reason
    assert (decided_by("The committee had not approved the railroad bill in March.", source)
            == ("contradicted", "negation"))
    worded = doc("The committee did not approve the railroad bill in March.")
    assert polarity.negation(context("The committee didn't approve the railroad bill in March.",
                                     worded)).verdict is None


def test_scope_fires_on_a_widened_claim_and_not_on_a_scope_word_the_source_has():
    source = doc("Many banks in the state failed in 1893.")
    fired = polarity.scope(context("All banks in the state failed in 1893.", source))
    assert fired.verdict == "unconfirmed" and "'all'" in fired.reason
    every = doc("Every bank in the town failed in 1893.")
    assert polarity.scope(context("Every bank in the town failed in 1893.", every)).verdict is None


def test_frequency_fires_on_a_reversed_frequency_and_not_on_a_synonym():
    source = doc("He rarely visited Paris in the summer.")
    fired = polarity.frequency(context("He usually visited Paris in the summer.", source))
    assert fired.verdict == "contradicted" and "usually" in fired.reason
    assert decided_by("He usually visited Paris in the summer.", source) == ("contradicted", "frequency")
    often = doc("He frequently visited Paris in the summer.")
    assert polarity.frequency(context("He often visited Paris in the summer.", often)).verdict is None


# ----------------------------------------------------------------------------- comparisons
def test_each_named_fires_when_the_predicate_is_said_of_one_only_and_not_when_said_of_both():
    one = doc("Lincoln was a lawyer in Springfield. Douglas was a judge in Illinois.")
    fired = comparison.each_named(context("Both Lincoln and Douglas were lawyers.", one))
    assert fired.verdict == "unconfirmed" and "Douglas" in fired.reason
    both = doc("Lincoln was a lawyer in Springfield. Douglas was a lawyer in Chicago.")
    near = comparison.each_named(context("Both Lincoln and Douglas were lawyers.", both))
    assert near.verdict is None and [c.ok for c in near.checks] == [True, True]


def test_each_named_calls_a_replaced_attribute_contradicted():
    bands = doc("Kings of Leon is an American rock band from Nashville. Arcade Fire is a Canadian indie rock band.")
    fired = comparison.each_named(context("Both Kings of Leon and Arcade Fire are American rock bands.", bands))
    assert fired.verdict == "contradicted" and "Canadian" in fired.reason


def test_chronology_fires_on_a_reversed_order_and_not_on_the_right_one():
    battles = doc("Shiloh was fought in 1862 in Tennessee. Gettysburg was fought in 1863 in Pennsylvania.")
    fired = comparison.chronology(context("Gettysburg was fought before Shiloh.", battles))
    assert fired.verdict == "contradicted" and "1863" in fired.reason
    assert decided_by("Gettysburg was fought before Shiloh.", battles) == ("contradicted", "chronology")
    assert comparison.chronology(context("Shiloh was fought before Gettysburg.", battles)).verdict is None


def test_chronology_leaves_an_order_the_years_cannot_settle_unsupported():
    undated = doc("Shiloh was fought in Tennessee. Gettysburg was fought in Pennsylvania.")
    assert comparison.chronology(context("Shiloh was fought before Gettysburg.", undated)).verdict == "unconfirmed"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.__name__)
def test_no_rule_fires_on_a_sentence_copied_from_its_source(rule):
    source = doc(RAILROAD)
    finding = rule(context("The railroad company laid track across the western plains in 1869.", source))
    assert finding is None or finding.verdict is None


def test_role_swap_fires_when_two_named_parties_exchange_roles_and_not_in_the_passive():
    """Read from the dependency parse: "Jones sued Smith" and "Smith was sued by Jones" swap "Smith sued Jones";
    "Jones was sued by Smith" says the same thing, and a converse verb ("bought from") is no swap."""
    from historian_blueprint.verify.rules import structure

    suit = doc("In 1871 Smith sued Jones for the debt of the railroad. The case was heard in Boston.")
    for swapped in ("In 1871 Jones sued Smith for the debt of the railroad.",
                    "Smith was sued by Jones for the debt of the railroad in 1871."):
        fired = structure.role_swap(context(swapped, suit))
        assert fired.verdict == "contradicted" and "jones" in fired.checks[0].detail, swapped
        assert decided_by(swapped, suit) == ("contradicted", "roles")
    assert structure.role_swap(context("Jones was sued by Smith for the debt of the railroad in 1871.",
                                   suit)).verdict is None
    sale = doc("In 1819 Spain sold Florida to the United States for five million dollars.")
    assert structure.role_swap(context("In 1819 the United States sold Florida to Spain for five million dollars.",
                                   sale)).verdict == "contradicted"
    assert structure.role_swap(context("In 1819 the United States bought Florida from Spain for five million dollars.",
                                   sale)).verdict is None
