"""Seeing the traffic of a connection: observers of every frame, and OpenTelemetry spans.

* An **observer** is a callable given a :class:`Traffic` for every frame the connection
  reads (``"in"``) or writes (``"out"``), exactly once, in the order read or written:
  ``Connection(..., observers=[...])`` or :meth:`Connection.add_observer`. It runs in the
  connection's own task, so it must be quick (log, count, append to a recording); one
  that raises is logged and removed. With no observer nothing is done per frame.
* :class:`OpenTelemetry` opens a span per request, both ways (``Connection(...,
  telemetry=OpenTelemetry())``): named by its method, kind CLIENT for ours and SERVER for
  the peer's, with the JSON-RPC attributes of OpenTelemetry's conventions and
  ``acp.outcome`` ("ok", "error", "cancelled", "closed", "invalid"), its duration the
  span's. It imports ``opentelemetry`` (the package ``opentelemetry-api``) when it is
  made, never before: a connection without it imports and costs nothing of it.
"""

from __future__ import annotations

import asyncio
import json
import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Final, Iterator

from ._jsonrpc import (
    REQUEST_CANCELLED,
    ConnectionClosedError,
    Id,
    InvalidResultError,
    OversizedFrameError,
    RemoteError,
)

IN: Final = "in"
OUT: Final = "out"


@dataclass(frozen=True, slots=True)
class Traffic:
    """One frame as an observer sees it: ``direction`` ("in": read, "out": written) and
    ``line``, the frame's JSON text without its newline. A line over the connection's
    ``max_line`` is never held whole: ``line`` is then its first bytes, ``whole`` is
    False, and ``size`` is its length in bytes either way."""

    direction: str
    line: bytes
    size: int
    whole: bool = True

    def message(self) -> Any:
        """The frame as parsed JSON (``None`` for a line not held whole, or not JSON)."""
        if not self.whole:
            return None
        try:
            return json.loads(self.line)
        except ValueError:
            return None


#: what sees the traffic
Observer = Callable[[Traffic], None]

# the error code of an answer the runtime wrote (Rpc.encode's own layout)
_ERROR_CODE: Final = re.compile(
    rb'\{"jsonrpc":"2\.0","id":(?:[-+.\deE]+|"(?:[^"\\]|\\.)*"|null),"error":\{.*?"code":(-?\d+)',
    re.DOTALL,
)


class Span:
    """A request's span while it runs: :meth:`outcome` records how it ended."""

    def __init__(self, span: Any, failed: Callable[[str], Any]) -> None:
        self.span = span
        #: the status of a span that did not end well, with its description
        self._failed = failed

    def outcome(self, outcome: str, code: int | None = None, message: str = "") -> None:
        self.span.set_attribute("acp.outcome", outcome)
        if code is not None:
            self.span.set_attribute("rpc.jsonrpc.error_code", code)
            if message:
                self.span.set_attribute("rpc.jsonrpc.error_message", message)
        if outcome != "ok":
            self.span.set_status(self._failed(message or outcome))

    def failed(self, exc: BaseException) -> None:
        """Ours ended without a result: by the peer's error, cancellation, the close."""
        if isinstance(exc, RemoteError):
            self.outcome("error", exc.code, exc.message)
        elif isinstance(exc, asyncio.CancelledError):
            self.outcome("cancelled")
        elif isinstance(exc, ConnectionClosedError):
            self.outcome("closed", message=exc.reason)
        elif isinstance(exc, (InvalidResultError, OversizedFrameError)):
            self.outcome("invalid", message=str(exc))
        else:
            self.outcome("error", message=f"{type(exc).__name__}: {exc}")

    def answered(self, line: bytes | None) -> None:
        """The peer's request was answered with ``line`` (an error, or a result)."""
        found = _ERROR_CODE.match(line) if line is not None else None
        if found is None:
            self.outcome("ok")
            return
        code = int(found.group(1))
        self.outcome("cancelled" if code == REQUEST_CANCELLED else "error", code)


class OpenTelemetry:
    """Spans for a connection's requests, through OpenTelemetry's API (``tracer``, else
    the tracer of ``tracer_provider``, else the global one). Raises ImportError, saying
    what to install, when ``opentelemetry-api`` is not installed."""

    def __init__(self, tracer: Any = None, *, tracer_provider: Any = None) -> None:
        try:
            import opentelemetry.trace as trace
        except ImportError as exc:
            raise ImportError(
                "OpenTelemetry spans need the package opentelemetry-api:"
                " pip install opentelemetry-api (and an SDK to export them)"
            ) from exc
        self.tracer = tracer or trace.get_tracer(
            "acp.jsonrpc", tracer_provider=tracer_provider
        )
        self._kinds = {OUT: trace.SpanKind.CLIENT, IN: trace.SpanKind.SERVER}
        error = trace.StatusCode.ERROR
        self._failed: Callable[[str], Any] = lambda text: trace.Status(error, text)

    @contextmanager
    def span(self, direction: str, method: str, id: Id) -> Iterator[Span]:
        """The span of one request: ``direction`` "out" (ours) or "in" (the peer's)."""
        attributes = {
            "rpc.system": "jsonrpc",
            "rpc.method": method,
            "rpc.jsonrpc.version": "2.0",
            "rpc.jsonrpc.request_id": json.dumps(id),
        }
        with self.tracer.start_as_current_span(
            method,
            kind=self._kinds[direction],
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            yield Span(span, self._failed)
