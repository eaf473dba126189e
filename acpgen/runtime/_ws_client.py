"""ACP over WebSocket, the client side (the transport RFD), on ``aiohttp``: one JSON-RPC
message per text frame, binary frames ignored (and logged), the connection's id read from
the ``Acp-Connection-Id`` header of the ``101``. The messages go through a
:class:`~._channel.Channel` into the one connection core.

aiohttp's WebSocket client parses and masks frames in compiled code: a round trip costs
the client about half the CPU it costs through ``websockets`` against the same server.

* A handshake refused (any status but ``101``) raises :class:`~._remote.RefusedError`
  with the status and the first line of the server's answer.
* A message over ``max_size`` closes the socket with 1009; a ping goes to a server not
  heard from for ``heartbeat`` s, and one that does not answer it within half that
  closes the connection (a server gone silently is noticed); the server's pings are
  answered.
* A close with code 1000 or 1001 ends the connection quietly (``receive`` gives None);
  any other close, or a lost connection, closes it with the code and the reason.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Mapping

from ._channel import ChannelClosed
from ._remote import (
    CONNECTION_ID,
    MAX_BODY,
    RefusedError,
    need,
    sized_socket,
    ws_closed,
)

if TYPE_CHECKING:
    from ._connection import Connection
    from ._jsonrpc import Rpc

log = logging.getLogger(__name__)

#: seconds between the client's pings (a pong is awaited half as long)
HEARTBEAT = 20.0
#: close codes that end a connection normally
_NORMAL = frozenset({1000, 1001})


class ClientWebSocketChannel:
    """An aiohttp WebSocket (``ws``, of ``session``) as a channel. With ``heartbeat`` (s)
    it pings a server it has not heard from for that long, and closes the connection
    when the answer (or anything else) has not come half as long later while it was
    waiting to read. (aiohttp's own heartbeat resets a timer for every frame received,
    costing a callback on the way of each message; this one counts frames.)"""

    def __init__(self, ws: Any, session: Any, heartbeat: float | None = None) -> None:
        self.ws = ws
        self.session = session
        self._aiohttp = need("aiohttp", "ws")
        #: frames received (pongs included): what the heartbeat watches
        self._heard = 0
        #: a reader is waiting for a frame (so none is held unread)
        self._waiting = False
        #: why the connection was given up (no answer to a ping), once it was
        self._lost: str | None = None
        self._beats: list[asyncio.TimerHandle | asyncio.Task[Any]] = []
        self._heartbeat = heartbeat
        if heartbeat:
            self._later(heartbeat, self._beat, -1)

    def _later(self, seconds: float, call: Any, seen: int) -> None:
        self._beats[:] = [asyncio.get_running_loop().call_later(seconds, call, seen)]

    def _beat(self, seen: int) -> None:
        """Every ``heartbeat`` s: a server heard from since the last beat is alive;
        else ping it, and look again half a beat later."""
        assert self._heartbeat is not None
        if self.ws.closed:
            return
        if self._heard != seen:
            self._later(self._heartbeat, self._beat, self._heard)
            return
        self._later(self._heartbeat / 2, self._answered, self._heard)
        self._beats.append(asyncio.get_running_loop().create_task(self._ping()))

    async def _ping(self) -> None:
        try:
            await self.ws.ping()
        except Exception:  # noqa: BLE001 - closing: the reader says why
            pass

    def _answered(self, seen: int) -> None:
        """Half a beat after a ping: nothing came while the reader waited for a frame
        (nothing is held unread then): the server is gone. Else beat on."""
        assert self._heartbeat is not None
        if self.ws.closed:
            return
        if self._heard == seen and self._waiting:
            self._lost = f"no answer to a ping within {self._heartbeat / 2:g} s"
            self._beats[:] = [
                asyncio.get_running_loop().create_task(self.session.close())
            ]
            return
        self._later(self._heartbeat / 2, self._beat, self._heard)

    async def receive(self) -> bytes | None:
        kinds = self._aiohttp.WSMsgType
        ws = self.ws
        while True:
            self._waiting = True
            try:
                message = await ws.receive()
            finally:
                self._waiting = False
            self._heard += 1
            kind = message.type
            if kind is kinds.TEXT:
                text: str = message.data
                return text.encode("utf-8", "surrogatepass")
            if kind is kinds.PING:
                await ws.pong(message.data)
                continue
            if kind is kinds.PONG:
                continue
            if kind is kinds.BINARY:
                log.info("a binary WebSocket frame ignored (ACP is in text frames)")
                continue
            if self._lost is not None:
                raise ws_closed(1006, self._lost)
            if kind is kinds.ERROR:
                code = ws.close_code or 1006
                raise ws_closed(code, f"{message.data}")
            # CLOSE (its code in data, its reason in extra), CLOSING or CLOSED
            code = ws.close_code
            if kind is kinds.CLOSE:
                code = message.data if isinstance(message.data, int) else code
            if code in _NORMAL:
                return None
            reason = message.extra if kind is kinds.CLOSE else ""
            raise ws_closed(code or 1006, reason or "the connection was lost")

    async def send(self, message: bytes) -> None:
        if self.ws.closed:
            raise ChannelClosed(f"the WebSocket is closed (code {self.ws.close_code})")
        try:
            await self.ws.send_frame(message, self._aiohttp.WSMsgType.TEXT)
        except (ConnectionError, self._aiohttp.ClientError) as exc:
            raise ChannelClosed(f"the WebSocket is closed: {exc}") from exc

    async def aclose(self) -> None:
        for beat in self._beats:
            beat.cancel()
        try:
            await self.ws.close()
        except Exception:  # noqa: BLE001 - already gone
            pass
        finally:
            await self.session.close()


async def connect_websocket(
    rpc: Rpc,
    url: str,
    *,
    side: str = "client",
    headers: Mapping[str, str] | None = None,
    cookies: Mapping[str, str] | None = None,
    open_timeout: float = 10.0,
    max_size: int = MAX_BODY,
    heartbeat: float | None = HEARTBEAT,
    **options: Any,
) -> Connection:
    """A connection over a WebSocket to ``url`` (``ws://`` or ``wss://``);
    ``conn.remote`` (a :class:`~._remote_client.RemoteInfo`) has the handshake's
    ``Acp-Connection-Id`` and the cookies it set. ``open_timeout`` bounds the handshake,
    ``max_size`` a message read, ``heartbeat`` the seconds between pings (None: no
    pings)."""
    aiohttp = need("aiohttp", "ws")
    from ._http_wire import cookie_header, take_cookies
    from ._transports import check_options
    from ._remote_client import RemoteInfo

    check_options(options)
    sent = dict(headers or {})
    jar = dict(cookies or {})
    if jar:
        sent["Cookie"] = cookie_header(jar)
    handshake: list[tuple[int, Any, bytes]] = []

    async def note(request: Any, handler: Any) -> Any:
        # the handshake's answer as it came: its headers, and the body of a refusal
        # (aiohttp raises on a status other than 101 without reading it)
        response = await handler(request)
        body = b"" if response.status == 101 else await response.read()
        handshake.append((response.status, response.headers, body))
        return response

    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(socket_factory=sized_socket),
        cookie_jar=aiohttp.DummyCookieJar(),  # cookies: given and read here
        timeout=aiohttp.ClientTimeout(total=None, sock_connect=open_timeout),
        middlewares=(note,),
    )
    try:
        ws = await asyncio.wait_for(
            session.ws_connect(
                url,
                headers=sent,
                max_msg_size=max_size,
                heartbeat=None,  # the channel's own (see ClientWebSocketChannel)
                autoping=False,
                compress=0,
                proxy=None,
            ),
            open_timeout,
        )
    except aiohttp.WSServerHandshakeError as exc:
        await session.close()
        status, _, body = handshake[-1] if handshake else (exc.status, None, b"")
        lines = body.decode("utf-8", "replace").strip().splitlines()[:1]
        raise RefusedError(url, status, "".join(lines)) from exc
    except BaseException:
        await session.close()
        raise
    channel = ClientWebSocketChannel(ws, session, heartbeat)
    try:
        conn = rpc.over(side, channel, **options)
    except BaseException:
        await channel.aclose()
        raise
    answer: Any = handshake[-1][1] if handshake else None
    cid = ""
    if answer is not None:
        take_cookies(jar, url, answer.getall("set-cookie", ()))
        cid = answer.get(CONNECTION_ID, "")
    info = RemoteInfo(url, cid, dict(headers or {}), jar)
    conn.remote = info
    return conn


__all__ = ["ClientWebSocketChannel", "HEARTBEAT", "connect_websocket"]
