"""JSON-RPC 2.0 frames and their errors: what :class:`~._jsonrpc.Rpc` parses and builds.

Standard library only, and the same in every style: the error codes, the frame types
(:class:`Request`, :class:`Notification`, :class:`Response`, :class:`ErrorResponse`,
:class:`MethodNotFound`, :class:`Batch`), the errors a connection raises or answers with,
the :class:`Codec` interface a style implements, and :class:`MethodSpec`, a row of a
module's method table. ``_jsonrpc.py`` re-exports all of it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Callable, Final, Generic, NamedTuple, TypeVar

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

Id = int | float | str | None
#: the characters of a peer error's ``data`` that ``str(RemoteError)`` shows
_DATA_IN_STR: Final = 2000


class MethodSpec(NamedTuple):
    """A JSON-RPC method: its wire name, the side that implements it, whether it is a
    request or a notification, its params and result types, the name of the handler
    method that serves it, and, for a method about a session, the name under which its
    params hold the session's id (an attribute, or a key where params are dicts) and,
    where that is an attribute, the key under which params in wire form (a dict) hold
    it."""

    method: str
    side: str
    kind: str
    params: Any
    result: Any
    handler: str
    session: str | None = None
    session_key: str | None = None


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
        text = json.dumps(self.response(), separators=(",", ":"), ensure_ascii=False)
        return (text + "\n").encode("utf-8", "backslashreplace")  # see Rpc.encode


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
        text = f"{self.method}: {self.message} ({self.code})"
        if self.data is not None:  # where agents put the useful detail
            try:
                data = json.dumps(self.data, ensure_ascii=False, default=repr)
            except ValueError:  # a circular value
                data = repr(self.data)
            if len(data) > _DATA_IN_STR:
                data = data[:_DATA_IN_STR] + "..."
            text += f": {data}"
        return text

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
    ``reason`` says which; ``returncode`` is the spawned agent's exit status when it had
    exited by then (negative: the signal that ended it), else ``None``. Both are in
    ``str()``."""

    def __init__(self, reason: str, returncode: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.returncode = returncode

    def __str__(self) -> str:
        if self.returncode is None or f"status {self.returncode}" in self.reason:
            return self.reason
        return f"{self.reason} (the agent process exited with status {self.returncode})"


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
    """A JSON-RPC id: a string, a number (a fraction too, though JSON-RPC discourages it)
    or null; it is answered with the same JSON value (``1.0`` comes back as ``1.0``)."""
    if type(value) is float:
        return math.isfinite(value)  # NaN and Infinity are not JSON
    return value is None or type(value) is str or type(value) is int


def _id_json(value: Any) -> str:
    """An id as JSON text (an integer, the usual id, without a trip through ``json``)."""
    if type(value) is int:
        return str(value)
    return json.dumps(value, ensure_ascii=False)


_DECODER: Final = json.JSONDecoder()


def _loads(frame: bytes | bytearray | str) -> Any:
    """``json.loads(frame)``, the same value or error, faster for a frame in UTF-8 with no
    whitespace around it (every frame a JSON-RPC peer writes): anything else takes
    ``json.loads`` itself."""
    try:
        text = frame if isinstance(frame, str) else frame.decode()
        value, end = _DECODER.raw_decode(text)
    except (ValueError, RecursionError):  # UnicodeDecodeError included
        return json.loads(frame)
    if end != len(text) and text[end:].strip(" \t\n\r"):
        return json.loads(frame)  # something after the value: its exact error
    return value
