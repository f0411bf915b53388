"""Getting a JSON object out of what a (small) model actually wrote: fences, prose around it, stray text."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)


class ParseError(ValueError):
    """The text holds no JSON object that fits the schema."""


def brackets(text: str, pairs: str = "{}[]", strings_outside: bool = True) -> Iterator[tuple[int, str, int]]:
    """The JSON structure of a text: ``(index, bracket, depth after it)`` for every bracket of ``pairs`` outside
    strings (escapes respected). ``strings_outside=False``: a quote opens a string only inside brackets (prose
    around a JSON object may hold unbalanced quotes). Depth never goes below 0. The one bracket scanner: the JSON
    found in a model's reply (``balanced_objects``), a request body's nesting (web/bodies.py)."""
    opening, closing = pairs[0::2], pairs[1::2]
    depth, in_string, escaped = 0, False, False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"' and (strings_outside or depth > 0):
            in_string = True
        elif ch in opening:
            depth += 1
            yield i, ch, depth
        elif ch in closing and depth > 0:
            depth -= 1
            yield i, ch, depth


def balanced_objects(text: str) -> list[str]:
    """Every outermost ``{...}`` of the text, braces inside strings respected."""
    out, start = [], -1
    for i, ch, depth in brackets(text, "{}", strings_outside=False):
        if ch == "{" and depth == 1:
            start = i
        elif ch == "}" and depth == 0:
            out.append(text[start:i + 1])
    return out


def candidates(text: str) -> list[str]:
    """Where a JSON object may be, most likely first: the whole text, fenced blocks, outermost braces."""
    text = text.strip()
    found = [text]
    found += [m.group(1).strip() for m in _FENCE.finditer(text)]
    found += sorted(balanced_objects(text), key=len, reverse=True)
    return list(dict.fromkeys(c for c in found if c))


def extract_json(text: str) -> dict[str, Any]:
    """Return the first JSON object found in the text; raise ParseError when there is none."""
    for candidate in candidates(text or ""):
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    raise ParseError("no JSON object in the model's reply")


def parse_as(text: str, schema: type[T]) -> T:
    """Parse the model's reply into ``schema``; the error names what is wrong, for a re-prompt."""
    errors = []
    for candidate in candidates(text or ""):
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if not isinstance(value, dict):
            continue
        try:
            return schema.model_validate(value)
        except ValidationError as exc:
            errors.append(str(exc).splitlines()[0] + ": " + "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5]
            ))
    raise ParseError(errors[0] if errors else "no JSON object in the model's reply")
