"""ACP over Streamable HTTP, the client side (the transport RFD), as a
:class:`~._channel.Channel` under the one connection core (:func:`connect_http`). Its
requests go through ``aiohttp`` over HTTP/1.1 and libcurl (``curl_cffi``) over HTTP/2,
its events are decoded by ``httpx-sse`` (see :mod:`._http_wire`).

* The first message sent must be ``initialize`` (a request sent before it fails with an
  error and the connection stays; a notification closes it): its ``POST`` answers
  ``200`` with the response as the body and the connection's id in
  ``Acp-Connection-Id``; the client then opens the connection's event stream (``GET``)
  before anything else is sent. An ``initialize`` refused (any other status), or a
  missing id, closes the connection: ``initialize`` fails with ``ConnectionClosedError``
  whose reason is ``<url> refused the connection: HTTP 401: <the server's line>``, its
  cause a ``RefusedError`` with the status (as a refused WebSocket).
* Every other message is a ``POST`` naming the connection (and ``Acp-Session-Id`` when
  its params carry a ``sessionId``, or, for a response, when the request it answers came
  on a session's stream), one at a time and in order: the next waits for the ``202`` of
  the one before, which keeps the protocol's order. A caller cancelled meanwhile does not
  cut a ``POST`` in half: it completes, and the messages after it follow.
* Before a message about a session whose stream is not open is posted, that stream is
  opened (its ``200`` awaited); a result on the connection's stream that names a session
  (``session/new``, ``load``, ``resume``, ``fork``) opens that session's stream at once.
* What every stream brings is read into one bounded queue (``max_queued`` messages): a
  stream's reader waits while it is full, so a slow handler slows the server's sends
  and nothing is dropped.

Failures (read as the TypeScript SDK's client reads them): a transport error, a
``POST`` answered ``401``, ``403``, ``404`` or ``410`` (the connection is unusable or
gone), or the connection's event stream ending or failing closes the connection with
that reason (requests in flight fail with ``ConnectionClosedError``). A ``POST`` of a
request answered with another status (``413`` for a body over the server's limit, say)
fails that request only: it gets an error response (-32603, the status and the server's
line in its message, ``{"status", "body"}`` as its data). A notification or a response
refused closes the connection (its loss would leave the peers out of step). A session's
stream ending or failing is not a close: it is opened again (an answer about the
session may wait on it), at once, then after a pause that doubles up to ``REOPEN_MAX``
s while it keeps ending without an event; refused with a status saying the connection is
gone, it closes the connection.

:meth:`HttpClientChannel.aclose` sends ``DELETE`` (best effort, 2 s at most), ends the
streams and closes the clients. Cookies the server sets are kept for the connection's
requests (and streams) and shown in ``conn.remote.cookies``; ``headers`` go on every
request.

``http2`` speaks HTTP/2 (with prior knowledge on ``http://``: the server must speak it,
as Hypercorn does; ALPN on ``https://``). The requests and streams then share one HTTP/2
connection (see :mod:`._http_wire`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any, Callable, Final, Mapping

from ._channel import ChannelClosed, Mailbox
from ._http_wire import AiohttpWire, Wire, cookie_header, take_cookies
from ._remote import (
    CONNECTION_ID,
    SESSION_ID,
    STREAM_QUEUE,
    RefusedError,
    id_key,
    need,
    session_of,
)

if TYPE_CHECKING:
    from ._connection import Connection
    from ._jsonrpc import Rpc
    from ._remote_client import RemoteInfo

log = logging.getLogger(__name__)

#: the error code of the answer made here for a request the server refused
REFUSED_CODE: Final = -32603
#: statuses meaning the connection is unusable or gone (as the TypeScript SDK reads them)
GONE: Final = frozenset({401, 403, 404, 410})
#: characters of a refusal's body kept in the error's data
BODY_KEPT: Final = 8192
#: seconds a POST's answer may take (the server's ``initialize`` timeout is 30 s; a POST
#: waits while the server's inbox for the connection is full)
POST_TIMEOUT: Final = 60.0
#: seconds an event stream may bring nothing (every SDK's server sends a keepalive
#: comment every 15 s) before it is taken as broken
STREAM_TIMEOUT: Final = 60.0
#: seconds ``aclose`` gives the ``DELETE``
DELETE_TIMEOUT: Final = 2.0
#: seconds before a session's stream that keeps ending is opened again (the second
#: time; then twice as long each time, up to REOPEN_MAX)
REOPEN_FIRST: Final = 0.1
REOPEN_MAX: Final = 5.0


def _line(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first[:200]


class _Refused(Exception):
    """A status other than the one expected (0: a message refused before it is
    sent): the first line of the body says why."""

    def __init__(self, status: int, body: str = "") -> None:
        line = _line(body)
        said = [f"HTTP {status}"] if status else []  # 0: refused here, not by HTTP
        super().__init__(": ".join(said + [line] if line else said))
        self.status = status
        self.line = line
        self.body = body[:BODY_KEPT]


class HttpClientChannel:
    """A Streamable HTTP connection to ``url``, its requests sent through ``wire``."""

    def __init__(
        self,
        wire: Wire,
        url: str,
        info: RemoteInfo,
        max_queued: int = STREAM_QUEUE,
    ) -> None:
        self.wire = wire
        self.url = url
        self.info = info
        self.max_queued = max_queued
        self.cid: str | None = None
        #: the messages read, in the order read (the bound applies to the streams')
        self._box = Mailbox(max_queued)
        self._ended = False
        self._reason: str | None = None
        self._closing = False
        self._post_lock = asyncio.Lock()
        #: the event streams: None is the connection's, else a session id
        self._opened: dict[str | None, asyncio.Future[None]] = {}
        self._readers: dict[str | None, asyncio.Task[None]] = {}
        #: the ids of the server's requests that came on a session's stream
        self._asked: dict[tuple[str, Any], str] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        #: how many times each session's stream was opened again since it last carried
        self._retries: dict[str, int] = {}

    # -- receiving -------------------------------------------------------------------
    @property
    def high(self) -> int:
        """The most messages ever queued."""
        return self._box.high

    async def receive(self) -> bytes | None:
        data = await self._box.get()
        if data is None and self._reason is not None:
            raise ChannelClosed(self._reason)
        return data

    async def _push(self, data: bytes) -> None:
        """Queue a message read from a stream, waiting while the queue is full."""
        await self._box.put(data)

    def _push_now(self, data: bytes) -> None:
        self._box.force(data)

    def _end(self, reason: str | None) -> None:
        """No more messages: ``receive`` returns what is queued, then ``None`` (reason
        None) or raises ChannelClosed(reason). The first call's reason stands."""
        if self._ended:
            return
        self._ended = True
        self._reason = reason
        self._box.close()

    # -- sending ---------------------------------------------------------------------
    async def send(self, message: bytes) -> None:
        if self._ended:
            raise ChannelClosed(self._reason or "the connection is closed")
        task = asyncio.get_running_loop().create_task(self._send(bytes(message)))
        task.add_done_callback(_retrieve)
        await asyncio.shield(task)  # a cancelled caller leaves the POST whole

    async def _send(self, message: bytes) -> None:
        async with self._post_lock:
            if self._ended:
                raise ChannelClosed(self._reason or "the connection is closed")
            try:
                frame: Any = json.loads(message)
            except ValueError:
                frame = None
            if self.cid is None:
                await self._initialize(message, frame)
                return
            session: str | None = None
            if isinstance(frame, dict):
                if "method" in frame:
                    session = session_of(frame)
                elif "id" in frame:
                    session = self._asked.pop(id_key(frame["id"]), None)
            headers = {CONNECTION_ID: self.cid, "content-type": "application/json"}
            try:
                if session is not None:
                    await self._open(session)
                    headers[SESSION_ID] = session
                answer = await self.wire.post(self.url, message, self._headers(headers))
                self._take_cookies(answer.set_cookies)
                if answer.status not in (200, 202):
                    raise _Refused(answer.status, answer.text)
            except _Refused as refused:
                self._refused(frame, refused)
            except ChannelClosed:
                raise  # the connection closes with this reason
            except self.wire.failures as exc:
                reason = f"posting to {self.url} failed: {exc!r}"
                raise ChannelClosed(reason) from exc

    def _refused(self, frame: Any, refused: _Refused) -> None:
        """A message the server refused: a request gets an error answer (its data:
        the status and the body); a notification or a response (whose loss would
        leave the peers out of step), or a status saying the connection is unusable,
        closes the connection (ChannelClosed)."""
        request = isinstance(frame, dict) and "method" in frame and "id" in frame
        if refused.status in GONE or not request:
            what = "a message"
            if isinstance(frame, dict):
                what = frame.get("method", "a response")
            raise ChannelClosed(f"the server refused {what}: {refused}")
        error = {
            "jsonrpc": "2.0",
            "id": frame["id"],
            "error": {
                "code": REFUSED_CODE,
                "message": f"the server refused the request: {refused}",
                "data": {"status": refused.status, "body": refused.body},
            },
        }
        self._push_now(json.dumps(error).encode())

    async def _initialize(self, message: bytes, frame: Any) -> None:
        if not (
            isinstance(frame, dict)
            and frame.get("method") == "initialize"
            and "id" in frame
        ):
            why = "the first message must be the initialize request"
            self._refused(frame, _Refused(0, why))
            return
        try:
            response = await self.wire.post(
                self.url,
                message,
                self._headers(
                    {"content-type": "application/json", "accept": "application/json"}
                ),
            )
            self._take_cookies(response.set_cookies)
            if response.status != 200:
                raise _Refused(response.status, response.text)
            cid = response.headers.get(CONNECTION_ID)
            if not cid:
                raise _Refused(
                    200, "no Acp-Connection-Id header in the answer to initialize"
                )
            self.cid = self.info.connection_id = cid
            try:
                await self._open(None)
            except _Refused as exc:
                raise ChannelClosed(f"the connection's event stream was refused: {exc}")
        except _Refused as exc:  # the connection closes with the server's refusal
            raise RefusedError(self.url, exc.status, exc.line) from exc
        except self.wire.failures as exc:
            reason = f"initialize failed: {exc!r}"
        else:
            self._push_now(response.body)
            return
        raise ChannelClosed(reason)  # the connection closes with this reason

    def _headers(self, headers: dict[str, str]) -> dict[str, str]:
        """A request's headers: the connection's own (given at connect), then
        ``headers``, then the cookies kept."""
        out = {**self.info.headers, **headers}
        if self.info.cookies:
            out["cookie"] = cookie_header(self.info.cookies)
        return out

    def _take_cookies(self, set_cookies: tuple[str, ...]) -> None:
        # a cookie given at connect (a previous connection's, to be sticky) is replaced
        # by the one of that name the server sets: a balancer reads only one
        if set_cookies:
            take_cookies(self.info.cookies, self.url, set_cookies)

    # -- event streams ---------------------------------------------------------------
    async def _open(self, session: str | None) -> None:
        """Open the stream (None: the connection's, else a session's) unless open or
        opening; wait for its ``200`` (_Refused, ChannelClosed)."""
        opened = self._opened.get(session)
        reader = self._readers.get(session)
        if (
            opened is None
            or reader is None
            or reader.done()
            or (opened.done() and opened.exception() is not None)
        ):
            opened = asyncio.get_running_loop().create_future()
            self._opened[session] = opened
            reader = asyncio.get_running_loop().create_task(self._read(session, opened))
            self._readers[session] = reader
        await asyncio.shield(opened)

    async def _read(self, session: str | None, opened: asyncio.Future[None]) -> None:
        assert self.cid is not None
        headers = {CONNECTION_ID: self.cid, "accept": "text/event-stream"}
        if session is not None:
            headers[SESSION_ID] = session
        headers = self._headers(headers)
        where = (
            "the connection's event stream"
            if session is None
            else f"session {session}'s event stream"
        )
        try:
            async with self.wire.stream(self.url, headers, session) as stream:
                answer = stream.answer
                self._take_cookies(answer.set_cookies)
                if answer.status != 200:
                    raise _Refused(answer.status, answer.text)
                opened.set_result(None)
                async for event in stream.events:
                    data = event.encode("utf-8", "surrogatepass")
                    self._look(data, session)
                    await self._push(data)
                    if session is not None:  # it carries: a break starts over
                        self._retries.pop(session, None)
                    if self._ended:
                        return
            if session is None:
                self._end(f"the server ended {where}")
            else:
                self._reopen(session)
        except asyncio.CancelledError:
            if not opened.done():
                opened.set_exception(ChannelClosed(f"{where} was closed"))
                opened.exception()
            raise
        except Exception as exc:  # noqa: BLE001 - the stream failed: said, not raised
            failure: Exception = exc
            if not isinstance(exc, (_Refused, ChannelClosed)):
                failure = ChannelClosed(f"{where} failed: {exc!r}")
            was_open = opened.done()
            if not was_open:  # whoever opens it is told (retrieved here too)
                opened.set_exception(failure)
                opened.exception()
            elif session is None:
                self._end(f"{where} failed: {exc}")
            if session is not None and not self._closing and not self._ended:
                log.warning("%s failed: %s", where, exc)
                if was_open:
                    self._reopen(session)

    def _reopen(self, session: str) -> None:
        """A session's stream ended while the connection goes on: open it again, since
        the answer to a request about the session (a prompt's) may be waiting on it and
        nothing else may come to open it. At once the first time, then after a pause
        that doubles (up to REOPEN_MAX s) while it keeps ending without an event; a
        refusal saying the connection is gone closes the connection."""
        if self._ended or self._closing:
            return
        tries = self._retries.get(session, 0)
        self._retries[session] = tries + 1
        delay = 0.0 if tries == 0 else min(REOPEN_FIRST * 2 ** (tries - 1), REOPEN_MAX)

        async def again() -> None:
            await asyncio.sleep(delay)
            try:
                await self._open(session)
            except _Refused as refused:
                if refused.status in GONE:
                    self._end(
                        f"session {session}'s event stream was refused: {refused}"
                    )
                else:
                    self._reopen(session)
            except ChannelClosed:
                self._reopen(session)  # (nothing when the connection is closing)

        task = asyncio.get_running_loop().create_task(again())
        task.add_done_callback(_retrieve)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _look(self, data: bytes, session: str | None) -> None:
        """Note a request of the server's that came on a session's stream (its answer
        names that session), and open the stream of a session a result names."""
        if b'"id"' not in data:
            return  # a notification (most of a turn): nothing to note, no parse
        if session is None and b'"sessionId"' not in data:
            return  # names no session
        try:
            frame = json.loads(data)
        except ValueError:
            return
        if not isinstance(frame, dict):
            return
        if "method" in frame:
            if session is not None and "id" in frame:
                self._asked[id_key(frame["id"])] = session
            return
        result = frame.get("result")
        if isinstance(result, dict):
            named = result.get("sessionId")
            if (
                isinstance(named, str)
                and named not in self._readers
                and not self._ended
            ):
                task = asyncio.get_running_loop().create_task(self._open(named))
                task.add_done_callback(_retrieve)
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    # -- closing ---------------------------------------------------------------------
    async def aclose(self) -> None:
        """DELETE the connection (best effort, DELETE_TIMEOUT s at most), end the
        streams, close the client (also when this is cancelled meanwhile)."""
        if self._closing:
            return
        self._closing = True
        self._end(None)
        failures: tuple[type[BaseException], ...] = (
            asyncio.TimeoutError,
            *self.wire.failures,
        )
        try:
            if self.cid is not None:
                headers = self._headers({CONNECTION_ID: self.cid})
                delete = self.wire.delete(self.url, headers)
                await asyncio.wait_for(delete, DELETE_TIMEOUT)
        except failures:
            pass
        finally:
            tasks = [*self._readers.values(), *self._tasks]
            for task in tasks:
                task.cancel()
            if tasks:
                await asyncio.wait(tasks, timeout=1.0)
            await self.wire.aclose()


def _retrieve(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()


async def connect_http(
    rpc: Rpc,
    url: str,
    *,
    side: str = "client",
    headers: Mapping[str, str] | None = None,
    cookies: Mapping[str, str] | None = None,
    http2: bool = False,
    open_timeout: float = 10.0,
    post_timeout: float = POST_TIMEOUT,
    stream_timeout: float | None = STREAM_TIMEOUT,
    max_queued: int = STREAM_QUEUE,
    **options: Any,
) -> Connection:
    """A connection over Streamable HTTP to the endpoint ``url`` (``http://`` or
    ``https://``, the path included: ``.../acp``). ``headers`` and ``cookies`` go with
    every request; ``http2`` speaks HTTP/2 (prior knowledge on ``http://``, ALPN on
    ``https://``); ``open_timeout`` bounds connecting and sending (never reading: the
    streams are long-lived); ``post_timeout`` bounds the wait for a ``POST``'s answer
    (past it the connection closes: a server that takes a message and never answers does
    not hold every later one); ``stream_timeout`` bounds the wait for an event stream's
    next bytes, a keepalive comment included (past it the stream is broken: the
    connection's closes the connection, a session's is opened again; the time spent
    waiting for a full queue to drain does not count; ``None``: no bound);
    ``max_queued`` bounds the messages read and not yet taken.
    Nothing is sent until the first request, which must be ``initialize``;
    ``conn.remote`` (a :class:`~._remote_client.RemoteInfo`) has the connection's id once
    it is answered, and the cookies the server set."""
    part = "http2-client" if http2 else "http"
    need("httpx_sse", part)
    need("curl_cffi" if http2 else "aiohttp", part)
    from ._transports import check_options
    from ._remote_client import RemoteInfo

    check_options(options)
    if max_queued < 1 or post_timeout <= 0:
        raise ValueError("max_queued must be >= 1 and post_timeout > 0")
    if stream_timeout is not None and stream_timeout <= 0:
        raise ValueError("stream_timeout must be > 0 (or None)")
    info = RemoteInfo(url, "", dict(headers or {}), dict(cookies or {}))
    wire: Wire
    if http2:
        from ._curl_wire import CurlWire

        secure = url.lower().startswith("https:")
        wire = CurlWire(open_timeout, post_timeout, secure, stream_timeout)
    else:
        wire = AiohttpWire(open_timeout, post_timeout, stream_timeout)
    channel = HttpClientChannel(wire, url, info, max_queued)
    try:
        conn = rpc.over(side, channel, **options)
    except BaseException:
        await wire.aclose()
        raise
    conn.remote = info
    return conn


__all__ = ["HttpClientChannel", "REFUSED_CODE", "connect_http"]
