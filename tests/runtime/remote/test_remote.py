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



# --- what both transports share: settings, security, authentication, errors ----------

import sys  # noqa: E402


def test_a_missing_library_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _remote.need("json", "ws") is json
    monkeypatch.setitem(sys.modules, "aiohttp", None)
    with pytest.raises(_remote.RemoteDependencyError) as caught:
        _remote.need("aiohttp", "ws")
    assert str(caught.value) == (
        "the ACP remote transport (ws) needs the Python package 'aiohttp', which is not installed: pip install 'aiohttp'"
    )
    assert isinstance(caught.value, ImportError) and isinstance(caught.value.__cause__, ImportError)
    monkeypatch.setitem(sys.modules, "sse_starlette", None)
    monkeypatch.setitem(sys.modules, "sse_starlette.sse", None)  # imported by earlier tests
    with pytest.raises(_remote.RemoteDependencyError) as caught:
        _remote.need("sse_starlette.sse", "server")
    assert str(caught.value) == (
        "the ACP remote transport (server) needs the Python package 'sse-starlette', which is not installed:"
        " pip install 'starlette' 'uvicorn' 'sse-starlette' 'websockets'"
    )
    monkeypatch.setitem(sys.modules, "h2.events", None)  # Hypercorn's, for the HTTP/2 mend
    with pytest.raises(_remote.RemoteDependencyError) as caught:
        _remote.need("h2.events", "http2")
    assert str(caught.value) == (
        "the ACP remote transport (http2) needs the Python package 'h2', which is not installed: pip install 'hypercorn'"
    )


def test_refusals_and_closes_say_why() -> None:
    refused = _remote.Refused(421, "Host 'x' is not allowed")
    assert (refused.status, refused.reason, str(refused)) == (421, "Host 'x' is not allowed", "Host 'x' is not allowed")
    assert str(_remote.ws_closed(1011, "agent failed")) == "the WebSocket closed with code 1011: agent failed"
    assert str(_remote.ws_closed(1000, "")) == "the WebSocket closed with code 1000"
    assert str(_remote.ws_closed(None, None)) == "the WebSocket closed with code None"
    error = _remote.RefusedError("ws://h/acp", 401, "not authenticated")
    assert str(error) == "ws://h/acp refused the connection: HTTP 401: not authenticated"
    assert (error.url, error.status, error.reason) == ("ws://h/acp", 401, "not authenticated")
    bare = _remote.RefusedError("http://h/acp", 503)
    assert str(bare) == "http://h/acp refused the connection: HTTP 503" and bare.reason == ""


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("localhost", True),
        ("", False),
        ("127.0.0.1", True),
        ("127.9.8.7", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.0.0.1", False),
        ("example.com", False),
        ("X127.0.0.1", False),
    ],
)
def test_which_binds_are_loopback(host: str, loopback: bool) -> None:
    assert _remote._is_loopback(host) is loopback
    expected = _remote.Security.loopback() if loopback else _remote.Security()
    assert _remote.Security.for_bind(host) == expected


def test_a_loopback_server_accepts_loopback_names_only() -> None:
    security = _remote.Security.loopback()
    assert security.allowed_hosts == ("localhost:*", "127.0.0.1:*", "[::1]:*")
    assert security.allowed_origins == (
        "http://localhost:*",
        "http://127.0.0.1:*",
        "http://[::1]:*",
        "https://localhost:*",
        "https://127.0.0.1:*",
        "https://[::1]:*",
    )
    assert _remote.Security.for_bind("0.0.0.0") == _remote.Security(None, None)


def refusal(security: Any, headers: dict[str, str]) -> tuple[int, str] | None:
    try:
        security.check(headers)
    except _remote.Refused as exc:
        return exc.status, exc.reason
    return None


def test_host_and_origin_checks() -> None:
    security = _remote.Security(("agent.example:*", "other:8080"), ("https://app.example",))
    assert refusal(security, {"host": "agent.example:443"}) is None
    assert refusal(security, {"host": "OTHER:8080", "origin": "HTTPS://App.Example"}) is None
    assert refusal(security, {"host": "other:8081"}) == (421, "Host 'other:8081' is not allowed")
    assert refusal(security, {}) == (421, "Host '' is not allowed")
    assert refusal(security, {"host": "other:8080", "origin": "https://evil.example"}) == (
        403,
        "Origin 'https://evil.example' is not allowed",
    )
    # the Host is judged first
    assert refusal(security, {"host": "evil", "origin": "https://evil.example"}) == (421, "Host 'evil' is not allowed")
    # None: anything
    assert refusal(_remote.Security(None, ("https://app.example",)), {"host": "anything"}) is None
    assert refusal(_remote.Security(("h",), None), {"host": "h", "origin": "https://evil.example"}) is None
    assert refusal(_remote.Security(), {}) is None


@pytest.mark.parametrize(
    ("value", "allowed", "matches"),
    [
        ("name", ("name:*",), True),
        ("name:80", ("name:*",), True),
        ("NAME:80", ("name:*",), True),
        ("name:80", ("NAME:*",), True),
        ("name:", ("name:*",), False),
        ("name:8x", ("name:*",), False),
        ("name:x8", ("name:*",), False),
        ("name2:80", ("name:*",), False),
        ("xname:80", ("name:*",), False),
        ("name:80:80", ("name:*",), False),
        ("name:80", ("name",), False),
        ("name", ("name",), True),
        ("name:80", ("name:80",), True),
        ("name:80", ("name:81", "name:80"), True),
        ("name:80", (), False),
        ("name:*", ("name:80",), False),
    ],
)
def test_allow_list_patterns(value: str, allowed: tuple[str, ...], matches: bool) -> None:
    assert _remote._matches(value, allowed) is matches


def test_bearer_tokens() -> None:
    tokens = {"t1": "alice", "t2": "bob"}
    hook = _remote.bearer(tokens)
    tokens["t3"] = "eve"  # the hook keeps the tokens it was given
    assert hook({"authorization": "Bearer t1"}) == "alice"
    assert hook({"authorization": "bearer t2"}) == "bob"
    assert hook({"authorization": "BEARER  t2 "}) == "bob"
    assert hook({"authorization": "Bearer t3"}) is None
    assert hook({"authorization": "Bearer t"}) is None
    assert hook({"authorization": "Bearer t12"}) is None
    assert hook({"authorization": "Basic t1"}) is None
    assert hook({"authorization": "Bearer"}) is None
    assert hook({"authorization": "Bearer "}) is None
    assert hook({"authorization": "t1"}) is None
    assert hook({}) is None


def test_the_authentication_hook() -> None:
    async def scenario() -> None:
        assert await _remote.authenticate(None, {}) == ""
        assert await _remote.authenticate(lambda h: h.get("user"), {"user": "u"}) == "u"
        assert await _remote.authenticate(lambda h: 7, {}) == "7"

        async def later(headers: Any) -> str | None:
            await asyncio.sleep(0)
            return headers.get("user")

        assert await _remote.authenticate(later, {"user": "v"}) == "v"
        for hook in (lambda h: None, later):
            with pytest.raises(_remote.Refused) as caught:
                await _remote.authenticate(hook, {})
            assert (caught.value.status, caught.value.reason) == (401, "not authenticated")

    run(scenario(), timeout=10)


def test_server_options_are_checked() -> None:
    options = _remote.ServerOptions()
    assert (options.path, options.security, options.authenticate) == ("/acp", None, None)
    assert (options.max_body, options.keepalive, options.init_timeout, options.idle_timeout) == (16 * 1024 * 1024, 15.0, 30.0, 600.0)
    assert (options.stream_queue, options.max_streams, options.connection) == (256, 64, {})
    assert _remote.ServerOptions().connection is not options.connection
    _remote.ServerOptions(max_body=2, stream_queue=1, max_streams=2, keepalive=0.01, init_timeout=0.01, idle_timeout=0.01)
    for bad in ({"max_body": 1}, {"stream_queue": 0}, {"max_streams": 1}):
        with pytest.raises(ValueError) as caught:
            _remote.ServerOptions(**bad)
        assert str(caught.value) == "max_body must be >= 2, stream_queue >= 1 and max_streams >= 2"
    for name in ("keepalive", "init_timeout", "idle_timeout"):
        for value in (0, -1.0):
            with pytest.raises(ValueError) as caught:
                _remote.ServerOptions(**{name: value})
            assert str(caught.value) == f"{name} must be > 0"


def test_ids_and_sessions_of_messages() -> None:
    keys = {_remote.id_key(rid) for rid in (1, 1.0, True, "1", None)}
    assert len(keys) == 5 and _remote.id_key(1) == ("int", 1)
    assert _remote.session_of({"params": {"sessionId": "s"}}) == "s"
    assert _remote.session_of({"params": {"sessionId": 5}}) is None
    assert _remote.session_of({"params": ["s"]}) is None
    assert _remote.session_of({"id": 1}) is None
    assert _remote.session_of(["params"]) is None
    ids = {_remote.new_id() for _ in range(50)}
    assert len(ids) == 50 and all(len(i) == 24 and i.replace("-", "").replace("_", "").isalnum() for i in ids)


def test_a_listening_socket_over_ipv6_and_its_failures() -> None:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback here")
    six = _remote.listening_socket("::1", 0)
    with six:
        assert six.family == socket.AF_INET6 and six.get_inheritable()
    four = _remote.listening_socket("127.0.0.1", 0)
    with four:
        assert four.family == socket.AF_INET and four.get_inheritable()
        taken = four.getsockname()[1]
        four.listen(1)
        import gc
        import warnings

        gc.collect()  # what earlier tests left, before watching for unclosed sockets
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(OSError):
                _remote.listening_socket("203.0.113.1", taken)  # not an address of this machine
            gc.collect()
        leaked = [w for w in caught if issubclass(w.category, ResourceWarning) and "SizedListener" in str(w.message)]
        assert not leaked  # closed


def test_a_sized_listener_with_a_timeout_accepts_blocking_sockets() -> None:
    listener = _remote.listening_socket("127.0.0.1", 0)
    listener.settimeout(5)
    client, accepted = pair(listener, socket.socket())
    with listener, client, accepted:
        assert accepted.gettimeout() is None


def test_sized_sockets_keep_their_protocol_and_flags() -> None:
    """TCP named, so that asyncio sets TCP_NODELAY on them; recv's flags passed on."""
    made = _remote.sized_socket((socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("127.0.0.1", 0)))
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    client, accepted = pair(listener, made)
    with listener, client, accepted:
        assert client.proto == socket.IPPROTO_TCP
        accepted.sendall(b"peek")
        client.settimeout(5)
        assert client.recv(10, socket.MSG_PEEK) == b"peek"
        assert client.recv(10) == b"peek"


def test_a_sized_listener_gives_the_default_timeout_as_socket_accept_does() -> None:
    listener = _remote.listening_socket("127.0.0.1", 0)
    plain = socket.socket()
    plain.bind(("127.0.0.1", 0))
    socket.setdefaulttimeout(7.0)
    try:
        with listener, plain:
            for server in (listener, plain):
                server.settimeout(3)
                client, accepted = pair(server, socket.socket())
                with client, accepted:
                    assert accepted.gettimeout() == 7.0, server
    finally:
        socket.setdefaulttimeout(None)


# -- the event loop run() picks ------------------------------------------------------
async def _loop_kind(value: int) -> tuple[str, int]:
    await asyncio.sleep(0)
    return type(asyncio.get_running_loop()).__module__.split(".")[0], value


def test_run_picks_uvloop_when_installed() -> None:
    pytest.importorskip("uvloop", reason="uvloop is not installed (pip install uvloop)")
    assert _remote.run(_loop_kind(1)) == ("uvloop", 1)
    assert _remote.run(_loop_kind(2), uvloop=True) == ("uvloop", 2)
    assert _remote.run(_loop_kind(3), uvloop=False) == ("asyncio", 3)


def test_run_falls_back_to_asyncio_without_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)
    assert _remote.loop_factory() is None and _remote.loop_factory(False) is None
    assert _remote.run(_loop_kind(4)) == ("asyncio", 4)
    main = _loop_kind(5)
    with pytest.raises(_remote.RemoteDependencyError) as caught:
        _remote.run(main, uvloop=True)
    assert main.cr_frame is None  # closed, never run: no warning that it was never awaited
    assert str(caught.value) == (
        "the ACP remote transport (event loop) needs the Python package 'uvloop', which is not installed:"
        " pip install 'uvloop'"
    )


def test_run_gives_the_coroutines_error_and_closes_its_loop() -> None:
    loops: list[asyncio.AbstractEventLoop] = []

    async def fails() -> None:
        loops.append(asyncio.get_running_loop())
        raise LookupError("the handler's")

    for choice in (None, False):
        with pytest.raises(LookupError, match="the handler's"):
            _remote.run(fails(), uvloop=choice)
    assert len(loops) == 2 and all(loop.is_closed() for loop in loops)


def test_run_in_debug_mode() -> None:
    async def debug() -> bool:
        return asyncio.get_running_loop().get_debug()

    assert _remote.run(debug(), debug=True) is True
    assert _remote.run(debug(), uvloop=False, debug=True) is True
