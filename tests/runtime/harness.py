"""What the runtime tests share: the ``rpc`` fixture module in each style, a connection
with a raw peer (bytes in, bytes out) and a pair of connections (agent and client)."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType
from typing import Any, AsyncIterator

from ..conftest import SCHEMAS, generate, import_file

STYLES = ("pydantic", "dataclasses", "typeddict")
_MODULES: dict[tuple[str, str], ModuleType] = {}


def module(style: str, out: Path, fixture: str = "rpc") -> ModuleType:
    """The fixture's v1 module in ``style`` (generated once per session)."""
    key = (fixture, style)
    if key not in _MODULES:
        generate(SCHEMAS / fixture, out, (style,))
        _MODULES[key] = import_file(out / f"acp_{style}" / "v1.py")
    return _MODULES[key]


def package(m: ModuleType) -> ModuleType:
    return sys.modules[m.__package__]


def line(frame: Any) -> bytes:
    return json.dumps(frame).encode() + b"\n"


def get(value: Any, wire: str, attr: str) -> Any:
    """A member of a message in any style (dicts for TypedDict, objects otherwise)."""
    return value[wire] if isinstance(value, dict) else getattr(value, attr)


class Peer:
    """The other end of a connection, speaking raw lines."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    async def send(self, *frames: Any) -> None:
        for frame in frames:
            self.writer.write(frame if isinstance(frame, bytes) else line(frame))
        await self.writer.drain()

    async def recv(self, timeout: float = 5.0) -> Any:
        raw = await asyncio.wait_for(self.reader.readline(), timeout)
        assert raw, "the connection closed its output"
        return json.loads(raw)

    async def recv_all(self, count: int, timeout: float = 5.0) -> list[Any]:
        return [await self.recv(timeout) for _ in range(count)]

    def close_output(self) -> None:
        """Half-close: the connection sees the end of its input, we can still read."""
        if self.writer.can_write_eof():
            self.writer.write_eof()
        else:
            self.writer.close()


async def socket_streams(limit: int = 2**16) -> tuple[Any, Any, Any, Any]:
    a, b = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=a, limit=limit)
    peer_r, peer_w = await asyncio.open_connection(sock=b, limit=2**30)
    return reader, writer, peer_r, peer_w


@asynccontextmanager
async def raw_peer(m: ModuleType, side: str, handler: Any, *, start: bool = True, **options: Any) -> AsyncIterator[tuple[Any, Peer]]:
    """A connection for ``side`` serving ``handler``, and the raw peer at its other end."""
    reader, writer, peer_r, peer_w = await socket_streams()
    conn = m.RPC.connect(side, reader, writer, **options)
    if start:
        conn.start(handler)
    try:
        yield conn, Peer(peer_r, peer_w)
    finally:
        await asyncio.wait_for(conn.close(), 10)
        peer_w.close()


@asynccontextmanager
async def pair(m: ModuleType, agent: Any, client: Any, **options: Any) -> AsyncIterator[tuple[Any, Any]]:
    """An agent connection and a client connection talking to each other, both serving."""
    a_r, a_w, c_r, c_w = await socket_streams()
    agent_conn = m.RPC.connect("agent", a_r, a_w, **options)
    client_conn = m.RPC.connect("client", c_r, c_w, **options)
    agent_conn.start(agent)
    client_conn.start(client)
    try:
        yield agent_conn, client_conn
    finally:
        await asyncio.wait_for(client_conn.close(), 10)
        await asyncio.wait_for(agent_conn.close(), 10)


def run(coro: Any, timeout: float = 60.0) -> Any:
    """Run a scenario with a hard end: a hang fails the test instead of blocking CI."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


def run_on_uvloop_in(monkeypatch: Any, *modules: ModuleType) -> list[str]:
    """Make the ``run`` of each test module in ``modules`` run its scenarios on uvloop
    (through the runtime's ``run``); the list returned gets the kind of loop each ran on."""
    from acpgen.runtime import _remote

    loops: list[str] = []

    def on_uvloop(coro: Any, timeout: float = 60.0) -> Any:
        async def bounded() -> Any:
            loops.append(type(asyncio.get_running_loop()).__module__.split(".")[0])
            return await asyncio.wait_for(coro, timeout)

        return _remote.run(bounded(), uvloop=True)

    for tests in modules:
        monkeypatch.setattr(tests, "run", on_uvloop)
    return loops


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, which only waits to be reaped, does not)."""
    import os

    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[-1][0] != "Z"
    except OSError:
        return sys.platform != "linux"  # no /proc entry: gone on Linux


def tree(pid: int) -> set[int]:
    """``pid`` and every process under it, and every process of its group (from /proc)."""
    import os

    parents: dict[int, int] = {}
    groups: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(") ", 1)[-1].split()
            except OSError:
                continue
            parents[int(entry)] = int(fields[1])
            groups[int(entry)] = int(fields[2])
    found = {pid} | {p for p, g in groups.items() if g == pid}
    while True:
        more = {p for p, parent in parents.items() if parent in found} - found
        if not more:
            return found
        found |= more
