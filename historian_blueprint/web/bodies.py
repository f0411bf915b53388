"""JSON request bodies read safely and validated by pydantic models: a clear 400 naming the field and the
reason for a wrong type ("question" as a number, "full": "false"), a body that is not UTF-8 or not JSON,
JSON nested too deeply; 413 for a body over ``HISTORIAN_LIMITS_MAX_BODY_BYTES``."""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from flask import request
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError

from historian_blueprint.llm.parsing import brackets
from historian_blueprint.web.common import Problem

M = TypeVar("M", bound=BaseModel)
MAX_DEPTH = 32  # no Historian body nests deeper than 2; deeper JSON is refused before it is parsed


BodyError = Problem  # a body Historian cannot read is a problem like any other (web/common.py)


class Body(BaseModel):
    model_config = ConfigDict(extra="ignore")


class AskBody(Body):
    question: StrictStr
    profile: StrictStr | None = None
    parent: StrictStr | None = Field(default=None, max_length=64)
    # search only these: a speaker, author or narrator's documents, a span of years, one collection
    author: StrictStr | None = Field(default=None, max_length=200)
    year_from: StrictInt | None = None
    year_to: StrictInt | None = None
    collection: StrictStr | None = Field(default=None, max_length=300)


class VerifyBody(Body):
    text: StrictStr
    sources: list[StrictStr] = Field(default_factory=list, max_length=200)
    question: StrictStr | None = None


class ReindexBody(Body):
    full: StrictBool = False
    retry_failed: StrictBool = False


class MapBody(Body):
    topic: StrictStr


def _depth(raw: str) -> int:
    """How deeply the JSON text nests (brackets outside strings), counted up to one past MAX_DEPTH."""
    deepest = 0
    for _, _, depth in brackets(raw):
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            break
    return deepest


def raw_json(empty: Any = None) -> Any:
    """The request's JSON (``empty`` for no body), or BodyError with what is wrong with it."""
    data = request.get_data(cache=True)  # bounded: the blueprint's cap_the_body set request.max_content_length
    limit = request.max_content_length
    if request.content_length is None and limit is not None and len(data) >= limit:
        # a chunked body (no Content-Length) is cut at the cap as it is read: what reached it was larger
        raise BodyError(413, "too_large", f"the body is larger than {limit - 1} bytes")
    if not data.strip():
        return empty
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise BodyError(400, "bad_request", "the body is not UTF-8 text") from None
    if _depth(text) > MAX_DEPTH:
        raise BodyError(400, "bad_request", f"the JSON nests deeper than {MAX_DEPTH} levels")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise BodyError(400, "bad_request", "the body is not valid JSON") from None
    where = _surrogate_at(data)
    if where is not None:  # "\udc80" is valid JSON but no text: the tokenizer, the store and UTF-8 refuse it
        raise BodyError(400, "bad_request", f"{where or 'body'}: holds an unpaired surrogate (\\ud800-\\udfff), not text")
    return data


def _surrogate_at(value: Any, path: str = "") -> str | None:
    """The path of the first string (or key) holding a lone UTF-16 surrogate, or None."""
    if isinstance(value, str):
        return path if any("\ud800" <= ch <= "\udfff" for ch in value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else str(key)
            found = _surrogate_at(key, here) if isinstance(key, str) else None
            found = found if found is not None else _surrogate_at(item, here)
            if found is not None:
                return found
    elif isinstance(value, list):
        for n, item in enumerate(value):
            found = _surrogate_at(item, f"{path}.{n}" if path else str(n))
            if found is not None:
                return found
    return None


def parse(model: type[M], data: Any) -> M:
    """``data`` validated by ``model``; BodyError naming the first wrong field and why."""
    if not isinstance(data, dict):
        raise BodyError(400, "bad_request", "send a JSON object")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "body"
        raise BodyError(400, "bad_request", f"{field}: {first['msg']}") from None


def json_body(model: type[M], empty: Any = None) -> M:
    return parse(model, raw_json(empty))


def search_filters(data: dict[str, Any]) -> dict[str, Any]:
    """The asker's search filters (form or JSON): ``author`` (speaker, author or narrator), ``year_from``,
    ``year_to`` and ``collection``; empty fields are no filter, a bad one is a 400 that names it."""
    out: dict[str, Any] = {}
    for key, longest in (("author", 200), ("collection", 300)):
        value = " ".join(str(data.get(key) or "").split())
        if len(value) > longest:
            raise BodyError(400, "bad_request", f"{key} is longer than {longest} characters")
        if value and key == "author" and not re.search(r"[A-Za-z]{2}", value):
            raise BodyError(400, "bad_request", "author must name someone (at least two letters): a surname, a narrator")
        if value:
            out[key] = value
    for key in ("year_from", "year_to"):
        value = data.get(key)
        if value is None or str(value).strip() == "":
            continue
        try:
            year = int(str(value).strip())
        except ValueError:
            raise BodyError(400, "bad_request", f"{key} must be a year such as 1861, not {str(value)[:20]!r}") from None
        if not -10000 <= year <= 10000:
            raise BodyError(400, "bad_request", f"{key} must be a year between -10000 and 10000")
        out[key] = year
    if out.get("year_from") is not None and out.get("year_to") is not None and out["year_from"] > out["year_to"]:
        raise BodyError(400, "bad_request", f"year_from ({out['year_from']}) is after year_to ({out['year_to']})")
    return out
