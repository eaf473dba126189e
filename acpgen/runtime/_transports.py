"""The transports a :class:`~._connection.Connection` runs over: an agent process it
starts (its stdin and stdout), and this process's own stdin and stdout (pipes, or plain
files read in a thread). Reached through ``Rpc.spawn`` and ``Rpc.stdio``; a message
transport's channel through ``Rpc.over`` (:func:`channel_connection`). Every transport
checks a connection's options before it starts anything (:func:`check_options`).

A spawned agent runs in a session and process group of its own (POSIX, by default), so
that closing ends everything it started: its stdin is closed and the whole group gets
``close_grace`` s to exit; then SIGTERM to the group and ``close_grace`` s more; then
SIGKILL to the group (each wait bounded; with ``close_grace=None`` the first is not).
"""

from __future__ import annotations

import asyncio
import os
import signal
import stat
import sys
from typing import Any, Awaitable, Callable, Final, Mapping, cast

from ._connection import CLOSE_GRACE, KILL_WAIT, Connection, _check_values
from ._jsonrpc import Rpc
from ._lines import READ_CHUNK

#: keyword arguments of a connection that a transport gives, never the user
_OWN: Final = ("process", "channel")


def check_options(options: dict[str, Any]) -> None:
    """Raise as :class:`Connection` would for these keyword options (``TypeError`` for
    an unknown one, ``ValueError`` for a bad value), before anything is started."""
    import inspect

    from ._connection import (
        Connection as core,
    )  # (the class itself, however named here)

    params = inspect.signature(core).parameters
    for name in options:
        param = params.get(name)
        if param is None or param.kind is not param.KEYWORD_ONLY or name in _OWN:
            raise TypeError(f"unexpected keyword argument {name!r} for a connection")
    given = {name: p.default for name, p in params.items() if p.kind is p.KEYWORD_ONLY}
    given.update(options)
    _check_values(
        given["max_line"],
        given["max_in_flight"],
        given["drain_timeout"],
        given["close_grace"],
    )


def channel_connection(rpc: Rpc, side: str, channel: Any, **options: Any) -> Connection:
    """A :class:`Connection` for ``side`` over a :class:`~._channel.Channel`, its
    options checked first."""
    check_options(options)
    return Connection(rpc, side, None, None, channel=channel, **options)


async def end_process(
    process: asyncio.subprocess.Process,
    exited: Callable[[], Awaitable[Any]] | None = None,
    *,
    grace: float | None = CLOSE_GRACE,
) -> None:
    """Let an agent process exit on its own (its stdin is closed), then terminate it, then
    kill it, waiting at most ``grace`` s each time (``None``: no limit before terminate).
    ``exited`` waits for its exit (by default ``process.wait``, which on Python 3.11 also
    waits until no process holds its pipes)."""
    wait = exited or process.wait
    for send, limit in (
        (None, grace),
        (process.terminate, grace),
        (process.kill, KILL_WAIT),
    ):
        if send is not None:
            try:
                send()
            except ProcessLookupError:
                return
        try:
            await asyncio.wait_for(wait(), limit)
            return
        except asyncio.TimeoutError:
            pass


#: seconds between two looks at whether a process group is gone
_POLL: float = 0.02


async def spawn_connection(
    rpc: Rpc,
    side: str,
    program: str | os.PathLike[str],
    *args: str | os.PathLike[str],
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stderr: Any = None,
    start_new_session: bool = True,
    **options: Any,
) -> Connection:
    """Start ``program`` with its stdin and stdout wired to a new :class:`Connection`,
    which the process's exit closes and whose close ends the process (and its process
    group: see the module docstring). Every argument is checked first; when this raises
    after the process started, the process (its group) is killed and reaped."""
    _check_process(side, program, args, env, cwd, start_new_session)
    check_options(options)
    group = start_new_session and hasattr(os, "killpg")
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.subprocess_exec(
        lambda: _AgentProtocol(limit=4 * READ_CHUNK, loop=loop),
        program,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        env=None if env is None else dict(env),
        cwd=cwd,
        start_new_session=group,
    )
    pid = transport.get_pid()
    try:
        process = asyncio.subprocess.Process(transport, protocol, loop)
        assert process.stdout is not None and process.stdin is not None
        conn = Connection(
            rpc, side, process.stdout, process.stdin, process=process, **options
        )
    except BaseException:
        _kill(pid, group)
        transport.close()
        raise

    async def end() -> None:
        await end_tree(process, protocol.exited, group, conn.close_grace)
        transport.close()  # its stdout too, which a process it started may hold

    conn.watch_process(asyncio.shield(protocol.exited), end)
    return conn


def _check_process(
    side: str,
    program: Any,
    args: tuple[Any, ...],
    env: Any,
    cwd: Any,
    start_new_session: Any,
) -> None:
    if side not in ("client", "agent"):
        raise ValueError(f"side must be 'client' or 'agent', not {side!r}")
    for arg in (program, *args):
        if not isinstance(arg, (str, bytes, os.PathLike)):
            raise TypeError(
                f"the program and its arguments are strings, not {type(arg).__name__}"
            )
    if env is not None:
        if not isinstance(env, Mapping):
            raise TypeError(f"env is a mapping of strings, not {type(env).__name__}")
        for key, value in env.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise TypeError(f"env maps strings to strings: {key!r}: {value!r}")
    if cwd is not None and not isinstance(cwd, (str, bytes, os.PathLike)):
        raise TypeError(f"cwd is a path, not {type(cwd).__name__}")
    if type(start_new_session) is not bool:
        raise TypeError("start_new_session is True or False")


async def end_tree(
    process: asyncio.subprocess.Process,
    exited: asyncio.Future[int],
    group: bool,
    grace: float | None = CLOSE_GRACE,
) -> None:
    """End an agent whose stdin is closed: wait ``grace`` s (``None``: no limit) for it
    to exit, with every process of its group when it leads one (``group``); then SIGTERM
    (to the group), ``grace`` s more; then SIGKILL (to the group), at most KILL_WAIT s
    more. ``exited`` is done when the agent itself exited."""
    if not group:
        await end_process(process, lambda: asyncio.shield(exited), grace=grace)
        return
    pid = process.pid
    steps: tuple[tuple[int | None, float | None], ...] = (
        (None, grace),
        (signal.SIGTERM, grace),
        (signal.SIGKILL, KILL_WAIT),
    )
    loop = asyncio.get_running_loop()
    for signum, limit in steps:
        if signum is not None:
            try:
                os.killpg(pid, signum)
            except ProcessLookupError:
                pass  # the group is gone; the leader may still be a zombie
            except PermissionError:
                pass
        deadline = None if limit is None else loop.time() + limit
        while not exited.done() or _group_alive(pid):
            if deadline is not None and loop.time() >= deadline:
                break
            await asyncio.sleep(_POLL)
        else:
            return


def _group_alive(pgid: int) -> bool:
    """Whether a process of group ``pgid`` is alive (zombies, which only wait to be
    reaped, do not count where ``/proc`` tells them apart)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True  # no /proc (macOS): a zombie counts until it is reaped
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and fields[2] == str(pgid).encode() and fields[0] != b"Z":
            return True
    return False


def _kill(pid: int, group: bool) -> None:
    """Kill a process that was just started (and its group), for a spawn that failed;
    asyncio reaps it."""
    try:
        if group:
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, getattr(signal, "SIGKILL", signal.SIGTERM))
    except OSError:
        pass


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
        # a subprocess transport (uvloop's does not derive from asyncio's class)
        self._process = cast(asyncio.SubprocessTransport, transport)

    def process_exited(self) -> None:
        code = self._process.get_returncode() if self._process is not None else None
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(code if code is not None else -1)


async def stdio_connection(rpc: Rpc, side: str, **options: Any) -> Connection:
    """A :class:`Connection` over this process's stdin and stdout."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=4 * READ_CHUNK)
    if _is_pipe(sys.stdin):
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), sys.stdin
        )
    else:  # a plain file (a shell's redirection): fed to the reader from a thread
        loop.run_in_executor(None, _feed, loop, reader, sys.stdin.buffer)
    writer: Any
    if _is_pipe(sys.stdout):
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, sys.stdout
        )
        writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    else:  # a plain file: written directly
        writer = _FileWriter(sys.stdout.buffer)
    return Connection(rpc, side, reader, writer, **options)


def _is_pipe(file: Any) -> bool:
    """Whether ``file`` is what an event loop's pipe transport takes: a pipe, a socket or
    a terminal, as asyncio checks (asyncio raises ``ValueError`` on anything else, uvloop
    aborts the process)."""
    try:
        mode = os.fstat(file.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


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
