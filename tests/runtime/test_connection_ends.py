"""How requests and connections end (acpgen/runtime/_connection.py), in the three styles,
on the ``rpc`` fixture: the bounded memory of the requests we gave up on, ``serve()``
cancelled, a write that fails, a request cancelled or made when no answer can come,
``wait_closed``, and the reason a lost connection closes for (the first cause, with the
agent's exit status). The connection's other promises are in ``test_connection.py``."""

from __future__ import annotations

import asyncio
import json
import logging
from types import ModuleType

import pytest

from .harness import STYLES, line, module, package, raw_peer, run, socket_streams
from .test_incoming import Long


@pytest.fixture(params=STYLES)
def m(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return module(request.param, tmp_path_factory.mktemp(f"rpc-{request.param}"))


def test_the_last_1024_requests_we_gave_up_on_are_remembered(m: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    """A late answer to a request we cancelled is expected (a debug line), for the last 1,024
    of them; an answer to one cancelled before those is a stray answer (a warning)."""

    async def scenario() -> list[int]:
        async with raw_peer(m, "agent", Long(m)) as (conn, peer):
            asked = [asyncio.ensure_future(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/a"})) for _ in range(1025)]
            ids = [frame["id"] for frame in await peer.recv_all(1025)]
            for task in asked:
                task.cancel()
            await asyncio.gather(*asked, return_exceptions=True)
            cancels = await peer.recv_all(1025)
            assert [c["params"]["requestId"] for c in cancels] == ids
            caplog.clear()
            for rid in (ids[0], ids[1], ids[-1]):
                await peer.send({"jsonrpc": "2.0", "id": rid, "result": {"content": "late"}})
            await asyncio.sleep(0.1)
            return ids

    caplog.set_level(logging.DEBUG)
    ids = run(scenario())
    records = [(r.levelno, r.getMessage()) for r in caplog.records if not r.name.startswith("asyncio")]
    assert [r for r in records if r[0] >= logging.WARNING] == [(logging.WARNING, f"response to id {ids[0]!r} with no request in flight")]
    late = [text for level, text in records if text.startswith("late answer")]
    assert late == [f"late answer to cancelled request {ids[1]!r}", f"late answer to cancelled request {ids[-1]!r}"]


def test_cancelling_serve_closes_the_connection_saying_so(m: ModuleType) -> None:
    async def scenario() -> None:
        async with raw_peer(m, "agent", Long(m), start=False) as (conn, peer):
            serving = asyncio.ensure_future(conn.serve(Long(m)))
            await asyncio.sleep(0.05)
            assert not conn.is_closed
            serving.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(serving, 5)
            assert conn.is_closed and conn.close_reason == "serve() was cancelled"
            await asyncio.wait_for(conn.closed, 5)

    run(scenario())


class _BrokenWriter:
    """A stream whose peer has gone: every write fails."""

    def write(self, data: bytes) -> None:
        pass

    async def drain(self) -> None:
        raise ConnectionResetError("reset by peer")

    def close(self) -> None:
        pass

    async def wait_closed(self) -> None:
        pass


def test_a_failed_write_fails_the_request_saying_why(m: ModuleType) -> None:
    pkg = package(m)

    async def scenario() -> None:
        reader, writer, _, peer_w = await socket_streams()
        conn = m.RPC.connect("agent", reader, _BrokenWriter())
        conn.start(Long(m))
        try:
            with pytest.raises(pkg.ConnectionClosedError) as err:
                await asyncio.wait_for(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/a"}), 5)
            assert err.value.reason == "writing to the peer failed: ConnectionResetError('reset by peer')", err.value.reason
        finally:
            await asyncio.wait_for(conn.close(), 5)
            peer_w.close()
            writer.close()

    run(scenario())


def test_an_answer_that_cannot_be_sent_is_logged_with_its_start(m: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    """An answer the connection could not write is a debug line: why, and the answer's
    first 200 bytes."""
    rid = "i" * 300

    async def scenario() -> None:
        reader, writer, _, peer_w = await socket_streams()
        conn = m.RPC.connect("agent", reader, _BrokenWriter())
        conn.start(Long(m))
        try:
            peer_w.write(line({"jsonrpc": "2.0", "id": rid, "method": "no/such", "params": {}}))
            await peer_w.drain()
            await asyncio.wait_for(conn.closed, 5)
        finally:
            await asyncio.wait_for(conn.close(), 5)
            peer_w.close()
            writer.close()

    caplog.set_level(logging.DEBUG)
    run(scenario())
    start = b'{"jsonrpc":"2.0","id":"' + b"i" * 177
    reason = "writing to the peer failed: ConnectionResetError('reset by peer')"
    assert f"not sent ({reason}): {start!r}" in [r.getMessage() for r in caplog.records]


class _Gated:
    """A client whose updates are handled only when ``gate`` is open."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.started = asyncio.Event()

    async def session_update(self, params: object) -> None:
        self.started.set()
        await self.gate.wait()


UPDATE = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {"type": "text", "text": "u"}}}
PROMPT = {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}


def test_a_request_cancelled_while_the_connection_closes_sends_no_cancel(m: ModuleType) -> None:
    """Our prompt's answer came, queued behind an update still being handled, when the
    close began: cancelling the prompt then writes no ``$/cancel_request`` (the peer has
    answered already, and the connection is going away)."""

    async def scenario() -> list[object]:
        client = _Gated()
        async with raw_peer(m, "client", client) as (conn, peer):
            asked = asyncio.ensure_future(conn.request("session/prompt", m.RPC.codec.load(m.PromptRequest, PROMPT)))
            sent = await peer.recv()
            await peer.send(UPDATE)
            await asyncio.wait_for(client.started.wait(), 5)
            await peer.send({"jsonrpc": "2.0", "id": sent["id"], "result": {"stopReason": "end_turn"}})
            await asyncio.sleep(0.05)
            closing = asyncio.ensure_future(conn.close())
            await asyncio.sleep(0.05)
            assert not closing.done() and not asked.done()
            asked.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(asked, 5)
            await asyncio.sleep(0.05)
            client.gate.set()
            await asyncio.wait_for(closing, 5)
            rest = await asyncio.wait_for(peer.reader.read(), 5)
            return [json.loads(text) for text in rest.splitlines()]

    assert run(scenario()) == []


def test_wait_closed_returns_once_the_connection_is_closed(m: ModuleType) -> None:
    async def scenario() -> None:
        async with raw_peer(m, "agent", Long(m)) as (conn, peer):
            waiting = asyncio.ensure_future(conn.wait_closed())
            await asyncio.sleep(0.05)
            assert not waiting.done()
            peer.close_output()
            await asyncio.wait_for(waiting, 5)
            assert conn.is_closed and conn.close_reason == "the peer closed the connection"
            await asyncio.wait_for(conn.wait_closed(), 5)

    run(scenario())


def _exit_tie(conn: object) -> asyncio.Future[int]:
    """Tie ``conn`` to a pretend agent process: setting the future's result exits it."""
    exited: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def end() -> None:
        pass

    conn.watch_process(asyncio.shield(exited), end)  # type: ignore[attr-defined]
    return exited


def test_a_peer_gone_while_its_agent_exits_says_the_exit_status(m: ModuleType) -> None:
    """The agent's output ends as it exits: the connection waits for the exit (up to
    EXIT_GRACE s), so the reason it closes for says the exit status too, once."""

    async def scenario() -> None:
        async with raw_peer(m, "agent", Long(m)) as (conn, peer):
            exited = _exit_tie(conn)
            peer.close_output()
            await asyncio.sleep(0.05)
            assert not conn.is_closed  # waiting for the exit
            exited.set_result(7)
            await asyncio.wait_for(conn.closed, 5)
            assert conn.close_reason == "the peer closed the connection: the agent process exited with status 7"

    run(scenario())


def test_an_agent_that_does_not_exit_delays_the_close_only_briefly(m: ModuleType) -> None:
    async def scenario() -> None:
        async with raw_peer(m, "agent", Long(m)) as (conn, peer):
            _exit_tie(conn)
            start = asyncio.get_running_loop().time()
            peer.close_output()
            await asyncio.wait_for(conn.closed, 2)
            assert 0.2 <= asyncio.get_running_loop().time() - start < 1.5
            assert conn.close_reason == "the peer closed the connection"

    run(scenario())


def test_an_agent_that_exits_first_is_the_reason_once(m: ModuleType) -> None:
    """The agent exits and its output stays silent: the connection closes saying so, with
    the status said once."""

    async def scenario() -> None:
        async with raw_peer(m, "agent", Long(m)) as (conn, peer):
            exited = _exit_tie(conn)
            exited.set_result(3)
            await asyncio.wait_for(conn.closed, 5)
            assert conn.close_reason == "the agent process exited with status 3"

    run(scenario())


def test_the_first_cause_of_loss_stands(m: ModuleType) -> None:
    """The peer's output ends, then the agent exits and a write fails, while the close waits
    for that exit: the reason is the first cause, with the exit status."""
    pkg = package(m)

    async def scenario() -> None:
        reader, writer, _, peer_w = await socket_streams()
        conn = m.RPC.connect("agent", reader, _BrokenWriter())
        conn.start(Long(m))
        exited = _exit_tie(conn)
        try:
            peer_w.write_eof()
            await asyncio.sleep(0.05)
            assert not conn.is_closed
            with pytest.raises(pkg.ConnectionClosedError):
                await asyncio.wait_for(conn.notify("session/update", {"sessionId": "s", "update": {"type": "text", "text": "x"}}), 5)
            exited.set_result(7)
            await asyncio.wait_for(conn.closed, 5)
            assert conn.close_reason == "the peer closed the connection: the agent process exited with status 7"
        finally:
            await asyncio.wait_for(conn.close(), 5)
            peer_w.close()
            writer.close()

    run(scenario())


def test_a_request_before_serving_says_what_to_do(m: ModuleType) -> None:
    pkg = package(m)

    async def scenario() -> None:
        async with raw_peer(m, "agent", Long(m), start=False) as (conn, _peer):
            with pytest.raises(pkg.ConnectionClosedError) as err:
                await asyncio.wait_for(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/a"}), 1)
            assert str(err.value) == "the connection is not serving: nothing would read the answer (call start() or serve() first)"
            assert err.value.returncode is None and not conn.is_closed

    run(scenario())


def test_an_agent_that_exits_before_serving_closes_the_connection(m: ModuleType) -> None:
    async def scenario() -> None:
        async with raw_peer(m, "agent", Long(m), start=False) as (conn, _peer):
            exited = _exit_tie(conn)
            exited.set_result(4)
            await asyncio.wait_for(conn.closed, 5)
            assert conn.close_reason == "the agent process exited with status 4"

    run(scenario())
