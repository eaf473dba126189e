"""A raw Streamable HTTP peer of a remote server, for the chaos test: it posts
``initialize`` (its answer is its own, not yielded), opens the connection's stream and
session ``s``'s, posts the bytes it is given as they are (whatever the server answers:
202, or 501 for an array...), yields every message of both streams, and on the way out
DELETEs its connection (bounded)."""

from __future__ import annotations

import asyncio
import json
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import httpx
import httpx_sse

INIT = {"jsonrpc": "2.0", "id": "raw-peer-init", "method": "initialize", "params": {"protocolVersion": 1}}


class HttpPeer:
    def __init__(self, http: httpx.AsyncClient, url: str, cid: str) -> None:
        self.http = http
        self.url = url
        self.cid = cid
        self.messages: asyncio.Queue[Any] = asyncio.Queue()
        self.readers: list[asyncio.Task[None]] = []

    @classmethod
    @asynccontextmanager
    async def open(cls, url: str) -> AsyncIterator[HttpPeer]:
        async with httpx.AsyncClient(timeout=httpx.Timeout(10.0, read=None)) as http:
            response = await http.post(url, json=INIT)
            assert response.status_code == 200, response.text
            peer = cls(http, url, response.headers["acp-connection-id"])
            try:
                for session in (None, "s"):
                    await peer._listen(session)
                yield peer
            finally:
                try:
                    await asyncio.wait_for(http.delete(url, headers={"acp-connection-id": peer.cid}), 5)
                finally:
                    for task in peer.readers:
                        task.cancel()
                    await asyncio.wait(peer.readers, timeout=5)

    async def _listen(self, session: str | None) -> None:
        """Open a stream (its 200 awaited); its messages go to ``messages``."""
        headers = {"accept": "text/event-stream", "acp-connection-id": self.cid}
        if session is not None:
            headers["acp-session-id"] = session
        opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        async def read() -> None:
            async with httpx_sse.aconnect_sse(self.http, "GET", self.url, headers=headers) as source:
                assert source.response.status_code == 200
                opened.set_result(None)
                async for event in source.aiter_sse():
                    if event.data:
                        await self.messages.put(json.loads(event.data))

        self.readers.append(asyncio.ensure_future(read()))
        done, _ = await asyncio.wait([opened, self.readers[-1]], timeout=10, return_when=asyncio.FIRST_COMPLETED)
        assert opened in done, f"the stream {session!r} did not open"

    async def send(self, data: bytes) -> None:
        await self.http.post(self.url, content=data, headers={"acp-connection-id": self.cid, "content-type": "application/json"})

    async def frames(self) -> AsyncIterator[Any]:
        while True:
            yield await self.messages.get()

    async def served(self, server: Any) -> Any:
        return server.connections[self.cid].conn
