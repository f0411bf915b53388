"""Calling one role's chat model: structured output, one re-prompt, retries with backoff, a response cache, usage.

Everything that can go wrong ends in ``LLMError`` with a reason; the graph turns that into a fail-safe
status, never into "verified". A call ends by its deadline: each request by the role's timeout or the run's
deadline, whichever comes first (llm/transport.py enforces it on every read), and no retry starts without time
to run before the run's deadline. A reason is redacted before anyone sees it: an endpoint's error may echo the key.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, stop_any

from historian_blueprint.limits import current_deadline
from historian_blueprint.llm.parsing import ParseError, parse_as
from historian_blueprint.llm.transport import deadline_client, ends_by
from historian_blueprint.redaction import redact_known
from historian_blueprint.settings import LLMSettings, RoleSettings

T = TypeVar("T", bound=BaseModel)
ModelFactory = Callable[[RoleSettings], Any]
MIN_REQUEST_S = 0.5  # no request (a first try, a retry, a re-prompt) is sent with less left before the run's deadline

log = logging.getLogger(__name__)


class LLMError(RuntimeError):
    """A role could not produce a usable answer (unreachable, timed out, rate limited, unparseable)."""

    def __init__(self, role: str, reason: str, attempts: int = 0) -> None:
        reason = redact_known(reason)  # what the run records and the pages show: never a key
        super().__init__(f"{role}: {reason}")
        self.role = role
        self.reason = reason
        self.attempts = attempts  # requests sent before giving up (0: none, or not a transport failure)


def is_retryable(exc: BaseException) -> bool:
    """429, 5xx, timeouts and dropped connections are worth another try; 4xx and bugs are not."""
    import openai

    if isinstance(exc, (openai.RateLimitError, openai.APITimeoutError, openai.APIConnectionError,
                        openai.InternalServerError, TimeoutError)):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status == 429 or status >= 500)


def retry_after(exc: BaseException) -> float | None:
    """The seconds the server asked to wait before the next try (``retry-after-ms`` or ``Retry-After``), if it said."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if not headers:
        return None
    try:
        if headers.get("retry-after-ms") is not None:
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:  # an HTTP date
            return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def describe(exc: BaseException, secrets: Iterable[str | None] = ()) -> str:
    """What went wrong, in words an admin can act on (the run records it), with ``secrets`` (the configured keys)
    and anything shaped like a credential masked before the text is cut (a cut key is no longer found)."""
    import openai

    if isinstance(exc, (openai.APITimeoutError, TimeoutError)):
        return "timed out"
    if isinstance(exc, openai.RateLimitError):
        wait = retry_after(exc)
        return f"rate limited (429{f', Retry-After {wait:g} s' if wait is not None else ''})"
    if isinstance(exc, openai.APIConnectionError) and exc.__cause__ is not None:  # "Connection error." says too little
        cause = exc.__cause__
        while isinstance(cause, openai.APIConnectionError) and cause.__cause__ is not None:
            cause = cause.__cause__
        return f"connection failed ({type(cause).__name__}: {redact_known(str(cause), secrets)[:200]})"
    status = getattr(exc, "status_code", None)
    return f"{type(exc).__name__}{f' {status}' if status else ''}: {redact_known(str(exc), secrets)[:200]}"


class Usage:
    """Tokens and calls per role for one run (roles run in parallel threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.roles: dict[str, dict[str, Any]] = {}

    def _entry(self, role: str, model: str) -> dict[str, Any]:
        return self.roles.setdefault(role, {"model": model, "prompt_tokens": 0, "completion_tokens": 0, "calls": 0,
                                            "cached": 0, "retries": 0, "failed": 0, "ms": 0.0})

    def add(self, role: str, model: str, message: AIMessage | None = None, *, cached: bool = False, retries: int = 0,
            ms: float = 0.0) -> None:
        meta = (message.usage_metadata if message is not None else None) or {}
        with self._lock:
            entry = self._entry(role, model)
            entry["ms"] = round(entry["ms"] + ms, 2)
            entry["calls"] += 1
            entry["cached"] += int(cached)
            entry["retries"] += retries
            if not cached:
                entry["prompt_tokens"] += int(meta.get("input_tokens", 0))
                entry["completion_tokens"] += int(meta.get("output_tokens", 0))

    def failed(self, role: str, model: str) -> None:
        """Count a role that gave up (its calls were added as they were made)."""
        with self._lock:
            self._entry(role, model)["failed"] += 1

    def totals(self) -> dict[str, int]:
        with self._lock:
            return {
                "prompt": sum(e["prompt_tokens"] for e in self.roles.values()),
                "completion": sum(e["completion_tokens"] for e in self.roles.values()),
            }


class ResponseCache:
    """Model replies by (model, parameters, prompt), kept ``ttl`` seconds in a collection (any pymongo one)."""

    def __init__(self, collection: Any | None, ttl: float) -> None:
        self.collection = collection
        self.ttl = ttl

    @staticmethod
    def key(settings: RoleSettings, mode: str, messages: Sequence[BaseMessage], schema: str) -> str:
        payload = [settings.base_url, settings.model, settings.temperature, settings.max_tokens, mode, schema,
                   [(m.type, m.content) for m in messages]]
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()

    def get(self, key: str) -> str | None:
        """A cached reply, or None (a cache that fails is a miss, never an error)."""
        if self.collection is None or self.ttl <= 0:
            return None
        try:
            found = self.collection.find_one({"_id": key})
        except Exception:  # noqa: BLE001 - best effort
            return None
        if not found or found.get("expires_at", 0) < time.time():
            return None
        return found["content"]

    def put(self, key: str, content: str) -> None:
        if self.collection is None or self.ttl <= 0:
            return
        now = time.time()
        try:
            self.collection.replace_one(
                {"_id": key},
                {"_id": key, "content": content, "created_at": now, "expires_at": now + self.ttl}, upsert=True
            )
        except Exception:  # noqa: BLE001 - best effort: the answer stands without the cache
            pass


def chat_openai(settings: LLMSettings) -> ModelFactory:
    """The production factory: one ``ChatOpenAI`` per role (OpenAI, or any compatible server by base URL)."""

    def make(role: RoleSettings) -> Any:
        from langchain_openai import ChatOpenAI

        if not role.api_key and not role.base_url:
            raise LLMError(role.role, "no API key: set HISTORIAN_LLM_API_KEY (or OPENAI_API_KEY), or a local "
                                      "HISTORIAN_LLM_BASE_URL")
        return ChatOpenAI(
            model=role.model, base_url=role.base_url, api_key=role.api_key or "not-needed",
            temperature=role.temperature, max_tokens=role.max_tokens, timeout=role.timeout,
            max_retries=0,  # Historian retries itself, with the same policy for every server
            http_client=deadline_client(),  # each call ends by its deadline, however slowly the server answers
        )

    return make


class LLMClient:
    """Structured calls to the role models of one engine; shared by the runs of a process."""

    def __init__(
        self,
        settings: LLMSettings,
        *,
        factory: ModelFactory | None = None,
        cache: ResponseCache | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.settings = settings
        self.factory = factory or chat_openai(settings)
        self.cache = cache or ResponseCache(None, 0)
        self.sleep = sleep
        self._models: dict[str, Any] = {}
        self._guard = threading.Lock()
        # the configured keys, masked wherever they stand in a failure's text (an endpoint may echo one back)
        keys = [settings.api_key, *((opts or {}).get("api_key") for opts in settings.roles.values())]
        self.secrets = tuple({str(k) for k in keys if k})

    def model(self, role: str) -> Any:
        with self._guard:
            if role not in self._models:
                self._models[role] = self.factory(self.settings.role(role))
            return self._models[role]

    def _runnable(self, role: str, schema: type[BaseModel]) -> tuple[Any, str]:
        """The model bound for structured output where it supports it, else the bare model (prompted JSON)."""
        model = self.model(role)
        mode = self.settings.structured_output
        try:
            if mode == "json_mode":
                return model.bind(response_format={"type": "json_object"}), mode
            if mode == "json_schema":
                return model.with_structured_output(schema, method="json_schema", include_raw=True), mode
        except Exception:  # noqa: BLE001 - no structured-output support: plain replies, parsed
            pass
        return model, "prompt"

    def _invoke(self, role: str, runnable: Any, messages: list[BaseMessage]) -> tuple[AIMessage, Any, int]:
        """Invoke with bounded retries (tenacity) of transient failures, waiting ``BACKOFF_S × 2^attempt`` or the
        server's Retry-After when longer (at most 30 s); return (message, parsed-or-None, retries).

        Each request ends by the role's timeout or the run's deadline (``limits.within``), whichever comes first;
        a request is sent only with ``MIN_REQUEST_S`` left before the run's deadline, after its wait."""
        timeout = self.settings.role(role).timeout
        run = current_deadline()
        left = run.left if run is not None else lambda: math.inf

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            return min(30.0, max(self.settings.backoff * 2 ** (state.attempt_number - 1), retry_after(exc) or 0.0))

        def out_of_time(state: RetryCallState) -> bool:
            return left() - (state.upcoming_sleep or 0.0) < MIN_REQUEST_S

        if left() < MIN_REQUEST_S:
            raise self._failed(role, "not asked: the run reached its time limit (HISTORIAN_LIMITS_TIMEOUT_S)", 0)
        retrying = Retrying(stop=stop_any(stop_after_attempt(self.settings.max_retries + 1), out_of_time), wait=wait,
                            sleep=self.sleep, reraise=True,
                            retry=retry_if_exception(lambda exc: not isinstance(exc, LLMError) and is_retryable(exc)))
        attempt = 0
        try:
            for attempt_state in retrying:
                attempt = attempt_state.retry_state.attempt_number - 1
                with attempt_state, ends_by(min(time.monotonic() + timeout, run.at if run is not None else math.inf)):
                    out = runnable.invoke(messages)
        except LLMError:
            raise
        except Exception as exc:  # not transient, no attempts left, or no time left for one
            reason = describe(exc, self.secrets)
            if reason == "timed out" and run is not None and run.passed():
                reason += " at the run's time limit"
            raise self._failed(role, f"{reason}; {attempt + 1} attempt{'s' * bool(attempt)}", attempt + 1) from exc
        if isinstance(out, dict):  # with_structured_output(include_raw=True)
            return out["raw"], out.get("parsed"), attempt
        return out, None, attempt

    def _failed(self, role: str, reason: str, attempts: int = 0) -> LLMError:
        """The error a role gives up with, its reason redacted (the configured keys too), and logged."""
        error = LLMError(role, redact_known(reason, self.secrets), attempts)
        log.warning("model role %s failed: %s", role, error.reason)
        return error

    def structured(self, role: str, messages: list[BaseMessage], schema: type[T], usage: Usage) -> T:
        """Ask ``role`` for an object of ``schema``: parse robustly, re-prompt once with the error, else raise
        LLMError."""
        try:
            return self._structured(role, messages, schema, usage)
        except LLMError:
            raise
        except Exception as exc:  # anything unexpected is this role failing, handled fail-safe by the graph
            raise self._failed(role, f"{type(exc).__name__}: {redact_known(str(exc), self.secrets)[:200]}") from exc

    def _structured(self, role: str, messages: list[BaseMessage], schema: type[T], usage: Usage) -> T:
        role_settings = self.settings.role(role)
        runnable, mode = self._runnable(role, schema)
        key = ResponseCache.key(role_settings, mode, messages, schema.__name__)
        cached = self.cache.get(key)
        if cached is not None:
            try:
                value = parse_as(cached, schema)
                usage.add(role, role_settings.model, cached=True)
                return value
            except ParseError:
                pass
        conversation = list(messages)
        error = ""
        for _turn in range(2):
            t0 = time.perf_counter()
            try:
                message, parsed, retries = self._invoke(role, runnable, conversation)
            except LLMError as exc:  # the calls and the time a failed role cost are part of the run's record
                usage.add(role, role_settings.model, retries=max(0, exc.attempts - 1),
                          ms=(time.perf_counter() - t0) * 1000)
                usage.failed(role, role_settings.model)
                raise
            usage.add(role, role_settings.model, message, retries=retries, ms=(time.perf_counter() - t0) * 1000)
            content = message.content if isinstance(message.content, str) else json.dumps(message.content)
            try:
                value = parsed if isinstance(parsed, schema) else parse_as(content, schema)
            except ParseError as exc:
                error = str(exc)
                conversation += [
                    message if isinstance(message, AIMessage) else AIMessage(content=content),
                    HumanMessage(content=(
                        f"Your reply could not be used ({error}). Reply again with only one JSON object that follows "
                        f"this JSON schema, and nothing else:\n{json.dumps(schema.model_json_schema())}"
                    )),
                ]
                continue
            self.cache.put(key, value.model_dump_json())
            return value
        usage.failed(role, role_settings.model)
        raise self._failed(role, f"unparseable output after a re-prompt ({error})")
