"""The offline engine (default: no model, no network): every role, deterministic.

The planner and composer are extractive (``extractive.py``); the verifiers are the floor's reports
(``verify/reports.py``), so in this engine the reports and the grounding checks cannot disagree.
"""

from __future__ import annotations

from historian_blueprint.ask.roles import extractive, sides, written
from historian_blueprint.ask.roles.base import Engine, Judgement, Outcome, Reports, Task
from historian_blueprint.schema import Answer, ChallengeReport, ClaimVerdict, CounterReport, Fact, InterrogationReport
from historian_blueprint.settings import Caps
from historian_blueprint.text.labels import source_label
from historian_blueprint.text.spans import Layouts
from historian_blueprint.verify import reports as floor

PROMPT_VERSION = "offline-1"


def verifier_failed(claims: list[ClaimVerdict]) -> bool:
    """A grounding check itself failed on some claim (it is then unverified, and so is the answer)."""
    return any(ch.name == "verifier" and not ch.ok for claim in claims for ch in claim.checks)


class OfflineRoles:
    """The seven roles without a model."""

    def __init__(self, caps: Caps) -> None:
        self.caps = caps

    def plan(self, task: Task) -> Outcome[list[str]]:
        return Outcome(extractive.plan(task.question, task.route, task.history))

    def extract(self, task: Task) -> list[Fact]:
        """Evidence sentences of the retrieved passages, each with its locator in its document."""
        context = task.asked.thread
        facts = extractive.extract(task.asked, task.hits, context=context, embed=task.embed)
        if task.shape.comparison:  # each side read as a question of its own ("Wilson on the trusts"), its best kept
            merged = {(f.source_id, f.start): f for f in facts}
            for side in task.asked.sides:  # each side's own question, read with the question
                for f in extractive.extract(side, task.hits, limit=extractive.SIDE_FACTS, context=context):
                    key = (f.source_id, f.start)
                    if key not in merged or merged[key].score < f.score:
                        merged[key] = f
            for f in sides.sentences_of(task.hits):  # and every sentence of its passages (ask.roles.sides)
                merged.setdefault((f.source_id, f.start), f)
            facts = sorted(merged.values(), key=lambda f: -f.score)
        layouts = Layouts()
        refined = []
        for fact in facts:
            doc = task.get_document(fact.source_id)
            if doc is None:
                refined.append(fact)
                continue
            refined.append(fact.model_copy(update={"locator": layouts.locate(doc.source_id, doc.text,
                                                                             fact.start, fact.end)}))
        return refined

    def compose(self, task: Task, facts: list[Fact] | None) -> Outcome[Answer]:
        passages = [f"{h['text']} {h['title']} {h.get('author') or ''} {h.get('year') or ''}" for h in task.hits]
        labels = {}
        for fact in (facts or [])[:24]:
            if fact.source_id not in labels:
                labels[fact.source_id] = source_label(fact.model_dump(exclude={"locator"}),
                                                      task.get_document(fact.source_id))
        if task.shape.kind == "list":
            facts = written.enumeration(facts or [], task.get_document, task.shape.asked)
        return Outcome(extractive.compose(task.asked, facts or [], task.sub_queries, (task.n_documents, task.years),
                                          passages, labels=labels, embed=task.embed))

    def refuse(self, task: Task) -> Answer:
        """Say that the collection does not answer (with the closest evidence sentences it found)."""
        return written.refusal(task.question, self.extract(task), task.sub_queries, (task.n_documents, task.years))

    def challenge(self, task: Task, draft: Answer, claims: list[ClaimVerdict]) -> Outcome[ChallengeReport]:
        return Outcome(floor.challenge(claims, self.caps))

    def interrogate(self, task: Task, draft: Answer, claims: list[ClaimVerdict]) -> Outcome[InterrogationReport]:
        return Outcome(floor.interrogate(claims, self.caps))

    def counter_argue(self, task: Task, draft: Answer, claims: list[ClaimVerdict]) -> Outcome[CounterReport]:
        return Outcome(floor.counter_argue(claims, task.hits, self.caps))

    def judge(
        self, task: Task, draft: Answer | None, claims: list[ClaimVerdict], reports: Reports, *,
        revisions_left: bool, failures: list[str],
    ) -> Outcome[Judgement]:
        report = floor.judge(
            claims, reports.challenge, reports.interrogation, reports.counter, self.caps,
            revisions_left=revisions_left, failed_checks=verifier_failed(claims),
        )
        return Outcome(Judgement(report, claims, reports))

    def revise(self, task: Task, draft: Answer, claims: list[ClaimVerdict]) -> Outcome[Answer]:
        return Outcome(extractive.revise(draft, flagged(claims)))


def flagged(claims: list[ClaimVerdict]) -> set[int]:
    return {claim.id for claim in claims if claim.verdict != "supported"}


def offline_engine(caps: Caps) -> Engine:
    """The offline engine's roles for one run."""
    roles = OfflineRoles(caps)
    models = {"composer": "extractive (offline)", "verifiers": "grounding checks (offline)"}
    return Engine(
        name="embedded", planner=roles, composer=roles, challenger=roles, interrogator=roles, counter_arguer=roles,
        judge=roles, refiner=roles,
        describe=lambda: {"models": models, "tokens": {"prompt": 0, "completion": 0}, "prompt_version": PROMPT_VERSION},
    )
