"""The shared remote server's parts in process, without a socket: the registry of
connections (open, find, forget, the idle sweep, close), the Starlette app and its
routes, the log filter for refused WebSockets, and the two mends of Hypercorn's HTTP/2
(the stream buffer's writer wakes once drained; data for a stream already closed is
acknowledged and dropped). Serving over a real socket: ``test_run_server.py`` and the
harness every remote test uses."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import sys
import time
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from .harness import pauses_noted, sleep_replaced
from .http_peers import Record, agent_class, app_for, bindings

h2_mod = pytest.importorskip("hypercorn.protocol.h2")
h2_events = pytest.importorskip("h2.events")

#: Hypercorn's own methods, before any test mended them (the mend is applied once a process)
ORIGINAL_POP = h2_mod.StreamBuffer.pop
ORIGINAL_HANDLE_EVENTS = h2_mod.H2Protocol._handle_events


@pytest.fixture(scope="module")
def v1(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return bindings(tmp_path_factory)


@pytest.fixture(scope="module")
def rs(v1: ModuleType) -> ModuleType:
    return importlib.import_module(f"{v1.__package__}._remote_server")


def run(coro: Any, timeout: float = 30) -> Any:
    return asyncio.run(asyncio.wait_for(coro, timeout))


def server_of(v1: ModuleType, **options: Any) -> Any:
    return app_for(v1, Record(), **options).state.acp


class FakeConn:
    def __init__(self, fail: bool = False) -> None:
        self.reasons: list[str] = []
        self.fail = fail
        self.is_closed = False

    async def close(self, reason: str) -> None:
        self.reasons.append(reason)
        if self.fail:
            raise RuntimeError("cannot close")


def test_served_defaults_and_touch(rs: ModuleType) -> None:
    before = time.monotonic()
    served = rs.Served("i", "p", "http", FakeConn())
    assert (served.id, served.principal, served.kind, served.state, served.streams) == (
        "i",
        "p",
        "http",
        None,
        0,
    )
    assert before <= served.last_seen <= time.monotonic()
    served.last_seen = 0.0
    served.touch()
    assert served.last_seen >= before
    assert rs.Served("j", "p", "ws", FakeConn()) != rs.Served(
        "j", "p", "ws", FakeConn()
    )  # eq=False


def test_a_server_is_made_with_its_options(v1: ModuleType, rs: ModuleType) -> None:
    remote = importlib.import_module(f"{v1.__package__}._remote")
    server = server_of(v1, max_body=99)
    assert isinstance(server, rs.AcpServer) and server.options.max_body == 99
    assert (
        isinstance(server.security, remote.Security)
        and server.security.allowed_hosts is None
    )
    assert server.connections == {} and server._sweeper is None and server._http is None
    assert server.rpc is v1.RPC and callable(server.serve)
    mine = remote.Security.loopback()
    assert server_of(v1, security=mine).security is mine


def test_open_registers_until_closed_and_find_checks_the_principal(
    v1: ModuleType, rs: ModuleType
) -> None:
    hs = importlib.import_module(f"{v1.__package__}._http_server")
    remote = importlib.import_module(f"{v1.__package__}._remote")

    async def main() -> None:
        server = server_of(v1)
        served = server.open(hs.HttpChannel(4), "alice", "http", "c1")
        assert (served.id, served.principal, served.kind) == ("c1", "alice", "http")
        assert served.conn.remote is served and server.connections == {"c1": served}
        assert served.conn.side == "agent"
        assert server._sweeper is not None and not server._sweeper.done()
        sweeper = server._sweeper
        other = server.open(hs.HttpChannel(4), "bob", "ws")
        assert (
            other.id not in ("c1", "")
            and len(other.id) >= 16
            and server._sweeper is sweeper
        )
        for cid, principal, status, reason in [
            (None, "alice", 400, "missing Acp-Connection-Id header"),
            ("", "alice", 400, "missing Acp-Connection-Id header"),
            ("c2", "alice", 404, "unknown Acp-Connection-Id"),
            ("c1", "bob", 404, "unknown Acp-Connection-Id"),
        ]:
            with pytest.raises(remote.Refused) as refused:
                server.find(cid, principal)
            assert (refused.value.status, refused.value.reason) == (status, reason)
        served.last_seen = 0.0
        assert server.find("c1", "alice") is served and served.last_seen > 0
        # another connection registered under the id: forgetting the first leaves it
        server.connections["c1"] = stranger = rs.Served(
            "c1", "alice", "http", FakeConn()
        )
        server._forget(served)
        assert server.connections["c1"] is stranger
        server.connections["c1"] = served
        await served.conn.close("done")
        for _ in range(100):
            if "c1" not in server.connections:
                break
            await asyncio.sleep(0.01)
        assert "c1" not in server.connections
        with pytest.raises(remote.Refused) as refused:
            server.find("c1", "alice")
        assert refused.value.status == 404
        # closed but still registered: 404 too
        server.connections["c1"] = served
        with pytest.raises(remote.Refused):
            server.find("c1", "alice")
        await server.close()
        assert server.connections == {}

    run(main())


def test_the_connection_options_reach_each_connection(v1: ModuleType) -> None:
    hs = importlib.import_module(f"{v1.__package__}._http_server")

    async def main() -> None:
        server = server_of(v1, connection={"max_in_flight": 3})
        served = server.open(hs.HttpChannel(4), "", "http")
        assert served.conn.max_in_flight == 3
        await server.close()

    run(main())


def test_admit_checks_host_and_origin_then_authenticates(v1: ModuleType) -> None:
    remote = importlib.import_module(f"{v1.__package__}._remote")

    async def main() -> None:
        server = server_of(
            v1,
            security=remote.Security.loopback(),
            authenticate=lambda h: h.get("x-who"),
        )
        assert await server.admit({"host": "127.0.0.1:1", "x-who": "me"}) == "me"
        for headers, status in [
            ({"host": "evil:1", "x-who": "me"}, 421),
            ({"host": "127.0.0.1:1"}, 401),
        ]:
            with pytest.raises(remote.Refused) as refused:
                await server.admit(headers)
            assert refused.value.status == status
        assert await server_of(v1).admit({}) == ""

    run(main())


class Clock:
    """``time`` and ``asyncio`` for the sweep: each sleep is noted and moves the clock
    by the next step given; past the steps, the registry is emptied (the sweep ends)."""

    def __init__(self, server: Any, steps: list[float]) -> None:
        self.now = 1000.0
        self.server = server
        self.steps = steps
        self.sleeps: list[float] = []
        #: the ids registered at each sleep
        self.registered: list[list[str]] = []

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, delay: float) -> None:
        self.sleeps.append(delay)
        self.registered.append(sorted(self.server.connections))
        if self.steps:
            self.now += self.steps.pop(0)
        else:
            self.server.connections.clear()
        await asyncio.sleep(0)


def sweep_with(
    monkeypatch: pytest.MonkeyPatch, rs: ModuleType, server: Any, steps: list[float]
) -> Clock:
    clock = Clock(server, steps)
    monkeypatch.setattr(rs, "time", SimpleNamespace(monotonic=clock.monotonic))
    sleep_replaced(monkeypatch, rs, clock.sleep)
    return clock


@pytest.mark.parametrize("idle, pause", [(2.5, 0.625), (100.0, 5.0)])
def test_the_sweep_closes_connections_idle_with_no_stream(
    v1: ModuleType,
    rs: ModuleType,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    idle: float,
    pause: float,
) -> None:
    async def main() -> None:
        server = server_of(v1, idle_timeout=idle)
        clock = sweep_with(monkeypatch, rs, server, [idle, 0.001, 0.0])
        idle_one, streaming, at_limit = FakeConn(), FakeConn(), FakeConn()
        server.connections = {
            "a": rs.Served("a", "", "http", idle_one, last_seen=999.9),
            "b": rs.Served("b", "", "http", streaming, streams=1, last_seen=0.0),
            "c": rs.Served("c", "", "http", at_limit, last_seen=1000.0),
        }
        with caplog.at_level(logging.INFO, logger=rs.__name__):
            await server._sweep()
        await asyncio.sleep(0)
        assert clock.sleeps == [pause] * 4
        assert (
            idle_one.reasons == [f"idle for {idle:g} s"] == at_limit.reasons
            and streaming.reasons == []
        )
        # idle for exactly the timeout is not yet past it: closed at the next round
        assert clock.registered == [["a", "b", "c"], ["b", "c"], ["b"], ["b"]]
        assert f"connection a idle for {idle:.0f} s: closed" in caplog.messages
        assert f"connection c idle for {idle:.0f} s: closed" in caplog.messages

    run(main())


def test_the_sweep_runs_while_there_are_connections(
    v1: ModuleType, rs: ModuleType
) -> None:
    async def main() -> None:
        server = server_of(v1)
        await server._sweep()  # none: it ends at once
        server._sweep_later()
        first = server._sweeper
        await first
        server._sweep_later()
        assert server._sweeper is not first
        await server.close()
        with contextlib.suppress(asyncio.CancelledError):
            await server._sweeper
        assert server._sweeper.done()

    run(main())


def test_close_closes_every_connection_and_stops_the_sweep(
    v1: ModuleType, rs: ModuleType
) -> None:
    async def main() -> None:
        server = server_of(v1)
        await server.close()  # nothing open: nothing to do
        conns = [FakeConn(), FakeConn(fail=True), FakeConn()]
        server.connections = {
            str(n): rs.Served(str(n), "", "ws", c) for n, c in enumerate(conns)
        }
        server._sweeper = asyncio.ensure_future(asyncio.sleep(3600))
        await server.close()
        assert server.connections == {}
        assert [c.reasons for c in conns] == [["the server is shutting down"]] * 3
        with pytest.raises(asyncio.CancelledError):
            await server._sweeper

    run(main())


def test_the_routes_and_the_app(v1: ModuleType, rs: ModuleType) -> None:
    websocket = importlib.import_module(f"{v1.__package__}._websocket")
    routing = pytest.importorskip("starlette.routing")
    server = server_of(v1)
    http, ws = server.routes()
    assert isinstance(http, routing.Route) and isinstance(ws, routing.WebSocketRoute)
    assert http.path == ws.path == "/acp" and {"GET", "POST", "DELETE"} <= http.methods
    assert not {"PUT", "PATCH"} & http.methods
    assert http.endpoint == server._http_endpoint
    assert isinstance(ws.app, websocket.WebSocketApp) and ws.app.server is server
    assert [r.path for r in server.routes("/elsewhere")] == ["/elsewhere"] * 2
    assert [r.path for r in server_of(v1, path="/there").routes()] == ["/there"] * 2
    assert [r.path for r in server_of(v1, path=None).routes()] == ["/acp"] * 2
    app = rs.asgi_app(v1.RPC, lambda conn: None, path="/p", max_streams=7)
    assert (
        isinstance(app.state.acp, rs.AcpServer)
        and app.state.acp.options.max_streams == 7
    )
    assert [r.path for r in app.routes] == ["/p", "/p"]

    async def main() -> None:
        closed: list[bool] = []

        async def close() -> None:
            closed.append(True)

        app.state.acp.close = close
        async with app.router.lifespan_context(app):
            assert closed == []
        assert closed == [True]
        await rs._close_connections(app)
        assert closed == [True, True]
        await rs._close_connections(object())
        await rs._close_connections(
            SimpleNamespace(state=SimpleNamespace(acp=SimpleNamespace(close=close)))
        )
        assert closed == [True, True]

    run(main())


def test_refused_websockets_are_not_logged_as_errors(rs: ModuleType) -> None:
    errors = logging.getLogger("uvicorn.error")
    kept = list(errors.filters)
    try:
        for f in list(errors.filters):
            errors.removeFilter(f)
        rs._quiet_denials()
        rs._quiet_denials()
        (denials,) = errors.filters
        record = logging.LogRecord(
            "uvicorn.error",
            logging.ERROR,
            "",
            0,
            "%s returned without completing handshake.",
            ("ASGI callable",),
            None,
        )
        assert not denials.filter(record)
        other = logging.LogRecord(
            "uvicorn.error",
            logging.ERROR,
            "",
            0,
            "Exception in ASGI application",
            (),
            None,
        )
        assert denials.filter(other)
    finally:
        for f in list(errors.filters):
            errors.removeFilter(f)
        for f in kept:
            errors.addFilter(f)


class Event:
    def __init__(self) -> None:
        self.sets = 0

    async def set(self) -> None:
        self.sets += 1


def unmended(
    monkeypatch: pytest.MonkeyPatch, handle_events: Any = ORIGINAL_HANDLE_EVENTS
) -> None:
    monkeypatch.setattr(h2_mod.StreamBuffer, "pop", ORIGINAL_POP)
    monkeypatch.setattr(h2_mod.H2Protocol, "_handle_events", handle_events)


def test_a_mended_stream_buffer_wakes_its_writer_once_drained(
    rs: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    unmended(monkeypatch)
    rs.mend_hypercorn_h2()
    pop = h2_mod.StreamBuffer.pop
    assert pop is not ORIGINAL_POP and pop.mended is True
    rs.mend_hypercorn_h2()  # once only
    assert h2_mod.StreamBuffer.pop is pop
    low = int(h2_mod.BUFFER_LOW_WATER)

    async def main() -> None:
        buffer = h2_mod.StreamBuffer(Event)
        buffer.buffer = bytearray(b"a" * (low + 3) + b"b" * 7)
        assert await buffer.pop(5) == b"aaaaa"  # low + 5 left
        assert (buffer._paused.sets, buffer._is_empty.sets) == (0, 0)
        assert await buffer.pop(5) == b"aaaaa"  # low left: not under
        assert (buffer._paused.sets, buffer._is_empty.sets) == (0, 0)
        assert await buffer.pop(low - 6) == b"a" * (low - 7) + b"b"  # 6 left
        assert (buffer._paused.sets, buffer._is_empty.sets) == (1, 0)
        assert await buffer.pop(100) == b"b" * 6
        assert (buffer._paused.sets, buffer._is_empty.sets) == (2, 1)
        assert len(buffer.buffer) == 0

    run(main())


def test_data_for_a_closed_stream_is_acknowledged_and_dropped(
    rs: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[list[Any]] = []

    async def handle_events(self: Any, events: list[Any]) -> None:
        assert self is protocol
        calls.append(list(events))
        for event in events:
            if getattr(event, "opens", None) is not None:
                self.streams[event.opens] = object()

    unmended(monkeypatch, handle_events)
    rs.mend_hypercorn_h2()
    acks: list[tuple[int, int]] = []
    protocol = SimpleNamespace(
        streams={1: object()},
        connection=SimpleNamespace(
            acknowledge_received_data=lambda n, sid: acks.append((n, sid))
        ),
    )

    def data(sid: int, length: int) -> Any:
        return h2_events.DataReceived(
            stream_id=sid, data=b"x" * length, flow_controlled_length=length
        )

    mended = h2_mod.H2Protocol._handle_events
    assert mended is not handle_events

    async def main() -> None:
        before, opening, late, known, dropped, after = (
            SimpleNamespace(opens=None),
            SimpleNamespace(opens=5),
            data(5, 3),
            data(1, 4),
            data(3, 10),
            SimpleNamespace(opens=None),
        )
        await mended(protocol, [before, known, dropped, after])
        assert calls == [[before, known], [after]] and acks == [(10, 3)]
        calls.clear()
        acks.clear()
        await mended(protocol, [dropped])
        assert calls == [[]] and acks == [(10, 3)]
        calls.clear()
        acks.clear()
        await mended(
            protocol, [opening, late, dropped, known]
        )  # the request opens stream 5 first
        assert calls == [[opening], [late], [known]] and acks == [(10, 3)]
        calls.clear()
        await mended(protocol, [before, after])
        assert calls == [[before, after]]

    run(main())


def test_each_part_says_what_to_install(
    v1: ModuleType, rs: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = importlib.import_module(f"{v1.__package__}._remote")
    server = server_of(v1)
    app = rs.asgi_app(v1.RPC, lambda conn: None)

    def missing(mp: pytest.MonkeyPatch, module: str, part: str) -> Any:
        mp.setitem(sys.modules, module, None)
        return pytest.raises(
            remote.RemoteDependencyError,
            match=rf"^the ACP remote transport \({part}\) needs",
        )

    async def main() -> None:
        with monkeypatch.context() as mp:
            with missing(mp, "starlette.responses", "server"):
                await server._http_endpoint(SimpleNamespace(method="GET"))
        with monkeypatch.context() as mp:
            with missing(mp, "uvicorn", "server"):
                await rs.run_server(app, "127.0.0.1", 0)
        for module in ("hypercorn.config", "hypercorn.asyncio"):
            with monkeypatch.context() as mp:
                with missing(mp, module, "http2"):
                    await rs.run_server(app, "127.0.0.1", 0, http2=True)

    run(main())
    for module, call in [
        ("starlette", lambda: rs.AcpServer(v1.RPC, lambda conn: None, server.options)),
        ("starlette.routing", server.routes),
        ("starlette.applications", server.app),
    ]:
        with monkeypatch.context() as mp:
            with missing(mp, module, "server"):
                call()
    for module in ("hypercorn.protocol.h2", "h2.events"):
        with monkeypatch.context() as mp:
            unmended(mp)
            with missing(mp, module, "http2"):
                rs.mend_hypercorn_h2()


def without_denials() -> None:
    errors = logging.getLogger("uvicorn.error")
    for f in list(errors.filters):
        errors.removeFilter(f)


def test_run_server_configures_uvicorn_and_closes_the_connections_when_cancelled(
    v1: ModuleType, rs: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    uvicorn = pytest.importorskip("uvicorn")
    hs = importlib.import_module(f"{v1.__package__}._http_server")
    made: list[Any] = []

    class Server(uvicorn.Server):  # type: ignore[misc,name-defined]
        def __init__(self, config: Any) -> None:
            super().__init__(config)
            made.append(self)

    monkeypatch.setattr(uvicorn, "Server", Server)
    without_denials()
    listening: list[Any] = []
    listening_socket = rs.listening_socket

    def noted(host: str, port: int) -> Any:
        listening.append(listening_socket(host, port))
        return listening[-1]

    monkeypatch.setattr(rs, "listening_socket", noted)
    pauses = pauses_noted(monkeypatch, rs)

    async def main() -> None:
        app = app_for(v1, Record())
        acp = app.state.acp
        close = acp.close
        closing: list[bool] = []  # whether uvicorn was told to stop, at each close

        async def noted_close() -> None:
            closing.append(made[0].should_exit)
            await close()

        acp.close = noted_close
        ports: list[int] = []
        task = asyncio.ensure_future(
            rs.run_server(app, "localhost", 0, log_level="info", started=ports.append)
        )
        while not ports:
            assert not task.done()
            await asyncio.sleep(0.01)
        assert pauses and set(pauses) == {0.01}  # polled until started
        (server,) = made
        config = server.config
        assert (config.host, config.port, config.log_level, config.lifespan) == (
            "localhost",
            0,
            "info",
            "auto",
        )
        assert config.timeout_graceful_shutdown == rs.SHUTDOWN_GRACE == 3.0
        assert ports == [server.servers[0].sockets[0].getsockname()[1]] and ports[0] > 0
        # served on the socket made for it (its connections read what a message needs)
        (sock,) = listening
        assert server.servers[0].sockets[0].fileno() == sock.fileno()
        assert any(
            isinstance(f, rs._Denials)
            for f in logging.getLogger("uvicorn.error").filters
        )
        served = app.state.acp.open(hs.HttpChannel(4), "", "http")
        await asyncio.sleep(0.05)
        assert not task.done()  # serving until cancelled
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert (
            served.conn.is_closed
            and server.should_exit
            and app.state.acp.connections == {}
        )
        assert "shutting down" in served.conn.close_reason
        # closed before uvicorn stops (its streams end at once), then by the lifespan
        assert closing == [False, True]
        assert (
            sock.fileno() == -1
        )  # uvicorn's shutdown waited for: the socket is closed

    run(main())


def test_run_server_without_started_serves_until_cancelled(
    v1: ModuleType, rs: ModuleType
) -> None:
    httpx = pytest.importorskip("httpx")

    async def main() -> None:
        app = app_for(v1, Record())
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        task = asyncio.ensure_future(rs.run_server(app, "127.0.0.1", port))
        async with httpx.AsyncClient() as client:
            for _ in range(500):
                try:
                    got = await client.get(f"http://127.0.0.1:{port}/acp")
                    break
                except httpx.TransportError:
                    await asyncio.sleep(0.02)
            assert got.status_code == 406
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(main())


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_run_server_over_http2_configures_hypercorn(
    v1: ModuleType,
    rs: ModuleType,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    host: str,
) -> None:
    import socket

    if host == "::1" and not socket.has_ipv6:
        pytest.skip("no IPv6")
    hypercorn_asyncio = pytest.importorskip("hypercorn.asyncio")
    httpx = pytest.importorskip("httpx")
    hs = importlib.import_module(f"{v1.__package__}._http_server")
    configs: list[Any] = []
    triggered: list[bool] = []
    serve = hypercorn_asyncio.serve

    async def recording(app: Any, config: Any, *, shutdown_trigger: Any) -> Any:
        configs.append(config)

        async def trigger() -> None:
            await shutdown_trigger()
            triggered.append(True)

        return await serve(app, config, shutdown_trigger=trigger)

    monkeypatch.setattr(hypercorn_asyncio, "serve", recording)
    unmended(monkeypatch)

    async def main() -> None:
        app = app_for(v1, Record())
        acp = app.state.acp
        close = acp.close
        closing: list[bool] = []  # whether Hypercorn was told to stop, at each close

        async def noted_close() -> None:
            closing.append(bool(triggered))
            await close()

        acp.close = noted_close
        ports: list[int] = []
        task = asyncio.ensure_future(
            rs.run_server(
                app, host, 0, http2=True, log_level="info", started=ports.append
            )
        )
        while not configs or not ports:
            assert not task.done()
            await asyncio.sleep(0.01)
        (config,) = configs
        (bind,) = config.bind
        assert bind.startswith("fd://") and ports[0] > 0
        assert config.loglevel == "INFO" and config.accesslog is None
        assert (
            config.graceful_timeout == 3.0 and config.keep_alive_max_requests == 2**62
        )
        assert getattr(h2_mod.StreamBuffer.pop, "mended", False)
        where = f"[{host}]" if ":" in host else host
        async with httpx.AsyncClient() as client:
            got = await client.get(f"http://{where}:{ports[0]}/acp")
        assert got.status_code == 406
        served = app.state.acp.open(hs.HttpChannel(4), "", "http")
        await asyncio.sleep(0.05)
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert served.conn.is_closed and app.state.acp.connections == {}
        # closed before Hypercorn stops (its streams end at once), then by the lifespan
        assert closing == [False, True] and triggered == [True]

    with caplog.at_level(logging.DEBUG, logger=rs.__name__):
        run(main())
    assert "Hypercorn's shutdown failed" not in caplog.messages


def test_a_failure_in_the_server_is_logged_with_the_request(
    v1: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    server = server_of(v1)

    class Broken:
        method = "POST"
        url = SimpleNamespace(path="/somewhere")

        @property
        def headers(self) -> Any:
            raise RuntimeError("broken")

    async def main() -> None:
        with caplog.at_level(logging.ERROR):
            got = await server._http_endpoint(Broken())
        assert (got.status_code, bytes(got.body)) == (500, b"internal server error\n")

    run(main())
    (record,) = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert (
        record.getMessage() == "POST /somewhere failed"
        and record.exc_info[0] is RuntimeError
    )


def test_a_server_of_versions_starts_each_connection_with_them(
    v1: ModuleType, rs: ModuleType
) -> None:
    pkg = sys.modules[v1.__package__]
    remote = importlib.import_module(f"{v1.__package__}._remote")
    agent = agent_class(v1, Record())
    made: list[Any] = []

    def serve(conn: Any) -> Any:
        made.append(conn)
        return agent(v1.RemoteClient(conn))

    server = rs.AcpServer(
        v1.RPC, pkg.Versions().add(v1.RPC, serve), remote.ServerOptions()
    )
    init = b'{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}'

    async def body() -> Any:
        yield init

    request = SimpleNamespace(
        method="POST",
        headers={"content-type": "application/json"},
        stream=body,
        url=SimpleNamespace(path="/acp"),
    )

    async def main() -> None:
        got = await server._http_endpoint(request)
        assert got.status_code == 200, got.body
        (served,) = server.connections.values()
        assert made == [served.conn]
        await server.close()

    run(main())


def test_run_server_listens_on_port_8000_of_the_loopback_by_default(
    v1: ModuleType, rs: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[tuple[str, int]] = []

    class Stop(Exception):
        pass

    def listening_socket(host: str, port: int) -> Any:
        asked.append((host, port))
        raise Stop

    monkeypatch.setattr(rs, "listening_socket", listening_socket)
    with pytest.raises(Stop):
        run(rs.run_server(app_for(v1, Record())))
    assert asked == [("127.0.0.1", 8000)]


def uvicorn_standing_in(monkeypatch: pytest.MonkeyPatch, fail: str) -> list[Any]:
    """uvicorn's ``Server`` replaced by one whose ``serve`` fails ``fail`` ("start":
    before it listens; "stop": once told to exit); the servers made, in a list."""
    uvicorn = pytest.importorskip("uvicorn")
    made: list[Any] = []

    class Server:
        def __init__(self, config: Any) -> None:
            self.config = config
            self.started = False
            self.should_exit = False
            made.append(self)

        async def serve(self, sockets: list[Any]) -> None:
            self.servers = [SimpleNamespace(sockets=sockets)]
            try:
                if fail == "start":
                    await asyncio.sleep(0.05)
                    raise OSError("cannot serve")
                self.started = True
                while not self.should_exit:
                    await asyncio.sleep(0.01)
                raise RuntimeError("shutdown broke")
            finally:
                for sock in sockets:
                    sock.close()

    monkeypatch.setattr(uvicorn, "Server", Server)
    return made


def test_run_server_raises_what_failed_uvicorn_before_it_started(
    v1: ModuleType, rs: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    uvicorn_standing_in(monkeypatch, "start")
    ports: list[int] = []
    with pytest.raises(OSError, match="^cannot serve$"):
        run(rs.run_server(app_for(v1, Record()), "127.0.0.1", 0, started=ports.append))
    assert ports == []


def test_run_server_logs_a_failed_shutdown_and_ends_cancelled(
    v1: ModuleType,
    rs: ModuleType,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    made = uvicorn_standing_in(monkeypatch, "stop")

    async def main() -> None:
        ports: list[int] = []
        task = asyncio.ensure_future(
            rs.run_server(app_for(v1, Record()), "127.0.0.1", 0, started=ports.append)
        )
        while not ports:
            assert not task.done()
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert made[0].should_exit

    with caplog.at_level(logging.DEBUG, logger=rs.__name__):
        run(main())
    (record,) = [r for r in caplog.records if r.name == rs.__name__]
    assert (
        record.levelno == logging.DEBUG
        and record.getMessage() == "uvicorn's shutdown failed"
    )
    assert record.exc_info is not None and record.exc_info[0] is RuntimeError


def test_run_server_over_http2_logs_a_failed_shutdown_and_ends_cancelled(
    v1: ModuleType,
    rs: ModuleType,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    hypercorn_asyncio = pytest.importorskip("hypercorn.asyncio")
    configs: list[Any] = []

    async def failing(app: Any, config: Any, *, shutdown_trigger: Any) -> None:
        configs.append(config)
        await shutdown_trigger()
        raise RuntimeError("shutdown broke")

    monkeypatch.setattr(hypercorn_asyncio, "serve", failing)
    unmended(monkeypatch)

    async def main() -> None:
        ports: list[int] = []
        task = asyncio.ensure_future(
            rs.run_server(
                app_for(v1, Record()), "127.0.0.1", 0, http2=True, started=ports.append
            )
        )
        while not ports:
            assert not task.done()
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    with caplog.at_level(logging.DEBUG, logger=rs.__name__):
        run(main())
    (record,) = [r for r in caplog.records if r.name == rs.__name__]
    assert record.levelno == logging.DEBUG
    assert record.getMessage() == "Hypercorn's shutdown failed"
    assert record.exc_info is not None and record.exc_info[0] is RuntimeError
