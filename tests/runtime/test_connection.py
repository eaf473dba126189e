"""The connection's promises (acpgen/runtime/_connection.py), in the three styles, on the
``rpc`` fixture: lines of any size, a lifecycle, order, backpressure, cancellation both
ways, errors that say where they come from. Each test reproduces a failure of the
connection as it was before (see issue #24) and fails if it comes back."""

from __future__ import annotations

import asyncio
import json
import logging
import random
import tracemalloc
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from .harness import STYLES, get, line, module, package, pair, raw_peer, run, socket_streams

PROMPT = {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}


@pytest.fixture(params=STYLES)
def m(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return module(request.param, tmp_path_factory.mktemp(f"rpc-{request.param}"))


def load(m: ModuleType, name: str, wire: Any) -> Any:
    return m.RPC.codec.load(getattr(m, name), wire)


def chunk(m: ModuleType, text: str) -> Any:
    return load(m, "SessionNotification", {"sessionId": "s", "update": {"type": "text", "text": text}})


class Agent:
    """An agent of the fixture: prompts stream ``n`` chunks, optionally read a file first."""

    def __init__(self, m: ModuleType, client: Any = None, chunks: int = 0, read_first: bool = False) -> None:
        self.m = m
        self.client = client
        self.chunks = chunks
        self.read_first = read_first
        self.gate = asyncio.Event()
        self.seen: list[Any] = []

    async def initialize(self, params: Any) -> Any:
        return load(self.m, "InitializeResponse", {"protocolVersion": get(params, "protocolVersion", "protocol_version")})

    async def session_prompt(self, params: Any) -> Any:
        if self.read_first:
            got = await self.client.fs_read_text_file(load(self.m, "ReadTextFileRequest", {"sessionId": "s", "path": "/big"}))
            self.seen.append(got)
        for i in range(self.chunks):
            await self.client.session_update(chunk(self.m, str(i)))
        return load(self.m, "PromptResponse", {"stopReason": "end_turn"})

    async def session_close(self, params: Any) -> None:
        return None  # an empty result may be returned as None


class Client:
    """A client of the fixture that records the updates it handles, slowly if asked."""

    def __init__(self, m: ModuleType, delay: float = 0.0, content: str = "") -> None:
        self.m = m
        self.delay = delay
        self.content = content
        self.handled: list[str] = []
        self.rng = random.Random(7)

    async def session_update(self, params: Any) -> None:
        if self.delay:
            await asyncio.sleep(self.rng.uniform(0, self.delay))
        update = get(params, "update", "update")
        self.handled.append(get(update, "text", "text"))

    async def fs_read_text_file(self, params: Any) -> Any:
        return load(self.m, "ReadTextFileResponse", {"content": self.content})


# ---------------------------------------------------------------- lines of any size


def test_a_reader_with_a_64_kib_limit_still_gets_100_kb_lines(m: ModuleType) -> None:
    """The reader asyncio.create_subprocess_exec makes (64 KiB limit) once dropped every
    longer line: a 100 KB chunk vanished and a 100 KB result left its request waiting."""

    async def scenario() -> None:
        big = "x" * 100_000
        async with raw_peer(m, "client", Client(m)) as (conn, peer):
            assert conn.reader._limit == 2**16  # the default StreamReader limit
            handler = conn.router.handler
            await peer.send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {"type": "text", "text": big}}})
            asked = asyncio.ensure_future(conn.request("session/prompt", PROMPT))
            sent = await peer.recv()
            await peer.send({"jsonrpc": "2.0", "id": sent["id"], "result": {"stopReason": "end_turn", "_meta": {"pad": big}}})
            result = await asyncio.wait_for(asked, 5)
            assert get(result, "stopReason", "stop_reason") == "end_turn"
            assert handler.handled == [big]

    run(scenario())


def test_100_mb_lines_both_ways_are_answered_never_hang(m: ModuleType) -> None:
    """Over the default limit (tens of MiB): a 100 MB ``session/prompt`` is answered with an
    error carrying its own id; a 100 MB answer to our own ``fs/read_text_file`` fails that
    request with OversizedFrameError (the turn goes on); serving goes on after both."""
    pkg = package(m)
    assert 16 * 2**20 <= pkg.DEFAULT_MAX_LINE <= 100 * 2**20

    async def scenario() -> None:
        huge = "y" * (100 * 2**20)
        client = Client(m, content=huge)
        agent = Agent(m, read_first=True)
        async with pair(m, agent, client) as (agent_conn, client_conn):
            agent.client = m.RemoteClient(agent_conn)
            remote = m.RemoteAgent(client_conn)
            big_prompt = load(m, "PromptRequest", {"sessionId": "s", "prompt": [{"type": "text", "text": huge}]})
            with pytest.raises(pkg.RemoteError) as err:
                await remote.session_prompt(big_prompt)
            assert err.value.code == -32600 and err.value.data["reason"] == "line too long"
            agent.read_first = True
            with pytest.raises(pkg.RemoteError) as inner:
                await remote.session_prompt(load(m, "PromptRequest", PROMPT))
            # the agent's own request failed with OversizedFrameError, answered -32603
            assert inner.value.code == -32603 and "OversizedFrameError" in str(inner.value.data)
            agent.read_first = False
            done = await remote.session_prompt(load(m, "PromptRequest", PROMPT))
            assert get(done, "stopReason", "stop_reason") == "end_turn"

    run(scenario(), timeout=120)


def test_oversized_lines_are_judged_from_their_two_ends(m: ModuleType) -> None:
    """id at the end of the line, a notification, a response, and a line nobody can read
    while one of our requests waits: the connection closes rather than leave it hanging."""
    pkg = package(m)

    async def scenario() -> None:
        pad = "z" * 5000
        async with raw_peer(m, "agent", Agent(m), max_line=1024) as (conn, peer):
            await peer.send(b'{"jsonrpc":"2.0","method":"initialize","params":{"x":"' + pad.encode() + b'"},"id":"tail-id"}\n')
            answer = await peer.recv()
            assert answer["id"] == "tail-id" and answer["error"]["code"] == -32600
            await peer.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": pad}})
            asked = asyncio.ensure_future(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/a"}))
            sent = await peer.recv()
            await peer.send({"jsonrpc": "2.0", "id": sent["id"], "result": {"content": pad}})
            with pytest.raises(pkg.OversizedFrameError) as err:
                await asyncio.wait_for(asked, 5)
            assert (err.value.id, err.value.method, err.value.limit) == (sent["id"], "fs/read_text_file", 1024)
            asked = asyncio.ensure_future(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/b"}))
            await peer.recv()
            await peer.send(b"[" + b'"' + pad.encode() + b'"]\n')  # no id, no kind: unknowable
            with pytest.raises(pkg.ConnectionClosedError):
                await asyncio.wait_for(asked, 5)
            assert conn.is_closed and "unreadable line" in conn.close_reason

    run(scenario())


# ---------------------------------------------------------------- lifecycle


def test_requests_fail_at_once_when_no_answer_can_come(m: ModuleType) -> None:
    pkg = package(m)

    async def scenario() -> None:
        # not serving: nothing would read the answer
        async with raw_peer(m, "agent", Agent(m), start=False) as (conn, _peer):
            with pytest.raises(pkg.ConnectionClosedError, match="not serving"):
                await asyncio.wait_for(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/a"}), 1)
        # the peer closed its output but still reads: in flight and later requests fail
        async with raw_peer(m, "agent", Agent(m)) as (conn, peer):
            asked = asyncio.ensure_future(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/a"}))
            await peer.recv()
            peer.close_output()
            with pytest.raises(pkg.ConnectionClosedError):
                await asyncio.wait_for(asked, 2)
            await asyncio.wait_for(conn.closed, 5)
            with pytest.raises(pkg.ConnectionClosedError):
                await asyncio.wait_for(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/b"}), 1)
            with pytest.raises(pkg.ConnectionClosedError):
                await conn.notify("session/update", chunk(m, "late"))
        # closed by this side
        async with raw_peer(m, "agent", Agent(m)) as (conn, peer):
            await conn.close()
            assert conn.is_closed
            with pytest.raises(pkg.ConnectionClosedError):
                await asyncio.wait_for(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/c"}), 1)

    run(scenario())


def test_serve_task_created_just_before_a_request_is_serving() -> None:
    """The old README pattern (create_task(serve) then request at once) keeps working."""
    m = module("typeddict", Path(__import__("tempfile").mkdtemp()))

    async def scenario() -> None:
        reader, writer, peer_r, peer_w = await socket_streams()
        conn = m.RPC.connect("agent", reader, writer)
        serving = asyncio.create_task(conn.serve(Agent(m)))
        asked = asyncio.ensure_future(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/a"}))
        sent = __import__("json").loads(await peer_r.readline())
        peer_w.write(line({"jsonrpc": "2.0", "id": sent["id"], "result": {"content": "A"}}))
        await peer_w.drain()
        assert (await asked)["content"] == "A"
        peer_w.close()
        await asyncio.wait_for(serving, 5)

    run(scenario())


def test_closing_cancels_handlers_and_answers_them(m: ModuleType) -> None:
    class Slow(Agent):
        async def session_prompt(self, params: Any) -> Any:
            await asyncio.sleep(60)

    async def scenario() -> None:
        async with raw_peer(m, "agent", Slow(m)) as (conn, peer):
            await peer.send({"jsonrpc": "2.0", "id": 5, "method": "session/prompt", "params": PROMPT})
            await asyncio.sleep(0.05)
            closing = asyncio.ensure_future(conn.close())
            answer = await peer.recv()
            assert answer["id"] == 5 and answer["error"]["code"] == -32800
            await asyncio.wait_for(closing, 5)

    run(scenario())


def test_a_handler_raising_cancelled_error_is_answered(m: ModuleType) -> None:
    class Cancels(Agent):
        async def session_prompt(self, params: Any) -> Any:
            inner = asyncio.ensure_future(asyncio.sleep(60))
            inner.cancel()
            await inner  # raises CancelledError, as a cancellable turn does

    async def scenario() -> None:
        async with raw_peer(m, "agent", Cancels(m)) as (conn, peer):
            await peer.send({"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": PROMPT})
            answer = await peer.recv()
            assert answer["id"] == 1 and answer["error"]["code"] == -32800
            await peer.send({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": 1}})
            assert (await peer.recv())["result"] == {"protocolVersion": 1}

    run(scenario())


# ---------------------------------------------------------------- order


def test_updates_are_handled_in_order_before_the_prompt_returns(m: ModuleType) -> None:
    """1,000 chunks, a handler that awaits 0-2 ms: all handled, in order, before
    ``session_prompt`` returns (once 488 descents and 641 of 1,000)."""

    async def scenario() -> None:
        client = Client(m, delay=0.002)
        agent = Agent(m, chunks=1000)
        async with pair(m, agent, client) as (agent_conn, client_conn):
            agent.client = m.RemoteClient(agent_conn)
            result = await m.RemoteAgent(client_conn).session_prompt(load(m, "PromptRequest", PROMPT))
            assert get(result, "stopReason", "stop_reason") == "end_turn"
            assert client.handled == [str(i) for i in range(1000)]

    run(scenario(), timeout=60)


def test_a_notification_handler_awaiting_the_peer_does_not_deadlock(m: ModuleType) -> None:
    class Asking(Client):
        async def session_update(self, params: Any) -> None:
            await super().session_update(params)
            if len(self.handled) == 1:  # ask the agent something, from inside the queue
                await self.agent.initialize(load(self.m, "InitializeRequest", {"protocolVersion": 4}))

    async def scenario() -> None:
        client = Asking(m)
        agent = Agent(m, chunks=50)
        async with pair(m, agent, client, max_in_flight=4) as (agent_conn, client_conn):
            agent.client = m.RemoteClient(agent_conn)
            client.agent = m.RemoteAgent(client_conn)
            await m.RemoteAgent(client_conn).session_prompt(load(m, "PromptRequest", PROMPT))
            assert client.handled == [str(i) for i in range(50)]

    run(scenario(), timeout=20)


# ---------------------------------------------------------------- backpressure


def test_a_flood_with_a_slow_handler_stays_bounded(m: ModuleType) -> None:
    """20,000 notifications while the handler is stuck: the connection stops reading at
    ``max_in_flight`` (once 19,470 tasks, 123 MiB), then handles every one in order."""

    class Stuck(Client):
        def __init__(self, m: ModuleType) -> None:
            super().__init__(m)
            self.release = asyncio.Event()

        async def session_update(self, params: Any) -> None:
            await self.release.wait()
            await super().session_update(params)

    async def flood(count: int) -> tuple[int, int]:
        client = Stuck(m)
        async with raw_peer(m, "client", client, max_in_flight=32) as (conn, peer):
            note = line({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {"type": "text", "text": "t"}}})
            tracemalloc.start()
            writing = asyncio.ensure_future(peer.send(*(note for _ in range(count))))
            await asyncio.sleep(0.3)
            tasks = len(asyncio.all_tasks())
            queued = conn._load()
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            client.release.set()
            await asyncio.wait_for(writing, 30)
            while len(client.handled) < count:
                await asyncio.sleep(0.01)
            assert queued <= 32 + 1
            return tasks, peak

    tasks_small, peak_small = run(flood(2_000), timeout=60)
    tasks_big, peak_big = run(flood(20_000), timeout=60)
    assert tasks_small <= 10 and tasks_big <= 10  # the test, the peer, the connection: no task per frame
    assert peak_big < 2 * peak_small + 4 * 2**20, (peak_small, peak_big)  # not with the flood


# ---------------------------------------------------------------- cancellation


def test_cancel_request_from_the_peer_cancels_the_handler(m: ModuleType) -> None:
    pkg = package(m)
    seen: list[Any] = []

    class Long(Agent):
        async def session_prompt(self, params: Any) -> Any:
            context = pkg.current_request()
            seen.append((context.id, context.method))
            try:
                await asyncio.sleep(60)
            finally:
                seen.append(context.cancelled.is_set())

    async def scenario() -> None:
        async with raw_peer(m, "agent", Long(m)) as (conn, peer):
            await peer.send({"jsonrpc": "2.0", "id": "p", "method": "session/prompt", "params": PROMPT})
            await asyncio.sleep(0.05)
            loop = asyncio.get_running_loop()
            started = loop.time()
            await peer.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "p"}})
            answer = await peer.recv()
            assert loop.time() - started < 0.5
            assert answer == {"jsonrpc": "2.0", "id": "p", "error": {"code": -32800, "message": "Request cancelled", "data": {"method": "session/prompt"}}}

    run(scenario())
    assert seen == [("p", "session/prompt"), True]


def test_cancelling_our_request_tells_the_peer(m: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        async with raw_peer(m, "agent", Agent(m)) as (conn, peer):
            asked = asyncio.ensure_future(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/a"}))
            sent = await peer.recv()
            asked.cancel()
            cancel = await peer.recv()
            assert cancel == {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": sent["id"]}}
            with pytest.raises(asyncio.CancelledError):
                await asked
            # the peer's late answer is not an error of ours
            await peer.send({"jsonrpc": "2.0", "id": sent["id"], "error": {"code": -32800, "message": "Request cancelled"}})
            await asyncio.sleep(0.05)
            assert not conn.is_closed

    with caplog.at_level(logging.WARNING):
        run(scenario())
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


# ---------------------------------------------------------------- errors


def test_a_nested_error_is_an_internal_error_naming_the_inner_method(m: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    pkg = package(m)

    class Forwarding(Agent):
        forward = False

        async def session_prompt(self, params: Any) -> Any:
            try:
                await self.client.fs_read_text_file(load(self.m, "ReadTextFileRequest", {"sessionId": "s", "path": "/x"}))
            except pkg.RemoteError as exc:
                assert (exc.method, exc.code) == ("fs/read_text_file", -32002)
                if self.forward:
                    raise exc.forward() from None
                raise

    class Refusing(Client):
        async def fs_read_text_file(self, params: Any) -> Any:
            raise self.m.RpcError(-32002, "Resource not found", {"path": "/x"})

    async def scenario() -> None:
        agent = Forwarding(m)
        async with pair(m, agent, Refusing(m)) as (agent_conn, client_conn):
            agent.client = m.RemoteClient(agent_conn)
            remote = m.RemoteAgent(client_conn)
            with pytest.raises(pkg.RemoteError) as outer:
                await remote.session_prompt(load(m, "PromptRequest", PROMPT))
            assert outer.value.code == -32603 and outer.value.method == "session/prompt"
            assert outer.value.data == {
                "method": "session/prompt",
                "cause": {"method": "fs/read_text_file", "code": -32002, "message": "Resource not found", "data": {"path": "/x"}},
            }
            agent.forward = True
            with pytest.raises(pkg.RemoteError) as forwarded:
                await remote.session_prompt(load(m, "PromptRequest", PROMPT))
            assert (forwarded.value.code, forwarded.value.data) == (-32002, {"path": "/x"})

    with caplog.at_level(logging.WARNING):
        run(scenario())
    assert any("fs/read_text_file" in r.getMessage() and "-32002" in r.getMessage() for r in caplog.records)


def test_an_invalid_result_keeps_the_raw_value_and_its_request(m: ModuleType) -> None:
    pkg = package(m)

    async def scenario() -> None:
        async with raw_peer(m, "client", Client(m)) as (conn, peer):
            asked = asyncio.ensure_future(conn.request("session/prompt", PROMPT))
            sent = await peer.recv()
            await peer.send({"jsonrpc": "2.0", "id": sent["id"], "result": {"stopReason": "max_turn_requests"}})
            with pytest.raises(pkg.InvalidResultError) as err:
                await asyncio.wait_for(asked, 5)
            assert not isinstance(err.value, m.RpcError)
            assert (err.value.id, err.value.method, err.value.raw) == (sent["id"], "session/prompt", {"stopReason": "max_turn_requests"})

    run(scenario())


def test_router_answers_keep_their_data_and_empty_results(m: ModuleType) -> None:
    class Failing(Agent):
        async def initialize(self, params: Any) -> Any:
            raise self.m.RpcError(-32000, "Authentication required", {"methods": ["a"]})

    async def scenario() -> None:
        async with raw_peer(m, "agent", Failing(m)) as (conn, peer):
            await peer.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
            assert (await peer.recv())["error"] == {"code": -32000, "message": "Authentication required", "data": {"methods": ["a"]}}
            await peer.send({"jsonrpc": "2.0", "id": 2, "method": "session/close", "params": {"sessionId": "s"}})
            assert await peer.recv() == {"jsonrpc": "2.0", "id": 2, "result": {}}
            # a request whose id is null is a request: it is answered
            await peer.send({"jsonrpc": "2.0", "id": None, "method": "initialize", "params": {"protocolVersion": 1}})
            assert (await peer.recv())["id"] is None

    run(scenario())


def test_error_codes_are_public(m: ModuleType) -> None:
    pkg = package(m)
    assert (pkg.PARSE_ERROR, pkg.INVALID_REQUEST, pkg.METHOD_NOT_FOUND, pkg.INVALID_PARAMS, pkg.INTERNAL_ERROR, pkg.REQUEST_CANCELLED) == (
        -32700,
        -32600,
        -32601,
        -32602,
        -32603,
        -32800,
    )
    assert issubclass(pkg.RemoteError, m.RpcError) and not issubclass(pkg.InvalidResultError, m.RpcError)
    assert issubclass(pkg.ConnectionClosedError, ConnectionError)


def test_protocol_methods_reach_both_sides(m: ModuleType) -> None:
    for side in ("agent", "client"):
        frame = m.RPC.parse(line({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 1}}), side=side)
        assert type(frame).__name__ == "Notification", side


def test_an_id_alone_is_an_invalid_request_unless_it_answers_ours(m: ModuleType) -> None:
    """``{"jsonrpc": "2.0", "id": 2}`` is answered -32600 with its id (as the TypeScript SDK
    does); when 2 is one of our requests in flight, it is that request's broken answer."""
    pkg = package(m)

    async def scenario() -> None:
        async with raw_peer(m, "agent", Agent(m)) as (conn, peer):
            await peer.send({"jsonrpc": "2.0", "id": "x"})
            answer = await peer.recv()
            assert answer["id"] == "x" and answer["error"]["code"] == -32600
            asked = asyncio.ensure_future(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/a"}))
            sent = await peer.recv()
            await peer.send({"jsonrpc": "2.0", "id": sent["id"]})
            with pytest.raises(pkg.InvalidResultError):
                await asyncio.wait_for(asked, 5)
            # a call of the peer's whose id happens to be one of ours is still the peer's
            asked = asyncio.ensure_future(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/b"}))
            sent = await peer.recv()
            await peer.send({"jsonrpc": "2.0", "id": sent["id"], "method": "initialize", "params": {"protocolVersion": "x"}})
            answer = await peer.recv()
            assert answer["id"] == sent["id"] and answer["error"]["code"] == -32602
            assert not asked.done()
            asked.cancel()

    run(scenario())


class _BreakingWriter:
    """A writer whose ``drain`` blocks until the test breaks the pipe."""

    def __init__(self) -> None:
        self.broken: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.closed = False

    def write(self, data: bytes) -> None:
        pass

    async def drain(self) -> None:
        await asyncio.shield(self.broken)

    def close(self) -> None:
        self.closed = True

    async def wait_closed(self) -> None:
        return None


@pytest.mark.parametrize("also_closed_here", [False, True])
def test_a_failed_write_and_the_end_of_input_together_close_at_once(m: ModuleType, also_closed_here: bool) -> None:
    """The peer dies: the write a handler waits on fails and the input ends in the same
    moment (each would close the connection). Closing takes no grace period waiting for
    itself (it took CLOSE_GRACE, 2 s, when two closes ran and the first waited for the
    second); nor when this side calls close() at that moment too."""

    class Streams(Agent):
        async def session_prompt(self, params: Any) -> Any:
            while True:
                await self.client.session_update(chunk(self.m, "x"))

    async def scenario() -> None:
        reader = asyncio.StreamReader()
        writer = _BreakingWriter()
        conn = m.RPC.connect("agent", reader, writer)
        agent = Streams(m)
        agent.client = m.RemoteClient(conn)
        conn.start(agent)
        reader.feed_data(line({"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": PROMPT}))
        await asyncio.sleep(0.05)  # the handler waits in drain()
        started = asyncio.get_running_loop().time()
        writer.broken.set_exception(ConnectionResetError("Connection lost"))
        await asyncio.sleep(0)
        reader.feed_eof()
        if also_closed_here:
            await asyncio.sleep(0)
            await asyncio.wait_for(conn.close(), 5)
        await asyncio.wait_for(conn.closed, 5)
        took = asyncio.get_running_loop().time() - started
        assert took < 0.5, f"closing took {took:.2f} s"
        assert writer.closed

    run(scenario())


def test_a_handler_closing_while_the_connection_closes_does_not_stall_it(m: ModuleType) -> None:
    """A notification handler that calls close() while the peer's end of input is
    closing the connection: its close returns at once (the close under way waits for
    this handler; waiting for that close in turn stalled both for ``drain_timeout``)."""

    class Closes(Client):
        async def session_update(self, params: Any) -> None:
            await asyncio.sleep(0.1)
            await asyncio.wait_for(conn_box[0].close("the handler closed"), 5)
            self.handled.append("closed")

    conn_box: list[Any] = []

    async def scenario() -> None:
        client = Closes(m)
        async with raw_peer(m, "client", client) as (conn, peer):
            conn_box.append(conn)
            await peer.send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {"type": "text", "text": "a"}}})
            await asyncio.sleep(0.02)
            started = asyncio.get_running_loop().time()
            peer.close_output()
            await asyncio.wait_for(conn.closed, 10)
            took = asyncio.get_running_loop().time() - started
            assert took < 1.0, f"closing took {took:.2f} s"
            assert client.handled == ["closed"]
            assert conn.close_reason == "the peer closed the connection"

    run(scenario())


def test_a_handler_stopped_by_the_peer_going_away_is_no_error(m: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    """A handler whose writes fail because the peer went away (ConnectionClosedError
    escaping it) is logged as ended by the close, without a traceback at ERROR level: a
    peer that quits mid-turn is an ordinary end. Other failures are still errors."""

    class Streams(Agent):
        async def session_prompt(self, params: Any) -> Any:
            while True:
                await self.client.session_update(chunk(self.m, "x" * 1000))

    async def scenario() -> None:
        reader, writer, peer_r, peer_w = await socket_streams()
        conn = m.RPC.connect("agent", reader, writer)
        agent = Streams(m)
        agent.client = m.RemoteClient(conn)
        conn.start(agent)
        peer_w.write(line({"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": PROMPT}))
        await peer_w.drain()
        await peer_r.readline()
        peer_w.transport.abort()  # the peer is gone, both ways
        await asyncio.wait_for(conn.closed, 5)

    with caplog.at_level(logging.DEBUG):
        run(scenario())
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [], [r.getMessage() for r in errors]
    assert any("ended: the connection closed" in r.getMessage() for r in caplog.records)


def test_a_notification_handler_stopped_by_the_close_is_no_error(m: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    pkg = package(m)

    class Gone(Client):
        async def session_update(self, params: Any) -> None:
            raise pkg.ConnectionClosedError("the peer closed the connection")

    async def scenario() -> None:
        async with raw_peer(m, "client", Gone(m)) as (conn, peer):
            await peer.send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {"type": "text", "text": "a"}}})
            await asyncio.sleep(0.1)

    with caplog.at_level(logging.DEBUG):
        run(scenario())
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert any("'session/update' ended: the connection closed" in r.getMessage() for r in caplog.records)


def test_an_error_with_a_null_id_is_logged_as_an_error(m: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    """The peer could not read a frame of ours (JSON-RPC then answers with a null id): no
    request can be told, so none is failed by guess, and the error is logged as one."""

    async def scenario() -> None:
        async with raw_peer(m, "agent", Agent(m)) as (conn, peer):
            asked = asyncio.ensure_future(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/a"}))
            await peer.recv()
            await peer.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
            await peer.send({"jsonrpc": "2.0", "id": 99, "error": {"code": -32603, "message": "stray"}})
            await asyncio.sleep(0.1)
            assert not asked.done()
            asked.cancel()

    with caplog.at_level(logging.DEBUG):
        run(scenario())
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [
        "the peer answered with an error and a null id, which JSON-RPC gives when it could not"
        " read a frame's id: {'code': -32700, 'message': 'Parse error'}"
    ]
    # an error answering an id with no request in flight is a stray answer, not that
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "response to id 99 with no request in flight" in warnings


def test_a_request_cancelled_in_the_same_read_is_answered_once(m: ModuleType) -> None:
    """A request and a ``$/cancel_request`` for it in one read: the cancel reaches the
    handler's task before the task first runs. It is answered -32800 once (a task cancelled
    before its first step ran none of its body: no answer, and its slot of
    ``max_in_flight`` never came back, so that a few of them stopped reading for good;
    found by the chaos test)."""

    async def scenario() -> None:
        async with raw_peer(m, "agent", Agent(m), max_in_flight=2) as (conn, peer):
            cancel = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 9}}
            ask = {"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {"protocolVersion": 1}}
            await peer.send(line(ask) + line(cancel))
            answer = await peer.recv()
            assert answer["id"] == 9 and answer["error"]["code"] == -32800, answer
            # reading goes on: the next request is answered
            await peer.send({"jsonrpc": "2.0", "id": 10, "method": "initialize", "params": {"protocolVersion": 1}})
            answer = await peer.recv()
            assert answer["id"] == 10 and "result" in answer, answer
            assert conn._requests_running == 0  # every slot came back
            peer.close_output()
            await asyncio.wait_for(conn.closed, 5)
            with pytest.raises(AssertionError, match="closed its output"):
                await peer.recv(timeout=2)  # nothing more: exactly one answer each

    run(scenario())


# ---------------------------------------------------------------- ids, unmatched answers

ID_TOKENS = [b"0", b"-1", b"9007199254740993", b"1.0", b"1.5", b"-0.0", b"1e+100", b'""', '"é ☃ 😀"'.encode(), b'"x"']


def test_any_number_or_string_id_is_answered_with_the_same_json_token(m: ModuleType) -> None:
    """A request's id comes back as the same JSON token, byte for byte: integers beyond
    2^53, fractions (``1.0`` stays ``1.0``, not ``1``: answered -32600 with a null id
    before), the empty string, non-ASCII text. In answers with a result and with an error
    (invalid params), and in a batch where the schema has batches."""

    async def scenario() -> None:
        async with raw_peer(m, "agent", Agent(m)) as (conn, peer):
            for token in ID_TOKENS:
                head = b'{"jsonrpc":"2.0","id":' + token
                await peer.send(head + b',"method":"initialize","params":{"protocolVersion":1}}\n')
                raw = await asyncio.wait_for(peer.reader.readline(), 5)
                assert raw.startswith(b'{"jsonrpc":"2.0","id":' + token + b',"result":'), (token, raw)
                await peer.send(head + b',"method":"initialize","params":{"protocolVersion":"x"}}\n')
                raw = await asyncio.wait_for(peer.reader.readline(), 5)
                assert raw.startswith(b'{"jsonrpc":"2.0","id":' + token + b',"error":'), (token, raw)
                assert json.loads(raw)["error"]["code"] == -32602


# ---------------------------------------------------------------- slips the tests must catch


def _update(text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {"type": "text", "text": text}}}


class _Gated(Client):
    """Handles each update only when ``gate`` is open; ``started`` says one has begun."""

    def __init__(self, m: ModuleType) -> None:
        super().__init__(m)
        self.gate = asyncio.Event()
        self.started = asyncio.Event()

    async def session_update(self, params: Any) -> None:
        self.started.set()
        await self.gate.wait()
        await super().session_update(params)


def test_an_answer_waits_for_the_notification_being_handled(m: ModuleType) -> None:
    """The prompt's answer comes while the update before it is still being handled (the
    queue is empty then, the handler is not done): ``session_prompt`` returns only after
    that handler has finished."""

    async def scenario() -> None:
        client = _Gated(m)
        async with raw_peer(m, "client", client) as (conn, peer):
            prompt = asyncio.ensure_future(m.RemoteAgent(conn).session_prompt(load(m, "PromptRequest", PROMPT)))
            asked = await peer.recv()
            await peer.send(_update("last"))
            await asyncio.wait_for(client.started.wait(), 5)  # handling, the queue empty
            await peer.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"stopReason": "end_turn"}})
            await asyncio.sleep(0.2)
            assert not prompt.done(), "the answer was delivered before the update was handled"
            client.gate.set()
            result = await asyncio.wait_for(prompt, 5)
            assert get(result, "stopReason", "stop_reason") == "end_turn"
            assert client.handled == ["last"]

    run(scenario())


@pytest.mark.parametrize("token", [b"true", b"false", b"{}", b"[]", b'{"a":1}', b"[1]"])
def test_an_id_of_another_type_is_an_invalid_request_with_a_null_id(m: ModuleType, token: bytes) -> None:
    async def scenario() -> None:
        async with raw_peer(m, "agent", Agent(m)) as (conn, peer):
            await peer.send(b'{"jsonrpc":"2.0","id":' + token + b',"method":"initialize","params":{"protocolVersion":1}}\n')
            answer = await peer.recv()
            assert answer["id"] is None and answer["error"]["code"] == -32600, answer

    run(scenario())


@pytest.mark.parametrize(
    "frame",
    [
        {"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found: $/cancel_request"}},  # codex
        {"jsonrpc": "2.0", "result": {}},
        {"jsonrpc": "2.0", "id": True, "error": {"code": -1, "message": "x"}},
        {"jsonrpc": "2.0", "id": {}, "result": 1},
    ],
    ids=["error-without-id", "result-without-id", "error-bool-id", "result-object-id"],
)
def test_an_answer_without_a_usable_id_is_logged_never_answered(m: ModuleType, caplog: pytest.LogCaptureFixture, frame: Any) -> None:
    """A frame shaped like a response whose id is missing or unusable (codex-acp answers
    ``$/cancel_request`` with an error that has no id) matches none of our requests: it is
    logged and never answered (it was answered -32600; two such peers would ping-pong),
    and the connection goes on."""

    async def scenario() -> None:
        async with raw_peer(m, "agent", Agent(m)) as (conn, peer):
            asked = asyncio.ensure_future(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/a"}))
            sent = await peer.recv()
            await peer.send(frame)
            await peer.send({"jsonrpc": "2.0", "id": "after", "method": "initialize", "params": {"protocolVersion": 1}})
            answer = await peer.recv()  # the first line back answers the next request
            assert answer["id"] == "after" and "result" in answer, answer
            assert not asked.done()
            await peer.send({"jsonrpc": "2.0", "id": sent["id"], "result": {"content": "A"}})
            got = await asyncio.wait_for(asked, 5)
            assert get(got, "content", "content") == "A"

    with caplog.at_level(logging.WARNING):
        run(scenario())
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert any("Unmatched response" in text for text in logged), logged
    if "error" in frame:
        assert any(frame["error"]["message"] in text for text in logged), logged


def test_a_remote_error_says_its_data(m: ModuleType) -> None:
    """``str()`` of the peer's error includes its ``data``, where agents put the detail."""
    pkg = package(m)

    async def scenario() -> None:
        async with raw_peer(m, "agent", Agent(m)) as (conn, peer):
            asked = asyncio.ensure_future(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/a"}))
            sent = await peer.recv()
            data = {"details": "Authentication required: run `codex login`", "retry": False}
            await peer.send({"jsonrpc": "2.0", "id": sent["id"], "error": {"code": -32000, "message": "Auth", "data": data}})
            with pytest.raises(pkg.RemoteError) as caught:
                await asyncio.wait_for(asked, 5)
            assert caught.value.data == data
            text = str(caught.value)
            assert text.startswith("fs/read_text_file: Auth (-32000)") and "run `codex login`" in text, text

    run(scenario())
    assert str(pkg.RemoteError(-1, "m", None, method="x", id=1)) == "x: m (-1)"
    assert str(pkg.RemoteError(-1, "m", "é", method="x", id=1)) == 'x: m (-1): "é"'
    assert len(str(pkg.RemoteError(-1, "m", "d" * 10_000, method="x", id=1))) < 2100


def test_sending_cancel_request_can_be_turned_off(m: ModuleType) -> None:
    """``send_cancel_request=False``: cancelling our call sends nothing (for an agent that
    does not know ``$/cancel_request``); its late answer is still expected, not an error."""

    async def scenario() -> None:
        async with raw_peer(m, "agent", Agent(m), send_cancel_request=False) as (conn, peer):
            asked = asyncio.ensure_future(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/a"}))
            sent = await peer.recv()
            asked.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asked
            await conn.notify("session/update", load(m, "SessionNotification", {"sessionId": "s", "update": {"type": "text", "text": "x"}}))
            after = await peer.recv()
            assert after["method"] == "session/update", after  # no $/cancel_request before it
            await peer.send({"jsonrpc": "2.0", "id": sent["id"], "result": {"content": "late"}})
            await asyncio.sleep(0.05)
            assert not conn.is_closed

    run(scenario())


def test_the_close_grace_is_per_connection(m: ModuleType) -> None:
    """``close_grace``: how long a closing connection waits for its handlers (the default,
    CLOSE_GRACE, is 2 s); a handler that will not stop is left after that many seconds."""

    class Stubborn(Agent):
        async def initialize(self, params: Any) -> Any:
            end = asyncio.get_running_loop().time() + 1.5
            while asyncio.get_running_loop().time() < end:
                try:
                    await asyncio.sleep(0.05)
                except asyncio.CancelledError:
                    continue  # will not stop (for a while)
            return await super().initialize(params)

    async def scenario() -> float:
        async with raw_peer(m, "agent", Stubborn(m), close_grace=0.2) as (conn, peer):
            await peer.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
            await asyncio.sleep(0.05)
            started = asyncio.get_running_loop().time()
            await asyncio.wait_for(conn.close(), 5)
            return asyncio.get_running_loop().time() - started

    took = run(scenario())
    assert 0.2 <= took < 1.0, took


@pytest.mark.parametrize("how", ["close", "end-of-input"])
def test_notifications_received_before_the_close_are_handled(m: ModuleType, how: str) -> None:
    """Updates already read when the connection starts closing (this side closes, or the
    peer ends its output) are handled, in order, before the close completes."""

    async def scenario() -> None:
        client = _Gated(m)
        async with raw_peer(m, "client", client) as (conn, peer):
            await peer.send(*[_update(str(i)) for i in range(3)])
            await asyncio.wait_for(client.started.wait(), 5)  # all three read, one running
            await asyncio.sleep(0.05)
            if how == "close":
                closing = asyncio.ensure_future(conn.close())
            else:
                peer.close_output()
                closing = asyncio.ensure_future(asyncio.wait_for(conn.closed, 5))
            await asyncio.sleep(0.1)
            client.gate.set()
            await asyncio.wait_for(closing, 5)
            assert client.handled == ["0", "1", "2"]

    run(scenario())
