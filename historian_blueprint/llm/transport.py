"""The HTTP client of the model calls, with a total deadline per call.

httpx's timeouts bound each socket operation, not a request: a server that drips one byte a second never
times a read out, and holds the call (and the run, and the user's slot) as long as it likes. Here every
operation a call makes (connect, TLS, each write, each read, of the headers as of the body) is given at
most the time left before the call's deadline, and none starts once it has passed: the call ends by it, in
the thread that made it, with httpx's own timeout error (``openai.APITimeoutError``), and httpcore closes the
socket of a response it could not finish. No watchdog thread is left behind, no socket stays open.

The deadline travels with the calling thread's context (``ends_by``), so one pooled client serves every run.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import httpcore
import httpx

_ENDS: ContextVar[float | None] = ContextVar("historian_llm_call_ends", default=None)


@contextmanager
def ends_by(at: float | None) -> Iterator[None]:
    """Let the HTTP calls of this block end by ``at`` (``time.monotonic()``; None: no deadline)."""
    token = _ENDS.set(at)
    try:
        yield
    finally:
        _ENDS.reset(token)


def _left(timeout: float | None, late: type[httpcore.TimeoutException]) -> float | None:
    """The time one socket operation may take: its own timeout, cut to what is left of the call's."""
    at = _ENDS.get()
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise late("the call reached its deadline")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    """A connection whose every read and write ends by the deadline of the call using it."""

    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _Stream(self._stream.start_tls(ssl_context, server_hostname, _left(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    """httpcore's network backend, its connections ending by the call's deadline."""

    def __init__(self, backend: httpcore.NetworkBackend) -> None:
        self._backend = backend

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> httpcore.NetworkStream:
        return _Stream(self._backend.connect_tcp(host, port, _left(timeout, httpcore.ConnectTimeout), local_address,
                                                 socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> httpcore.NetworkStream:
        return _Stream(self._backend.connect_unix_socket(path, _left(timeout, httpcore.ConnectTimeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def deadline_client() -> httpx.Client:
    """The process's client for model calls (openai's pool limits; proxies from the environment, as httpx reads
    them), every pool of it on the deadline backend. One per process (a forked worker makes its own): its
    connections are reused, never left to the garbage collector."""
    return _client(os.getpid())


@functools.cache
def _client(pid: int) -> httpx.Client:
    """The client of the process ``pid``."""
    limits = httpx.Limits(max_connections=1000, max_keepalive_connections=100, keepalive_expiry=5.0)
    client = httpx.Client(limits=limits, follow_redirects=True)
    # httpx takes no network backend; its transports build their httpcore pool, which does: it is set on each
    for transport in (client._transport, *client._mounts.values()):  # noqa: SLF001 - see above
        pool = getattr(transport, "_pool", None)
        if pool is None:
            continue
        if not isinstance(getattr(pool, "_network_backend", None), httpcore.NetworkBackend):
            raise RuntimeError("this httpcore has no network backend to bound model calls with: "
                               "install httpcore 1.x (the one httpx 0.27 and 0.28 use)")
        pool._network_backend = _Backend(pool._network_backend)  # noqa: SLF001 - httpcore offers no public hook for its network backend
    return client
