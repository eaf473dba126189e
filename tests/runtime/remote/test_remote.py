"""The sockets of the remote transports (``_remote.py``): a read asks for 64 KiB at most
(asyncio asks for 256 KiB, which Python allocates and the C library maps and unmaps for
every message), on the client's connections and on those ``run_server`` accepts with
uvicorn."""

from __future__ import annotations

import asyncio
import json
import socket
from types import ModuleType
from typing import Any, Iterator

import pytest

from acpgen.runtime import _remote

from ..harness import module, run
from .harness import served


@pytest.fixture(scope="module")
def m(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return module("pydantic", tmp_path_factory.mktemp("rpc-remote-sockets"))


def pair(listener: socket.socket, client: socket.socket) -> tuple[socket.socket, socket.socket]:
    """``client`` connected to ``listener`` (bound, not yet listening): (client, accepted)."""
    listener.listen(1)
    client.connect(listener.getsockname()[:2])
    accepted, _ = listener.accept()
    return client, accepted


def test_a_sized_socket_reads_at_most_read_size() -> None:
    plain = socket.socket()
    plain.bind(("127.0.0.1", 0))
    addr = (socket.AF_INET, socket.SOCK_STREAM, 0, "", ("127.0.0.1", 0))
    client, accepted = pair(plain, _remote.sized_socket(addr))
    with plain, client, accepted:
        assert isinstance(client, _remote.SizedSocket)
        accepted.sendall(b"x" * 200_000)
        client.settimeout(5)
        got = client.recv(256 * 1024)
        assert 0 < len(got) <= _remote.READ_SIZE == 64 * 1024
        while len(got) < 200_000:
            chunk = client.recv(256 * 1024)
            assert 0 < len(chunk) <= _remote.READ_SIZE
            got += chunk


def test_a_sized_listener_accepts_sized_sockets_as_socket_accept_does() -> None:
    listener = _remote.listening_socket("127.0.0.1", 0)
    client, accepted = pair(listener, socket.socket())
    with listener, client, accepted:
        assert isinstance(accepted, _remote.SizedSocket)
        assert accepted.family == socket.AF_INET and accepted.type == socket.SOCK_STREAM
        assert accepted.proto == socket.IPPROTO_TCP
        assert accepted.gettimeout() is None  # blocking, as socket.accept gives it
        assert accepted.getpeername() == client.getsockname()
        client.sendall(b"y" * 100_000)
        assert 0 < len(accepted.recv(256 * 1024)) <= _remote.READ_SIZE
        assert listener.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR)


def test_the_connections_a_sized_listener_serves_have_nodelay() -> None:
    """asyncio turns Nagle's algorithm off (TCP_NODELAY) only on sockets of the TCP
    protocol: without it an answer written in two parts waits for the peer's delayed
    acknowledgement (tens of milliseconds)."""

    async def scenario() -> None:
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport: Any) -> None:
                sock = transport.get_extra_info("socket")
                seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        listener = _remote.listening_socket("127.0.0.1", 0)
        server = await asyncio.get_running_loop().create_server(Probe, sock=listener)
        async with server:
            _, writer = await asyncio.open_connection("127.0.0.1", listener.getsockname()[1])
            assert await asyncio.wait_for(seen, 5) != 0
            writer.close()

    run(scenario(), 30)


def test_a_listening_socket_on_an_ipv6_host() -> None:
    if not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    try:
        listener = _remote.listening_socket("::1", 0)
    except OSError as exc:
        pytest.skip(f"no IPv6 loopback: {exc}")
    with listener:
        assert listener.family == socket.AF_INET6


def test_a_port_taken_is_refused_and_the_socket_closed() -> None:
    taken = _remote.listening_socket("127.0.0.1", 0)
    taken.listen(1)
    with taken, pytest.raises(OSError):
        _remote.listening_socket("127.0.0.1", taken.getsockname()[1])


@pytest.fixture
def reads(m: ModuleType, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, int]]]:
    """(which runtime, the size asked) of each SizedSocket read: acpgen's runtime (the
    test server's) and the generated package's (the client's)."""
    from importlib import import_module

    asked: list[tuple[str, int]] = []
    for side, mod in (("server", _remote), ("client", import_module(f"{m.__package__}._remote"))):

        def recv(self: socket.socket, bufsize: int, flags: int = 0, /, _side: str = side) -> bytes:
            asked.append((_side, bufsize))
            return socket.socket.recv(self, min(bufsize, _remote.READ_SIZE), flags)

        monkeypatch.setattr(mod.SizedSocket, "recv", recv)
    yield asked


def echo_app() -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            return
        await receive()
        await send({"type": "websocket.accept", "headers": [(b"acp-connection-id", b"c")]})
        while (event := await receive())["type"] == "websocket.receive":
            frame = json.loads(event["text"])
            answer = {"jsonrpc": "2.0", "id": frame["id"], "result": {"protocolVersion": 1}}
            await send({"type": "websocket.send", "text": json.dumps(answer)})

    return app


def test_both_ends_of_a_websocket_read_through_sized_sockets(m: ModuleType, reads: list[tuple[str, int]]) -> None:
    """The client's connection (aiohttp's socket factory) and the one run_server accepted
    both read through SizedSocket: every read asks for 64 KiB at most."""

    async def scenario() -> None:
        async with served(echo_app()) as base:
            conn = await m.RPC.connect_url(base.replace("http", "ws") + "/acp")
            conn.start(object())
            for _ in range(3):
                await m.RemoteAgent(conn).initialize(m.InitializeRequest(protocol_version=1))
            await conn.close()

    run(scenario(), 30)
    sides = [side for side, _ in reads]
    assert sides.count("client") >= 3 and sides.count("server") >= 3, reads
    assert all(size == 256 * 1024 for _, size in reads)  # asyncio's ask, capped below


def test_the_http_client_reads_through_sized_sockets(m: ModuleType, reads: list[tuple[str, int]]) -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b"no"})

    async def scenario() -> None:
        from importlib import import_module

        wire = import_module(f"{m.__package__}._http_wire").AiohttpWire(5, 5)
        async with served(app) as base:
            answer = await wire.post(base + "/acp", b"{}", {"content-type": "application/json"})
            assert answer.status == 404
        await wire.aclose()

    run(scenario(), 30)
    assert ("client", 256 * 1024) in reads and ("server", 256 * 1024) in reads

