"""The WebSocket client (``_ws_client.py``) against a raw ASGI server: a binary frame
ignored and logged, a refusal's status and line, and a server gone silent (the TCP
connection up, nothing coming back) noticed by the heartbeat instead of waited on
forever; the server's pings answered, and a client too busy to read
not taken for a server gone."""

from __future__ import annotations

import asyncio
import json
import logging
from contextlib import asynccontextmanager
from types import ModuleType, SimpleNamespace
from typing import Any, AsyncIterator

import pytest

from ..harness import module, package, run
from .harness import served

pytest.importorskip("aiohttp", reason="the WebSocket client needs aiohttp (pip install 'acpgen[remote]')")

from acpgen.runtime import _ws_client  # noqa: E402
from acpgen.runtime._channel import ChannelClosed  # noqa: E402
from acpgen.runtime._remote import RefusedError, RemoteDependencyError, SizedSocket  # noqa: E402
from acpgen.runtime._remote_client import RemoteInfo  # noqa: E402


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


# the channel on its source module, against aiohttp's own server


class Over:
    """An ``Rpc`` stand-in: ``over`` gives the channel back (as the connection's)."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.options: dict[str, Any] = {}

    def over(self, side: str, channel: Any, **options: Any) -> Any:
        if self.fail:
            raise ValueError("no connection for you")
        self.options = {"side": side, **options}
        return SimpleNamespace(channel=channel, remote=None)


@asynccontextmanager
async def aio_served(handler: Any) -> AsyncIterator[str]:
    """aiohttp's server with ``handler`` at ``/acp``; yields ``ws://127.0.0.1:port/acp``."""
    from aiohttp import web

    app = web.Application()
    app.router.add_get("/acp", handler)
    runner = web.AppRunner(app, shutdown_timeout=1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"ws://127.0.0.1:{port}/acp"
    finally:
        await asyncio.wait_for(runner.cleanup(), 5)


def test_headers_and_cookies_are_sent_and_the_handshake_read() -> None:
    from aiohttp import web

    seen: list[Any] = []

    async def handler(request: Any) -> Any:
        seen.append(request.headers)
        ws = web.WebSocketResponse(autoping=False)
        ws.headers["Acp-Connection-Id"] = "c-9"
        ws.set_cookie("srv", "s1")
        ws.set_cookie("b", "new")
        ws.set_cookie("elsewhere", "1", path="/other")  # another path: not kept
        ws.set_cookie("here", "2", path="/acp")
        await ws.prepare(request)
        await ws.receive()
        return ws

    async def scenario() -> None:
        async with aio_served(handler) as url:
            rpc = Over()
            conn = await _ws_client.connect_websocket(rpc, url, side="agent", headers={"X-Token": "t"}, cookies={"a": "1", "b": "2"}, heartbeat=None, max_in_flight=3)
            try:
                assert rpc.options == {"side": "agent", "max_in_flight": 3}
                assert conn.remote == RemoteInfo(url, "c-9", {"X-Token": "t"}, {"a": "1", "b": "new", "srv": "s1", "here": "2"})
                (headers,) = seen
                assert headers["X-Token"] == "t" and headers["Cookie"] == "a=1; b=2"
                assert "Sec-WebSocket-Extensions" not in headers  # no compression
                assert conn.channel._heartbeat is None and not conn.channel._beats
                transport = conn.channel.ws._response.connection.transport
                assert isinstance(transport.get_extra_info("socket")._sock, SizedSocket)
            finally:
                await conn.channel.aclose()
            assert conn.channel.session.closed

    run(scenario(), 30)


def test_no_cookie_header_without_cookies_and_no_id_without_one() -> None:
    from aiohttp import web

    seen: list[Any] = []

    async def handler(request: Any) -> Any:
        seen.append(request.headers)
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.receive()
        return ws

    async def scenario() -> None:
        async with aio_served(handler) as url:
            rpc = Over()
            conn = await _ws_client.connect_websocket(rpc, url)
            try:
                assert rpc.options == {"side": "client"}
                assert conn.remote == RemoteInfo(url, "", {}, {})
                assert "Cookie" not in seen[0]
                assert conn.channel._heartbeat == _ws_client.HEARTBEAT == 20.0
                assert len(conn.channel._beats) == 1
            finally:
                await conn.channel.aclose()

    run(scenario(), 30)


def test_a_connection_the_rpc_refuses_closes_the_websocket() -> None:
    from aiohttp import web

    closed: list[Any] = []

    async def handler(request: Any) -> Any:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        async for _ in ws:
            pass
        closed.append(ws.close_code)
        return ws

    async def scenario() -> None:
        async with aio_served(handler) as url:
            with pytest.raises(ValueError, match="^no connection for you$"):
                await _ws_client.connect_websocket(Over(fail=True), url)
            for _ in range(50):
                if closed:
                    break
                await asyncio.sleep(0.05)
            assert closed == [1000]

    run(scenario(), 30)


def test_a_handshake_not_answered_fails_within_open_timeout() -> None:
    async def mute(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(65536)
        await asyncio.sleep(10)

    async def scenario() -> None:
        server = await asyncio.start_server(mute, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        loop = asyncio.get_running_loop()
        began = loop.time()
        with pytest.raises(asyncio.TimeoutError):
            await _ws_client.connect_websocket(Over(), f"ws://127.0.0.1:{port}/acp", open_timeout=0.3)
        assert loop.time() - began < 2
        server.close()

    run(scenario(), 30)


def test_a_refusal_with_no_body_gives_its_status_alone() -> None:
    from aiohttp import web

    async def handler(request: Any) -> Any:
        return web.Response(status=401, body=b"")

    async def lines(request: Any) -> Any:
        return web.Response(status=421, body=b"\n  \nwrong host \xff\nmore\n")

    async def scenario() -> None:
        async with aio_served(handler) as url:
            with pytest.raises(RefusedError) as refused:
                await _ws_client.connect_websocket(Over(), url)
            assert str(refused.value) == f"{url} refused the connection: HTTP 401"
            assert (refused.value.status, refused.value.reason) == (401, "")
        async with aio_served(lines) as url:
            with pytest.raises(RefusedError) as refused:
                await _ws_client.connect_websocket(Over(), url)
            assert str(refused.value) == f"{url} refused the connection: HTTP 421: wrong host \ufffd"

    run(scenario(), 30)


async def _talk(server: Any, client: Any, **options: Any) -> tuple[Any, list[Any]]:
    """``server(ws)`` run on aiohttp's server; ``client(channel)`` on a channel to it.
    Gives what ``client`` gave, and the frames the server received."""
    from aiohttp import web

    got: list[Any] = []

    async def handler(request: Any) -> Any:
        ws = web.WebSocketResponse(autoping=False)
        await ws.prepare(request)
        await server(ws, got)
        return ws

    async with aio_served(handler) as url:
        conn = await _ws_client.connect_websocket(Over(), url, **options)
        try:
            return await asyncio.wait_for(client(conn.channel), 10), got
        finally:
            await conn.channel.aclose()


async def _read_all(channel: Any) -> list[Any]:
    out: list[Any] = []
    while True:
        try:
            message = await channel.receive()
        except ChannelClosed as exc:
            out.append(str(exc))
            return out
        out.append(message)
        if message is None:
            return out


@pytest.mark.parametrize(
    "close, last",
    [
        ({"code": 1000}, None),
        ({"code": 1001, "message": b"going"}, None),
        ({"code": 4000, "message": b"bye now"}, "the WebSocket closed with code 4000: bye now"),
        ({"code": 4001}, "the WebSocket closed with code 4001: the connection was lost"),
    ],
)
def test_frames_received_and_the_close(close: dict[str, Any], last: Any) -> None:
    """Text frames given as UTF-8, binary frames and pongs
    skipped, the server's ping answered with its data; the close ends the reading."""

    async def server(ws: Any, got: list[Any]) -> None:
        from aiohttp import WSMsgType

        await ws.send_str("héllo")
        await ws.send_bytes(b"\x00 binary")
        await ws.pong(b"unasked")
        await ws.ping(b"ping-1")
        got.append(await ws.receive())
        await ws.send_str("{}")
        await ws.close(**close)
        assert got[0].type is WSMsgType.PONG

    async def client(channel: Any) -> list[Any]:
        out = await _read_all(channel)
        if out[-1] is None:  # and so again
            out.append(await channel.receive())
        return out

    out, got = run(_talk(server, client, heartbeat=None), 30)
    assert out == ["héllo".encode(), b"{}", last] + ([None] if last is None else [])
    assert got[0].data == b"ping-1"


def test_a_message_over_max_size_closes_with_1009() -> None:
    async def server(ws: Any, got: list[Any]) -> None:
        await ws.send_str("x" * 200)
        got.append(await ws.receive())

    async def client(channel: Any) -> list[Any]:
        return await _read_all(channel)

    out, got = run(_talk(server, client, heartbeat=None, max_size=100), 30)
    assert out == ["the WebSocket closed with code 1009: Message size 200 exceeds limit 100"]
    assert got[0].data == 1009


def test_a_lost_connection_closes_with_1006() -> None:
    async def server(ws: Any, got: list[Any]) -> None:
        ws._writer.transport.abort()

    async def client(channel: Any) -> list[Any]:
        return await _read_all(channel)

    out, _ = run(_talk(server, client, heartbeat=None), 30)
    assert out == ["the WebSocket closed with code 1006: the connection was lost"]


def test_sent_messages_are_text_frames_and_a_closed_socket_refuses_more() -> None:
    from aiohttp import WSMsgType

    async def server(ws: Any, got: list[Any]) -> None:
        got.append(await ws.receive())
        await ws.close(code=4002, message=b"done")
        got.append(await ws.receive())

    async def client(channel: Any) -> list[Any]:
        await channel.send(b'{"a": "\xc3\xa9"}')
        out = await _read_all(channel)
        with pytest.raises(ChannelClosed) as closed:
            await channel.send(b"{}")
        return [*out, str(closed.value)]

    out, got = run(_talk(server, client, heartbeat=None), 30)
    assert (got[0].type, got[0].data) == (WSMsgType.TEXT, '{"a": "é"}')
    assert out == ["the WebSocket closed with code 4002: done", "the WebSocket is closed (code 4002)"]


def test_the_channel_names_the_package_it_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "aiohttp", None)
    with pytest.raises(RemoteDependencyError) as missing:
        _ws_client.ClientWebSocketChannel(None, None)
    text = "the ACP remote transport (ws) needs the Python package 'aiohttp', which is not installed: pip install 'aiohttp'"
    assert str(missing.value) == text
    with pytest.raises(RemoteDependencyError) as missing:
        asyncio.run(_ws_client.connect_websocket(Over(), "ws://127.0.0.1:9/acp"))
    assert str(missing.value) == text


def test_the_defaults_of_a_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    """The handshake bounded by 10 s, pings every 20 s."""
    from aiohttp import web

    bounds: list[Any] = []
    wait_for = asyncio.wait_for

    async def spy(awaitable: Any, timeout: Any) -> Any:
        bounds.append(timeout)
        return await wait_for(awaitable, timeout)

    async def handler(request: Any) -> Any:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.receive()
        return ws

    async def scenario() -> None:
        async with aio_served(handler) as url:
            monkeypatch.setattr(asyncio, "wait_for", spy)
            conn = await _ws_client.connect_websocket(Over(), url)
            monkeypatch.setattr(asyncio, "wait_for", wait_for)
            try:
                assert bounds == [10.0]
                assert conn.channel._heartbeat == 20.0
            finally:
                await conn.channel.aclose()

    run(scenario(), 30)


@pytest.mark.parametrize("read_first", [False, True])
def test_the_handshake_counts_as_heard_and_a_channel_not_read_yet_is_kept(read_first: bool) -> None:
    """The server's first frame comes just after the handshake: the first ping waits for
    a whole beat without a frame after it (two beats in), whether that frame was read
    at once or not. A connection not read from yet (its pong unread) is not given up;
    its frames are read later."""
    from aiohttp import WSMsgType

    async def server(ws: Any, got: list[Any]) -> None:
        loop = asyncio.get_running_loop()
        began = loop.time()
        await ws.send_str("first")
        message = await ws.receive()
        assert message.type is WSMsgType.PING
        got.append(loop.time() - began)
        await ws.pong(message.data)
        await asyncio.sleep(0.5)
        await ws.send_str("later")
        await ws.receive()

    async def client(channel: Any) -> list[Any]:
        first = await channel.receive() if read_first else None
        await asyncio.sleep(1.5)  # not reading: the pong waits unread
        return [first or await channel.receive(), await channel.receive()]

    out, got = run(_talk(server, client, heartbeat=0.4), 30)
    assert out == [b"first", b"later"]
    assert 0.6 < got[0] < 1.2, got


def test_a_server_gone_silent_after_answering_pings_is_noticed() -> None:
    """Idle for many beats, the server answering each ping; then it goes silent: the
    client's reader ends with the reason within a beat and a half."""
    from aiohttp import web

    async def handler(request: Any) -> Any:
        ws = web.WebSocketResponse()  # answers pings
        await ws.prepare(request)
        async for _ in ws:
            pass
        return ws

    async def scenario() -> None:
        async with aio_served(handler) as url:
            freezer = Freezer(int(url.rsplit(":", 1)[1].split("/")[0]))
            port = await freezer.start()
            conn = await _ws_client.connect_websocket(Over(), f"ws://127.0.0.1:{port}/acp", heartbeat=0.2)
            try:
                reader = asyncio.ensure_future(_read_all(conn.channel))
                await asyncio.sleep(1.2)
                assert not reader.done() and conn.channel._heard >= 2
                freezer.frozen = True
                loop = asyncio.get_running_loop()
                began = loop.time()
                out = await asyncio.wait_for(reader, 5)
                assert out == ["the WebSocket closed with code 1006: no answer to a ping within 0.1 s"]
                assert loop.time() - began < 1.0
            finally:
                await conn.channel.aclose()
                freezer.server.close()

    run(scenario(), 30)


@pytest.mark.parametrize(
    "delay, out",
    [
        (0.33, [b"still here", None]),
        (0.6, ["the WebSocket closed with code 1006: no answer to a ping within 0.4 s"]),
    ],
)
def test_a_pong_is_awaited_half_a_beat(delay: float, out: list[Any]) -> None:
    """Heartbeat 0.8 s: a pong 0.33 s late is in time, one 0.6 s late is not."""
    from aiohttp import WSMsgType

    async def server(ws: Any, got: list[Any]) -> None:
        message = await ws.receive()
        assert message.type is WSMsgType.PING
        await asyncio.sleep(delay)
        await ws.pong(message.data)
        await asyncio.sleep(0.3)
        await ws.send_str("still here")
        await ws.close()

    async def client(channel: Any) -> list[Any]:
        return await _read_all(channel)

    assert run(_talk(server, client, heartbeat=0.8), 30)[0] == out


def test_a_close_without_a_code_reads_as_lost_and_a_reader_left_by_aclose_ends() -> None:
    from aiohttp import WSMsgType

    async def server(ws: Any, got: list[Any]) -> None:
        await ws._writer.send_frame(b"", WSMsgType.CLOSE)  # no code, no reason
        await asyncio.sleep(0.3)

    async def client(channel: Any) -> list[Any]:
        return await _read_all(channel)

    out, _ = run(_talk(server, client, heartbeat=None), 30)
    assert out == ["the WebSocket closed with code 1006: the connection was lost"]

    async def idle(ws: Any, got: list[Any]) -> None:
        await asyncio.sleep(2)

    async def closing(channel: Any) -> list[Any]:
        reader = asyncio.ensure_future(channel.receive())
        await asyncio.sleep(0.1)
        await channel.aclose()
        with pytest.raises(ChannelClosed, match="^the WebSocket closed with code 1006"):
            await asyncio.wait_for(reader, 2)
        return []

    run(_talk(idle, closing, heartbeat=None), 30)


def test_a_send_on_a_connection_lost_unread_says_why() -> None:
    async def server(ws: Any, got: list[Any]) -> None:
        ws._writer.transport.abort()

    async def client(channel: Any) -> list[Any]:
        await asyncio.sleep(0.3)  # the loss seen by the transport, not read yet
        assert not channel.ws.closed
        with pytest.raises(ChannelClosed) as lost:
            await channel.send(b"{}")
        return [str(lost.value)]

    out, _ = run(_talk(server, client, heartbeat=None), 30)
    assert out == ["the WebSocket is closed: Cannot write to closing transport"]
