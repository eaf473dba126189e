"""The connection's parts that need no peer (acpgen/runtime/_connection.py), on one style
(they do not depend on it): what a new connection holds before it serves, its defaults,
the checks of its options with their errors matched whole. Its promises with a peer are
in ``test_connection.py``, ``test_connection_ends.py`` and ``test_incoming.py``."""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import socket
from types import ModuleType
from typing import Any

import pytest

from .harness import module, raw_peer, run, socket_streams

LINE_ERROR = "max_line must be >= 2 and max_in_flight >= 1"
TIME_ERROR = "drain_timeout and close_grace must be >= 0"
TYPE_ERROR = "a connection runs over a reader and writer, or a channel"


@pytest.fixture(scope="module")
def m(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return module("pydantic", tmp_path_factory.mktemp("rpc-pydantic"))


def part(m: ModuleType, name: str) -> ModuleType:
    """The generated package's copy of a runtime module."""
    return importlib.import_module(f"{m.__package__}.{name}")


def on_streams(m: ModuleType, check: Any, **options: Any) -> None:
    """``check(conn, reader, writer)`` on a new connection over a socket pair."""

    async def scenario() -> None:
        reader, writer, _, peer_w = await socket_streams()
        try:
            check(m.RPC.connect("agent", reader, writer, **options), reader, writer)
        finally:
            writer.close()
            peer_w.close()

    asyncio.run(scenario())


def test_a_new_connection_has_the_documented_defaults(m: ModuleType) -> None:
    connection = part(m, "_connection")

    def check(conn: Any, reader: Any, writer: Any) -> None:
        assert conn.rpc is m.RPC and conn.side == "agent"
        assert conn.version == m.RPC.version and conn.version is not None
        assert conn.channel is None and conn.remote is None
        assert conn.reader is reader and conn.writer is writer
        assert conn.log is logging.getLogger(connection.__name__)
        assert conn.max_line == part(m, "_jsonrpc").DEFAULT_MAX_LINE
        assert conn.max_in_flight == connection.DEFAULT_MAX_IN_FLIGHT == 64
        assert conn.drain_timeout == 5.0
        assert conn.close_grace == connection.CLOSE_GRACE == 2.0
        assert conn.send_cancel_request is True
        assert conn.process is None and conn.telemetry is None and conn.router is None
        assert conn._observers == []
        assert conn.is_closed is False and conn.close_reason == ""
        assert conn.returncode is None
        assert conn._load() == 0 and conn._received == 0 and conn._paused is False
        assert conn._cancel_spec is not None
        assert conn._cancel_spec == m.RPC.spec("$/cancel_request", "notification")
        for name in ("_reader_task", "_closer", "_watcher", "_end_process", "_exited"):
            assert getattr(conn, name) is None, name

    on_streams(m, check)


def test_a_logger_given_is_the_one_used(m: ModuleType) -> None:
    log = logging.getLogger("test_connection_parts")

    def check(conn: Any, reader: Any, writer: Any) -> None:
        assert conn.log is log

    on_streams(m, check, logger=log)


def test_the_options_given_are_kept(m: ModuleType) -> None:
    def check(conn: Any, reader: Any, writer: Any) -> None:
        assert (conn.max_line, conn.max_in_flight) == (2, 1)
        assert (conn.drain_timeout, conn.close_grace) == (0, 0)
        assert conn.send_cancel_request is False

    options = dict(max_line=2, max_in_flight=1, drain_timeout=0, close_grace=0)
    on_streams(m, check, send_cancel_request=False, **options)


@pytest.mark.parametrize(
    "options",
    [
        {"max_line": 2},
        {"max_in_flight": 1},
        {"drain_timeout": 0},
        {"close_grace": 0},
        {"close_grace": None},
        {"max_line": 2, "max_in_flight": 1, "drain_timeout": 0, "close_grace": 0},
    ],
)
def test_the_least_values_are_taken(m: ModuleType, options: dict[str, Any]) -> None:
    def check(conn: Any, reader: Any, writer: Any) -> None:
        for name, value in options.items():
            assert getattr(conn, name) == value

    on_streams(m, check, **options)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_line": 1}, LINE_ERROR),
        ({"max_in_flight": 0}, LINE_ERROR),
        ({"max_line": 1, "max_in_flight": 0}, LINE_ERROR),
        ({"drain_timeout": -0.5}, TIME_ERROR),
        ({"close_grace": -0.5}, TIME_ERROR),
        ({"drain_timeout": -1, "close_grace": -1}, TIME_ERROR),
    ],
)
def test_values_under_the_least_are_refused(
    m: ModuleType, options: dict[str, Any], message: str
) -> None:
    def check(conn: Any, reader: Any, writer: Any) -> None:
        raise AssertionError("accepted")

    with pytest.raises(ValueError) as caught:
        on_streams(m, check, **options)
    assert str(caught.value) == message


def test_a_connection_needs_streams_or_a_channel_not_both(m: ModuleType) -> None:
    channel = part(m, "_channel")

    async def scenario() -> None:
        with pytest.raises(TypeError) as caught:
            m.RPC.connect("agent", None, None)
        assert str(caught.value) == TYPE_ERROR
        reader, writer, _, peer_w = await socket_streams()
        a, _ = channel.memory_pair()
        with pytest.raises(TypeError) as caught:
            m.RPC.connect("agent", reader, writer, channel=a)
        assert str(caught.value) == TYPE_ERROR
        writer.close()
        peer_w.close()

    asyncio.run(scenario())


def test_a_connection_over_a_channel_writes_to_it(m: ModuleType) -> None:
    channel = part(m, "_channel")

    async def scenario() -> None:
        a, _ = channel.memory_pair()
        conn = m.RPC.over("agent", a)
        assert conn.channel is a and conn.reader is None
        assert (
            isinstance(conn.writer, channel.ChannelWriter) and conn.writer.channel is a
        )

    asyncio.run(scenario())


def test_the_process_and_the_telemetry_given_are_kept(m: ModuleType) -> None:
    process, telemetry = object(), object()

    def check(conn: Any, reader: Any, writer: Any) -> None:
        assert conn.process is process and conn.telemetry is telemetry

    on_streams(m, check, process=process, telemetry=telemetry)


class Stuck:
    """A client whose ``session/update`` handler waits until released."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.started = 0

    async def session_update(self, params: Any) -> None:
        self.started += 1
        await self.release.wait()


def update(text: str) -> dict[str, Any]:
    params = {"sessionId": "s", "update": {"type": "text", "text": text}}
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


def test_closing_is_logged_with_its_reason_by_default_this_side(
    m: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario() -> None:
        async with raw_peer(m, "client", Stuck()) as (conn, _):
            await conn.close()
            assert conn.is_closed is True
            assert conn.close_reason == "closed by this side"

    caplog.set_level(logging.DEBUG)
    run(scenario(), timeout=30)
    assert ["connection closing: closed by this side"] == [
        r.getMessage()
        for r in caplog.records
        if r.getMessage().startswith("connection")
    ]


def test_the_notifications_a_close_could_not_handle_are_counted_in_a_warning(
    m: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario() -> None:
        client = Stuck()
        async with raw_peer(m, "client", client, drain_timeout=0.1) as (conn, peer):
            await peer.send(update("1"), update("2"), update("3"))
            while conn._load() < 3:
                await asyncio.sleep(0.01)
            await conn.close("enough")
            assert client.started == 1

    caplog.set_level(logging.WARNING)
    run(scenario(), timeout=30)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "2 notifications not handled: the connection closed (enough)" in warnings


def test_a_connection_serves_once(m: ModuleType) -> None:
    async def scenario() -> None:
        async with raw_peer(m, "client", Stuck()) as (conn, _):
            with pytest.raises(RuntimeError) as caught:
                conn.start(Stuck())
            assert str(caught.value) == "this connection is serving already"
            await conn.close("done")
            with pytest.raises(ConnectionError) as closed:
                conn.start(Stuck())
            assert type(closed.value).__name__ == "ConnectionClosedError"

    run(scenario(), timeout=30)


class Refusing:
    """A channel whose sends fail with ``error``; nothing comes from it."""

    def __init__(self, error: BaseException) -> None:
        self.error = error
        self.gone = asyncio.Event()

    async def receive(self) -> bytes | None:
        await self.gone.wait()
        return None

    async def send(self, message: bytes) -> None:
        raise self.error

    async def aclose(self) -> None:
        self.gone.set()


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        ("ChannelClosed:the channel is closed", "the channel is closed"),
        ("ChannelClosed:", "writing to the peer failed: ChannelClosed()"),
        (
            "ConnectionResetError:reset",
            "writing to the peer failed: ConnectionResetError('reset')",
        ),
    ],
)
def test_a_failed_send_on_a_channel_gives_its_reason(
    m: ModuleType, error: str, reason: str
) -> None:
    """A transport's own reason (a :class:`ChannelClosed` with a message) stands as it is;
    any other failure is named."""
    channel = part(m, "_channel")
    kind, _, text = error.partition(":")
    exc = (
        channel.ChannelClosed(*([text] if text else []))
        if kind == "ChannelClosed"
        else ConnectionResetError(text)
    )

    async def scenario() -> None:
        conn = m.RPC.over("client", Refusing(exc))
        conn.start(Stuck())
        with pytest.raises(ConnectionError) as caught:
            await conn.notify("session/cancel", {"sessionId": "s"})
        assert caught.value.reason == reason
        await asyncio.wait_for(conn.closed, 10)
        assert conn.close_reason == reason

    run(scenario(), timeout=30)


def test_a_request_before_serving_fails_after_one_step_of_the_loop_only(
    m: ModuleType,
) -> None:
    """A request made before the connection serves gives a ``serve()`` task created just
    before it one step to start, no more: serving later does not make it wait for an
    answer."""

    async def scenario() -> None:
        async with raw_peer(m, "client", Stuck(), start=False) as (conn, peer):
            params = {"protocolVersion": 1}
            asking = asyncio.ensure_future(conn.request("initialize", params))
            await asyncio.sleep(0.05)
            conn.start(Stuck())
            with pytest.raises(ConnectionError) as caught:
                await asyncio.wait_for(asking, 10)
            assert str(caught.value).startswith("the connection is not serving")

    run(scenario(), timeout=30)


def test_the_handlers_failures_are_logged_on_the_connections_logger(
    m: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    class Failing:
        async def session_update(self, params: Any) -> None:
            raise ValueError("boom")

    async def scenario() -> None:
        log = logging.getLogger("test_connection_parts.given")
        async with raw_peer(m, "client", Failing(), logger=log) as (conn, peer):
            await peer.send(update("1"))
            while not any("failed" in r.getMessage() for r in caplog.records):
                await asyncio.sleep(0.01)

    caplog.set_level(logging.INFO)
    run(scenario(), timeout=30)
    failed = [r for r in caplog.records if "failed" in r.getMessage()]
    assert [(r.name, r.getMessage()) for r in failed] == [
        (
            "test_connection_parts.given",
            "handler of notification 'session/update' failed",
        )
    ]


def test_a_connection_over_a_channel_reads_from_it_and_answers(m: ModuleType) -> None:
    channel = part(m, "_channel")

    class Files:
        async def fs_read_text_file(self, params: Any) -> Any:
            return m.RPC.codec.load(m.ReadTextFileResponse, {"content": "x"})

    async def scenario() -> None:
        a, b = channel.memory_pair()
        conn = m.RPC.over("client", a)
        conn.start(Files())
        params = {"sessionId": "s", "path": "/a"}
        ask = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "fs/read_text_file",
            "params": params,
        }
        await b.send(json.dumps(ask).encode())
        answer = json.loads(await asyncio.wait_for(b.receive(), 10))
        assert answer == {"jsonrpc": "2.0", "id": 1, "result": {"content": "x"}}
        await conn.close()

    run(scenario(), timeout=30)


def test_an_observer_sees_a_frame_written_without_its_newline(m: ModuleType) -> None:
    seen: list[Any] = []

    async def scenario() -> None:
        async with raw_peer(m, "client", Stuck(), observers=[seen.append]) as (
            conn,
            peer,
        ):
            await conn.notify("session/cancel", {"sessionId": "s"})
            written = await peer.recv()
        body = json.dumps(written, separators=(",", ":")).encode()
        assert [(t.direction, t.line, t.size, t.whole) for t in seen] == [
            ("out", body, len(body), True)
        ]

    run(scenario(), timeout=30)


def test_what_is_sent_after_a_close_fails_with_its_reason(m: ModuleType) -> None:
    async def scenario() -> None:
        async with raw_peer(m, "client", Stuck()) as (conn, peer):
            await conn.close("done here")
            for send in (conn.notify, conn.request):
                with pytest.raises(ConnectionError) as caught:
                    await send("session/cancel", {"sessionId": "s"})
                assert (caught.value.reason, caught.value.returncode) == (
                    "done here",
                    None,
                )

    run(scenario(), timeout=30)


def test_serve_serves_the_handler_given(m: ModuleType) -> None:
    class Files:
        async def fs_read_text_file(self, params: Any) -> Any:
            return m.RPC.codec.load(m.ReadTextFileResponse, {"content": "x"})

    async def scenario() -> None:
        async with raw_peer(m, "client", None, start=False) as (conn, peer):
            serving = asyncio.ensure_future(conn.serve(Files()))
            params = {"sessionId": "s", "path": "/a"}
            await peer.send(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "fs/read_text_file",
                    "params": params,
                }
            )
            assert await peer.recv() == {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {"content": "x"},
            }
            await conn.close()
            await asyncio.wait_for(serving, 10)

    run(scenario(), timeout=30)


def test_a_request_handler_can_close_its_connection(m: ModuleType) -> None:
    """The close runs in the handler's task: it neither cancels nor waits for that task."""

    class Closing:
        conn: Any = None
        closed = False

        async def fs_read_text_file(self, params: Any) -> Any:
            await self.conn.close("asked by a handler")
            self.closed = True
            return m.RPC.codec.load(m.ReadTextFileResponse, {"content": "x"})

    async def scenario() -> None:
        handler = Closing()
        async with raw_peer(m, "client", handler, start=False, close_grace=5) as (
            conn,
            peer,
        ):
            handler.conn = conn
            conn.start(handler)
            params = {"sessionId": "s", "path": "/a"}
            await peer.send(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "fs/read_text_file",
                    "params": params,
                }
            )
            await asyncio.wait_for(conn.closed, 4)
            assert conn.close_reason == "asked by a handler"
            for _ in range(100):
                if handler.closed:
                    break
                await asyncio.sleep(0.01)
            assert handler.closed

    run(scenario(), timeout=30)


def test_a_close_stops_reading_even_when_the_input_stays_open(m: ModuleType) -> None:
    """Input and output on streams of their own (as stdin and stdout): closing the output
    does not end the input, the close stops the reader itself."""
    seen: list[Any] = []

    async def scenario() -> None:
        reader, writer_a, _, peer_in = await socket_streams()
        reader_b, writer, peer_out, peer_w_b = await socket_streams()
        conn = m.RPC.connect("client", reader, writer, observers=[seen.append])
        conn.start(Stuck())
        await asyncio.sleep(0.01)
        await asyncio.wait_for(conn.close(), 10)
        assert conn._reader_task.done()
        peer_in.write(json.dumps(update("late")).encode() + b"\n")
        await peer_in.drain()
        await asyncio.sleep(0.1)
        assert [t for t in seen if t.direction == "in"] == []
        for w in (writer_a, peer_in, peer_w_b):
            w.close()

    run(scenario(), timeout=30)


def test_a_close_without_a_grace_waits_for_the_handlers_without_a_limit(
    m: ModuleType,
) -> None:
    class Slow:
        answered = False

        async def fs_read_text_file(self, params: Any) -> Any:
            try:
                await asyncio.sleep(60)
            finally:
                await asyncio.sleep(0.3)  # cancelled: answering takes a while
                self.answered = True

    async def scenario() -> None:
        handler = Slow()
        async with raw_peer(m, "client", handler, close_grace=None) as (conn, peer):
            params = {"sessionId": "s", "path": "/a"}
            await peer.send(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "fs/read_text_file",
                    "params": params,
                }
            )
            await asyncio.sleep(0.05)
            await asyncio.wait_for(conn.close(), 10)
            assert handler.answered
            answer = await peer.recv()
            assert answer["id"] == 1 and answer["error"]["code"] == -32800

    run(scenario(), timeout=30)


def test_a_notification_handler_awaiting_a_request_about_its_own_session_gets_the_answer(
    m: ModuleType,
) -> None:
    """The answer to a request a notification handler made is delivered at once, not
    behind the notifications of its session (the handler is the one it would wait for).
    """

    class Asking:
        conn: Any = None
        answers: list[Any] = []

        async def session_update(self, params: Any) -> None:
            prompt = {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}
            request = m.RPC.codec.load(m.PromptRequest, prompt)
            self.answers.append(await self.conn.request("session/prompt", request))

    async def scenario() -> None:
        handler = Asking()
        async with raw_peer(m, "client", handler, start=False) as (conn, peer):
            handler.conn = conn
            conn.start(handler)
            await peer.send(update("1"))
            ask = await peer.recv()
            assert ask["method"] == "session/prompt"
            await peer.send(
                {
                    "jsonrpc": "2.0",
                    "id": ask["id"],
                    "result": {"stopReason": "end_turn"},
                }
            )
            for _ in range(200):
                if handler.answers:
                    break
                await asyncio.sleep(0.01)
            assert len(handler.answers) == 1

    run(scenario(), timeout=30)


class Asker:
    """A client whose ``fs/read_text_file`` handler asks the peer ``asks`` times at once
    (``initialize``), then waits for ``release``; its ``session/update`` handler notes the
    text."""

    def __init__(self, m: ModuleType, asks: int) -> None:
        self.m = m
        self.asks = asks
        self.conn: Any = None
        self.release = asyncio.Event()
        self.handled: list[str] = []

    async def ask(self) -> Any:
        params = self.m.RPC.codec.load(self.m.InitializeRequest, {"protocolVersion": 1})
        return await self.conn.request("initialize", params)

    async def fs_read_text_file(self, params: Any) -> Any:
        await asyncio.gather(*(self.ask() for _ in range(self.asks)))
        await self.release.wait()
        return self.m.RPC.codec.load(self.m.ReadTextFileResponse, {"content": "x"})

    async def session_update(self, params: Any) -> None:
        self.handled.append("update")


READ = {
    "jsonrpc": "2.0",
    "id": "read",
    "method": "fs/read_text_file",
    "params": {"sessionId": "s", "path": "/a"},
}


def test_a_handler_waiting_for_two_answers_counts_as_waiting_until_both_came(
    m: ModuleType,
) -> None:
    """At ``max_in_flight``, reading goes on while every running handler waits for us: a
    handler waiting for two of our requests still waits after the first is answered."""

    async def scenario() -> None:
        client = Asker(m, asks=2)
        client.release.set()
        async with raw_peer(m, "client", client, start=False, max_in_flight=1) as (
            conn,
            peer,
        ):
            client.conn = conn
            conn.start(client)
            await peer.send(READ)
            first, second = await peer.recv_all(2)
            await peer.send(
                {"jsonrpc": "2.0", "id": first["id"], "result": {"protocolVersion": 1}}
            )
            await asyncio.sleep(0.2)
            await peer.send(update("1"))
            await peer.send(
                {"jsonrpc": "2.0", "id": second["id"], "result": {"protocolVersion": 1}}
            )
            answer = await peer.recv(timeout=10)
            assert answer == {
                "jsonrpc": "2.0",
                "id": "read",
                "result": {"content": "x"},
            }

    run(scenario(), timeout=30)


def test_a_handler_whose_answers_came_no_longer_counts_as_waiting(
    m: ModuleType,
) -> None:
    """Once its request is answered, a handler that goes on running is work in flight like
    any other: at ``max_in_flight`` reading waits for it."""

    async def scenario() -> None:
        client = Asker(m, asks=1)
        async with raw_peer(m, "client", client, start=False, max_in_flight=1) as (
            conn,
            peer,
        ):
            client.conn = conn
            conn.start(client)
            await peer.send(READ)
            ask = await peer.recv()
            await peer.send(
                {"jsonrpc": "2.0", "id": ask["id"], "result": {"protocolVersion": 1}}
            )
            await asyncio.sleep(0.2)
            await peer.send(update("1"), update("2"))
            await asyncio.sleep(0.3)
            assert client.handled == ["update"]  # the second not read: at the bound
            client.release.set()
            assert (await peer.recv(timeout=10))["id"] == "read"
            for _ in range(200):
                if len(client.handled) == 2:
                    break
                await asyncio.sleep(0.01)
            assert client.handled == ["update", "update"]

    run(scenario(), timeout=30)


class NeverClosed:
    """A writer whose close never completes (a peer that stops reading, say): the rest
    as the stream writer it wraps."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    def __getattr__(self, name: str) -> Any:
        return getattr(self.writer, name)

    async def wait_closed(self) -> None:
        await asyncio.Event().wait()


def test_a_close_waits_for_the_output_to_close_for_its_grace_only(m: ModuleType) -> None:
    """Every wait has an end: an output whose close never completes holds a close for
    ``close_grace`` seconds, not for ever."""

    async def scenario() -> None:
        reader, writer, _, peer_w = await socket_streams()
        conn = m.RPC.connect("client", reader, NeverClosed(writer), close_grace=0.3)
        conn.start(Stuck())
        await asyncio.sleep(0.01)
        began = asyncio.get_running_loop().time()
        await asyncio.wait_for(conn.close(), 10)
        assert asyncio.get_running_loop().time() - began < 5
        assert conn.closed
        peer_w.close()

    run(scenario(), timeout=30)


def test_a_request_cancelled_before_its_line_was_written_sends_no_cancel(m: ModuleType) -> None:
    """A request cancelled while it waits behind another write (here a large
    notification the peer does not read yet) never reached the peer: no
    ``$/cancel_request`` follows it, and neither does its own line."""

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        ours, peer = socket.socketpair()
        peer.setblocking(False)
        reader, writer = await asyncio.open_connection(sock=ours)
        conn = m.RPC.connect("client", reader, writer)
        conn.start(Stuck())
        big = asyncio.ensure_future(conn.notify("_big/note", {"data": "x" * 8_000_000}))
        await asyncio.sleep(0.05)
        assert not big.done()  # held: the peer reads nothing yet
        ask = asyncio.ensure_future(conn.request("_ext/ask", {}))
        await asyncio.sleep(0.05)
        ask.cancel()
        with pytest.raises(asyncio.CancelledError):
            await ask
        data = b""
        while True:
            try:
                data += await asyncio.wait_for(loop.sock_recv(peer, 1 << 20), 0.5)
            except asyncio.TimeoutError:
                break
        await asyncio.wait_for(big, 5)
        methods = [json.loads(line).get("method") for line in data.splitlines() if line.strip()]
        assert methods == ["_big/note"]
        await conn.close()
        peer.close()

    run(scenario(), timeout=30)


def test_a_process_given_without_a_watch_is_ended_within_the_close_grace(m: ModuleType) -> None:
    """A connection made over a process's pipes with ``process=`` (not spawned, not
    watched) ends that process on close: it is given ``close_grace`` s to exit once its
    input is closed, then terminated. One that ignores its closed input (``sleep``) is
    ended within about that grace, not the default one."""

    async def scenario() -> None:
        proc = await asyncio.create_subprocess_exec(
            "sleep", "60", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        assert proc.stdin is not None and proc.stdout is not None
        conn = m.RPC.connect("client", proc.stdout, proc.stdin, process=proc, close_grace=0.1)
        conn.start(Stuck())
        loop = asyncio.get_running_loop()
        began = loop.time()
        await asyncio.wait_for(conn.close(), 10)
        assert proc.returncode is not None
        assert loop.time() - began < 1.8  # the default grace is 2 s

    run(scenario(), timeout=30)


def test_a_request_cancelled_while_its_line_is_drained_sends_a_cancel(m: ModuleType) -> None:
    """A request cancelled after its line was handed to the output, while the output is
    still draining it (the peer reads nothing yet), did reach the peer: ``$/cancel_request``
    follows its line."""

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        ours, peer = socket.socketpair()
        peer.setblocking(False)
        reader, writer = await asyncio.open_connection(sock=ours)
        conn = m.RPC.connect("client", reader, writer)
        conn.start(Stuck())
        ask = asyncio.ensure_future(conn.request("_ext/ask", {"data": "x" * 8_000_000}))
        await asyncio.sleep(0.05)
        assert not ask.done()  # its line written, the drain held: the peer reads nothing
        ask.cancel()
        with pytest.raises(asyncio.CancelledError):
            await ask
        data = b""
        while True:
            try:
                data += await asyncio.wait_for(loop.sock_recv(peer, 1 << 20), 0.5)
            except asyncio.TimeoutError:
                break
        lines = [json.loads(line) for line in data.splitlines() if line.strip()]
        assert [line.get("method") for line in lines] == ["_ext/ask", "$/cancel_request"]
        assert lines[1]["params"] == {"requestId": lines[0]["id"]}
        await conn.close()
        peer.close()

    run(scenario(), timeout=30)


def test_a_handler_that_closes_its_connection_goes_on_after_awaiting(m: ModuleType) -> None:
    """The close a request handler makes does not cancel that handler's task: the handler
    goes on past its next ``await``."""

    class Closing:
        conn: Any = None
        after = False

        async def fs_read_text_file(self, params: Any) -> Any:
            await self.conn.close("asked by a handler")
            await asyncio.sleep(0)
            await asyncio.sleep(0.01)
            self.after = True
            return m.RPC.codec.load(m.ReadTextFileResponse, {"content": "x"})

    async def scenario() -> None:
        handler = Closing()
        async with raw_peer(m, "client", handler, start=False, close_grace=5) as (
            conn,
            peer,
        ):
            handler.conn = conn
            conn.start(handler)
            params = {"sessionId": "s", "path": "/a"}
            await peer.send(
                {"jsonrpc": "2.0", "id": 1, "method": "fs/read_text_file", "params": params}
            )
            await asyncio.wait_for(conn.closed, 4)
            for _ in range(200):
                if handler.after:
                    break
                await asyncio.sleep(0.01)
            assert handler.after

    run(scenario(), timeout=30)


def test_a_handler_that_ignores_its_cancellation_is_cancelled_again_after_the_grace(
    m: ModuleType,
) -> None:
    """A close cancels the running request handlers; one that ignores it and goes on
    waiting is cancelled once more when ``close_grace`` is over, before the close ends."""

    class Stubborn:
        def __init__(self) -> None:
            self.started = asyncio.Event()
            self.cancels = 0

        async def fs_read_text_file(self, params: Any) -> Any:
            self.started.set()
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                self.cancels += 1
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                self.cancels += 1
                raise
            return m.RPC.codec.load(m.ReadTextFileResponse, {"content": "x"})

    async def scenario() -> None:
        handler = Stubborn()
        async with raw_peer(m, "client", handler, close_grace=0.2) as (conn, peer):
            params = {"sessionId": "s", "path": "/a"}
            await peer.send(
                {"jsonrpc": "2.0", "id": 1, "method": "fs/read_text_file", "params": params}
            )
            await asyncio.wait_for(handler.started.wait(), 10)
            await asyncio.wait_for(conn.close(), 10)
            for _ in range(200):
                if handler.cancels == 2:
                    break
                await asyncio.sleep(0.01)
            assert handler.cancels == 2

    run(scenario(), timeout=30)


def test_a_notification_handler_can_close_its_connection(m: ModuleType) -> None:
    """A close from a notification handler runs in the task of the handlers of its
    session: it neither waits for that task (``drain_timeout`` is long here) nor cancels
    it."""

    class Closing:
        conn: Any = None
        after = False

        async def session_update(self, params: Any) -> None:
            await self.conn.close("asked by a notification handler")
            await asyncio.sleep(0)
            self.after = True

    async def scenario() -> None:
        handler = Closing()
        async with raw_peer(m, "client", handler, start=False, drain_timeout=30) as (
            conn,
            peer,
        ):
            handler.conn = conn
            conn.start(handler)
            await peer.send(update("1"))
            await asyncio.wait_for(conn.closed, 10)
            assert conn.close_reason == "asked by a notification handler"
            for _ in range(200):
                if handler.after:
                    break
                await asyncio.sleep(0.01)
            assert handler.after

    run(scenario(), timeout=30)


def test_an_answer_queued_behind_a_notification_a_close_drops_is_delivered(
    m: ModuleType,
) -> None:
    """An answer that waits behind a notification of its session still being handled
    when the connection closes (past ``drain_timeout``) is delivered all the same: the
    request gets its result, not a closed connection's error."""

    async def scenario() -> None:
        client = Stuck()
        async with raw_peer(m, "client", client, drain_timeout=0.1) as (conn, peer):
            params = m.RPC.codec.load(
                m.PromptRequest,
                {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]},
            )
            prompt = asyncio.ensure_future(m.RemoteAgent(conn).session_prompt(params))
            asked = await peer.recv()
            await peer.send(update("1"))
            while client.started < 1:
                await asyncio.sleep(0.01)
            answer = {"stopReason": "end_turn"}
            await peer.send({"jsonrpc": "2.0", "id": asked["id"], "result": answer})
            await asyncio.sleep(0.2)
            assert not prompt.done()  # behind the update being handled
            await asyncio.wait_for(conn.close("enough"), 10)
            result = await asyncio.wait_for(prompt, 5)
            assert m.RPC.codec.dump(result)["stopReason"] == "end_turn"

    run(scenario(), timeout=30)
