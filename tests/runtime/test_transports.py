"""The transports of acpgen/runtime/_transports.py: a connection to a spawned agent
process ends with that process, whatever the process left behind, and releases its pipes."""

from __future__ import annotations

import asyncio
import gc
import importlib
import json
import os
import signal
import sys
import time
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from .harness import STYLES, alive, module, package, raw_peer, run, tree

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

    gc.collect()  # what the tests before this one left behind is not this test's
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


# ---------------------------------------------------------------- process trees

# A launcher as agents are started in the wild (a node or shell launcher, a CLI that
# relaunches itself): it starts a child that ignores SIGTERM and the end of its stdin and
# holds the launcher's stdout, answers the first request, then (argv[2]) exits at once or
# stays, ignoring SIGTERM and stdin EOF too. Their pids go to argv[1].
LAUNCHER = r"""
import json, os, signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c",
    "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True: time.sleep(1)"])
open(sys.argv[1], "w").write(f"{os.getpid()} {child.pid}")
rid = json.loads(sys.stdin.readline())["id"]
sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"content": "up"}}) + "\n")
sys.stdout.flush()
if sys.argv[2] == "exits":
    os._exit(0)
sys.stdin.read()  # the end of input: ignored too
while True:
    time.sleep(1)
"""


async def _read_pids(pidfile: Path) -> list[int]:
    for _ in range(200):
        if pidfile.exists() and len(pidfile.read_text().split()) == 2:
            return [int(p) for p in pidfile.read_text().split()]
        await asyncio.sleep(0.05)
    raise AssertionError("the launcher did not start its child")


@pytest.mark.skipif(not hasattr(os, "killpg") or not Path("/proc").is_dir(), reason="POSIX process groups, /proc")
@pytest.mark.parametrize(("launcher", "grace"), [("exits", 0.3), ("stays", 0.3), ("stays", None)])
def test_closing_ends_the_whole_process_tree(m: ModuleType, tmp_path: Path, launcher: str, grace: float | None) -> None:
    """Closing a spawned agent ends every process it started, a child that ignores SIGTERM
    and stdin EOF included, within a bounded time: stdin closed, ``close_grace`` s (the
    default when ``grace`` is None), SIGTERM to the group, ``close_grace`` s, SIGKILL to
    the group (each step bounded). Before, the child ran on forever."""
    pkg = package(m)
    pidfile = tmp_path / "pids"
    options = {} if grace is None else {"close_grace": grace}
    connection = importlib.import_module(f"{pkg.__name__}._connection")
    limit = 2 * (connection.CLOSE_GRACE if grace is None else grace) + connection.KILL_WAIT + 1.0

    async def scenario() -> float:
        conn = await m.RPC.spawn(sys.executable, "-c", LAUNCHER, str(pidfile), launcher, **options)
        conn.start(Client())
        pids: set[int] = set()
        try:
            got = await asyncio.wait_for(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/a"}), 10)
            assert (got["content"] if isinstance(got, dict) else got.content) == "up"
            launched, child = await _read_pids(pidfile)
            pids = {launched, child} | tree(launched)
            assert launched == conn.process.pid and os.getpgid(child) == launched  # a group of its own
            loop = asyncio.get_running_loop()
            started = loop.time()
            await asyncio.wait_for(conn.close(), limit + 5)
            took = loop.time() - started
            assert [pid for pid in pids if alive(pid)] == [], "processes left after close()"
            assert took < limit, f"close() took {took:.2f} s"
            return took
        finally:
            for pid in pids:
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)

    took = run(scenario())
    print(f"launcher {launcher}, close_grace {grace}: tree gone {took:.2f} s after close()")


SLOW_EXIT = r"""
import sys, time
sys.stdin.read()
time.sleep(float(sys.argv[1]))
sys.exit(5)
"""


def test_close_stdin_and_wait(m: ModuleType) -> None:
    """``close_grace=None``: closing closes the agent's stdin and waits for it to exit on
    its own, however long it takes; its exit status is in the connection."""

    async def scenario() -> None:
        conn = await m.RPC.spawn(sys.executable, "-c", SLOW_EXIT, "2.5", close_grace=None)
        conn.start(Client())
        started = asyncio.get_running_loop().time()
        await asyncio.wait_for(conn.close(), 20)
        took = asyncio.get_running_loop().time() - started
        assert took >= 2.5 and conn.returncode == 5, (took, conn.returncode)

    run(scenario())


CRASH = r"""
import sys
sys.stdin.readline()
sys.exit(3)
"""


def test_the_exit_status_is_in_the_error_a_caller_sees(m: ModuleType) -> None:
    """An agent that dies while a request is in flight: the request fails with
    ConnectionClosedError carrying the exit status (``returncode``) and the reason, in
    ``str()`` too; so does a request made after the close."""
    pkg = package(m)

    async def scenario() -> None:
        conn = await m.RPC.spawn(sys.executable, "-c", CRASH)
        conn.start(Client())
        try:
            with pytest.raises(pkg.ConnectionClosedError) as caught:
                await asyncio.wait_for(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/a"}), 10)
            assert caught.value.returncode == 3, (caught.value.returncode, caught.value.reason)
            assert "status 3" in str(caught.value) and caught.value.reason in str(caught.value)
            await asyncio.wait_for(conn.closed, 5)
            with pytest.raises(pkg.ConnectionClosedError) as caught:
                await conn.request("fs/read_text_file", {"sessionId": "s", "path": "/a"})
            assert caught.value.returncode == 3 and "status 3" in str(caught.value)
        finally:
            await asyncio.wait_for(conn.close(), 10)

    run(scenario())


def test_the_exit_status_is_in_str_when_the_reason_lacks_it(m: ModuleType) -> None:
    pkg = package(m)
    err = pkg.ConnectionClosedError("closed by this side", -9)
    assert err.reason == "closed by this side" and err.returncode == -9
    assert str(err) == "closed by this side (the agent process exited with status -9)"
    assert str(pkg.ConnectionClosedError("the peer closed the connection")) == "the peer closed the connection"


# A program that says it started (a file), then starts a child and sleeps: a spawn that
# raises must leave neither behind.
MARKER = r"""
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
open(sys.argv[1], "w").write(f"{os.getpid()} {child.pid}")
time.sleep(60)
"""


@pytest.mark.parametrize(
    "bad",
    [
        {"max_lines": 10},  # misspelled
        {"proces_group": True},
        {"process": None},  # spawn's own
        {"max_line": 1},
        {"close_grace": -1},
        {"env": {"A": 1}},
        {"env": "A=1"},
        {"cwd": 3},
        {"start_new_session": "yes"},
        {"side": "server"},
    ],
    ids=lambda bad: ",".join(bad),
)
def test_a_bad_spawn_argument_raises_before_anything_starts(
    m: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: dict[str, object]
) -> None:
    """Every argument of ``RPC.spawn`` is checked before the process starts: a misspelled
    keyword raises TypeError (a bad value TypeError or ValueError) and nothing runs. Before,
    an unknown keyword reached the connection after the agent had started, which ran on."""
    marker = tmp_path / "started"
    started: list[object] = []
    exec_ = asyncio.base_events.BaseEventLoop.subprocess_exec

    async def recorded(*args: Any, **kwargs: Any) -> Any:
        started.append(args)
        return await exec_(*args, **kwargs)

    monkeypatch.setattr(asyncio.base_events.BaseEventLoop, "subprocess_exec", recorded)

    async def scenario() -> None:
        with pytest.raises((TypeError, ValueError)):
            await m.RPC.spawn(sys.executable, "-c", MARKER, str(marker), **bad)
        await asyncio.sleep(0.5)

    run(scenario())
    assert started == [] and not marker.exists(), "the process started"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="/proc")
def test_a_spawn_failing_after_the_start_leaves_nothing_behind(m: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When making the connection fails once the process runs, the process and what it
    started are killed before the error propagates."""
    pkg = package(m)
    marker = tmp_path / "started"

    def broken(*args: object, **kwargs: object) -> None:
        for _ in range(200):  # the process runs and has started its child
            if marker.exists() and len(marker.read_text().split()) == 2:
                raise RuntimeError("no connection")
            time.sleep(0.05)
        raise AssertionError("the process did not start")

    monkeypatch.setattr(importlib.import_module(f"{pkg.__name__}._transports"), "Connection", broken)

    async def scenario() -> None:
        with pytest.raises(RuntimeError, match="no connection"):
            await m.RPC.spawn(sys.executable, "-c", MARKER, str(marker))
        await asyncio.sleep(0.5)

    run(scenario())
    pids = [int(p) for p in marker.read_text().split()]
    left = [p for p in pids if alive(p)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == []
