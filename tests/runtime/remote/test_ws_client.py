"""The WebSocket client (``_ws_client.py``) against a raw ASGI server: a binary frame
ignored and logged, a refusal's status and line, and a server gone silent (the TCP
connection up, nothing coming back) noticed by the heartbeat instead of waited on
forever; the server's pings answered, and a client too busy to read
not taken for a server gone."""

from __future__ import annotations

import asyncio
import json
import logging
from types import ModuleType
from typing import Any

import pytest

from ..harness import module, package, run
from .harness import served

pytest.importorskip("aiohttp", reason="the WebSocket client needs aiohttp (pip install 'acpgen[remote]')")


@pytest.fixture(scope="module")
def m(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return module("pydantic", tmp_path_factory.mktemp("rpc-ws-client"))


def answering(binary_first: bool = False, updates: int = 0) -> Any:
    """A raw ASGI WebSocket server answering ``initialize`` (after a binary frame, with
    ``binary_first``; after ``updates`` session/update notifications sent at once) and
    then nothing else."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            return
        await receive()  # websocket.connect
        await send({"type": "websocket.accept", "headers": [(b"acp-connection-id", b"raw-1")]})
        while True:
            event = await receive()
            if event["type"] == "websocket.disconnect":
                return
            frame = json.loads(event["text"])
            if frame.get("method") == "initialize":
                if binary_first:
                    await send({"type": "websocket.send", "bytes": b"\x00\x01 not ACP"})
                for i in range(updates):
                    note = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {"type": "text", "text": str(i)}}}
                    await send({"type": "websocket.send", "text": json.dumps(note)})
                answer = {"jsonrpc": "2.0", "id": frame["id"], "result": {"protocolVersion": 1}}
                await send({"type": "websocket.send", "text": json.dumps(answer)})

    return app


def test_a_binary_frame_is_ignored_and_logged(m: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        async with served(answering(binary_first=True)) as base:
            conn = await m.RPC.connect_url(base.replace("http", "ws") + "/acp")
            conn.start(object())
            result = await m.RemoteAgent(conn).initialize(m.InitializeRequest(protocol_version=1))
            assert result.protocol_version == 1
            assert conn.remote.connection_id == "raw-1"
            await conn.close()

    with caplog.at_level(logging.INFO):
        run(scenario(), 30)
    assert "a binary WebSocket frame ignored (ACP is in text frames)" in caplog.messages


def test_a_refused_handshake_gives_its_status_and_line(m: ModuleType) -> None:
    async def refuse(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            return
        await receive()
        body = b"no entry for you\nsecond line\n"
        start = {"type": "websocket.http.response.start", "status": 403, "headers": [(b"content-length", str(len(body)).encode())]}
        await send(start)
        await send({"type": "websocket.http.response.body", "body": body})

    async def scenario() -> None:
        async with served(refuse) as base:
            url = base.replace("http", "ws") + "/acp"
            with pytest.raises(package(m).RefusedError) as refused:
                await m.RPC.connect_url(url)
            assert refused.value.status == 403
            assert str(refused.value) == f"{url} refused the connection: HTTP 403: no entry for you"

    run(scenario(), 30)


class Freezer:
    """A TCP relay that can stop passing bytes either way while keeping both connections
    open: a server gone silent."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.frozen = False

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.port)

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            while data := await src.read(65536):
                if not self.frozen:
                    dst.write(data)
                    await dst.drain()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer), return_exceptions=True)
        for w in (writer, up_writer):
            w.close()


def test_a_server_gone_silent_is_noticed_by_the_heartbeat(m: ModuleType) -> None:
    async def scenario() -> None:
        async with served(answering()) as base:
            freezer = Freezer(int(base.rsplit(":", 1)[1]))
            port = await freezer.start()
            conn = await m.RPC.connect_url(f"ws://127.0.0.1:{port}/acp", heartbeat=0.4)
            conn.start(object())
            agent = m.RemoteAgent(conn)
            await agent.initialize(m.InitializeRequest(protocol_version=1))
            freezer.frozen = True
            pending = asyncio.ensure_future(agent.initialize(m.InitializeRequest(protocol_version=1)))
            began = asyncio.get_running_loop().time()
            with pytest.raises(package(m).ConnectionClosedError):
                await asyncio.wait_for(pending, 5)
            assert asyncio.get_running_loop().time() - began < 2.0
            assert conn.is_closed and "1006" in (conn.close_reason or "")
            assert "no answer to a ping within 0.2 s" in (conn.close_reason or "")
            freezer.server.close()

    run(scenario(), 30)


def test_an_idle_server_that_answers_pings_is_kept(m: ModuleType) -> None:
    """Nothing to say for many heartbeats: the client pings, the server's pongs count as
    heard, and the connection stays (a client that never pinged, or did not count a
    pong, would give the server up after one and a half beats)."""

    async def scenario() -> None:
        async with served(answering()) as base:
            await stays_up(m, base.replace("http", "ws") + "/acp", 0.2)

    run(scenario(), 30)


async def stays_up(m: ModuleType, url: str, heartbeat: float | None) -> None:
    """Connected to ``url``, idle for 1.5 s: still open, and answering."""
    conn = await m.RPC.connect_url(url, heartbeat=heartbeat)
    conn.start(object())
    agent = m.RemoteAgent(conn)
    await agent.initialize(m.InitializeRequest(protocol_version=1))
    await asyncio.sleep(1.5)
    assert not conn.is_closed, conn.close_reason
    assert (await agent.initialize(m.InitializeRequest(protocol_version=1))).protocol_version == 1
    await conn.close()


def test_the_servers_pings_are_answered(m: ModuleType) -> None:
    """A server that pings every 0.2 s and closes a connection whose pong is 0.2 s late
    (``websockets``' keepalive): the client answers, and the connection outlives many of
    its pings."""
    from websockets.asyncio.server import serve

    async def handler(ws: Any) -> None:
        async for text in ws:
            frame = json.loads(text)
            if frame.get("method") == "initialize":
                await ws.send(json.dumps({"jsonrpc": "2.0", "id": frame["id"], "result": {"protocolVersion": 1}}))

    async def scenario() -> None:
        async with serve(handler, "127.0.0.1", 0, ping_interval=0.2, ping_timeout=0.2) as server:
            port = next(iter(server.sockets)).getsockname()[1]
            await stays_up(m, f"ws://127.0.0.1:{port}/acp", None)

    run(scenario(), 30)


def test_a_client_too_busy_to_read_does_not_give_up_a_live_server(m: ModuleType) -> None:
    """The client's handlers hold it back from reading (one message in flight at most, a
    slow handler) for many heartbeats while the server's pong waits unread behind the
    server's messages: that is no sign of a server gone, and the connection stays."""
    handled: list[str] = []

    class Slow:
        async def session_update(self, params: Any) -> None:
            await asyncio.sleep(0.6)
            handled.append(params.update.text)

    async def scenario() -> None:
        async with served(answering(updates=3)) as base:
            url = base.replace("http", "ws") + "/acp"
            conn = await m.RPC.connect_url(url, heartbeat=0.2, max_in_flight=1)
            conn.start(Slow())
            agent = m.RemoteAgent(conn)
            await asyncio.wait_for(agent.initialize(m.InitializeRequest(protocol_version=1)), 10)
            assert handled == ["0", "1", "2"]
            assert not conn.is_closed, conn.close_reason
            await conn.close()

    run(scenario(), 30)
