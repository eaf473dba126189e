"""ACP over WebSocket (the transport RFD), the server side: one JSON-RPC message per text
frame, binary frames ignored, the connection's id in the ``Acp-Connection-Id`` header of
the ``101``. It runs in :class:`~._remote_server.AcpServer` (Starlette's WebSocket); the
client side is :mod:`._ws_client`. Either way the messages go through a
:class:`~._channel.Channel` into the one connection core.

A message over the limit closes the socket with code 1009 (the library enforces it
before the message is held whole); a malformed message is answered as on stdio (a parse
error with id null) and the connection goes on.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ._channel import ChannelClosed
from ._remote import CONNECTION_ID, MAX_BODY, Refused, need, new_id, ws_closed

if TYPE_CHECKING:
    from ._remote_server import AcpServer

log = logging.getLogger(__name__)


class ServerWebSocketChannel:
    """A WebSocket, accepted, as a channel: the messages go straight through the ASGI
    ``receive`` and ``send`` (the Starlette ``websocket`` over them did the handshake,
    and closes it)."""

    def __init__(self, websocket: Any, max_size: int, receive: Any, send: Any) -> None:
        self.websocket = websocket
        self.max_size = max_size
        self._closed = False
        self._receive = receive
        self._send = send

    async def receive(self) -> bytes | None:
        while True:
            message = await self._receive()
            kind = message["type"]
            if kind == "websocket.disconnect":
                self._closed = True
                code = message.get("code", 1000)
                if code in (1000, 1001, 1005):
                    return None
                raise ws_closed(code, message.get("reason"))
            if kind != "websocket.receive":
                raise ChannelClosed(f"an unexpected ASGI message: {kind!r}")
            text = message.get("text")
            if text is None:
                log.info("a binary WebSocket frame ignored (ACP is in text frames)")
                continue
            data: bytes = str(text).encode("utf-8", "surrogatepass")
            if len(data) > self.max_size:
                await self._close(1009, "message too big")
                raise ws_closed(1009, f"a message of {len(data)} bytes, over the limit")
            return data

    async def send(self, message: bytes) -> None:
        if self._closed:
            raise ChannelClosed("the WebSocket is closed")
        try:
            await self._send({"type": "websocket.send", "text": message.decode()})
        except Exception as exc:  # noqa: BLE001 - the server's own error types vary
            self._closed = True
            raise ChannelClosed(f"sending on the WebSocket failed: {exc!r}") from exc

    async def _close(self, code: int, reason: str = "") -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await self.websocket.close(code, reason)
        except Exception:  # noqa: BLE001 - already gone
            pass

    async def aclose(self) -> None:
        await self._close(1000)


async def serve_websocket(
    server: AcpServer, scope: Any, receive: Any, send: Any
) -> None:
    """The ASGI app of the endpoint's WebSocket: admit it (Host, Origin, the
    authentication hook: refused with its HTTP status where the server allows, else
    closed with 1008), accept it with its connection id, and serve a connection over it
    until it closes."""
    websocket = need("starlette.websockets", "server").WebSocket(scope, receive, send)
    headers = {k.lower(): v for k, v in websocket.headers.items()}
    try:
        principal = await server.admit(headers)
    except Refused as refused:
        await _deny(websocket, refused)
        return
    cid = new_id()
    await websocket.accept(headers=[(CONNECTION_ID.encode(), cid.encode())])
    channel = ServerWebSocketChannel(websocket, server.options.max_body, receive, send)
    served = server.open(channel, principal, "ws", cid)
    served.streams += 1
    try:
        await served.conn.wait_closed()
    finally:
        served.streams -= 1


class WebSocketApp:
    """The endpoint's WebSocket as an ASGI app (:func:`serve_websocket`): an ASGI app,
    not a Starlette endpoint function, so that the messages skip Starlette's
    per-message wrappers."""

    def __init__(self, server: AcpServer) -> None:
        self.server = server

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await serve_websocket(self.server, scope, receive, send)


async def _deny(websocket: Any, refused: Refused) -> None:
    responses = need("starlette.responses", "server")
    if "websocket.http.response" in websocket.scope.get("extensions", {}):
        response = responses.PlainTextResponse(refused.reason + "\n", refused.status)
        await websocket.send_denial_response(response)
    else:  # the server cannot answer with a status: closed before accept (403)
        await websocket.close(1008, refused.reason)
