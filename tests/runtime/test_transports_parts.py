"""The parts of acpgen/runtime/_transports.py that need no connection, on the source
module: whether a process group is alive (``_group_alive``: a zombie does not count, a
process whose name holds ``)`` does, nothing is signalled), how ``end_tree`` takes its
steps (a group that exits within the grace is not signalled), and the stdio helpers
(``_feed``, ``_FileWriter``). The transports with a peer are in ``test_transports.py``.
"""

from __future__ import annotations

import asyncio
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from acpgen.runtime import _transports
from acpgen.runtime._transports import _FileWriter, _feed, _group_alive, end_tree

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="reads /proc and signals process groups"
)


def _state(pid: int) -> bytes:
    stat = Path(f"/proc/{pid}/stat").read_bytes()
    return stat[stat.rfind(b")") + 2 :].split()[0]


def _hangup_ends() -> None:
    # (a run under nohup would have the process ignore SIGHUP: it ends it here)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


@pytest.fixture
def group() -> Iterator[subprocess.Popen[bytes]]:
    """A process leading a session and a process group of its own, ended after the test;
    a SIGHUP ends it."""
    process = subprocess.Popen(
        ["sleep", "60"], start_new_session=True, preexec_fn=_hangup_ends
    )
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def test_a_live_group_is_alive_and_is_not_signalled(
    group: subprocess.Popen[bytes],
) -> None:
    assert _group_alive(group.pid) is True
    with pytest.raises(subprocess.TimeoutExpired):  # still running: no signal was sent
        group.wait(timeout=0.5)


def test_a_group_whose_process_name_holds_a_parenthesis_is_alive(
    tmp_path: Path,
) -> None:
    """The name in ``/proc/<pid>/stat`` is in parentheses and may hold ``)`` itself: the
    fields are read after the last one."""
    program = tmp_path / "x) 1 2 3"
    program.symlink_to("/bin/sleep")
    process = subprocess.Popen([str(program), "60"], start_new_session=True)
    try:
        assert b")" in Path(f"/proc/{process.pid}/stat").read_bytes().split(b" S ")[0]
        assert _group_alive(process.pid) is True
    finally:
        process.kill()
        process.wait()


def test_a_group_left_with_a_zombie_only_is_not_alive() -> None:
    process = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        process.send_signal(signal.SIGKILL)
        for _ in range(500):  # not reaped: a zombie until wait()
            if _state(process.pid) == b"Z":
                break
            time.sleep(0.01)
        assert _state(process.pid) == b"Z"
        os.killpg(process.pid, 0)  # the group still exists
        assert _group_alive(process.pid) is False
    finally:
        process.wait()


def test_a_group_that_is_gone_is_not_alive() -> None:
    process = subprocess.Popen(["true"], start_new_session=True)
    process.wait()
    assert _group_alive(process.pid) is False


def test_a_group_that_may_not_be_signalled_counts_as_alive(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refused(pgid: int, signum: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "killpg", refused)
    assert _group_alive(12345) is True


@pytest.mark.parametrize("error", [FileNotFoundError, PermissionError])
def test_without_a_readable_proc_a_live_group_counts_as_alive(
    group: subprocess.Popen[bytes],
    monkeypatch: pytest.MonkeyPatch,
    error: type[OSError],
) -> None:
    def unreadable(path: Any) -> list[str]:
        raise error(2, "no /proc")

    monkeypatch.setattr(os, "listdir", unreadable)
    assert _group_alive(group.pid) is True


def test_entries_that_are_no_pid_or_are_gone_are_skipped(
    group: subprocess.Popen[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    listdir = os.listdir

    def listed(path: Any) -> list[str]:
        assert path == "/proc"
        gone = subprocess.Popen(["true"])
        gone.wait()  # a pid no process has now
        return ["self", "net", str(gone.pid), *listdir(path)]

    monkeypatch.setattr(os, "listdir", listed)
    assert _group_alive(group.pid) is True


def test_end_tree_lets_a_group_that_exits_within_the_grace_exit_unsignalled() -> None:
    """The first step only waits (up to ``grace`` s): an agent that exits by itself
    within it exits with its own status, not of a SIGTERM."""

    async def scenario() -> int | None:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "import time; time.sleep(0.3)", start_new_session=True
        )
        exited = asyncio.ensure_future(process.wait())
        await asyncio.wait_for(end_tree(process, exited, True, grace=30), 60)
        return process.returncode

    assert asyncio.run(scenario()) == 0


def test_feed_copies_a_file_into_the_reader_then_its_end() -> None:
    async def scenario(source: Any) -> bytes:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.run_in_executor(None, _feed, loop, reader, source)
        return await asyncio.wait_for(reader.read(), 10)

    data = b"x" * (3 * _transports.READ_CHUNK + 5) + b"\nlast"
    assert asyncio.run(scenario(io.BufferedReader(io.BytesIO(data)))) == data
    assert asyncio.run(scenario(io.BytesIO(data))) == data


class _Only:
    """A file with only ``read`` (no ``read1``), that records the sizes asked."""

    def __init__(self, data: bytes) -> None:
        self.data = io.BytesIO(data)
        self.asked: list[int] = []

    def read(self, size: int) -> bytes:
        self.asked.append(size)
        return self.data.read(size)


class _Chunked(_Only):
    def read(self, size: int) -> bytes:
        raise AssertionError("read1 is there")

    def read1(self, size: int) -> bytes:
        self.asked.append(size)
        return self.data.read(size)


@pytest.mark.parametrize("kind", [_Only, _Chunked])
def test_feed_reads_a_chunk_at_a_time(kind: type[_Only]) -> None:
    source = kind(b"y" * (_transports.READ_CHUNK + 1))

    async def scenario() -> bytes:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.run_in_executor(None, _feed, loop, reader, source)
        return await asyncio.wait_for(reader.read(), 10)

    assert asyncio.run(scenario()) == b"y" * (_transports.READ_CHUNK + 1)
    assert source.asked == [_transports.READ_CHUNK] * 3


class _Target:
    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.flushes = 0

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def flush(self) -> None:
        self.flushes += 1


def test_the_file_writer_writes_and_flushes_its_file() -> None:
    async def scenario() -> None:
        target = _Target()
        writer = _FileWriter(target)
        assert writer.target is target
        writer.write(b"one\n")
        assert target.written == [b"one\n"] and target.flushes == 0
        await writer.drain()
        assert target.flushes == 1
        writer.close()
        assert target.flushes == 2
        assert await writer.wait_closed() is None

    asyncio.run(scenario())


def test_stdio_hands_the_connection_its_side_and_options(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``RPC.stdio`` over pipes (this process's stdin and stdout stood in for): the
    connection is for the side given, with the options given."""
    from .harness import module

    m = module("pydantic", tmp_path_factory.mktemp("rpc-pydantic"))
    r_in, w_in = os.pipe()
    r_out, w_out = os.pipe()
    monkeypatch.setattr(sys, "stdin", open(r_in, "r"))
    monkeypatch.setattr(sys, "stdout", open(w_out, "w"))

    async def scenario() -> None:
        conn = await m.RPC.stdio("client", max_line=4096, max_in_flight=3)
        try:
            assert conn.side == "client"
            assert (conn.max_line, conn.max_in_flight) == (4096, 3)
        finally:
            os.close(w_in)  # the end of the input
            await asyncio.wait_for(conn.close(), 10)

    try:
        asyncio.run(scenario())
    finally:
        os.close(r_out)
