"""Request bodies read safely: bytes the server cannot deliver are a 400 (``BodyGuard``), and JSON bodies are
validated by pydantic models: a clear 400 naming the field and the reason for a wrong type ("question" as a number,
"full": "false"), a body that is not UTF-8 or not JSON, JSON nested too deeply; 413 for a body over
``HISTORIAN_LIMITS_MAX_BODY_BYTES``."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Annotated, Any, TypeVar

from flask import request
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, StringConstraints, ValidationError
from werkzeug.exceptions import BadRequest, HTTPException

from historian_blueprint.llm.parsing import brackets
from historian_blueprint.web.common import Problem

M = TypeVar("M", bound=BaseModel)
MAX_DEPTH = 32  # no Historian body nests deeper than 2; deeper JSON is refused before it is parsed
MAX_SOURCES = 200  # documents one draft check may name, in the form and the JSON alike
MAX_INCLUDED = 100  # sources one map may be asked to include although they were set aside
MAX_ID_CHARS = 512  # a source id's length at most
# How long a read of the body waits for the next bytes: as long as gunicorn's threaded worker waits for a request's
# first bytes (its DEFAULT_WORKER_DATA_TIMEOUT), so a body that stops short holds a thread no longer than a silent
# connection does (measured without it: a body 86 bytes short of its Content-Length, held open, had no answer in 30 s).
BODY_IDLE_S = 5.0


class UnreadableBody(BadRequest):
    """The server could not deliver the request's body: malformed chunked framing, or it stopped arriving."""


class BodyGuard:
    """WSGI middleware around an app: a read of the request's body that fails in the server (a malformed chunk:
    gunicorn's ``InvalidChunkSize``, ``ChunkMissingTerminator``...; werkzeug's server's ``OSError``) raises
    ``UnreadableBody``, the client's 400, where the app would answer the server's exception with a 500; so does a
    body that ends before its Content-Length, and a read that waits more than ``BODY_IDLE_S`` for the next bytes,
    cut off through the connection's socket (``gunicorn.socket``, ``werkzeug.socket``; under a server that names
    none, reads wait as that server has them). A client that trickles its body a byte at a time is not cut off (nor
    one that trickles its headers, by gunicorn): a buffering proxy in front stops both."""

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if "wsgi.input" in environ:
            sock = environ.get("gunicorn.socket") or environ.get("werkzeug.socket")
            length = environ.get("CONTENT_LENGTH") or ""
            promised = int(length) if length.isascii() and length.isdigit() else None
            environ["wsgi.input"] = _GuardedInput(environ["wsgi.input"], sock, promised)
        return self.app(environ, start_response)


class _GuardedInput:
    """A WSGI input stream whose reads are bounded in time, fail as ``UnreadableBody``, and do so at an end that
    comes before the Content-Length: gunicorn ends such a body quietly, and werkzeug trusts a server that says it
    ends its bodies (``wsgi.input_terminated``), so a cut-off body would be read as if it were whole."""

    def __init__(self, stream: Any, sock: Any, promised: int | None) -> None:
        self._stream, self._sock = stream, sock if hasattr(sock, "settimeout") else None
        self._promised, self._left = promised, promised

    def read(self, *size: int | None) -> bytes:
        if size and size[0] == 0:
            return b""
        whole = not size or size[0] is None or size[0] < 0
        return self._counted(self._guarded(self._stream.read, *size), whole)

    def readline(self, *size: int | None) -> bytes:
        if size and size[0] == 0:
            return b""
        return self._counted(self._guarded(self._stream.readline, *size), whole=False)

    def readlines(self, *hint: int) -> list[bytes]:
        lines = self._guarded(self._stream.readlines, *hint)
        self._counted(b"".join(lines), whole=not hint or hint[0] <= 0)
        return lines

    def close(self) -> None:  # what else a host's code may ask of a WSGI input, passed to the server's stream; no
        close = getattr(self._stream, "close", None)  # other read (read1, readinto) is offered: every read is guarded
        if close is not None:
            close()

    def seekable(self) -> bool:
        return False

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.readline, b"")

    def _counted(self, data: bytes, whole: bool) -> bytes:
        """``data``, once it is clear the body did not end before its Content-Length (an empty read, or a read of
        everything, that leaves bytes missing)."""
        if self._left is not None:
            self._left -= len(data)
            if self._left > 0 and (whole or not data):
                raise UnreadableBody(f"the request body ended after {self._promised - self._left} of the "
                                     f"{self._promised} bytes its Content-Length promised")
        return data

    def _guarded(self, read: Callable[..., Any], *args: int | None) -> Any:
        before = self._sock.gettimeout() if self._sock else None
        try:
            if self._sock:
                self._sock.settimeout(BODY_IDLE_S if before is None else min(before, BODY_IDLE_S))
            return read(*args)
        except HTTPException:
            raise
        except TimeoutError:
            raise UnreadableBody(f"the request body stopped arriving (nothing for {BODY_IDLE_S:g} s)") from None
        except Exception as exc:  # noqa: BLE001 - each server's reader raises its own types (gunicorn: ParseException)
            raise UnreadableBody(f"the request body could not be read: {str(exc)[:200]}") from None
        finally:
            if self._sock:
                try:
                    self._sock.settimeout(before)
                except OSError:  # the connection is gone: nothing left to restore
                    pass


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
    sources: list[StrictStr] = Field(default_factory=list, max_length=MAX_SOURCES)
    question: StrictStr | None = None


class ReindexBody(Body):
    full: StrictBool = False
    retry_failed: StrictBool = False


class MapBody(Body):
    topic: StrictStr
    # sources to map although they would be set aside as about another event (the map page's "include them")
    include: list[Annotated[StrictStr, StringConstraints(max_length=MAX_ID_CHARS)]] = Field(
        default_factory=list, max_length=MAX_INCLUDED)


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
        raise BodyError(400, "bad_request",
                        f"{where or 'body'}: holds an unpaired surrogate (\\ud800-\\udfff), not text")
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


def verify_form(form: Mapping[str, str]) -> VerifyBody:
    """The /verify form as the API's body, checked by the same model (``MAX_SOURCES`` ids at most): the sources are
    ids separated by commas."""
    ids = [s.strip() for s in (form.get("sources") or "").split(",") if s.strip()]
    return parse(VerifyBody, {"text": form.get("text") or "", "sources": ids, "question": form.get("question") or ""})


def search_filters(data: dict[str, Any]) -> dict[str, Any]:
    """The asker's search filters (form or JSON): ``author`` (speaker, author or narrator), ``year_from``,
    ``year_to`` and ``collection``; empty fields are no filter, a bad one is a 400 that names it."""
    out: dict[str, Any] = {}
    for key, longest in (("author", 200), ("collection", 300)):
        value = " ".join(str(data.get(key) or "").split())
        if len(value) > longest:
            raise BodyError(400, "bad_request", f"{key} is longer than {longest} characters")
        if value and key == "author" and not re.search(r"[A-Za-z]{2}", value):
            raise BodyError(400, "bad_request",
                            "author must name someone (at least two letters): a surname, a narrator")
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
