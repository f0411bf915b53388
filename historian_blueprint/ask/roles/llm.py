"""The LLM engine: every role asks its model (OpenAI-compatible, per-role settings) on top of the floor.

Each role asks for a small JSON object and turns the reply into Historian's own types. The composer's
citations are re-anchored in the sources; the verifiers' findings are merged into the floor's reports so
they can only add doubt. The judge may confirm an unconfirmed claim, and only by quoting the words of its
cited source that carry it (re-anchored exactly and checked there); it never overrides a conflict. A role
whose model fails falls back on the offline role and reports the failure; the judge then keeps the answer
from being verified.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from historian_blueprint.llm import prompts
from historian_blueprint.llm.client import LLMError
from historian_blueprint.llm.engine import LLMEngine
from historian_blueprint.ask.roles import extractive, replies
from historian_blueprint.ask.roles.anchoring import claims_block, confirm, evidence_block, to_answer
from historian_blueprint.ask.roles.base import Engine, Judgement, Outcome, Reports, Task
from historian_blueprint.ask.roles.offline import OfflineRoles, flagged
from historian_blueprint.schema import (
    Answer, ChallengeReport, ClaimVerdict, CounterReport, Fact, InterrogationReport, JudgeReport,
)
from historian_blueprint.settings import VERIFYING_ROLES, Caps


def _claims_task(task: Task, draft: Answer, claims: list[ClaimVerdict]) -> str:
    return f"Question: {task.question}\n\nAnswer: {draft.answer}\n\n{claims_block(claims)}"


class LLMRoles:
    """The seven roles, each asking its model; the offline roles are the fallback and the floor."""

    def __init__(self, llm: LLMEngine, caps: Caps, context_tokens: int) -> None:
        self.llm, self.caps, self.context_tokens = llm, caps, context_tokens
        self.offline = OfflineRoles(caps)

    def _evidence(self, task: Task, history: bool = True) -> tuple[str, list[str], list[dict[str, Any]]]:
        """The numbered passages the model is shown (trimmed to the budget), their ids and the hits they are."""
        text, ids, _ = evidence_block(task.hits, task.history if history else [], task.question, self.context_tokens)
        return text, ids, task.hits[: len(ids)]

    def plan(self, task: Task) -> Outcome[list[str]]:
        turns = "".join(f"\nEarlier question: {t.get('question', '')}" for t in task.history[-5:])
        try:
            reply = self.llm.ask("planner", f"Question: {task.question}\nKind: {task.route}{turns}", replies.PlanReply)
        except LLMError as exc:
            return Outcome(self.offline.plan(task).value, [str(exc)])
        queries = [q.strip() for q in reply.sub_queries if q.strip()]
        return Outcome(list(dict.fromkeys([task.question, *queries]))[:4])

    def extract(self, task: Task) -> None:
        return None  # the model composes from the passages; evidence sentences only if it falls back

    def compose(self, task: Task, facts: list[Fact] | None) -> Outcome[Answer]:
        if not task.hits:
            return self.offline.compose(task, facts)
        text, ids, shown = self._evidence(task)
        try:
            reply = self.llm.ask("composer", text, replies.ComposerReply, extra_system=prompts.few_shot_text())
        except LLMError as exc:  # the extractive answer stands in; the run cannot be verified (judge)
            return Outcome(self.offline.compose(task, self.offline.extract(task)).value, [str(exc)])
        if reply.insufficient or not reply.findings:
            return Outcome(self.offline.refuse(task))
        return Outcome(to_answer(reply, shown, ids, task.get_document))

    def _verify(self, role: str, floor: Any, task_input: str, schema: type[BaseModel], merge: Any,
                extra: str = "") -> Outcome:
        """Ask a verifier's model and merge its reply into the floor's report; a failure leaves the floor's."""
        try:
            reply = self.llm.ask(role, task_input, schema, extra_system=extra)
        except LLMError as exc:
            return Outcome(floor, [str(exc)])
        return Outcome(merge(reply))

    def challenge(self, task: Task, draft: Answer, claims: list[ClaimVerdict]) -> Outcome[ChallengeReport]:
        floor = self.offline.challenge(task, draft, claims).value
        return self._verify("challenger", floor, _claims_task(task, draft, claims), replies.ChallengerReply,
                            lambda r: replies.merge_challenge(floor, r, claims, self.caps),
                            extra=prompts.skeptic_text(self.llm.calibration))

    def interrogate(self, task: Task, draft: Answer, claims: list[ClaimVerdict]) -> Outcome[InterrogationReport]:
        floor = self.offline.interrogate(task, draft, claims).value
        return self._verify("interrogator", floor, _claims_task(task, draft, claims), replies.InterrogatorReply,
                            lambda r: replies.merge_interrogation(floor, r, self.caps))

    def counter_argue(self, task: Task, draft: Answer, claims: list[ClaimVerdict]) -> Outcome[CounterReport]:
        floor = self.offline.counter_argue(task, draft, claims).value
        passages, _, shown = self._evidence(task, history=False)
        return self._verify("counter_arguer", floor,
                            f"{_claims_task(task, draft, claims)}\n\nRetrieved passages:\n{passages}",
                            replies.CounterReply, lambda r: replies.merge_counter(floor, r, shown, self.caps))

    def judge(
        self, task: Task, draft: Answer | None, claims: list[ClaimVerdict], reports: Reports, *,
        revisions_left: bool, failures: list[str],
    ) -> Outcome[Judgement]:
        def floor(claims: list[ClaimVerdict], reports: Reports) -> Judgement:
            return self.offline.judge(task, draft, claims, reports, revisions_left=revisions_left,
                                      failures=failures).value

        judged = floor(claims, reports)
        report = judged.report
        failed = [f for f in failures if f.split(":", 1)[0] in VERIFYING_ROLES]
        new: list[str] = []
        if not failed:
            try:
                reply = self.llm.ask("judge", self._judge_task(task, draft, claims, reports, report),
                                     replies.JudgeReply)
            except LLMError as exc:
                failed = new = [str(exc)]
            else:
                confirmed, notes = confirm(claims, reply.confirmations, task.get_document)
                if confirmed != claims:  # the floor judges again, over the claims the quotes confirmed
                    judged = floor(confirmed, replies.refresh_reports(reports, confirmed, task.hits, self.caps))
                report = replies.merge_judge(judged.report, reply)
                if notes:
                    report = report.model_copy(update={"summary": f"{report.summary}; judge quotes: "
                                                                  f"{'; '.join(notes)}"})
        if failed:
            report = replies.failed_judge(report, failed)
        elif draft is not None and any("rejected" in n for n in draft.notes):
            report = replies.cap_for_rejections(report, [n for n in draft.notes if "rejected" in n])
        return Outcome(Judgement(report, judged.claims, judged.reports), new)

    def _judge_task(self, task: Task, draft: Answer | None, claims: list[ClaimVerdict], reports: Reports,
                    floor: JudgeReport) -> str:
        """The claims, the reports, the floor's judgement and, when a claim is unconfirmed, the passages to quote
        from."""
        ask = (f"{_claims_task(task, draft, claims)}\n\nReports:\n{json.dumps(reports.as_dict())}"
               f"\n\nThe deterministic checks give: {floor.status} at {floor.confidence:.2f}.")
        if any(c.verdict == "unconfirmed" for c in claims):
            passages, _, _ = self._evidence(task, history=False)
            ask += f"\n\nRetrieved passages (source ids after the semicolon):\n{passages}"
        return ask

    def revise(self, task: Task, draft: Answer, claims: list[ClaimVerdict]) -> Outcome[Answer]:
        if not task.hits:
            return self.offline.revise(task, draft, claims)
        text, ids, shown = self._evidence(task)
        wrong = flagged(claims)
        findings = "\n".join(
            f"{'Finding' if cl.part == 'finding' else 'Sentence of your answer'} {cl.id}: {cl.text} "
            f"[{'FLAGGED: ' + cl.reason if cl.id in wrong else 'supported'}]"
            for cl in claims
        )
        try:
            reply = self.llm.ask("refiner", f"{text}\n\nCurrent answer: {draft.answer}\n\n{findings}",
                                 replies.ComposerReply)
        except LLMError as exc:
            return Outcome(extractive.revise(draft, wrong), [str(exc)])
        return Outcome(to_answer(reply, shown, ids, task.get_document))


def llm_engine(llm: LLMEngine, caps: Caps, context_tokens: int) -> Engine:
    """The LLM engine's roles for one run (``llm`` carries this run's token usage)."""
    roles = LLMRoles(llm, caps, context_tokens)

    def describe() -> dict[str, Any]:
        return {"models": llm.models(),
                "tokens": {**llm.usage.totals(), "per_role": llm.usage.roles}, "prompt_version": llm.prompt_version}

    return Engine(
        name="llm", planner=roles, composer=roles, challenger=roles, interrogator=roles, counter_arguer=roles,
        judge=roles, refiner=roles, describe=describe,
    )
