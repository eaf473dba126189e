"""ACP over Streamable HTTP, the server side (the transport RFD), as a
:class:`~._channel.Channel` under the one connection core.

* ``POST /acp`` with ``initialize`` and no ``Acp-Connection-Id`` admits the client (Host,
  Origin, the authentication hook), opens a connection and answers ``200`` with the
  JSON-RPC response as the body and the new id in ``Acp-Connection-Id``; without an
  answer within ``init_timeout`` s it answers ``504`` and the connection is closed and
  forgotten. Any other ``POST`` names its connection (``400`` without the header,
  ``404`` unknown, closed, or another principal's), is fed to it and answered ``202``.
  A body is read up to ``max_body`` bytes and no further (``413``); a content type other
  than JSON is ``415``; a JSON array (a batch) is ``501``. A body that is not JSON, posted
  to a connection, is handed to it as on stdio: the connection answers a parse error
  (id null) on the connection's stream, and the ``POST`` is ``202``. Without a
  connection id, such a body (or any message but ``initialize``) is ``400``.
* ``GET /acp`` (``Accept: text/event-stream``, else ``406``) opens the connection's event
  stream, or with ``Acp-Session-Id`` that session's; a stream has one subscriber at a
  time (a second is ``409``). Each stream holds at most ``stream_queue`` messages, also
  while no one listens (a late subscriber gets them): beyond that the agent's sends wait,
  nothing is dropped. Idle streams carry a keepalive comment every ``keepalive`` s. A
  message being written as its subscriber goes away is lost (the RFD's first version
  replays nothing).
* ``DELETE /acp`` with ``Acp-Connection-Id`` closes the connection (``202``); its streams
  end, later requests naming it are ``404``.

Where the agent's messages go: a response to the stream its request came from (the
``initialize`` response into the ``POST``'s body; the session's stream when the request
carried ``Acp-Session-Id`` or a ``sessionId`` in its params and that session's stream
exists; else the connection's stream); a request or notification with a ``sessionId`` in
its params to that session's stream; anything else to the connection's stream.

Choices where the peers differ (made for interoperability with the TypeScript and Rust
SDKs): ``Acp-Session-Id`` is accepted on any method whose params carry that session id
(``session/load``, ``resume``, ``fork`` too) and is never required; a header naming
another session than the params is ``400``. A session stream may be opened for a session
the connection does not know yet (created on demand, as the TypeScript server does, so a
client can listen before ``session/load``); it belongs to the connection, hence to its
principal. A client closing its connection stream does not close the connection (sessions
survive disconnects); while no stream is open, the server's idle timer runs.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any, AsyncIterator

from ._channel import ChannelClosed
from ._remote import CONNECTION_ID, SESSION_ID, Refused, need

if TYPE_CHECKING:
    from ._remote_server import AcpServer, Served

log = logging.getLogger(__name__)

#: where a response goes: the initialize POST's body
_INIT = object()


def _key(rid: Any) -> tuple[str, Any]:
    """A JSON-RPC id as a dict key (1, 1.0, True and "1" stay apart)."""
    return (type(rid).__name__, rid)


class OutStream:
    """One outgoing event stream (the connection's, or a session's): a bounded queue of
    messages, held until a subscriber takes them; ``high`` is the most ever held."""

    def __init__(self, size: int) -> None:
        self.queue: asyncio.Queue[bytes] = asyncio.Queue(size)
        self.subscribed = False
        self.high = 0

    async def put(self, message: bytes, ended: asyncio.Event) -> None:
        """Queue ``message``, waiting while the stream is full (ChannelClosed if the
        channel ends meanwhile)."""
        queue = self.queue
        if queue.full():
            put = asyncio.ensure_future(queue.put(message))
            end = asyncio.ensure_future(ended.wait())
            try:
                await asyncio.wait((put, end), return_when=asyncio.FIRST_COMPLETED)
            finally:
                end.cancel()
                if not put.done():
                    put.cancel()
            if not put.done() or put.cancelled():
                raise ChannelClosed("the connection closed while a message waited")
        else:
            queue.put_nowait(message)
        self.high = max(self.high, queue.qsize())

    async def events(self, ended: asyncio.Event) -> AsyncIterator[dict[str, str]]:
        """The stream's messages as SSE events until the channel ended and the queue is
        empty."""
        queue = self.queue
        while True:
            if not queue.empty():
                message = queue.get_nowait()
            elif ended.is_set():
                return
            else:
                get = asyncio.ensure_future(queue.get())
                end = asyncio.ensure_future(ended.wait())
                try:
                    await asyncio.wait((get, end), return_when=asyncio.FIRST_COMPLETED)
                finally:
                    end.cancel()
                    if not get.done():
                        get.cancel()
                if not get.done() or get.cancelled():
                    continue
                message = get.result()
            yield {"data": message.decode("utf-8", "surrogatepass")}


class HttpChannel:
    """The server's side of one Streamable HTTP connection: what ``POST`` delivers is
    read by the connection (a bounded inbox: a ``POST`` waits while the connection is
    not reading); what the connection sends goes to its stream (:class:`OutStream`)."""

    def __init__(self, stream_queue: int) -> None:
        self.stream_queue = stream_queue
        self.inbox: asyncio.Queue[bytes] = asyncio.Queue(stream_queue)
        self.ended = asyncio.Event()
        #: None: the connection's stream; a session id: that session's
        self.streams: dict[str | None, OutStream] = {None: OutStream(stream_queue)}
        #: where the answer to each request received goes: _INIT, a session id or None
        self.origins: dict[tuple[str, Any], object] = {}
        self.initialized: asyncio.Future[bytes] = (
            asyncio.get_running_loop().create_future()
        )

    def stream(self, session: str | None) -> OutStream:
        found = self.streams.get(session)
        if found is None:
            found = self.streams[session] = OutStream(self.stream_queue)
        return found

    # -- the client's messages -------------------------------------------------------
    async def deliver(self, body: bytes) -> None:
        """Hand one message to the connection, waiting while its inbox is full."""
        if self.ended.is_set():
            raise Refused(404, "the connection is closed")
        if self.inbox.full():
            put = asyncio.ensure_future(self.inbox.put(body))
            end = asyncio.ensure_future(self.ended.wait())
            try:
                await asyncio.wait((put, end), return_when=asyncio.FIRST_COMPLETED)
            finally:
                end.cancel()
                if not put.done():
                    put.cancel()
            if not put.done() or put.cancelled():
                raise Refused(404, "the connection closed")
        else:
            self.inbox.put_nowait(body)

    def note(self, message: Any, session: str | None) -> None:
        """Remember where the answer to ``message`` (if a request) goes."""
        if isinstance(message, dict) and "method" in message and "id" in message:
            self.origins[_key(message["id"])] = session

    async def receive(self) -> bytes | None:
        inbox = self.inbox
        while True:
            if not inbox.empty():
                return inbox.get_nowait()
            if self.ended.is_set():
                return None
            get = asyncio.ensure_future(inbox.get())
            end = asyncio.ensure_future(self.ended.wait())
            try:
                await asyncio.wait((get, end), return_when=asyncio.FIRST_COMPLETED)
            finally:
                end.cancel()
                if not get.done():
                    get.cancel()
            if get.done() and not get.cancelled():
                return get.result()

    # -- the agent's messages --------------------------------------------------------
    async def send(self, message: bytes) -> None:
        if self.ended.is_set():
            raise ChannelClosed("the connection is closed")
        try:
            frame = json.loads(message)
        except ValueError:
            frame = None
        target: str | None = None
        if isinstance(frame, dict):
            if "method" in frame:
                target = _session_of(frame)
            elif "id" in frame:
                origin = self.origins.pop(_key(frame["id"]), None)
                if origin is _INIT:
                    if not self.initialized.done():
                        self.initialized.set_result(bytes(message))
                    return
                if isinstance(origin, str) and origin in self.streams:
                    target = origin
        await self.stream(target).put(bytes(message), self.ended)

    async def aclose(self) -> None:
        self.ended.set()
        if not self.initialized.done():
            self.initialized.set_exception(
                ChannelClosed("the connection closed before initialize was answered")
            )
            self.initialized.exception()  # retrieved: no warning when no one waits


def _session_of(frame: dict[str, Any]) -> str | None:
    params = frame.get("params")
    if isinstance(params, dict):
        value = params.get("sessionId")
        if isinstance(value, str):
            return value
    return None


def _headers(request: Any) -> dict[str, str]:
    return {k.lower(): v for k, v in request.headers.items()}


class HttpEndpoint:
    """The Streamable HTTP methods of an :class:`~._remote_server.AcpServer`'s endpoint
    (the module docstring says what each answers)."""

    def __init__(self, server: AcpServer) -> None:
        self.server = server
        self.options = server.options
        self._responses = need("starlette.responses", "server")
        self._sse = need("sse_starlette.sse", "server")
        self._tasks: set[asyncio.Task[Any]] = set()

    async def handle(self, request: Any) -> Any:
        method = request.method
        if method == "POST":
            return await self._post(request)
        if method == "GET":
            return await self._get(request)
        if method == "DELETE":
            return await self._delete(request)
        raise Refused(405, f"method {method} not allowed")

    # -- POST ------------------------------------------------------------------------
    async def _post(self, request: Any) -> Any:
        headers = _headers(request)
        principal = await self.server.admit(headers)
        kind = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if kind != "application/json" and not kind.endswith("+json"):
            raise Refused(415, "the body must be application/json")
        cid = headers.get(CONNECTION_ID)
        served = self.server.find(cid, principal) if cid else None
        body = await self._body(request, headers)
        if body.lstrip()[:1] == b"[":
            raise Refused(501, "JSON-RPC batches are not supported")
        try:
            frame: Any = json.loads(body)
        except ValueError:
            frame = None
        if served is None:
            return await self._initialize(principal, body, frame)
        channel: HttpChannel = served.state
        session = headers.get(SESSION_ID) or None
        named = _session_of(frame) if isinstance(frame, dict) else None
        if session is not None and named is not None and session != named:
            raise Refused(400, "Acp-Session-Id names another session than the params")
        channel.note(frame, session or named)
        await channel.deliver(body)
        served.touch()
        return self._responses.Response(status_code=202)

    async def _body(self, request: Any, headers: dict[str, str]) -> bytes:
        """The body, read up to the limit and no further (413)."""
        limit = self.options.max_body
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > limit:
            raise Refused(413, f"the body is over {limit} bytes")
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise Refused(413, f"the body is over {limit} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    async def _initialize(self, principal: str, body: bytes, frame: Any) -> Any:
        if not (
            isinstance(frame, dict)
            and frame.get("method") == "initialize"
            and "id" in frame
        ):
            raise Refused(
                400,
                "missing Acp-Connection-Id header (only initialize opens a connection)",
            )
        channel = HttpChannel(self.options.stream_queue)
        channel.origins[_key(frame["id"])] = _INIT
        served = self.server.open(channel, principal, "http")
        served.state = channel
        await channel.deliver(body)
        try:
            answer = await asyncio.wait_for(
                asyncio.shield(channel.initialized), self.options.init_timeout
            )
        except asyncio.TimeoutError:
            self._drop(
                served,
                f"initialize not answered within {self.options.init_timeout:g} s",
            )
            raise Refused(504, "the agent did not answer initialize in time") from None
        except ChannelClosed as exc:
            self._drop(served, str(exc))
            raise Refused(503, str(exc)) from None
        except asyncio.CancelledError:  # the client went away: no one knows the id
            self._drop(served, "the client left before initialize was answered")
            raise
        served.touch()
        return self._responses.Response(
            answer,
            status_code=200,
            media_type="application/json",
            headers={CONNECTION_ID: served.id},
        )

    def _drop(self, served: Served, reason: str) -> None:
        """Forget a connection now (later requests are 404) and close it meanwhile."""
        if self.server.connections.get(served.id) is served:
            del self.server.connections[served.id]
        task = asyncio.get_running_loop().create_task(served.conn.close(reason))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- GET -------------------------------------------------------------------------
    async def _get(self, request: Any) -> Any:
        headers = _headers(request)
        principal = await self.server.admit(headers)
        if "text/event-stream" not in headers.get("accept", ""):
            raise Refused(406, "GET needs Accept: text/event-stream")
        served = self.server.find(headers.get(CONNECTION_ID), principal)
        channel: HttpChannel = served.state
        session = headers.get(SESSION_ID) or None
        stream = channel.stream(session)
        if stream.subscribed:
            raise Refused(409, "this stream has a subscriber already")
        stream.subscribed = True
        served.streams += 1

        async def events() -> AsyncIterator[dict[str, str]]:
            try:
                async for event in stream.events(channel.ended):
                    yield event
            finally:
                stream.subscribed = False
                served.streams -= 1
                served.touch()

        reply_headers = {CONNECTION_ID: served.id}
        if session is not None:
            reply_headers[SESSION_ID] = session
        return self._sse.EventSourceResponse(
            events(), ping=self.options.keepalive, headers=reply_headers
        )

    # -- DELETE ----------------------------------------------------------------------
    async def _delete(self, request: Any) -> Any:
        headers = _headers(request)
        principal = await self.server.admit(headers)
        served = self.server.find(headers.get(CONNECTION_ID), principal)
        self._drop(served, "the client closed the connection (DELETE)")
        return self._responses.Response(status_code=202)


__all__ = ["HttpChannel", "HttpEndpoint", "OutStream"]
