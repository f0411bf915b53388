"""Context budgets: the rules and the schema always fit; evidence is trimmed from its tail, then history."""

from __future__ import annotations


def estimate_tokens(text: str) -> int:
    """About four characters a token for English prose (no tokenizer is assumed for the remote model)."""
    return len(text) // 4 + 1


def fit(fixed_tokens: int, history: list[str], evidence: list[str], budget: int) -> tuple[list[str], list[str], int]:
    """Keep what fits in ``budget`` after ``fixed_tokens`` (system, rules, schema, question).

    Eviction order: evidence from the tail (the weakest passages come last), then history from the oldest
    turn; the first passage is kept whatever happens (an answer needs evidence) and cut to fit instead.
    Returns (history, evidence, number of items dropped or cut).
    """
    history, evidence = list(history), list(evidence)
    dropped = 0

    def used() -> int:
        return fixed_tokens + sum(estimate_tokens(t) for t in history) + sum(estimate_tokens(e) for e in evidence)

    while used() > budget and len(evidence) > 1:
        evidence.pop()
        dropped += 1
    while used() > budget and history:
        history.pop(0)
        dropped += 1
    if used() > budget and evidence:
        room = max(0, budget - fixed_tokens) * 4
        evidence[0] = evidence[0][:room]
        dropped += 1
    return history, evidence, dropped
