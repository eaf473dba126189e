"""The transports of acpgen/runtime/_transports.py: a connection to a spawned agent
process ends with that process, whatever the process left behind, and releases its pipes."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
import sys
import warnings
from pathlib import Path
from types import ModuleType

import pytest

from .harness import STYLES, module, package, raw_peer, run

# An "agent" that answers its first request (or not), starts a child that inherits its
# stdout (a tool, a language server...) and exits: no end of input ever comes while the
# child lives. The child's pid goes to argv[1] so that the test can end it.
AGENT = r"""
import subprocess, sys, time
first = sys.stdin.readline()
if sys.argv[2] == "answer":
    import json
    rid = json.loads(first)["id"]
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"content": "A"}}) + "\n")
    sys.stdout.flush()
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
open(sys.argv[1], "w").write(str(child.pid))
sys.exit(3)
"""


@pytest.fixture(params=STYLES)
def m(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return module(request.param, tmp_path_factory.mktemp(f"rpc-{request.param}"))


class Client:
    async def session_update(self, params: object) -> None:
        pass


def _end(pidfile: Path) -> None:
    try:
        os.kill(int(pidfile.read_text()), signal.SIGKILL)
    except (OSError, ValueError):
        pass


@pytest.mark.parametrize("answers", [False, True])
def test_requests_end_when_the_spawned_agent_exits_though_its_child_holds_the_pipe(
    m: ModuleType, tmp_path: Path, answers: bool
) -> None:
    """The agent exits while a child it started keeps its stdout open: a request in flight
    fails with ConnectionClosedError, saying the agent exited (it waited until the child
    ended); an answer the agent wrote before it exited is still delivered."""
    pkg = package(m)
    pidfile = tmp_path / "child.pid"

    async def scenario() -> None:
        conn = await m.RPC.spawn(sys.executable, "-c", AGENT, str(pidfile), "answer" if answers else "mute")
        conn.start(Client())
        started = asyncio.get_running_loop().time()
        try:
            asked = conn.request("fs/read_text_file", {"sessionId": "s", "path": "/a"})
            if answers:
                got = await asyncio.wait_for(asked, 10)
                assert (got["content"] if isinstance(got, dict) else got.content) == "A"
                asked = conn.request("fs/read_text_file", {"sessionId": "s", "path": "/b"})
            with pytest.raises(pkg.ConnectionClosedError, match="exited with status 3"):
                await asyncio.wait_for(asked, 10)
            took = asyncio.get_running_loop().time() - started
            assert took < 3.0, f"the request ended {took:.2f} s after it was sent"
            await asyncio.wait_for(conn.closed, 5)
            assert conn.process.returncode == 3
        finally:
            await asyncio.wait_for(conn.close(), 10)
            _end(pidfile)

    run(scenario())


def test_closing_releases_the_agent_pipes(m: ModuleType, tmp_path: Path) -> None:
    """After close(), nothing of the spawned agent is left open (no ResourceWarning for
    an unclosed pipe when it is collected), though its child still holds the pipe."""
    pidfile = tmp_path / "child.pid"

    async def scenario() -> None:
        conn = await m.RPC.spawn(sys.executable, "-c", AGENT, str(pidfile), "mute")
        conn.start(Client())
        try:
            await conn.notify("session/cancel", {"sessionId": "s"})
            await asyncio.wait_for(conn.closed, 10)
        finally:
            await asyncio.wait_for(conn.close(), 10)
            _end(pidfile)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(scenario())
        gc.collect()
    unclosed = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert unclosed == []


def _exit_tie(conn: object) -> tuple[asyncio.Future[int], list[str]]:
    """Tie ``conn`` to a pretend process: the future exits it, the list records its end."""
    exited: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    ended: list[str] = []

    async def end() -> None:
        ended.append("ended")

    conn.watch_process(asyncio.shield(exited), end)  # type: ignore[attr-defined]
    return exited, ended


def test_what_the_agent_wrote_before_it_exited_is_read_first(m: ModuleType) -> None:
    """The exit is seen while the last answer is still arriving: the connection reads on
    while bytes come (silence for EXIT_GRACE s ends it), so the answer is delivered."""
    pkg = package(m)

    async def scenario() -> None:
        async with raw_peer(m, "client", Client()) as (conn, peer):
            exited, ended = _exit_tie(conn)
            asked = asyncio.ensure_future(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/a"}))
            sent = await peer.recv()
            answer = json.dumps({"jsonrpc": "2.0", "id": sent["id"], "result": {"content": "x" * 100_000}}).encode() + b"\n"
            exited.set_result(0)
            for i in range(0, len(answer), 20_000):  # slower than the grace in all, never silent that long
                await peer.send(answer[i : i + 20_000])
                await asyncio.sleep(0.1)
            got = await asyncio.wait_for(asked, 5)
            assert len(got["content"] if isinstance(got, dict) else got.content) == 100_000
            with pytest.raises(pkg.ConnectionClosedError, match="exited with status 0"):
                await asyncio.wait_for(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/b"}), 5)
            await asyncio.wait_for(conn.closed, 5)
            assert ended == ["ended"]

    run(scenario())


def test_reading_paused_by_backpressure_is_not_taken_for_silence(m: ModuleType) -> None:
    """Reading waits for a slow handler (``max_in_flight`` reached) when the agent exits:
    the connection does not close while it is paused; once the handler is done, the answer
    already sent is read and delivered."""

    class Slow(Client):
        async def session_update(self, params: object) -> None:
            await asyncio.sleep(1.0)

    async def scenario() -> None:
        async with raw_peer(m, "client", Slow(), max_in_flight=1) as (conn, peer):
            exited, _ended = _exit_tie(conn)
            asked = asyncio.ensure_future(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/a"}))
            sent = await peer.recv()
            note = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {"type": "text", "text": "a"}}}
            await peer.send(note, note, {"jsonrpc": "2.0", "id": sent["id"], "result": {"content": "A"}})
            await asyncio.sleep(0.1)
            exited.set_result(0)
            got = await asyncio.wait_for(asked, 5)
            assert (got["content"] if isinstance(got, dict) else got.content) == "A"

    run(scenario())
