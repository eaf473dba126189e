"""An agent connection and a client connection talking to each other over each transport
the runtime has: a socket pair (what stdio is), an in-process channel pair, WebSocket,
Streamable HTTP over HTTP/1.1 and over HTTP/2 (a real server on a loopback port). The
same scenarios run over each (``test_same_guarantees.py``, ``test_chaos_remote.py``)."""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from types import ModuleType
from typing import Any, AsyncIterator, Callable

from ..harness import pair

TRANSPORTS = ("socket", "memory", "ws", "http", "http2")
REMOTE = ("ws", "http", "http2")


def url_of(base: str, transport: str) -> str:
    return (base.replace("http://", "ws://", 1) if transport == "ws" else base) + "/acp"


@asynccontextmanager
async def pair_over(
    m: ModuleType,
    transport: str,
    agent: Callable[[Any], Any],
    client: Any,
    **options: Any,
) -> AsyncIterator[tuple[Any, Any]]:
    """(agent connection, client connection) over ``transport``, both serving, after the
    client's ``initialize``: ``agent`` makes the agent's handler from its connection,
    ``client`` is the client's handler; ``options`` are both connections'. Both are
    closed on the way out (bounded)."""
    async with _pair_over(m, transport, agent, client, **options) as (agent_conn, client_conn):
        params = m.RPC.codec.load(m.InitializeRequest, {"protocolVersion": 1})
        await asyncio.wait_for(client_conn.request("initialize", params), 10)
        assert agent_conn.side == "agent"  # the server's connection, found now
        yield agent_conn, client_conn


@asynccontextmanager
async def _pair_over(
    m: ModuleType,
    transport: str,
    agent: Callable[[Any], Any],
    client: Any,
    **options: Any,
) -> AsyncIterator[tuple[Any, Any]]:
    if transport == "socket":
        holder: list[Any] = []

        class Late:  # the agent's handler needs its connection: made on first use
            def __getattr__(self, name: str) -> Any:
                return getattr(holder[0], name)

        async with pair(m, Late(), client, **options) as (agent_conn, client_conn):
            holder.append(agent(agent_conn))
            yield agent_conn, client_conn
        return
    if transport == "memory":
        pkg = __import__(m.__package__, fromlist=["memory_pair"])
        a, c = pkg.memory_pair()
        agent_conn = m.RPC.over("agent", a, **options)
        client_conn = m.RPC.over("client", c, **options)
        agent_conn.start(agent(agent_conn))
        client_conn.start(client)
        try:
            yield agent_conn, client_conn
        finally:
            await asyncio.wait_for(client_conn.close(), 10)
            await asyncio.wait_for(agent_conn.close(), 10)
        return
    from .harness import served

    app = m.RPC.asgi_app(agent, connection=dict(options))
    server = app.state.acp
    async with served(app, http2=transport == "http2") as base:
        client_conn = await m.RPC.connect_url(url_of(base, transport), http2=transport == "http2", **options)
        client_conn.start(client)
        try:
            yield Served(server), client_conn
        finally:
            await asyncio.wait_for(client_conn.close(), 10)
            for served_conn in list(server.connections.values()):
                await asyncio.wait_for(served_conn.conn.close(), 10)


class Served:
    """The server's connection for the one client, looked up on use (a Streamable HTTP
    connection exists only once ``initialize`` arrived)."""

    def __init__(self, server: Any) -> None:
        self._server = server

    def __getattr__(self, name: str) -> Any:
        conn = self.__dict__.get("_conn")
        if conn is None:
            conns = list(self._server.connections.values())
            assert len(conns) == 1, f"the server has {len(conns)} connections, not 1"
            conn = self.__dict__["_conn"] = conns[0].conn
        return getattr(conn, name)
