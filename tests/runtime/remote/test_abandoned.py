"""1,000 connections opened and abandoned: the server lets each go (a WebSocket whose peer
vanished at once; a Streamable HTTP connection that only sent ``initialize``, after the
idle timeout), its registry ends empty and the memory it held returns (traced by
``tracemalloc`` in this process, where the server runs)."""

from __future__ import annotations

import asyncio
import gc
import json
import tracemalloc
from types import ModuleType
from typing import Any

import pytest

from ..harness import module, run
from ..test_connection import Agent
from .harness import served

COUNT = 1000
INIT = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})


@pytest.fixture(scope="module")
def m(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return module("pydantic", tmp_path_factory.mktemp("rpc-abandoned"))


async def until_empty(server: Any, limit: float) -> None:
    for _ in range(int(limit / 0.05)):
        if not server.connections:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{len(server.connections)} connections still held")


def held() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


async def open_ws(url: str) -> None:
    from websockets.asyncio.client import connect

    ws = await connect(url, compression=None, proxy=None)
    await ws.send(INIT)
    await ws.recv()
    ws.transport.abort()  # gone: no close frame, no FIN handshake


async def open_http(client: Any, url: str) -> None:
    answer = await client.post(url, content=INIT, headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("transport", ["ws", "http"])
def test_a_thousand_abandoned_connections_are_let_go(m: ModuleType, transport: str) -> None:
    async def scenario() -> None:
        import httpx

        app = m.RPC.asgi_app(lambda conn: Agent(m, m.RemoteClient(conn)), idle_timeout=1.0)
        server = app.state.acp
        async with served(app) as base:
            url = base + "/acp"
            async with httpx.AsyncClient(limits=httpx.Limits(max_connections=50)) as client:
                ws_url = url.replace("http://", "ws://")
                await (open_ws(ws_url) if transport == "ws" else open_http(client, url))  # warm up
                await until_empty(server, 10)
                tracemalloc.start()
                try:
                    start = held()
                    for batch in range(0, COUNT, 50):
                        if transport == "ws":
                            await asyncio.gather(*(open_ws(ws_url) for _ in range(50)))
                        else:
                            await asyncio.gather(*(open_http(client, url) for _ in range(50)))
                    peak = held()
                    await until_empty(server, 30)
                    await asyncio.sleep(0.5)
                    end = held()
                finally:
                    tracemalloc.stop()
        assert end - start < max(2_000_000, (peak - start) / 10), (start, peak, end)

    run(scenario(), 120)
