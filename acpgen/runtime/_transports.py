"""The transports a :class:`~._connection.Connection` runs over: an agent process it
starts (its stdin and stdout), and this process's own stdin and stdout (pipes, or plain
files read in a thread). Reached through ``Rpc.spawn`` and ``Rpc.stdio``."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from ._connection import READ_CHUNK, Connection, end_process
from ._jsonrpc import Rpc


async def spawn_connection(
    rpc: Rpc,
    side: str,
    program: str,
    *args: str,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    stderr: Any = None,
    **options: Any,
) -> Connection:
    """Start ``program`` with its stdin and stdout wired to a new :class:`Connection`,
    which the process's exit closes and whose close ends the process."""
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.subprocess_exec(
        lambda: _AgentProtocol(limit=4 * READ_CHUNK, loop=loop),
        program,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        env=env,
        cwd=cwd,
    )
    process = asyncio.subprocess.Process(transport, protocol, loop)
    assert process.stdout is not None and process.stdin is not None
    conn = Connection(
        rpc, side, process.stdout, process.stdin, process=process, **options
    )

    async def end() -> None:
        await end_process(process, lambda: asyncio.shield(protocol.exited))
        transport.close()  # its stdout too, which a process it started may hold

    conn.watch_process(asyncio.shield(protocol.exited), end)
    return conn


class _AgentProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's protocol for a process with streams, which also says when the process
    exits: ``Process.wait()`` waits until its pipes are closed as well on Python 3.11,
    and a process the agent started may hold them open."""

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited: asyncio.Future[int] = loop.create_future()
        self._process: asyncio.SubprocessTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        assert isinstance(transport, asyncio.SubprocessTransport)
        self._process = transport

    def process_exited(self) -> None:
        code = self._process.get_returncode() if self._process is not None else None
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(code if code is not None else -1)


async def stdio_connection(rpc: Rpc, side: str, **options: Any) -> Connection:
    """A :class:`Connection` over this process's stdin and stdout."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=4 * READ_CHUNK)
    try:
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), sys.stdin
        )
    except ValueError:  # not a pipe: feed the reader from a thread
        loop.run_in_executor(None, _feed, loop, reader, sys.stdin.buffer)
    writer: Any
    try:
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, sys.stdout
        )
        writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    except ValueError:
        writer = _FileWriter(sys.stdout.buffer)
    return Connection(rpc, side, reader, writer, **options)


def _feed(
    loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, source: Any
) -> None:
    """Copy a file into ``reader`` (in a thread)."""
    while True:
        chunk = (
            source.read1(READ_CHUNK)
            if hasattr(source, "read1")
            else source.read(READ_CHUNK)
        )
        if not chunk:
            loop.call_soon_threadsafe(reader.feed_eof)
            return
        loop.call_soon_threadsafe(reader.feed_data, chunk)


class _FileWriter:
    """The part of ``asyncio.StreamWriter`` a connection uses, over a plain file."""

    def __init__(self, target: Any) -> None:
        self.target = target

    def write(self, data: bytes) -> None:
        self.target.write(data)

    async def drain(self) -> None:
        self.target.flush()

    def close(self) -> None:
        self.target.flush()

    async def wait_closed(self) -> None:
        return None
