"""The question's premises held against an answer's citations: what the question names (whom, what, when, which
figure) that no cited passage mentions, read as the run read the question (``Question.premises``;
``verify.question.premise_of`` decides). A comparison's sides are read in different documents: each side's
question against its own citations, and a side nothing was found for is named. A stance the question takes for
granted and the cited passages reverse is named too (questions.stance).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from historian_blueprint.questions.reading import Question
from historian_blueprint.questions.shapes import described
from historian_blueprint.questions.stance import reversed_stance
from historian_blueprint.schema import Citation, SourceText
from historian_blueprint.text.names import names
from historian_blueprint.verify.question import premise_of


def absent_document(asked: Question | None) -> dict[str, Any] | None:
    """The document the question asks about when the collection lacks it ("Roosevelt's 1933 message" where his
    documents here are of 1934-1945: questions.scope), as a premise nothing can bear out, or None."""
    scope = asked.scope if asked is not None else None
    if scope is None or not scope.years or scope.held:
        return None
    return {"unmet": [{"text": f"{scope.name} {scope.year}", "kind": "document"}], "finding": scope.absent(),
            "refuse": True, "asks": "document"}


def lost_subject(asked: Question | None, citations: Sequence[Citation]) -> dict[str, Any] | None:
    """A follow-up's person (``Question.subject``: "Where did he settle after the war?" after a question on Arnold
    Gragston) whom no cited passage is by or names, as a premise nothing cited bears out (the answer is refused:
    it would be about someone else), or None."""
    subject = asked.subject if asked is not None else None
    if subject is None or not citations:
        return None
    surname = subject.split()[-1]
    if any(names(subject, f"{cit.author or ''} {cit.title}") or names(surname, cit.text) for cit in citations):
        return None
    return {"unmet": [{"text": subject, "kind": "subject"}], "refuse": True, "asks": "subject",
            "finding": f"the question goes on asking about {subject} (named before it), and no passage found is by "
                       f"or about {subject}"}


def with_stance(found: dict[str, Any] | None, question: str, citations: Sequence[Citation]) -> dict[str, Any] | None:
    """The premise check's finding with the stance the question takes for granted and the cited passages reverse
    (questions.stance: "Why did Hoover support a federal dole?" where the passage says "I am opposed to any ...
    dole"), said plainly; unchanged when nothing is reversed."""
    turned = reversed_stance(question, citations)
    if turned is None:
        return found
    said = (f"the passages say the opposite of “{turned.asked}”: “{excerpt(turned.citation.text, turned.said)}” "
            f"[{turned.citation.id}]")
    found = found or {"unmet": [], "finding": "", "refuse": False, "asks": "stance"}
    return {**found, "unmet": [*found["unmet"], {"text": turned.asked, "kind": "stance"}],
            "finding": "; ".join(part for part in (said, found["finding"]) if part)}


def excerpt(text: str, word: str, reach: int = 12) -> str:
    """The words around a stance word, at most ``reach`` each side, with an ellipsis where the sentence was cut."""
    tokens = text.split()
    at = next((n for n, t in enumerate(tokens) if word and word in t.lower()), 0)
    start, end = max(0, at - reach), min(len(tokens), at + reach + 1)
    return f"{'… ' if start else ''}{' '.join(tokens[start:end]).rstrip('.;:,')}{' …' if end < len(tokens) else ''}"


def unmet_premises(asked: Question | None, citations: Sequence[Citation],
                   get_document: Callable[[str], SourceText | None]) -> dict[str, Any] | None:
    """What of the question no citation mentions (``{"unmet", "finding", "refuse", "asks"}``), or None."""
    spans = [(cit.source_id, cit.text, f"{cit.title} {cit.author or ''} {cit.year or ''}") for cit in citations]
    if not spans or asked is None:
        return None
    shape = asked.shape
    if not shape.comparison:
        lost = lost_subject(asked, citations)
        if lost is not None:
            return lost
        return with_stance(premise_of(asked.text, spans, get_document, asked.premises), asked.text, citations)
    table = described(shape, asked.text, [c.model_dump() for c in citations]) or {}
    unmet: list[dict[str, Any]] = []
    findings: list[str] = []
    for side, side_read, row in zip(shape.sides, asked.sides, table.get("sides", [])):  # each as read
        if not row["found"]:
            unmet.append({"text": side.label, "kind": "side"})
            findings.append(f"nothing in the collection was found for {side.label}")
            continue
        mine = [span for span, cit in zip(spans, citations) if cit.id in row["citations"]]
        found = premise_of(side.query, mine, get_document, side_read.premises)
        if found:
            unmet += found["unmet"]
            findings.append(f"for {side.label}: {found['finding']}")
    if not findings:
        return None
    return {"unmet": unmet, "finding": "; ".join(findings), "refuse": False, "asks": "comparison"}
