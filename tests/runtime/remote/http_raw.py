"""A raw Streamable HTTP peer for the chaos test (``httpx`` and ``httpx-sse``): it posts
``initialize``, opens the connection's stream and the stream of session ``s`` (every
session-scoped message of the chaos is about ``s``), then posts the bytes it is given
as they are, one at a time, and yields every message either stream brings."""

from __future__ import annotations

import asyncio
import json
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import httpx
import httpx_sse

INIT = {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {"protocolVersion": 1}}


class HttpPeer:
    def __init__(self, client: httpx.AsyncClient, url: str, cid: str) -> None:
        self.client = client
        self.url = url
        self.cid = cid
        self.inbox: asyncio.Queue[Any] = asyncio.Queue()
        self.readers: list[asyncio.Task[None]] = []
        self.lock = asyncio.Lock()

    @classmethod
    @asynccontextmanager
    async def open(cls, url: str) -> AsyncIterator[HttpPeer]:
        async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=None)) as client:
            answer = await client.post(url, json=INIT)
            assert answer.status_code == 200, answer.text
            peer = cls(client, url, answer.headers["acp-connection-id"])
            for session in (None, "s"):
                opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                peer.readers.append(asyncio.ensure_future(peer._read(session, opened)))
                await asyncio.wait_for(opened, 10)
            try:
                yield peer
            finally:
                await client.delete(url, headers={"Acp-Connection-Id": peer.cid})
                for reader in peer.readers:
                    reader.cancel()
                await asyncio.wait(peer.readers, timeout=5)

    async def _read(self, session: str | None, opened: asyncio.Future[None]) -> None:
        headers = {"Acp-Connection-Id": self.cid, "Accept": "text/event-stream"}
        if session is not None:
            headers["Acp-Session-Id"] = session
        async with httpx_sse.aconnect_sse(self.client, "GET", self.url, headers=headers) as source:
            assert source.response.status_code == 200
            opened.set_result(None)
            async for event in source.aiter_sse():
                if event.data:
                    await self.inbox.put(json.loads(event.data))

    async def send(self, data: bytes) -> None:
        headers = {"Acp-Connection-Id": self.cid, "Content-Type": "application/json"}
        async with self.lock:  # one at a time: the order is kept
            answer = await self.client.post(self.url, content=data, headers=headers)
        assert answer.status_code in (202, 501), (answer.status_code, answer.text, data)

    async def frames(self) -> AsyncIterator[Any]:
        while True:
            yield await self.inbox.get()

    async def served(self, server: Any) -> Any:
        return server.connections[self.cid].conn
