"""The registry the grounding rules join by decorating themselves: ``@rule(kind, order)``.

A rule is a named function over a claim's context (``verify/context.py``) returning its finding (the checks
it ran, and a verdict when the claim fails it) or None when it does not apply. Three kinds, read in this
order by ``verify/reading.py``:

- ``conflict``: a check that may only lower a verdict: a quotation not as written, a figure that does not round
  to the source's, a name not the source's, a negation added or dropped, an antonym, two parties' roles
  swapped. The first that fails decides the claim (contradicted, misquote, misattributed, or unconfirmed when
  it finds something missing rather than something opposite).
- ``support``: a measurement of how far the evidence carries the claim (its words, what is new in it); read
  by the support decision, never deciding alone.

``needs`` says what evidence a conflict check must have to be read at all: ``"nothing"`` (it reads the
claim, or looks elsewhere itself), ``"evidence"`` (any best window of the cited source), ``"passage"`` (the
window must be close to the claim's words, or the claim cites a passage), ``"close"`` (the window holds most
of the claim's words: comparing a reworded claim with a passage about something else finds false conflicts).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeVar

from historian_blueprint.verify.context import ClaimContext
from historian_blueprint.verify.findings import Finding

Rule = Callable[[ClaimContext], Finding | None]
Kind = Literal["conflict", "support"]
Needs = Literal["nothing", "evidence", "passage", "close"]
R = TypeVar("R", bound=Rule)


@dataclass(frozen=True)
class Registered:
    name: str
    kind: Kind
    order: int
    needs: Needs
    check: Rule


_REGISTRY: dict[str, Registered] = {}


def rule(kind: Kind, order: int, needs: Needs = "close") -> Callable[[R], R]:
    """Register a rule under its function name; ``order`` places it in the checklist (lower runs first)."""
    def register(fn: R) -> R:
        name = fn.__name__
        if name in _REGISTRY and _REGISTRY[name].check is not fn:
            raise ValueError(f"a rule named {name!r} is already registered")
        _REGISTRY[name] = Registered(name, kind, order, needs, fn)
        return fn
    return register


def registered(kind: Kind) -> tuple[Registered, ...]:
    """The rules of one kind, in checklist order."""
    return tuple(sorted((r for r in _REGISTRY.values() if r.kind == kind), key=lambda r: (r.order, r.name)))
