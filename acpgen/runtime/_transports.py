"""The transports a :class:`~._connection.Connection` runs over: an agent process it
starts (its stdin and stdout), and this process's own stdin and stdout (pipes, or plain
files read in a thread). Reached through ``Rpc.spawn`` and ``Rpc.stdio``."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from ._connection import READ_CHUNK, Connection
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
    """Start ``program`` with its stdin and stdout wired to a new :class:`Connection`."""
    process = await asyncio.create_subprocess_exec(
        program,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        env=env,
        cwd=cwd,
        limit=4 * READ_CHUNK,
    )
    assert process.stdout is not None and process.stdin is not None
    return Connection(
        rpc, side, process.stdout, process.stdin, process=process, **options
    )


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
