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
            with pytest.raises(pkg.ConnectionClosedError, match="exited with status 3") as caught:
                await asyncio.wait_for(asked, 10)
            assert caught.value.reason == "the agent process exited with status 3"  # the status the process exited with
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


# ---------------------------------------------------------------- this process's stdio

# A client on RPC.stdio (argv[1]: the directory that holds the generated package, argv[2]
# its name) that answers fs/read_text_file with the length of the path it was asked.
STDIO_CLIENT = r"""
import asyncio, importlib, os, sys, threading
sys.path.insert(0, sys.argv[1])
m = importlib.import_module(sys.argv[2] + ".v1")
run = importlib.import_module(sys.argv[2]).run if os.environ.get("ACPGEN_TEST_UVLOOP") else asyncio.run

class Client:
    async def fs_read_text_file(self, params):
        wire = m.RPC.codec.dump(params)
        return m.RPC.codec.load(m.RPC.spec("fs/read_text_file").result, {"content": str(len(wire["path"]))})

async def main():
    conn = await m.RPC.stdio("client", max_line=2_000_000)
    loop = type(asyncio.get_running_loop()).__module__.split(".")[0]
    # a pipe is read by the loop, a file by a thread of its own; a pipe is written
    # through the loop (with backpressure), a file directly
    writer = type(conn.writer).__name__
    print("limit", conn.reader._limit, loop, "threads", threading.active_count(), writer, file=sys.stderr)
    await conn.serve(Client())
    print("served", file=sys.stderr)

run(main())
"""

# paths longer than the chunks stdin is read in (READ_CHUNK, 256 KiB), and short ones
_SIZES = [3, 600_000, 5, 300_000]


def _asked() -> bytes:
    frames = [{"jsonrpc": "2.0", "id": i, "method": "fs/read_text_file", "params": {"sessionId": "s", "path": "p" * n}} for i, n in enumerate(_SIZES)]
    return b"".join(json.dumps(f).encode() + b"\n" for f in frames)


def _answered(out: bytes) -> dict[Any, Any]:
    answers = [json.loads(line) for line in out.splitlines() if line.strip()]
    return {a["id"]: a.get("result", a) for a in answers}


def _stdio_child(m: ModuleType) -> list[str]:
    where = Path(package(m).__file__).parent  # type: ignore[arg-type]
    style = next(s for s in STYLES if where.name == f"acp_{s}")
    generated = where.parent / "stdio"  # the package under its own name, imported by the child
    if not (generated / where.name).is_dir():
        import shutil

        shutil.copytree(where, generated / where.name)
    return [sys.executable, "-c", STDIO_CLIENT, str(generated), f"acp_{style}"]


@pytest.mark.parametrize("stdin_is", ["file", "pipe"])
def test_stdio_reads_a_file_or_a_pipe_and_writes_the_other(m: ModuleType, tmp_path: Path, stdin_is: str) -> None:
    """``RPC.stdio`` over what an editor gives (pipes) and what a shell redirection gives
    (plain files: read in a thread, in chunks, written directly): every request is read
    whole, long lines too, and answered; the end of the input ends the connection and
    the process."""
    import subprocess

    asked = _asked()
    if stdin_is == "file":
        (tmp_path / "in").write_bytes(asked)
        with open(tmp_path / "in", "rb") as stdin:
            done = subprocess.run(_stdio_child(m), stdin=stdin, capture_output=True, timeout=120)
        out = done.stdout
    else:
        with open(tmp_path / "out", "wb") as stdout:
            done = subprocess.run(_stdio_child(m), input=asked, stdout=stdout, stderr=subprocess.PIPE, timeout=120)
        out = (tmp_path / "out").read_bytes()
    loop = "uvloop" if os.environ.get("ACPGEN_TEST_UVLOOP") else "asyncio"  # see test_transports_uvloop.py
    threads, writer = ("2", "StreamWriter") if stdin_is == "file" else ("1", "_FileWriter")  # the other end is a pipe
    assert done.returncode == 0 and done.stderr.decode().split() == ["limit", str(4 * 256 * 1024), loop, "threads", threads, writer, "served"], done.stderr.decode()[-3000:]
    assert _answered(out) == {i: {"content": str(n)} for i, n in enumerate(_SIZES)}


# ---------------------------------------------------------------- the checks, on the source module


def test_only_pipes_sockets_and_terminals_go_to_the_loops_pipe_transports(tmp_path: Path) -> None:
    """``RPC.stdio`` reads and writes a plain file itself (uvloop would abort the process
    on one, where asyncio raises ``ValueError``)."""
    import socket

    from acpgen.runtime._transports import _is_pipe

    r, w = os.pipe()
    a, b = socket.socketpair()
    with open(r, "rb") as reader, open(w, "wb") as writer, a, b, open(os.devnull, "rb") as null:
        assert _is_pipe(reader) and _is_pipe(writer) and _is_pipe(a) and _is_pipe(null)
    (tmp_path / "plain").write_bytes(b"x")
    with open(tmp_path / "plain", "rb") as plain:
        assert not _is_pipe(plain)
    assert not _is_pipe(plain)  # closed: fileno() raises ValueError
    assert not _is_pipe(object())  # no fileno at all
    assert not _is_pipe(a)  # a closed socket: fstat(-1) raises OSError


def test_check_options_takes_the_connection_keywords_and_refuses_the_rest() -> None:
    from acpgen.runtime._transports import check_options

    check_options({})
    check_options({"max_line": 10, "max_in_flight": 2, "drain_timeout": 1.0, "close_grace": None, "logger": None})
    for name in ("max_lines", "process", "channel", "side", "rpc"):  # unknown, a transport's own, positional
        with pytest.raises(TypeError, match=f"^unexpected keyword argument '{name}' for a connection$"):
            check_options({name: 1})
    for bad in ({"max_line": 1}, {"max_in_flight": 0}, {"drain_timeout": -1}, {"close_grace": -1}):
        with pytest.raises(ValueError):
            check_options(bad)


def test_check_process_accepts_every_kind_of_path_and_says_what_is_wrong() -> None:
    from acpgen.runtime._transports import _check_process

    for side in ("client", "agent"):
        _check_process(side, "agent", ("a", b"b", Path("c")), {"A": "b"}, Path("/"), False)
        _check_process(side, b"agent", (), None, "/", True)
        _check_process(side, Path("agent"), (), {}, b"/", True)
    cases: list[tuple[dict[str, Any], type[Exception], str]] = [
        ({"side": "server"}, ValueError, "side must be 'client' or 'agent', not 'server'"),
        ({"program": 3}, TypeError, "the program and its arguments are strings, not int"),
        ({"args": ("a", None)}, TypeError, "the program and its arguments are strings, not NoneType"),
        ({"env": "A=1"}, TypeError, "env is a mapping of strings, not str"),
        ({"env": {"A": 1}}, TypeError, "env maps strings to strings: 'A': 1"),
        ({"env": {1: "a"}}, TypeError, "env maps strings to strings: 1: 'a'"),
        ({"cwd": 3}, TypeError, "cwd is a path, not int"),
        ({"start_new_session": "yes"}, TypeError, "start_new_session is True or False"),
        ({"start_new_session": 1}, TypeError, "start_new_session is True or False"),
    ]
    for bad, error, message in cases:
        given: dict[str, Any] = {"side": "client", "program": "agent", "args": (), "env": None, "cwd": None, "start_new_session": True}
        given.update(bad)
        with pytest.raises(error) as caught:
            _check_process(**given)
        assert str(caught.value) == message


# An agent outside a process group of its own (``start_new_session=False``), which on the
# end of its input (argv[2]) exits with status 5 after a while (longer than the default
# grace), or ignores it (waiting for SIGTERM), or ignores SIGTERM too. It writes argv[1]
# once its signals are set.
ALONE = r"""
import signal, sys, time
if sys.argv[2] == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
open(sys.argv[1], "w").write("ready")
sys.stdin.read()
if sys.argv[2] == "polite":
    time.sleep(2.5)  # longer than the default close_grace
    sys.exit(5)
while True:
    time.sleep(1)
"""


@pytest.mark.parametrize(("behaviour", "grace", "status"), [("polite", None, 5), ("deaf", 0.3, -signal.SIGTERM), ("stubborn", 0.3, -signal.SIGKILL)])
def test_closing_an_agent_without_its_own_group_ends_it_step_by_step(m: ModuleType, tmp_path: Path, behaviour: str, grace: float | None, status: int) -> None:
    """``start_new_session=False``: closing closes the agent's stdin and waits for it to
    exit (without a limit when ``close_grace`` is None), then terminates it and waits
    ``close_grace`` s, then kills it; its exit status says which step ended it."""
    ready = tmp_path / "ready"

    async def scenario() -> None:
        conn = await m.RPC.spawn(sys.executable, "-c", ALONE, str(ready), behaviour, start_new_session=False, close_grace=grace)
        conn.start(Client())
        try:
            assert os.getpgid(conn.process.pid) == os.getpgid(0)  # in this process's group
            for _ in range(400):
                if ready.exists():
                    break
                await asyncio.sleep(0.05)
            loop = asyncio.get_running_loop()
            started = loop.time()
            await asyncio.wait_for(conn.close(), 20)
            took = loop.time() - started
            assert conn.returncode == status, (conn.returncode, took)
            if behaviour == "polite":
                assert took >= 2.5
        finally:
            if conn.process.returncode is None:
                conn.process.kill()

    run(scenario())


def test_a_connection_over_a_channel_takes_its_options(m: ModuleType) -> None:
    """``RPC.over``: a connection for its side over a message transport, with the options
    given (checked first: a misspelled one raises before anything is made)."""
    pkg = package(m)

    class Reading(Client):
        async def fs_read_text_file(self, params: Any) -> Any:
            return m.RPC.codec.load(m.RPC.spec("fs/read_text_file").result, {"content": "A"})

    async def scenario() -> None:
        a, c = pkg.memory_pair()
        with pytest.raises(TypeError, match="unexpected keyword argument 'max_lines'"):
            m.RPC.over("client", c, max_lines=3)
        agent = m.RPC.over("agent", a, max_in_flight=3)
        client = m.RPC.over("client", c, max_in_flight=5)
        assert (agent.side, client.side, agent.max_in_flight, client.max_in_flight) == ("agent", "client", 3, 5)
        assert agent.rpc is m.RPC and client.rpc is m.RPC
        agent.start(Client())
        client.start(Reading())
        try:
            got = await asyncio.wait_for(agent.request("fs/read_text_file", {"sessionId": "s", "path": "/a"}), 10)
            assert (got["content"] if isinstance(got, dict) else got.content) == "A"
        finally:
            await asyncio.wait_for(client.close(), 10)
            await asyncio.wait_for(agent.close(), 10)

    run(scenario())


# An agent that says where it runs and what its environment holds (as the content of its
# answer to the first request), after a line to its stderr.
SHOW = r"""
import json, os, sys
sys.stderr.write("to stderr\n")
sys.stderr.flush()
first = json.loads(sys.stdin.readline())
out = {"cwd": os.getcwd(), "env": os.environ.get("ACPGEN_TEST_VALUE"), "path": first["params"]["path"]}
sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": first["id"], "result": {"content": json.dumps(out)}}) + "\n")
sys.stdout.flush()
sys.stdin.read()
"""


def test_spawn_gives_the_process_its_env_cwd_and_stderr(m: ModuleType, tmp_path: Path) -> None:
    """``env`` (any mapping) is the process's whole environment, ``cwd`` its directory,
    ``stderr`` where its stderr goes; the connection is for the ``side`` asked, and its
    reader holds up to 4 reads of the line reader before it pauses the pipe."""
    from types import MappingProxyType

    pkg = package(m)
    lines = importlib.import_module(f"{pkg.__name__}._lines")
    where = tmp_path / "work"
    where.mkdir()
    env = MappingProxyType({"ACPGEN_TEST_VALUE": "v", "MUTANT_UNDER_TEST": os.environ.get("MUTANT_UNDER_TEST", "")})

    async def scenario() -> None:
        with open(tmp_path / "err", "w") as err:
            conn = await m.RPC.spawn(sys.executable, "-c", SHOW, side="agent", env=env, cwd=where, stderr=err)
        conn.start(Client())
        try:
            assert conn.side == "agent" and conn.reader._limit == 4 * lines.READ_CHUNK
            got = await asyncio.wait_for(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/a"}), 10)
            shown = json.loads(got["content"] if isinstance(got, dict) else got.content)
            assert shown == {"cwd": str(where.resolve()), "env": "v", "path": "/a"}
        finally:
            await asyncio.wait_for(conn.close(), 10)

    run(scenario())
    assert (tmp_path / "err").read_text() == "to stderr\n"


def test_closing_an_agent_without_its_own_group_waits_for_it_not_for_its_pipes(m: ModuleType, tmp_path: Path) -> None:
    """``start_new_session=False``, ``close_grace=None``: the agent exits at the end of its
    input while a child it started holds its stdout; closing waits for the agent's exit,
    not for the pipe (``Process.wait`` would wait for the child too on Python 3.11)."""
    pidfile = tmp_path / "child.pid"

    async def scenario() -> None:
        conn = await m.RPC.spawn(sys.executable, "-c", AGENT, str(pidfile), "mute", start_new_session=False, close_grace=None)
        conn.start(Client())
        try:
            await conn.notify("session/cancel", {"sessionId": "s"})
            loop = asyncio.get_running_loop()
            started = loop.time()
            await asyncio.wait_for(conn.close(), 25)
            took = loop.time() - started
            assert conn.returncode == 3 and took < 15, (conn.returncode, took)
        finally:
            _end(pidfile)

    run(scenario())


# MARKER, deaf to SIGTERM
DEAF_MARKER = "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n" + MARKER


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="/proc")
def test_a_spawn_failing_after_the_start_kills_an_agent_without_its_own_group(m: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``start_new_session=False``: when making the connection fails once the process
    runs, the process itself is killed (SIGKILL: it ignores SIGTERM) before the error
    propagates."""
    pkg = package(m)
    marker = tmp_path / "started"

    def broken(*args: object, **kwargs: object) -> None:
        for _ in range(200):
            if marker.exists() and len(marker.read_text().split()) == 2:
                raise RuntimeError("no connection")
            time.sleep(0.05)
        raise AssertionError("the process did not start")

    monkeypatch.setattr(importlib.import_module(f"{pkg.__name__}._transports"), "Connection", broken)

    async def scenario() -> None:
        with pytest.raises(RuntimeError, match="no connection"):
            await m.RPC.spawn(sys.executable, "-c", DEAF_MARKER, str(marker), start_new_session=False)
        await asyncio.sleep(0.5)

    run(scenario())
    agent, child = [int(p) for p in marker.read_text().split()]
    os.kill(child, signal.SIGKILL)  # outside a group of its own, the agent's child is not ours to end
    left = alive(agent)
    if left:
        os.kill(agent, signal.SIGKILL)
    assert not left
