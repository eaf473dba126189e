"""JSON-RPC 2.0 for ACP: frames typed by method, their errors, and :class:`Rpc`.

The frames, error codes and errors live in ``_frames.py``; this module re-exports them.

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

import json
import os
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Final,
    Mapping,
)

if TYPE_CHECKING:  # asyncio is imported when a connection is made: the modules that
    import asyncio  # import this one stay quick to import

    from ._connection import Connection
    from ._channel import Channel

from ._frames import (
    PARSE_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    INVALID_PARAMS,
    INTERNAL_ERROR,
    REQUEST_CANCELLED,
    DEFAULT_MAX_LINE,
    MAX_LINE,
    Id,
    MethodSpec,
    Request,
    Notification,
    Response,
    ErrorResponse,
    MethodNotFound,
    RpcError,
    FrameError,
    RemoteError,
    InvalidResultError,
    ConnectionClosedError,
    OversizedFrameError,
    Batch,
    Frame,
    Codec,
    _is_id,
    _id_json,
    _loads,
)

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
        spec = self._by_kind.get((method, kind))
        if spec is None or spec.session is None or params is None:
            return None
        if isinstance(params, dict):  # wire form: by the member's wire key
            value = params.get(spec.session_key or spec.session)
        else:
            value = getattr(params, spec.session, None)
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
            call: Any = '"method"' if isinstance(frame, str) else b'"method"'
            if reader is not None and call in frame:  # (an answer has no "method")
                fast = reader(frame)
                if fast is not None:
                    if "id" in fast:
                        return Request(fast["id"], fast["method"], fast["params"])
                    return Notification(fast["method"], fast["params"])
            try:
                data = _loads(frame)
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
        if not (  # the usual answer (all of the checks below pass): straight through
            type(rid) is int
            and len(data) == 3
            and "result" in data
            and data.get("jsonrpc") == "2.0"
        ):
            if (rid is _MISSING or not _is_id(rid)) and (
                "result" in data or "error" in data
            ):
                # shaped like a response, matching none of our requests: never answered (a
                # peer that answered this answer in turn would ping-pong with us)
                raise FrameError(
                    INVALID_REQUEST,
                    "Unmatched response",
                    {
                        "reason": "a response without a usable id answers no request",
                        "id": None if rid is _MISSING else rid,
                        "error": data.get("error"),
                    },
                    answer=False,
                    call=False,
                )
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
                    error = self._load_error(data["error"], rid)
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

    def _load_error(self, body: Any, rid: Id = None) -> Any:
        """The typed ``Error``; a release without an ``Error`` def gets the JSON-RPC error
        object as parsed JSON, checked for its ``code`` and ``message`` (``rid``: the id of
        the answer it is read from, which the error raised keeps)."""
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
                id=rid,
                answer=False,
            )
        return body

    def _parse_call(self, data: dict[str, Any], rid: Any, side: str | None) -> Frame:
        request = rid is not _MISSING
        if request and not _is_id(rid):
            raise FrameError(
                INVALID_REQUEST,
                "Invalid request",
                "id must be a string, a number or null",
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
                head += '"id":' + _id_json(frame.id) + ","
            head += '"method":' + json.dumps(frame.method) + ',"params":'
            body = frame.params
        elif isinstance(frame, Response):
            head = '{"jsonrpc":"2.0","id":' + _id_json(frame.id) + ',"result":'
            body = frame.result
        elif isinstance(frame, ErrorResponse):
            head = '{"jsonrpc":"2.0","id":' + _id_json(frame.id) + ',"error":'
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

    def over(self, side: str, channel: Channel, **options: Any) -> Connection:
        """A :class:`Connection` for ``side`` over a message transport (a
        :class:`~._channel.Channel`: one JSON-RPC message per frame), with every promise
        of a connection over streams (``options`` as for :meth:`connect`)."""
        from ._transports import channel_connection

        return channel_connection(self, side, channel, **options)

    def asgi_app(self, serve: Any, **options: Any) -> Any:
        """An ASGI app serving agents remotely at ``/acp`` over WebSocket and Streamable
        HTTP: ``serve`` is a :class:`Versions` or ``serve(conn) -> handler``; ``options``
        the server's (``security``, ``authenticate``, ``idle_timeout``...) and
        ``connection``, a dict of the connections' options (``_remote_server.py``)."""
        from ._remote_server import asgi_app

        return asgi_app(self, serve, **options)

    async def connect_url(self, url: str, **options: Any) -> Connection:
        """A :class:`Connection` to a remote agent: ``ws://``/``wss://`` over WebSocket,
        ``http://``/``https://`` over Streamable HTTP (``headers``, ``cookies``,
        ``http2`` and the connection's options: ``_remote_client.py``)."""
        from ._remote_client import connect_url

        return await connect_url(self, url, **options)

    async def stdio(self, side: str, **options: Any) -> Connection:
        """A :class:`Connection` for ``side`` over this process's stdin and stdout: pipes,
        as an editor starts an agent, or files (read in a thread, written directly)."""
        from ._transports import stdio_connection

        return await stdio_connection(self, side, **options)

    async def spawn(
        self,
        program: str | os.PathLike[str],
        *args: str | os.PathLike[str],
        side: str = "client",
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: Any = None,
        start_new_session: bool = True,
        **options: Any,
    ) -> Connection:
        """Start ``program`` with ``args`` (an agent command, by default: this is the
        ``client`` side) with its stdin and stdout wired to a :class:`Connection`.

        The process: ``env`` its whole environment (default: this process's), ``cwd``
        its working directory, ``stderr`` where its stderr goes (default: inherited;
        ``subprocess.DEVNULL`` or a file), ``start_new_session`` (POSIX, default true) in
        a session and process group of its own, so that closing ends every process it
        started too. ``options`` are the connection's (``close_grace``, ``max_line``,
        ``logger``...). Every argument is checked before anything starts (a misspelled
        one raises ``TypeError``), and no process is left behind when this raises.

        Closing the connection ends the agent: its stdin is closed, and it (with, in its
        own session, everything it started) gets ``close_grace`` s to exit; then its
        process group gets SIGTERM and ``close_grace`` s more; then SIGKILL."""
        from ._transports import spawn_connection

        return await spawn_connection(
            self,
            side,
            program,
            *args,
            env=env,
            cwd=cwd,
            stderr=stderr,
            start_new_session=start_new_session,
            **options,
        )

    def error(
        self, id: Id, code: int, message: str, data: Any = None
    ) -> ErrorResponse[Any]:
        """An error response with a typed ``Error``."""
        body: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            body["data"] = data
        return ErrorResponse(id, self._load_error(body))


__all__ = [
    "Batch",
    "Codec",
    "ConnectionClosedError",
    "DEFAULT_MAX_LINE",
    "ErrorResponse",
    "Frame",
    "FrameError",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "Id",
    "InvalidResultError",
    "MAX_LINE",
    "METHOD_NOT_FOUND",
    "MethodNotFound",
    "MethodSpec",
    "Notification",
    "OversizedFrameError",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "RemoteError",
    "Request",
    "Response",
    "Rpc",
    "RpcError",
]
