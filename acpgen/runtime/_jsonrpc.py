"""JSON-RPC 2.0 for ACP: frames typed by method, their errors, and :class:`Rpc`.

Standard library only. Every generated module of this package binds this code to its
own types and method table (``<module>.RPC``, ``<module>.Agent``, ...); nothing here
names a method or a type of ACP.

* :meth:`Rpc.parse` classifies one frame (a line of bytes or text, or parsed JSON) as a
  :class:`Request`, :class:`Notification`, :class:`Response` or :class:`ErrorResponse`
  (a :class:`Batch` of them where the schema declares batches), with ``params``
  (``result``) validated as the type of its method; an extension method (leading ``_``)
  keeps its params as received; any other unknown method is a :class:`MethodNotFound`. A
  frame that cannot be accepted raises :class:`FrameError`, which carries the JSON-RPC
  error to answer with; a response whose result is not valid for its method raises
  :class:`InvalidResultError`, which keeps the raw result.
* ``_router.py``: :class:`Router` hands an incoming frame to a handler object and builds
  the response frame.
* ``_connection.py``: :class:`Connection` serves a handler over newline-delimited JSON
  streams and sends typed requests and notifications to the peer; ``_transports.py``
  makes one over a spawned agent process or this process's stdio.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Final, Generic, NamedTuple, TypeVar

if TYPE_CHECKING:  # asyncio is imported when a connection is made: the modules that
    import asyncio  # import this one stay quick to import

    from ._connection import Connection

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
#: ACP's "request cancelled": the answer to a request cancelled by ``$/cancel_request``,
#: by a handler raising ``CancelledError``, or by the connection closing
REQUEST_CANCELLED: Final = -32800

#: the longest line a :class:`Connection` reads by default (``max_line=`` changes it per
#: connection): a longer request is answered with an error carrying its own id, a longer
#: response fails the request it answers with :class:`OversizedFrameError`
DEFAULT_MAX_LINE: Final = 32 * 1024 * 1024
#: the former name of :data:`DEFAULT_MAX_LINE`
MAX_LINE: Final = DEFAULT_MAX_LINE

P = TypeVar("P")
R = TypeVar("R")

Id = int | str | None


class MethodSpec(NamedTuple):
    """A JSON-RPC method: its wire name, the side that implements it, whether it is a
    request or a notification, its params and result types, the name of the handler
    method that serves it, and, for a method about a session, the name under which its
    params hold the session's id (an attribute, or a key where params are dicts)."""

    method: str
    side: str
    kind: str
    params: Any
    result: Any
    handler: str
    session: str | None = None


# ---------------------------------------------------------------- frames


@dataclass(slots=True)
class Request(Generic[P]):
    """A request: ``params`` is a value of the method's params type (the JSON received
    as it is for an extension method)."""

    id: Id
    method: str
    params: P


@dataclass(slots=True)
class Notification(Generic[P]):
    method: str
    params: P


@dataclass(slots=True)
class Response(Generic[R]):
    """A success response; ``result`` is typed by ``method``, the method of the request
    it answers (``None`` when that is not known: the result is then the JSON received).
    """

    id: Id
    result: R
    method: str | None = None


@dataclass(slots=True)
class ErrorResponse(Generic[P]):
    """An error response; ``error`` is the module's ``Error`` type."""

    id: Id
    error: P


@dataclass(slots=True)
class MethodNotFound:
    """A request (``request`` is true) or notification of a method this side does not
    know and that is not an extension method: a request is answered -32601."""

    id: Id
    method: str
    params: Any
    request: bool


class RpcError(Exception):
    """A JSON-RPC error. Raise it from a handler to answer with its code, message and
    data; :meth:`Connection.request` raises it when the peer answers with an error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            out["data"] = self.data
        return out

    @classmethod
    def method_not_found(cls, method: str) -> RpcError:
        return cls(METHOD_NOT_FOUND, "Method not found", {"method": method})


class FrameError(RpcError):
    """A frame that cannot be accepted. ``id`` is the request's id when it could be
    read (``None`` otherwise); ``answer`` says whether JSON-RPC asks for an error
    response (never for a notification or a response)."""

    def __init__(
        self,
        code: int,
        message: str,
        data: Any = None,
        *,
        id: Id = None,
        answer: bool,
        call: bool = True,
    ) -> None:
        super().__init__(code, message, data)
        self.id = id
        self.answer = answer
        #: the frame has a ``method`` (a request or notification), or no id could be read;
        #: ``False`` for a frame with an id and no method: perhaps a broken response
        self.call = call

    def response(self) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": self.id, "error": self.to_json()}

    def response_line(self) -> bytes:
        return (json.dumps(self.response(), separators=(",", ":")) + "\n").encode()


class RemoteError(RpcError):
    """The peer answered one of our requests with an error: ``method`` and ``id`` name
    that request. A handler that lets it escape is answered -32603 (internal error) with
    ``data`` naming the inner method and code, never with the inner error as its own;
    ``raise exc.forward()`` answers with the peer's error on purpose."""

    def __init__(
        self, code: int, message: str, data: Any = None, *, method: str, id: Id
    ) -> None:
        super().__init__(code, message, data)
        self.method = method
        self.id = id

    def __str__(self) -> str:
        return f"{self.method}: {self.message} ({self.code})"

    def forward(self) -> RpcError:
        """The same error as a plain :class:`RpcError`, to answer an outer request with."""
        return RpcError(self.code, self.message, self.data)


class InvalidResultError(Exception):
    """A response to our request whose ``result`` is not valid for its method (a newer
    peer, or a broken one). ``raw`` is the result as received (parsed JSON), ``detail``
    what the binding found wrong. Not an :class:`RpcError`: the peer did not answer with
    an error."""

    def __init__(self, method: str, id: Id, raw: Any, detail: Any) -> None:
        super().__init__(f"invalid result for {method!r} (id {id!r}): {detail}")
        self.method = method
        self.id = id
        self.raw = raw
        self.detail = detail


class ConnectionClosedError(ConnectionError):
    """A request that no answer can reach: the connection is closed (or closing), the peer
    went away, or the connection is not serving (nothing reads the peer's answers).
    ``reason`` says which."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class OversizedFrameError(Exception):
    """The answer to our request came on a line longer than the connection's
    ``max_line``: it was skipped unread. ``size`` is the line's length in bytes."""

    def __init__(self, method: str, id: Id, size: int, limit: int) -> None:
        super().__init__(
            f"the answer to {method!r} (id {id!r}) is a line of {size} bytes, over the"
            f" connection's limit of {limit} bytes"
        )
        self.method = method
        self.id = id
        self.size = size
        self.limit = limit


@dataclass(slots=True)
class Batch:
    """A JSON-RPC 2.0 batch (an array of calls), where the schema declares batches: each
    item is a frame, or the :class:`FrameError` (:class:`InvalidResultError`) it raised.
    """

    items: list[Frame | FrameError | InvalidResultError]


Frame = (
    Request[Any]
    | Notification[Any]
    | Response[Any]
    | ErrorResponse[Any]
    | MethodNotFound
)


class Codec:
    """How a binding style validates and dumps values; each style's runtime subclasses it."""

    #: the exceptions ``load`` raises for a value that does not match its type
    errors: tuple[type[BaseException], ...] = ()

    def load(self, tp: Any, data: Any) -> Any:
        raise NotImplementedError

    def dump(self, value: Any) -> Any:
        """The wire JSON value of ``value``."""
        raise NotImplementedError

    def encode(self, value: Any) -> str:
        """The JSON text of ``value`` (compact)."""
        return json.dumps(self.dump(value), separators=(",", ":"), ensure_ascii=False)

    def describe(self, exc: BaseException) -> Any:
        """The ``data`` of an invalid-params error: what was wrong, and where."""
        return str(exc)

    def frame_reader(
        self, calls: dict[tuple[str, str], MethodSpec]
    ) -> Callable[[bytes | bytearray | str], dict[str, Any] | None] | None:
        """A fast path for whole lines: a function that validates a well-formed request or
        notification of one of ``calls`` in one step and returns its members (``id``,
        ``method``, typed ``params``), or ``None`` for anything else, which then takes
        the general path (and gets its exact outcome there). ``None``: no fast path."""
        return None


def _is_id(value: Any) -> bool:
    return value is None or type(value) is str or type(value) is int


_MISSING: Final = object()


class Rpc:
    """One module's method table bound to its binding style: parses and builds frames."""

    def __init__(
        self,
        methods: tuple[MethodSpec, ...],
        codec: Codec,
        error_type: Any,
        *,
        batches: bool = False,
        version: int | None = None,
    ) -> None:
        self.methods = methods
        #: the protocol version of the module (its ``PROTOCOL_VERSION``), None if unknown
        self.version = version
        #: whether the schema declares JSON-RPC batches (a root member that is an array)
        self.batches = batches
        self.codec = codec
        self.error_type = error_type
        self._by_kind: dict[tuple[str, str], MethodSpec] = {}
        for spec in methods:
            self._by_kind.setdefault((spec.method, spec.kind), spec)
        #: (wire name, kind) -> where its params hold the session id
        self.sessions: dict[tuple[str, str], str] = {
            key: spec.session
            for key, spec in self._by_kind.items()
            if spec.session is not None
        }
        self._sides: dict[str, dict[tuple[str, str], MethodSpec]] = {}
        self._readers: dict[str | None, Any] = {}

    def receives(self, side: str | None) -> dict[tuple[str, str], MethodSpec]:
        """The methods ``side`` implements, by (wire name, kind); every method for None."""
        if side is None:
            return self._by_kind
        table = self._sides.get(side)
        if table is None:
            table = {}
            for spec in self.methods:
                if spec.side in (side, "both", "protocol", ""):
                    table.setdefault((spec.method, spec.kind), spec)
            self._sides[side] = table
        return table

    def spec(self, method: str, kind: str = "request") -> MethodSpec | None:
        return self._by_kind.get((method, kind))

    def session_of(self, method: str, kind: str, params: Any) -> str | None:
        """The id of the session a message is about (its params' ``sessionId``), or None
        for a message about no session (or whose params do not say one)."""
        name = self.sessions.get((method, kind))
        if name is None or params is None:
            return None
        if isinstance(params, dict):
            value = params.get(name)
        else:
            value = getattr(params, name, None)
        return value if isinstance(value, str) else None

    # -- parsing ---------------------------------------------------------------------
    def parse(
        self,
        frame: bytes | str | Any,
        *,
        side: str | None = None,
        method_of: Callable[[Id], str | None] | None = None,
    ) -> Frame | Batch:
        """Classify and validate one frame. ``side`` ("agent" or "client") limits the
        requests and notifications to those that side implements; ``method_of`` gives
        the method of the request a response answers (a response is typed by it). An
        array is a :class:`Batch` where the schema declares batches (an empty one is
        invalid), an invalid request elsewhere."""
        if isinstance(frame, (bytes, bytearray, str)):
            reader = self._readers.get(side, _MISSING)
            if reader is _MISSING:
                reader = self._readers[side] = self.codec.frame_reader(
                    self.receives(side)
                )
            if reader is not None:
                fast = reader(frame)
                if fast is not None:
                    if "id" in fast:
                        return Request(fast["id"], fast["method"], fast["params"])
                    return Notification(fast["method"], fast["params"])
            try:
                data = json.loads(frame)
            except (ValueError, RecursionError) as exc:
                raise FrameError(
                    PARSE_ERROR, "Parse error", str(exc), answer=True
                ) from None
        else:
            data = frame
        if type(data) is list and self.batches:
            if not data:
                raise FrameError(
                    INVALID_REQUEST, "Invalid request", "empty batch", answer=True
                )
            items: list[Frame | FrameError | InvalidResultError] = []
            for item in data:
                try:
                    if type(item) is list:  # a batch holds calls, not batches
                        raise FrameError(
                            INVALID_REQUEST,
                            "Invalid request",
                            "a batch item is a JSON object",
                            answer=True,
                        )
                    frame = self.parse(item, side=side, method_of=method_of)
                except (FrameError, InvalidResultError) as exc:
                    items.append(exc)
                else:
                    assert not isinstance(frame, Batch)
                    items.append(frame)
            return Batch(items)
        if type(data) is not dict:
            raise FrameError(
                INVALID_REQUEST,
                "Invalid request",
                (
                    "a frame is a JSON object or a non-empty array (a batch)"
                    if self.batches
                    else "a frame is a JSON object (this schema declares no batches)"
                ),
                answer=True,
            )
        rid = data.get("id", _MISSING)
        if "method" in data:
            return self._parse_call(data, rid, side)
        if rid is _MISSING or not _is_id(rid):
            raise FrameError(
                INVALID_REQUEST,
                "Invalid request",
                "no method and no valid id",
                answer=True,
            )
        if data.get("jsonrpc") != "2.0":
            raise FrameError(
                INVALID_REQUEST,
                "Invalid request",
                "jsonrpc must be '2.0'",
                id=rid,
                answer=False,
            )
        has_result, has_error = "result" in data, "error" in data
        if has_result == has_error:  # neither: no method either, an invalid request
            raise FrameError(
                INVALID_REQUEST,
                "Invalid request",
                (
                    "a response has exactly one of result and error"
                    if has_result
                    else "no method, no result and no error"
                ),
                id=rid,
                answer=not has_result,
                call=False,
            )
        if has_error:
            try:
                error = self._load_error(data["error"])
            except self.codec.errors as exc:
                raise FrameError(
                    INVALID_REQUEST,
                    "Invalid error object",
                    self.codec.describe(exc),
                    id=rid,
                    answer=False,
                ) from None
            return ErrorResponse(rid, error)
        method = method_of(rid) if method_of is not None else None
        spec = self._by_kind.get((method, "request")) if method is not None else None
        if spec is None or spec.result is None:
            return Response(rid, data["result"], method)
        try:
            result = self.codec.load(spec.result, data["result"])
        except self.codec.errors as exc:
            raise InvalidResultError(
                str(method), rid, data["result"], self.codec.describe(exc)
            ) from None
        return Response(rid, result, method)

    def _load_error(self, body: Any) -> Any:
        """The typed ``Error``; a release without an ``Error`` def gets the JSON-RPC error
        object as parsed JSON, checked for its ``code`` and ``message``."""
        if self.error_type is not None:
            return self.codec.load(self.error_type, body)
        if (
            type(body) is not dict
            or type(body.get("code")) is not int
            or type(body.get("message")) is not str
        ):
            raise FrameError(
                INVALID_REQUEST,
                "Invalid error object",
                "expected code and message",
                answer=False,
            )
        return body

    def _parse_call(self, data: dict[str, Any], rid: Any, side: str | None) -> Frame:
        request = rid is not _MISSING
        if request and not _is_id(rid):
            raise FrameError(
                INVALID_REQUEST,
                "Invalid request",
                "id must be a string, an integer or null",
                answer=True,
            )
        rid = rid if request else None
        method = data["method"]
        if data.get("jsonrpc") != "2.0":
            raise FrameError(
                INVALID_REQUEST,
                "Invalid request",
                "jsonrpc must be '2.0'",
                id=rid,
                answer=request,
            )
        if type(method) is not str:
            raise FrameError(
                INVALID_REQUEST,
                "Invalid request",
                "method must be a string",
                id=rid,
                answer=request,
            )
        params = data.get("params", _MISSING)
        if (
            params is not _MISSING
            and type(params) is not dict
            and type(params) is not list
        ):
            if params is not None:  # ACP's own envelopes allow a null params
                raise FrameError(
                    INVALID_REQUEST,
                    "Invalid request",
                    "params must be an object or an array",
                    id=rid,
                    answer=request,
                )
        spec = self.receives(side).get(
            (method, "request" if request else "notification")
        )
        if spec is None:
            raw = None if params is _MISSING else params
            if method.startswith("_"):
                return (
                    Request(rid, method, raw) if request else Notification(method, raw)
                )
            return MethodNotFound(rid, method, raw, request)
        if spec.params is None:
            value = None if params is _MISSING else params
        else:
            try:
                value = self.codec.load(
                    spec.params, None if params is _MISSING else params
                )
            except self.codec.errors as exc:
                raise FrameError(
                    INVALID_PARAMS,
                    "Invalid params",
                    self.codec.describe(exc),
                    id=rid,
                    answer=request,
                ) from None
            except RecursionError:
                raise FrameError(
                    INVALID_PARAMS,
                    "Invalid params",
                    "nested too deeply",
                    id=rid,
                    answer=request,
                ) from None
        return Request(rid, method, value) if request else Notification(method, value)

    def route_params(self, data: Any, kind: str) -> Any:
        """A value of one of the schema's envelope defs (``ClientRequest``...) with its
        ``params`` validated as the params of the method its ``method`` names (``kind``:
        "request" or "notification"), so that a frame is never labelled by shape. Absent
        or null params, and an extension method's (leading ``_``), are left to the
        schema; an unknown method is rejected. Raises ``ValueError``."""
        if type(data) is not dict:
            return data
        method, params = data.get("method"), data.get("params")
        if type(method) is not str or params is None:
            return data
        spec = self._by_kind.get((method, kind))
        if spec is None:
            if method.startswith("_"):
                return data
            raise ValueError(f"unknown {kind} method {method!r}")
        if spec.params is None:
            return data
        try:
            value = self.codec.load(spec.params, params)
        except self.codec.errors as exc:
            raise ValueError(f"params of {method!r}: {exc}") from None
        return {**data, "params": value}

    # -- building --------------------------------------------------------------------
    def encode(self, frame: Frame) -> bytes:
        """The frame as one line of JSON (newline included), exactly the wire form; the
        params, result or error are written by the codec (pydantic-core for Pydantic).
        """
        body: Any
        if isinstance(frame, (Request, Notification)):
            head = '{"jsonrpc":"2.0",'
            if isinstance(frame, Request):
                head += '"id":' + json.dumps(frame.id) + ","
            head += '"method":' + json.dumps(frame.method) + ',"params":'
            body = frame.params
        elif isinstance(frame, Response):
            head = '{"jsonrpc":"2.0","id":' + json.dumps(frame.id) + ',"result":'
            body = frame.result
        elif isinstance(frame, ErrorResponse):
            head = '{"jsonrpc":"2.0","id":' + json.dumps(frame.id) + ',"error":'
            body = frame.error
        else:
            raise TypeError(f"cannot encode {type(frame).__name__}")
        line = head + self.codec.encode(body) + "}\n"
        try:
            return line.encode()
        except UnicodeEncodeError:
            # a lone surrogate (JSON allows one escaped in a string, and a peer may send
            # it) can only be written escaped: `\\udXXX`, the JSON escape of that code point
            return line.encode("utf-8", "backslashreplace")

    def to_json(self, frame: Frame) -> dict[str, Any]:
        """The frame as parsed JSON (what :meth:`encode` writes)."""
        return json.loads(self.encode(frame))  # type: ignore[no-any-return]

    def connect(
        self,
        side: str,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        **options: Any,
    ) -> Connection:
        """A :class:`Connection` for ``side`` ("agent" or "client") over these streams
        (``options``: the connection's ``max_line``, ``max_in_flight``, ``logger``...).
        """
        from ._connection import Connection

        return Connection(self, side, reader, writer, **options)

    async def stdio(self, side: str, **options: Any) -> Connection:
        """A :class:`Connection` for ``side`` over this process's stdin and stdout: pipes,
        as an editor starts an agent, or files (read in a thread, written directly)."""
        from ._transports import stdio_connection

        return await stdio_connection(self, side, **options)

    async def spawn(
        self, program: str, *args: str, side: str = "client", **options: Any
    ) -> Connection:
        """Start ``program`` (an agent command, by default: this is the ``client`` side)
        with its stdin and stdout wired to a :class:`Connection`, its stderr inherited.
        Closing the connection ends the process (stdin closed, then terminate, then
        kill). ``options``: ``env``, ``cwd``, ``stderr`` for the process, and the
        connection's own (``max_line``...)."""
        from ._transports import spawn_connection

        return await spawn_connection(self, side, program, *args, **options)

    def error(
        self, id: Id, code: int, message: str, data: Any = None
    ) -> ErrorResponse[Any]:
        """An error response with a typed ``Error``."""
        body: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            body["data"] = data
        return ErrorResponse(id, self._load_error(body))
