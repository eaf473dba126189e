"""Raw peers of a remote server, for the chaos test: they send the bytes they are given
as messages and yield every message the server sends, over WebSocket (``websockets``)
or Streamable HTTP (``httpx`` and ``httpx-sse``: ``initialize`` first, then the
connection stream and the session stream of session ``s``)."""

from __future__ import annotations

import asyncio
import json
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

RAW_PEERS = ("ws", "http")


class WsPeer:
    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.cid = ws.response.headers.get("acp-connection-id")

    async def send(self, data: bytes) -> None:
        await self.ws.send(data.decode("utf-8", "replace"))

    async def frames(self) -> AsyncIterator[Any]:
        async for message in self.ws:
            yield json.loads(message)

    async def served(self, server: Any) -> Any:
        return server.connections[self.cid].conn


@asynccontextmanager
async def raw_peer(transport: str, base: str) -> AsyncIterator[Any]:
    if transport == "ws":
        from websockets.asyncio.client import connect

        async with connect(base.replace("http://", "ws://") + "/acp", max_size=None) as ws:
            yield WsPeer(ws)
        return
    from .http_raw import HttpPeer

    async with HttpPeer.open(base + "/acp") as peer:
        yield peer
