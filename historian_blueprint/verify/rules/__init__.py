"""The grounding rules, in the order a careful historian checks a claim against its source.

Each rule is a function of the claim's context (``verify/context.py``) that returns its finding (the checks
it ran, and a verdict when the claim fails it) or None when it does not apply. A rule joins the checklist by
decorating itself with ``@rule(kind, order, needs=...)`` (``verify/rules/registry.py``); importing its module
here is what registers it. Adding a rule is: one decorated function in a module of this folder (its word
lists beside it), its module imported below, a test where it fires and a near miss where it does not, and
its figures on a set written before it (docs/verification.md). A new conflict rule only lowers verdicts;
a new ``support`` measurement that the support decision should read is a new feature: refit
``verify/model/combiner.json`` with ``historian train-checker --stage fit``.
"""

from __future__ import annotations

from historian_blueprint.verify.rules import comparison, details, lexical, measures, polarity, quotation, structure  # noqa: F401 - registers
from historian_blueprint.verify.rules.registry import Registered, Rule, registered, rule

# The whole checklist in the order it runs: conflict checks, then the support measurements.
RULES: tuple[Rule, ...] = tuple(r.check for r in registered("conflict") + registered("support"))

__all__ = ["RULES", "Registered", "Rule", "registered", "rule"]
