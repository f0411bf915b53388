"""The one decision: which of what was found about a claim gives its verdict, in the order a careful historian
weighs it. A pure function of its inputs; every writer of a verdict goes through it:

- the grounding service (``grounding.decide``: the conflict checks, the support reading, what else the reading
  found: a reversed opinion, no evidence, the reader's verdict, a soft check);
- the fail-safe (a check that raised) and the time limit (a claim not reached), as ``unread``;
- the judge's quotes (``grounding.confirm_by_quote``, read by ``ask/roles/anchoring.py``);
- a finding whose quote is not in its source (``composed.py``), as ``misquote``;
- the evaluation harness's rescoring under another support combination (``historian_lab``).

Order: a claim not read through is never supported; a misquote stands; a conflict decides; the support carrying
the claim makes it supported; else what else was found; else unconfirmed ("not confirmed: read the source").
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from historian_blueprint.verify.findings import Finding


@dataclass(frozen=True)
class Said:
    """One input to the decision: what was found (``finding.verdict`` None: nothing) and who found it (a rule's
    name, "support", "reader", "quote", "time limit"; "" for the fail-safe)."""

    finding: Finding
    by: str = ""


NOT_CONFIRMED = Finding(verdict="unconfirmed", type="inference", severity="medium",
                        reason="not confirmed: read the source")


def settle(*, unread: Said | None = None, misquote: Said | None = None, conflict: Said | None = None,
           carried: Said | None = None, otherwise: Said | None = None) -> Said:
    """The verdict's source among the inputs, in the decision's order (the module's docstring). A claim not read
    through, or misquoted, is never supported whatever was passed; with nothing found, unconfirmed."""
    for stop in (unread, misquote):
        if stop is not None:
            if stop.finding.verdict in (None, "supported"):  # fail safe: an input that says otherwise is mistaken
                return Said(replace(NOT_CONFIRMED, reason=stop.finding.reason or NOT_CONFIRMED.reason), stop.by)
            return stop
    for said in (conflict, carried, otherwise):
        if said is not None and said.finding.verdict is not None:
            return said
    return Said(NOT_CONFIRMED, "support")
