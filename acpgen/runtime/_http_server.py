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
  time (a second is ``409``). A connection holds at most ``max_streams`` streams (its
  own and its sessions'): a ``GET`` for one more session is ``429``; the stream of a
  session that the connection has not heard of (no message named it) is forgotten when
  its subscriber leaves with nothing held. Each stream holds at most ``stream_queue`` messages, also
  while no one listens (a late subscriber gets them): beyond that the agent's sends wait,
  nothing is dropped. Idle streams carry a keepalive comment every ``keepalive`` s. A
  message being written as its subscriber goes away is lost (the RFD's first version
  replays nothing).
* ``DELETE /acp`` with ``Acp-Connection-Id`` closes the connection (``202``); its streams
  end, later requests naming it are ``404``.

Where the agent's messages go: a response to the stream its request came from (the
``initialize`` response into the ``POST``'s body; the session's stream when the request
carried ``Acp-Session-Id`` or a ``sessionId`` in its params; else the connection's
stream); a request or notification with a ``sessionId`` in its params to that session's
stream; anything else to the connection's stream. A session has a stream once the client
listens for it: it opened the stream, or was given the session in a result on the
connection's stream (``session/new``, ``fork``...: a client opens its stream then, and
what the agent sends meanwhile is held for it, in order). Until then, what is about the
session goes on the connection's stream: a client that posts about a session without
listening for it (the Python SDK's after ``session/load``) still hears it.

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

from ._channel import ChannelClosed, Mailbox
from ._remote import CONNECTION_ID, SESSION_ID, Refused, id_key, need, session_of

if TYPE_CHECKING:
    from ._remote_server import AcpServer, Served

log = logging.getLogger(__name__)

#: where a response goes: the initialize POST's body
_INIT = object()


class OutStream:
    """One outgoing event stream (the connection's, or a session's): a bounded
    :class:`Mailbox` of messages, held until a subscriber takes them."""

    def __init__(self, size: int, known: bool = True) -> None:
        self.box = Mailbox(size)
        self.subscribed = False
        #: whether a message named its session (else it is only a client's GET)
        self.known = known

    @property
    def high(self) -> int:
        """The most messages ever held."""
        return self.box.high

    async def put(self, message: bytes) -> None:
        """Queue ``message``, waiting while the stream is full (ChannelClosed if the
        channel ends meanwhile)."""
        if not await self.box.put(message):
            raise ChannelClosed("the connection closed while a message waited")

    async def events(self) -> AsyncIterator[dict[str, str]]:
        """The stream's messages as SSE events until the channel ended and the queue is
        empty."""
        get = self.box.get
        while True:
            message = await get()
            if message is None:
                return
            yield {"data": message.decode("utf-8", "surrogatepass")}


class HttpChannel:
    """The server's side of one Streamable HTTP connection: what ``POST`` delivers is
    read by the connection (a bounded inbox: a ``POST`` waits while the connection is
    not reading); what the connection sends goes to its stream (:class:`OutStream`)."""

    def __init__(self, stream_queue: int) -> None:
        self.stream_queue = stream_queue
        self.inbox = Mailbox(stream_queue)
        self.ended = asyncio.Event()
        #: None: the connection's stream; a session id: that session's
        self.streams: dict[str | None, OutStream] = {None: OutStream(stream_queue)}
        #: where the answer to each request received goes: _INIT, a session id or None
        self.origins: dict[tuple[str, Any], object] = {}
        self.initialized: asyncio.Future[bytes] = (
            asyncio.get_running_loop().create_future()
        )

    def stream(self, session: str | None, known: bool = True) -> OutStream:
        """The stream of ``session`` (None: the connection's), made if need be;
        ``known``: a message named the session (see :meth:`forget`)."""
        found = self.streams.get(session)
        if found is None:
            found = self.streams[session] = OutStream(self.stream_queue, known)
            if self.ended.is_set():
                found.box.close()
        elif known:
            found.known = True
        return found

    def forget(self, session: str | None) -> None:
        """Drop the stream of a session no message named, once no one listens and it
        holds nothing (a client opening streams for made-up sessions holds nothing)."""
        found = self.streams.get(session)
        if (
            session is not None
            and found is not None
            and not found.known
            and not found.subscribed
            and not found.box.items
        ):
            del self.streams[session]

    # -- the client's messages -------------------------------------------------------
    async def deliver(self, body: bytes) -> None:
        """Hand one message to the connection, waiting while its inbox is full."""
        if self.ended.is_set():
            raise Refused(404, "the connection is closed")
        if not await self.inbox.put(body):
            raise Refused(404, "the connection closed")

    def note(self, message: Any, session: str | None) -> None:
        """Remember where the answer to ``message`` (if a request) goes."""
        if session is not None and session in self.streams:
            self.streams[session].known = True
        if isinstance(message, dict) and "method" in message and "id" in message:
            self.origins[id_key(message["id"])] = session

    async def receive(self) -> bytes | None:
        return await self.inbox.get()

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
                target = session_of(frame)
            elif "id" in frame:
                target = self._answered(frame, bytes(message))
                if target is _INIT:
                    return
        stream = self.streams.get(target)
        if stream is None:  # a session the client cannot know of
            stream = self.streams[None]
        else:
            stream.known = True
        await stream.put(bytes(message))

    def _answered(self, frame: dict[str, Any], message: bytes) -> Any:
        """Where the answer ``frame`` goes (_INIT: it is the initialize POST's body, given
        to it here); a session named by a result (``session/new``, ``fork``...) gets its
        stream now, holding what the agent sends about it until the client listens."""
        origin = self.origins.pop(id_key(frame["id"]), None)
        if origin is _INIT:
            if not self.initialized.done():
                self.initialized.set_result(message)
            return _INIT
        result = frame.get("result")
        if isinstance(result, dict) and isinstance(result.get("sessionId"), str):
            self.stream(result["sessionId"])
        return origin

    def end(self) -> None:
        """No more messages either way: every stream ends once what it holds is sent."""
        self.ended.set()
        self.inbox.close()
        for stream in self.streams.values():
            stream.box.close()

    async def aclose(self) -> None:
        self.end()
        if not self.initialized.done():
            self.initialized.set_exception(
                ChannelClosed("the connection closed before initialize was answered")
            )
            self.initialized.exception()  # retrieved: no warning when no one waits


class _Subscription:
    """An SSE response that gives its stream up when it ends, however it ends (the
    client went away before the first event, say)."""

    def __init__(
        self, response: Any, stream: OutStream, served: Served, session: str | None
    ) -> None:
        self.response = response
        self.stream = stream
        self.served = served
        self.session = session

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await self.response(scope, receive, send)
        finally:
            self.stream.subscribed = False
            self.served.streams -= 1
            self.served.touch()
            channel: HttpChannel = self.served.state
            channel.forget(self.session)


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
        named = session_of(frame) if isinstance(frame, dict) else None
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
        channel.origins[id_key(frame["id"])] = _INIT
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

    def _drop(self, served: Served, reason: str, forget: bool = True) -> None:
        """Close a connection in the background; ``forget``: take it out of the registry
        now (a connection whose id no one was given), else once it is closed."""
        if forget and self.server.connections.get(served.id) is served:
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
        limit = self.options.max_streams
        if session not in channel.streams and len(channel.streams) >= limit:
            raise Refused(429, f"the connection has {limit} event streams (the limit)")
        stream = channel.stream(session, known=False)
        if stream.subscribed:
            raise Refused(409, "this stream has a subscriber already")
        stream.subscribed = True
        served.streams += 1
        reply_headers = {CONNECTION_ID: served.id}
        if session is not None:
            reply_headers[SESSION_ID] = session
        response = self._sse.EventSourceResponse(
            stream.events(),
            ping=self.options.keepalive,
            headers=reply_headers,
        )
        return _Subscription(response, stream, served, session)

    # -- DELETE ----------------------------------------------------------------------
    async def _delete(self, request: Any) -> Any:
        headers = _headers(request)
        principal = await self.server.admit(headers)
        served = self.server.find(headers.get(CONNECTION_ID), principal)
        self._drop(served, "the client closed the connection (DELETE)", forget=False)
        await asyncio.sleep(0)  # the close has begun: requests naming it are 404 now
        return self._responses.Response(status_code=202)


__all__ = ["HttpChannel", "HttpEndpoint", "OutStream"]
