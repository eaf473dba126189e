"""ACP over WebSocket, what is its own (the guarantees shared with every transport are in
``test_same_guarantees.py``): the connection id on the ``101``, binary frames ignored, a
malformed frame answered as on stdio, the message limit (1009), the security checks
before the accept (Host 421, Origin 403, authentication 401) with the principal bound to
the connection, the server going away mid-prompt, and a missing library named."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from types import ModuleType
from typing import Any

import pytest

from ..harness import module, package, run
from ..test_connection import PROMPT, Agent, Client, load
from .harness import served
from .pairs import url_of

websockets = pytest.importorskip("websockets")
from websockets.asyncio.client import connect  # noqa: E402


@pytest.fixture(scope="module")
def m(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return module("pydantic", tmp_path_factory.mktemp("rpc-ws"))


def agent_of(m: ModuleType) -> Any:
    return lambda conn: Agent(m, m.RemoteClient(conn), chunks=3)


def test_the_101_names_the_connection_and_the_handler_sees_it(m: ModuleType) -> None:
    async def scenario() -> None:
        seen: list[Any] = []

        def make(conn: Any) -> Any:
            seen.append(conn)
            return Agent(m, m.RemoteClient(conn))

        app = m.RPC.asgi_app(make)
        async with served(app) as base:
            conn = await m.RPC.connect_url(url_of(base, "ws"))
            conn.start(Client(m))
            assert conn.remote.connection_id in app.state.acp.connections
            assert seen[0].remote.id == conn.remote.connection_id
            assert seen[0].remote.kind == "ws"
            await conn.close()
            await asyncio.wait_for(seen[0].closed, 5)
            assert app.state.acp.connections == {}

    run(scenario(), 30)


def test_binary_frames_are_ignored_and_a_malformed_frame_is_answered(m: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO")

    async def scenario() -> None:
        app = m.RPC.asgi_app(agent_of(m))
        async with served(app) as base:
            async with connect(url_of(base, "ws")) as ws:
                await ws.send(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}')
                await ws.send("{not json")
                answer = json.loads(await asyncio.wait_for(ws.recv(), 5))
                assert answer["id"] is None and answer["error"]["code"] == -32700
                await ws.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": 1}}))
                answer = json.loads(await asyncio.wait_for(ws.recv(), 5))
                assert answer["id"] == 2 and answer["result"]["protocolVersion"] == 1

    run(scenario(), 30)
    assert "a binary WebSocket frame ignored (ACP is in text frames)" in caplog.messages


def test_a_message_over_the_servers_limit_closes_the_socket_with_1009(m: ModuleType) -> None:
    async def scenario() -> None:
        app = m.RPC.asgi_app(agent_of(m), max_body=10_000)
        async with served(app) as base:
            async with connect(url_of(base, "ws"), max_size=None) as ws:
                await ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1, "x": "y" * 20_000}}))
                with pytest.raises(websockets.ConnectionClosed) as closed:
                    await asyncio.wait_for(ws.recv(), 5)
                assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
            for _ in range(100):
                if not app.state.acp.connections:
                    break
                await asyncio.sleep(0.02)
            assert app.state.acp.connections == {}

    run(scenario(), 30)


async def refused(url: str, **headers: str) -> int:
    with pytest.raises(websockets.InvalidStatus) as caught:
        async with connect(url, additional_headers=headers):
            pass
    return int(caught.value.response.status_code)


async def refused_host(url: str, host: str, **headers: str) -> int:
    """A WebSocket upgrade naming another Host (a DNS-rebinding page's), sent raw."""
    import httpx

    upgrade = {"Host": host, "Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", **headers}
    async with httpx.AsyncClient() as client:
        return (await client.get(url, headers=upgrade)).status_code


def test_host_origin_and_credentials_are_checked_before_the_accept(m: ModuleType) -> None:
    async def scenario() -> None:
        pkg = package(m)
        security = pkg.Security.for_bind("127.0.0.1")
        app = m.RPC.asgi_app(agent_of(m), security=security, authenticate=pkg.bearer({"t-alice": "alice"}))
        async with served(app) as base:
            url = url_of(base, "ws")
            good = {"Authorization": "Bearer t-alice"}
            assert await refused(url) == 401
            assert await refused(url, Authorization="Bearer nope") == 401
            assert await refused(url, Origin="http://evil.example", **good) == 403
            assert await refused_host(base + "/acp", "evil.example:80", **good) == 421
            conn = await m.RPC.connect_url(url, headers={**good, "Origin": "http://localhost:3000"})
            conn.start(Client(m))
            served_conn = app.state.acp.connections[conn.remote.connection_id]
            assert served_conn.principal == "alice"
            params = load(m, "InitializeRequest", {"protocolVersion": 1})
            assert (await m.RemoteAgent(conn).initialize(params)).protocol_version == 1
            await conn.close()

    run(scenario(), 30)


def test_the_server_going_away_fails_the_pending_prompt_at_once(m: ModuleType) -> None:
    async def scenario() -> None:
        pkg = package(m)
        started = asyncio.Event()

        class Hangs(Agent):
            async def session_prompt(self, params: Any) -> Any:
                started.set()
                await asyncio.sleep(60)

        app = m.RPC.asgi_app(lambda conn: Hangs(m, m.RemoteClient(conn)))
        async with served(app) as base:
            conn = await m.RPC.connect_url(url_of(base, "ws"))
            conn.start(Client(m))
            task = asyncio.ensure_future(m.RemoteAgent(conn).session_prompt(load(m, "PromptRequest", PROMPT)))
            await asyncio.wait_for(started.wait(), 5)
        # the server stopped (its connections closed): the prompt ends now, not in 60 s
        with pytest.raises((pkg.ConnectionClosedError, pkg.RemoteError)):
            await asyncio.wait_for(task, 5)
        await asyncio.wait_for(conn.closed, 5)
        assert conn.close_reason

    run(scenario(), 30)


def test_without_the_libraries_the_package_serves_stdio_and_names_what_to_install(tmp_path: Any) -> None:
    from ...conftest import SCHEMAS, generate

    generate(SCHEMAS / "rpc", tmp_path, ("pydantic",))
    root = str(tmp_path)
    program = f"""
import sys
for name in ("starlette", "uvicorn", "sse_starlette", "hypercorn", "httpx", "httpx_sse", "websockets", "aiohttp", "curl_cffi"):
    sys.modules[name] = None  # as if not installed
sys.path.insert(0, {root!r})
import asyncio, acp_pydantic as pkg, acp_pydantic.v1 as v1
async def main():
    conn = await v1.RPC.stdio("agent")
    for call in (lambda: v1.RPC.asgi_app(lambda c: None), lambda: v1.RPC.connect_url("ws://127.0.0.1:9/acp"), lambda: v1.RPC.connect_url("http://127.0.0.1:9/acp"), lambda: v1.RPC.connect_url("http://127.0.0.1:9/acp", http2=True)):
        try:
            made = call()
            if asyncio.iscoroutine(made):
                await made
        except pkg.RemoteDependencyError as exc:
            print(exc)
    await conn.close()
asyncio.run(main())
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60, input="")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 4, done.stdout
    assert "pip install" in lines[0] and "'starlette'" in lines[0]
    assert "pip install 'aiohttp'" in lines[1]
    assert "pip install" in lines[2] and "httpx" in lines[2] and "'aiohttp'" in lines[2]
    assert "(http2-client)" in lines[3] and "'curl_cffi'" in lines[3]


# --- the server's channel on its own, over ASGI messages a test plays ----------------

from acpgen.runtime import _websocket  # noqa: E402
from acpgen.runtime._channel import ChannelClosed  # noqa: E402


class Socket:
    """What the channel is given: ASGI ``receive`` fed from a list, ``send`` recorded,
    and the Starlette WebSocket's ``close``."""

    def __init__(self, *incoming: dict[str, Any], fail_send: bool = False, fail_close: bool = False) -> None:
        self.incoming = list(incoming)
        self.sent: list[dict[str, Any]] = []
        self.closes: list[tuple[int, str]] = []
        self.fail_send = fail_send
        self.fail_close = fail_close

    async def receive(self) -> dict[str, Any]:
        return self.incoming.pop(0)

    async def send(self, message: dict[str, Any]) -> None:
        if self.fail_send:
            raise RuntimeError("socket gone")
        self.sent.append(message)

    async def close(self, code: int, reason: str = "") -> None:
        self.closes.append((code, reason))
        if self.fail_close:
            raise RuntimeError("already closed")

    def channel(self, max_size: int = 100) -> Any:
        return _websocket.ServerWebSocketChannel(self, max_size, self.receive, self.send)


def text(value: str) -> dict[str, Any]:
    return {"type": "websocket.receive", "text": value}


def test_the_channel_reads_text_frames_and_skips_binary_ones(caplog: pytest.LogCaptureFixture) -> None:
    sock = Socket(text('{"a":1}'), {"type": "websocket.receive", "bytes": b"\x00"}, text("é\udcff"), text("x" * 100))
    channel = sock.channel()

    async def scenario() -> list[Any]:
        return [await channel.receive() for _ in range(3)]

    with caplog.at_level("INFO"):
        got = run(scenario(), timeout=5)
    assert got == [b'{"a":1}', "é\udcff".encode("utf-8", "surrogatepass"), b"x" * 100]
    assert [r.getMessage() for r in caplog.records if r.name.endswith("_websocket")] == [
        "a binary WebSocket frame ignored (ACP is in text frames)"
    ]
    assert sock.closes == []


def test_a_message_over_the_limit_closes_the_socket_with_1009() -> None:
    sock = Socket(text("x" * 101))
    channel = sock.channel(100)

    async def scenario() -> None:
        with pytest.raises(ChannelClosed) as caught:
            await channel.receive()
        assert str(caught.value) == "the WebSocket closed with code 1009: a message of 101 bytes, over the limit"
        assert sock.closes == [(1009, "message too big")]
        with pytest.raises(ChannelClosed) as caught:
            await channel.send(b"{}")
        assert str(caught.value) == "the WebSocket is closed"
        await channel.aclose()  # closed once only
        assert sock.closes == [(1009, "message too big")]

    run(scenario(), timeout=5)
    # the limit counts bytes, not characters
    sock = Socket(text("é" * 51))
    with pytest.raises(ChannelClosed):
        run(sock.channel(101).receive(), timeout=5)


@pytest.mark.parametrize("code", [1000, 1001, 1005, None])
def test_a_normal_disconnect_ends_the_channel(code: int | None) -> None:
    message: dict[str, Any] = {"type": "websocket.disconnect"}
    if code is not None:
        message["code"] = code
    sock = Socket(message)
    channel = sock.channel()

    async def scenario() -> None:
        assert await channel.receive() is None
        with pytest.raises(ChannelClosed):
            await channel.send(b"{}")
        await channel.aclose()
        assert sock.closes == []  # the peer closed it already

    run(scenario(), timeout=5)


def test_an_abnormal_disconnect_and_an_unexpected_message_are_errors() -> None:
    sock = Socket({"type": "websocket.disconnect", "code": 1011, "reason": "agent failed"})
    with pytest.raises(ChannelClosed) as caught:
        run(sock.channel().receive(), timeout=5)
    assert str(caught.value) == "the WebSocket closed with code 1011: agent failed"
    sock = Socket({"type": "websocket.disconnect", "code": 1006})
    with pytest.raises(ChannelClosed) as caught:
        run(sock.channel().receive(), timeout=5)
    assert str(caught.value) == "the WebSocket closed with code 1006"
    sock = Socket({"type": "websocket.connect"})
    with pytest.raises(ChannelClosed) as caught:
        run(sock.channel().receive(), timeout=5)
    assert str(caught.value) == "an unexpected ASGI message: 'websocket.connect'"


def test_the_channel_sends_text_frames_and_fails_once_the_socket_is_gone() -> None:
    sock = Socket()
    channel = sock.channel()

    async def scenario() -> None:
        await channel.send('{"b":"é"}'.encode())
        assert sock.sent == [{"type": "websocket.send", "text": '{"b":"é"}'}]
        sock.fail_send = True
        with pytest.raises(ChannelClosed) as caught:
            await channel.send(b"{}")
        assert str(caught.value) == "sending on the WebSocket failed: RuntimeError('socket gone')"
        assert isinstance(caught.value.__cause__, RuntimeError)
        sock.fail_send = False
        with pytest.raises(ChannelClosed) as caught:
            await channel.send(b"{}")
        assert str(caught.value) == "the WebSocket is closed" and len(sock.sent) == 1

    run(scenario(), timeout=5)


def test_closing_the_channel_closes_the_socket_once() -> None:
    sock = Socket(fail_close=True)
    channel = sock.channel()

    async def scenario() -> None:
        await channel.aclose()  # a socket already gone: no error
        await channel.aclose()
        assert sock.closes == [(1000, "")]
        with pytest.raises(ChannelClosed):
            await channel.send(b"{}")

    run(scenario(), timeout=5)


# --- the endpoint's WebSocket app over ASGI messages a test plays --------------------

import importlib  # noqa: E402


def servers_of(m: ModuleType, **options: Any) -> tuple[Any, Any]:
    """The package's WebSocket app and the server behind it."""
    name = package(m).__name__
    remote_server = importlib.import_module(name + "._remote_server")
    remote = importlib.import_module(name + "._remote")
    ws = importlib.import_module(name + "._websocket")
    server = remote_server.AcpServer(m.RPC, agent_of(m), remote.ServerOptions(**options))
    return ws.WebSocketApp(server), server


def scope(host: bytes, extensions: dict[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "websocket",
        "path": "/acp",
        "raw_path": b"/acp",
        "query_string": b"",
        "headers": [(b"host", host)],
        "scheme": "ws",
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 5000),
        "subprotocols": [],
    }
    if extensions is not None:
        out["extensions"] = extensions
    return out


@pytest.mark.parametrize("extensions", [{"websocket.http.response": {}}, {}, None])
def test_a_refused_websocket_gets_its_status_where_the_server_allows_else_1008(m: ModuleType, extensions: Any) -> None:
    security = importlib.import_module(package(m).__name__ + "._remote").Security.loopback()
    app, _ = servers_of(m, security=security)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    run(app(scope(b"evil.example", extensions), receive, send), timeout=10)
    if extensions:
        start, body = sent
        assert (start["type"], start["status"]) == ("websocket.http.response.start", 421)
        assert (body["type"], body["body"]) == ("websocket.http.response.body", b"Host 'evil.example' is not allowed\n")
    else:
        assert sent == [{"type": "websocket.close", "code": 1008, "reason": "Host 'evil.example' is not allowed"}]


def test_an_accepted_websocket_is_one_open_stream_of_its_connection(m: ModuleType) -> None:
    app, server = servers_of(m)
    sent: list[dict[str, Any]] = []
    seen: list[Any] = []

    async def main() -> None:
        answered = asyncio.Event()
        incoming = [
            {"type": "websocket.connect"},
            {"type": "websocket.receive", "text": json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})},
        ]

        async def receive() -> dict[str, Any]:
            if incoming:
                return incoming.pop(0)
            await asyncio.wait_for(answered.wait(), 5)
            [served] = server.connections.values()
            seen.append((served, served.streams, served.kind))
            return {"type": "websocket.disconnect", "code": 1000}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)
            if message["type"] == "websocket.send":
                answered.set()

        await app(scope(b"127.0.0.1:8000", None), receive, send)

    run(main(), timeout=10)
    [(served, streams, kind)] = seen
    assert (streams, kind) == (1, "ws") and served.streams == 0
    accept, answer = sent[:2]
    assert accept == {"type": "websocket.accept", "subprotocol": None, "headers": [(b"acp-connection-id", served.id.encode())]}
    assert json.loads(answer["text"])["id"] == 1 and "result" in json.loads(answer["text"])
    assert server.connections == {}
