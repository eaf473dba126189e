"""The router: one incoming request or notification in, its handler called, the answer
out. Standard library only; used by :class:`~._connection.Connection`, usable alone.

A handler is any object with one ``async`` method per wire method it implements, named as
in the module's ``Agent`` / ``Client`` protocols, taking the params and returning the
result. What the handler raises becomes the answer JSON-RPC asks for:

* :class:`RpcError`: its own code, message and data;
* :class:`RemoteError` (the peer failed one of *our* requests made while handling this
  one): -32603, with ``data`` naming the inner method and code (and a log line), so the
  peer never mistakes the inner error for the outer method's own; ``raise exc.forward()``
  passes it on on purpose;
* ``asyncio.CancelledError``: -32800 (request cancelled);
* anything else: -32603, the traceback in the log.

A request handler that returns ``None`` for a method whose result is an object with no
required member (an "empty" result) answers ``{}``.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._jsonrpc import (
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    REQUEST_CANCELLED,
    Batch,
    ConnectionClosedError,
    ErrorResponse,
    Frame,
    FrameError,
    Id,
    InvalidResultError,
    MethodNotFound,
    Notification,
    RemoteError,
    Request,
    Response,
    Rpc,
    RpcError,
)

if TYPE_CHECKING:
    import asyncio
    import logging


@dataclass(slots=True, eq=False)
class RequestContext:
    """The request a handler is serving, for the handlers that need more than params:
    its ``id`` and ``method``, the ``connection`` it came on (``None`` for a router used
    alone) and ``cancelled``, set when the peer cancels it (``$/cancel_request``) or the
    connection closes; the handler's task is cancelled then too."""

    id: Id
    method: str
    connection: Any = None
    cancelled: asyncio.Event | None = field(default=None)


_CURRENT: contextvars.ContextVar[RequestContext | None] = contextvars.ContextVar(
    "acp_request", default=None
)


def current_request() -> RequestContext | None:
    """The :class:`RequestContext` of the request being handled by the calling task (and
    the tasks it starts); ``None`` outside a request handler (in a notification's)."""
    return _CURRENT.get()


class Router:
    """Serves one side: validates an incoming frame, calls the handler's method for it,
    validates the result and returns the response line (``None`` for a notification).

    A method the handler does not implement, or an unknown one, is answered -32601;
    invalid params -32602 with the binding's error text and path in ``data``; see the
    module docstring for what a handler raises. Extension methods (leading ``_``) go to
    the handler's ``extension_request`` / ``extension_notification`` with the params as
    received."""

    def __init__(
        self, rpc: Rpc, side: str, handler: Any, logger: logging.Logger | None = None
    ) -> None:
        import logging

        self.rpc = rpc
        self.side = side
        self.handler = handler
        self.log = logger or logging.getLogger(__name__)

    async def handle(
        self, frame: Frame, context: RequestContext | None = None
    ) -> bytes | None:
        """The response line for ``frame`` (an incoming request or notification).
        ``context`` is what :func:`current_request` gives the handler of a request."""
        rpc = self.rpc
        kind = type(frame)
        if kind is MethodNotFound:
            assert isinstance(frame, MethodNotFound)
            if frame.request:
                return self.error_line(
                    frame.id,
                    METHOD_NOT_FOUND,
                    "Method not found",
                    {"method": frame.method},
                )
            self.log.warning("notification of unknown method %r ignored", frame.method)
            return None
        if kind is Request:
            assert isinstance(frame, Request)
            token = _CURRENT.set(context or RequestContext(frame.id, frame.method))
            try:
                result = await self._call(frame.method, "request", frame.params)
            except BaseException as exc:  # noqa: BLE001 - every request gets one answer
                if not isinstance(exc, Exception) and not _is_cancel(exc):
                    raise  # KeyboardInterrupt, SystemExit
                return self.failure(frame, exc)
            finally:
                _CURRENT.reset(token)
            return rpc.encode(Response(frame.id, result, frame.method))
        if kind is Notification:
            assert isinstance(frame, Notification)
            try:
                await self._call(frame.method, "notification", frame.params)
            except ConnectionClosedError as exc:
                self.log.info(
                    "handler of notification %r ended: the connection closed (%s)",
                    frame.method,
                    exc.reason,
                )
            except Exception:  # noqa: BLE001 - notifications are never answered
                self.log.exception("handler of notification %r failed", frame.method)
            return None
        raise TypeError(
            f"a router handles requests and notifications, not {kind.__name__}"
        )

    def failure(self, frame: Request[Any], exc: BaseException) -> bytes:
        """The error line answering ``frame`` whose handler raised ``exc``."""
        if _is_cancel(exc):
            self.log.info("request %r (%s) cancelled", frame.id, frame.method)
            return self.error_line(
                frame.id,
                REQUEST_CANCELLED,
                "Request cancelled",
                {"method": frame.method},
            )
        if isinstance(exc, RemoteError):
            self.log.warning(
                "handler of %r failed: the peer answered its %r request with %s %r",
                frame.method,
                exc.method,
                exc.code,
                exc.message,
            )
            inner: dict[str, Any] = {
                "method": exc.method,
                "code": exc.code,
                "message": exc.message,
            }
            if exc.data is not None:
                inner["data"] = exc.data
            return self.error_line(
                frame.id,
                INTERNAL_ERROR,
                "Internal error",
                {"method": frame.method, "cause": inner},
            )
        if isinstance(exc, RpcError) and not isinstance(exc, FrameError):
            return self.error_line(frame.id, exc.code, exc.message, exc.data)
        if isinstance(exc, ConnectionClosedError):
            # the connection closed under the handler (the peer went away): no error of ours
            self.log.info(
                "handler of %r ended: the connection closed (%s)",
                frame.method,
                exc.reason,
            )
        else:
            self.log.error(
                "handler of %r failed", frame.method, exc_info=(type(exc), exc, None)
            )
        return self.error_line(
            frame.id,
            INTERNAL_ERROR,
            "Internal error",
            f"{type(exc).__name__}: {exc}",
        )

    def error_line(self, id: Id, code: int, message: str, data: Any = None) -> bytes:
        """An error response line with a typed ``Error`` (the schema's, where it has one;
        a bare JSON-RPC error object where that one does not fit)."""
        errors: tuple[type[BaseException], ...] = (FrameError, *self.rpc.codec.errors)
        try:
            return self.rpc.encode(self.rpc.error(id, code, message, data))
        except errors:
            body: Any = {"code": code, "message": message}
            if data is not None:
                body["data"] = data
            return self.rpc.encode(ErrorResponse(id, body))

    async def _call(self, method: str, kind: str, params: Any) -> Any:
        spec = self.rpc.receives(self.side).get((method, kind))
        if spec is None:  # an extension method
            name = (
                "extension_request" if kind == "request" else "extension_notification"
            )
            fn = getattr(self.handler, name, None)
            if fn is None:
                if kind == "request":
                    raise RpcError.method_not_found(method)
                return None
            return await fn(method, params)
        fn = getattr(self.handler, spec.handler, None)
        if fn is None:
            if kind == "request":
                raise RpcError.method_not_found(method)
            return None
        result = await fn(params)
        if kind == "notification" or spec.result is None:
            return result
        codec = self.rpc.codec
        try:  # what the handler returns must be a valid result: check it before sending
            return codec.load(spec.result, codec.dump(result))
        except codec.errors as exc:
            if result is None:  # an empty result may be returned as None
                try:
                    return codec.load(spec.result, {})
                except codec.errors:
                    pass
            raise RpcError(
                INTERNAL_ERROR,
                "Internal error",
                "invalid result: " + str(codec.describe(exc)),
            ) from None

    async def handle_line(self, line: bytes | str) -> bytes | None:
        """Parse one incoming line and answer it: the response line, or ``None``."""
        try:
            frame = self.rpc.parse(line, side=self.side)
        except FrameError as exc:
            if exc.answer:
                return exc.response_line()
            self.log.warning("frame rejected: %s", exc.message)
            return None
        if isinstance(frame, Batch):
            lines: list[bytes] = []
            for item in frame.items:
                if isinstance(item, FrameError) and item.answer:
                    lines.append(item.response_line())
                elif isinstance(item, (FrameError, InvalidResultError)):
                    self.log.warning("batch item rejected: %s", item)
                elif isinstance(item, (Response, ErrorResponse)):
                    self.log.warning(
                        "response to id %r with no request in flight", item.id
                    )
                else:
                    answer = await self.handle(item)
                    if answer is not None:
                        lines.append(answer)
            return batch_line(lines)
        if isinstance(frame, (Response, ErrorResponse)):
            self.log.warning("response to id %r with no request in flight", frame.id)
            return None
        return await self.handle(frame)


def batch_line(lines: list[bytes]) -> bytes | None:
    """The answer to a batch: its response lines as one array (JSON-RPC 2.0 section 6);
    nothing at all when none of its calls is answered."""
    if not lines:
        return None
    return b"[" + b",".join(line.rstrip(b"\n") for line in lines) + b"]\n"


def _is_cancel(exc: BaseException) -> bool:
    import asyncio

    return isinstance(exc, asyncio.CancelledError)
