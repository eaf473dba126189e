"""The asyncio connection: JSON-RPC over newline-delimited streams, or over a message
transport (a :class:`~._channel.Channel`: WebSocket, Streamable HTTP), with the same
promises (the README's "The JSON-RPC layer" says the same for users):

* **Lines of any size.** It reads lines itself (``reader.read``), whatever the reader's
  own limit, up to ``max_line`` bytes (:data:`DEFAULT_MAX_LINE`; a message too). A longer
  one is never held whole: a request on it is answered with an error carrying its id, a
  response to one of our requests fails that request (:class:`OversizedFrameError`);
  else it is logged, and the connection closes if one of our requests could wait for it.
* **A lifecycle.** :meth:`Connection.start` (or :meth:`~Connection.serve`) starts reading;
  :meth:`~Connection.close`, the peer closing its output, or a failed write closes it. A
  request made when no answer can come (closed, peer gone, not serving) raises
  :class:`ConnectionClosedError` at once, and so do the requests in flight when the
  connection closes; ``await conn.closed`` waits for the end. Closing cancels the
  handlers still running, which answer -32800 while the peer can still read.
* **Order, per session.** The notifications about a session (whose params carry its
  ``sessionId``: ``session/update``) are handled one at a time, in arrival order, within
  that session; sessions are handled independently, so a slow handler for one session
  never delays another's. Notifications about no session are handled one at a time, in
  arrival order, among themselves. The answer to one of our requests is delivered after
  every notification of the same session (or, for a request about no session, of no
  session) that arrived before it has been handled (``session/prompt`` returns with every
  update of its turn seen), except for a request made by a notification handler, whose
  answer is delivered at once (no deadlock). Requests from the peer run concurrently.
* **Backpressure.** At most ``max_in_flight`` incoming requests and notifications are
  running or queued, all sessions together; past that the connection stops reading
  until one completes, unless every running handler is waiting for one of our requests
  (then it reads on, so that their answers get through).
* **Cancellation.** ``$/cancel_request`` cancels the handler's task, which is answered
  -32800; a handler raising ``CancelledError`` is answered -32800 too. Cancelling the
  task that awaits :meth:`~Connection.request` sends ``$/cancel_request`` for its id when
  the module's schema has that method.
* **Seeing the traffic.** Observers see every frame read and written, once, in order;
  ``telemetry`` opens a span per request both ways (``_telemetry.py``).
* **Protocol versions.** Serving a :class:`Versions` instead of one handler negotiates
  the version on ``initialize`` and goes on with that version's module (``conn.version``;
  ``_versions.py``); serving one handler negotiates nothing.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import logging
from typing import Any, Awaitable, Callable, Final, Iterable

from ._jsonrpc import (
    DEFAULT_MAX_LINE,
    ConnectionClosedError,
    Id,
    Notification,
    Request,
    Rpc,
)
from ._router import RequestContext, Router
from ._telemetry import IN, OUT, Observer, OpenTelemetry, Traffic
from ._incoming import (
    CANCEL_METHOD,
    _HANDLER,
    Incoming,
    _Lane,
    _Pending,
    _Reply,
    _resolve,
    _urgent,
)
from ._channel import Channel, ChannelClosed, ChannelWriter, MessageReader
from ._lines import LineReader
from ._versions import Versions

#: incoming requests running plus notifications queued, past which reading pauses
DEFAULT_MAX_IN_FLIGHT: Final = 64
#: seconds a closing connection gives, by default (``close_grace=`` changes it per
#: connection), its handlers to answer, and a spawned agent to exit after its stdin is
#: closed and again after SIGTERM
CLOSE_GRACE: Final = 2.0
#: seconds of silence after a spawned agent exited before its output counts as ended
#: (a process it started may hold the pipe open: no end of input would come)
EXIT_GRACE: Final = 0.25
#: seconds to wait for a process to be gone after SIGKILL
KILL_WAIT: Final = 2.0


class Connection(LineReader, MessageReader, Incoming):
    """A JSON-RPC connection over newline-delimited JSON streams (stdio, a pipe, a
    socket), or over a message transport (``channel``: a WebSocket, Streamable HTTP, an
    in-process pair; ``reader`` and ``writer`` are then ``None``): serves a handler for ``side`` through a :class:`Router` and sends typed
    requests and notifications to the peer. See the module docstring for its promises.

    ``max_line``: the longest line read, in bytes; ``max_in_flight``: incoming work
    running or queued before reading pauses; ``drain_timeout``: seconds a closing
    connection keeps handling the notifications already received; ``close_grace``:
    seconds a closing connection gives its handlers to answer and a spawned agent to
    exit at each step (``None``: no limit, "close stdin and wait");
    ``send_cancel_request``: whether cancelling one of our calls sends
    ``$/cancel_request`` (off for a peer that does not know the method); ``process``:
    the agent process behind the streams (:meth:`Rpc.spawn`), ended on close;
    ``observers``: callables that see every frame (:class:`Traffic`); ``telemetry``: an
    :class:`OpenTelemetry` that opens a span per request; ``channel``: the
    :class:`~._channel.Channel` it runs over instead of streams (``Rpc.over``)."""

    def __init__(
        self,
        rpc: Rpc,
        side: str,
        reader: asyncio.StreamReader | None,
        writer: asyncio.StreamWriter | ChannelWriter | None,
        *,
        channel: Channel | None = None,
        logger: logging.Logger | None = None,
        max_line: int = DEFAULT_MAX_LINE,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        drain_timeout: float = 5.0,
        close_grace: float | None = CLOSE_GRACE,
        send_cancel_request: bool = True,
        process: asyncio.subprocess.Process | None = None,
        observers: Iterable[Observer] = (),
        telemetry: OpenTelemetry | None = None,
    ) -> None:
        _check_values(max_line, max_in_flight, drain_timeout, close_grace)
        self.rpc = rpc
        self.side = side
        #: the protocol version spoken (None until negotiated, see ``_versions.py``)
        self.version: int | None = rpc.version
        if (channel is None) == (reader is None):
            raise TypeError("a connection runs over a reader and writer, or a channel")
        self.channel = channel
        #: what a remote transport knows of the connection (its id, principal, cookies)
        self.remote: Any = None
        self.reader = reader
        self.writer: Any = writer if channel is None else ChannelWriter(channel)
        self.log = logger or logging.getLogger(__name__)
        self.max_line = max_line
        self.max_in_flight = max_in_flight
        self.drain_timeout = drain_timeout
        self.close_grace = close_grace
        self.send_cancel_request = send_cancel_request
        self.process = process
        self.telemetry = telemetry
        self._observers: list[Observer] = list(observers)
        self.router: Router | None = None
        self._loop = asyncio.get_running_loop()
        self._ids = itertools.count()
        self._pending: dict[Id, _Pending] = {}
        #: ids of our requests cancelled before their answer: a late answer is expected
        self._abandoned: collections.OrderedDict[Id, None] = collections.OrderedDict()
        self._incoming: dict[Id, tuple[asyncio.Task[None], RequestContext]] = {}
        #: the lanes with work: by session id (None: about no session)
        self._lanes: dict[str | None, _Lane] = {}
        self._queued_notes = 0
        self._notes_running = 0
        self._requests_running = 0
        self._waiting: collections.Counter[object] = collections.Counter()
        self._wake = asyncio.Event()
        self._write_lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[Any]] = set()
        #: the incoming requests' tasks that have started running
        self._started: set[asyncio.Task[None]] = set()
        self._reader_task: asyncio.Task[None] | None = None
        self._closer: asyncio.Task[None] | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._end_process: Callable[[], Awaitable[None]] | None = None
        self._exited: asyncio.Future[int] | None = None
        #: bytes read so far, and whether reading waits for the incoming work to shrink
        self._received = 0
        self._paused = False
        self._closing = False
        self._close_reason = ""
        self._closed: asyncio.Future[None] = self._loop.create_future()
        self._cancel_spec = rpc.spec(CANCEL_METHOD, "notification")

    # -- lifecycle -------------------------------------------------------------------
    def start(self, handler: Any) -> None:
        """Serve ``handler`` (an ``Agent`` or ``Client`` of the module, or any object
        with its methods) from now on: reading starts before this returns. A
        :class:`Versions` serves the version negotiated on ``initialize`` instead."""
        if self._closing:
            raise self._closed_error()
        if self._reader_task is not None:
            raise RuntimeError("this connection is serving already")
        if isinstance(handler, Versions):
            self.router = handler.begin(self)
        else:
            self.router = Router(self.rpc, self.side, handler, self.log)
        read = self._read_loop() if self.channel is None else self._receive_loop()
        self._reader_task = self._loop.create_task(read)

    async def serve(self, handler: Any) -> None:
        """:meth:`start` (unless started), then wait until the connection is closed (the
        peer closed its output, :meth:`close` was called, or the peer went away).
        Cancelling it closes the connection."""
        if self._reader_task is None:
            self.start(handler)
        try:
            await asyncio.shield(self._closed)
        except asyncio.CancelledError:
            await asyncio.shield(self.close("serve() was cancelled"))
            raise

    @property
    def closed(self) -> asyncio.Future[None]:
        """An awaitable that completes when the connection is closed."""
        return asyncio.shield(self._closed)

    @property
    def is_closed(self) -> bool:
        """Whether the connection is closed or closing (no request can be answered)."""
        return self._closing

    @property
    def close_reason(self) -> str:
        """Why the connection closed ("" while it is open)."""
        return self._close_reason

    @property
    def returncode(self) -> int | None:
        """The spawned agent's exit status once it exited (negative: the signal that
        ended it); ``None`` while it runs, or without a process."""
        return self.process.returncode if self.process is not None else None

    def _closed_error(self, reason: str | None = None) -> ConnectionClosedError:
        return ConnectionClosedError(
            self._close_reason if reason is None else reason, self.returncode
        )

    async def wait_closed(self) -> None:
        await asyncio.shield(self._closed)

    # -- observers -------------------------------------------------------------------
    def add_observer(self, observer: Observer) -> None:
        """See every frame from now on: ``observer(Traffic)`` for each line read or
        written, once, in order (see ``_telemetry.py``)."""
        self._observers.append(observer)

    def remove_observer(self, observer: Observer) -> None:
        if observer in self._observers:
            self._observers.remove(observer)

    def _observe_in(self, line: bytes) -> None:
        if self._observers:
            self._observe(Traffic(IN, line, len(line)))

    def _observe(self, traffic: Traffic) -> None:
        for observer in tuple(self._observers):
            try:
                observer(traffic)
            except Exception:  # noqa: BLE001 - an observer never breaks the connection
                self.log.exception("observer %r failed: removed", observer)
                self.remove_observer(observer)

    async def __aenter__(self) -> Connection:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self, reason: str = "closed by this side") -> None:
        """Close: stop reading; fail our requests in flight with
        :class:`ConnectionClosedError`; handle the notifications already received (for
        at most ``drain_timeout`` s); cancel the handlers still running, which answer
        -32800; close the output; end the spawned process. Waits for all of it, except
        when a handler of this connection calls it while a close is under way: that close
        waits for the handler, so this returns at once."""
        if self._closing:
            handler = _HANDLER.get()
            if handler is not None and handler[0] is self:
                return  # called by a handler, which the close under way waits for
            await asyncio.shield(self._closed)
            return
        self._closing = True
        self._close_reason = reason
        self.log.debug("connection closing: %s", reason)
        self._wake.set()
        current = asyncio.current_task()
        if self._reader_task is not None and self._reader_task is not current:
            self._reader_task.cancel()
        queued = {
            id(item.pending)
            for lane in self._lanes.values()
            for item in lane.items
            if isinstance(item, _Reply)
        }
        for pending in list(self._pending.values()):
            if id(pending) not in queued and not pending.future.done():
                pending.future.set_exception(self._closed_error())
        for task, context in list(self._incoming.values()):
            if task is not current:
                self._interrupt(task, context)
        await self._drain()
        grace = self.close_grace
        deadline = None if grace is None else self._loop.time() + grace
        while True:  # the handlers answer, then their answers are written
            busy = [t for t in self._tasks if not t.done() and t is not current]
            left = None if deadline is None else deadline - self._loop.time()
            if not busy or (left is not None and left <= 0):
                break
            await asyncio.wait(busy, timeout=left)
        try:
            self.writer.close()
            await asyncio.wait_for(self.writer.wait_closed(), grace)
        except (ConnectionError, OSError, asyncio.TimeoutError, RuntimeError):
            pass
        if self._watcher is not None and self._watcher is not current:
            self._watcher.cancel()
        if self._end_process is not None:
            await self._end_process()
        elif self.process is not None:
            from ._transports import end_process

            await end_process(self.process, grace=grace)
        for task in self._tasks:
            if not task.done() and task is not current:
                task.cancel()
        if not self._closed.done():
            self._closed.set_result(None)

    async def _drain(self) -> None:
        """Let the queued notifications and answers through, every lane at once (for at
        most ``drain_timeout`` s in all), then stop the lanes still busy."""
        current = asyncio.current_task()
        busy = [
            lane.task
            for lane in self._lanes.values()
            if lane.task is not None
            and not lane.task.done()
            and lane.task is not current
        ]
        if busy:
            _, late = await asyncio.wait(busy, timeout=self.drain_timeout)
            for task in late:
                task.cancel()
            if late:
                await asyncio.wait(late)
        dropped = 0
        lanes = list(self._lanes.values())
        self._lanes.clear()
        for lane in lanes:
            while lane.items:
                item = lane.items.popleft()
                if isinstance(item, _Reply):
                    _resolve(item)
                else:
                    dropped += 1
        if dropped:
            self.log.warning(
                "%d notifications not handled: the connection closed (%s)",
                dropped,
                self._close_reason,
            )

    def watch_process(
        self, exited: Awaitable[int], end: Callable[[], Awaitable[None]]
    ) -> None:
        """Tie the connection to the agent process behind its streams (``Rpc.spawn`` does):
        ``exited`` gives its exit status when it exits, ``end`` ends it and releases its
        pipes (awaited by :meth:`close`). An agent that exits closes the connection,
        even while a process it started holds its output open (no end of input comes
        then): what it wrote before it exited is read first."""
        self._end_process = end
        self._exited = asyncio.ensure_future(exited)
        self._watcher = self._loop.create_task(self._watch(self._exited))

    async def _watch(self, exited: Awaitable[int]) -> None:
        """Close once the process exited and its output ended, or stayed silent for
        EXIT_GRACE s while reading was not paused."""
        code = await exited
        reader = self._reader_task
        while reader is not None and not reader.done() and not self._closing:
            seen = self._received
            await asyncio.wait([reader], timeout=EXIT_GRACE)
            if self._received == seen and not self._paused:
                break
        self._lost(f"the agent process exited with status {code}")

    def _lost(self, reason: str) -> None:
        """The peer went away, or the stream broke: close in the background, once (the
        first reason stands). The closing task is not one of the tasks a close waits for.
        """
        if not self._closing and self._closer is None:
            self._closer = self._loop.create_task(self._close_lost(reason))

    async def _close_lost(self, reason: str) -> None:
        """Close for ``reason``; when a spawned agent is running, give it EXIT_GRACE s to
        exit first (its output ends as it exits), so that its exit status is part of the
        reason and of the errors our requests fail with."""
        exited = self._exited
        if exited is not None and not exited.done():
            await asyncio.wait([exited], timeout=EXIT_GRACE)
        if (
            exited is not None
            and exited.done()
            and not exited.cancelled()
            and "the agent process exited" not in reason
        ):
            reason = f"{reason}: the agent process exited with status {exited.result()}"
        await self.close(reason)

    # -- sending ---------------------------------------------------------------------
    async def _write(self, line: bytes, pending: _Pending | None = None) -> None:
        async with self._write_lock:
            if self._closed.done():
                raise self._closed_error()
            try:
                self.writer.write(line)
                if pending is not None:
                    pending.sent = True
                if self._observers:
                    body = line[:-1] if line.endswith(b"\n") else line
                    self._observe(Traffic(OUT, body, len(body)))
                await self.writer.drain()
            except (ConnectionError, OSError, RuntimeError) as exc:
                reason = f"writing to the peer failed: {exc!r}"
                if isinstance(exc, ChannelClosed) and str(exc):
                    reason = str(exc)  # a transport's own reason
                self._lost(reason)
                raise self._closed_error(reason) from exc

    async def _ready(self) -> None:
        """Fail at once when no answer can come."""
        if self._closing:
            raise self._closed_error()
        if self._reader_task is None:
            await asyncio.sleep(0)  # a serve() task created just before gets to start
            if self._closing:
                raise self._closed_error()
            if self._reader_task is None:
                raise ConnectionClosedError(
                    "the connection is not serving: nothing would read the answer"
                    " (call start() or serve() first)"
                )

    async def request(self, method: str, params: Any) -> Any:
        """Send a request and wait for its result, validated as the method's result type.

        Raises :class:`RemoteError` when the peer answers with an error,
        :class:`InvalidResultError` when its result is not valid for the method,
        :class:`OversizedFrameError` when the answer is over ``max_line``, and
        :class:`ConnectionClosedError` when no answer can come. Cancelling the awaiting
        task sends ``$/cancel_request`` for it (where the schema has the method, unless
        ``send_cancel_request`` is off)."""
        telemetry = self.telemetry
        if telemetry is None:
            return await self._request(method, params, next(self._ids))
        rid = next(self._ids)
        with telemetry.span(OUT, method, rid) as span:
            try:
                result = await self._request(method, params, rid)
            except BaseException as exc:
                span.failed(exc)
                raise
            span.outcome("ok")
            return result

    async def _request(self, method: str, params: Any, rid: Id) -> Any:
        if self._closing or self._reader_task is None:
            await self._ready()
        line = self.rpc.encode(Request(rid, method, params))
        pending = _Pending(
            method,
            self._loop.create_future(),
            _urgent(self),
            self.rpc.session_of(method, "request", params),
        )
        self._pending[rid] = pending
        handler = _HANDLER.get()
        mine = handler is not None and handler[0] is self
        try:
            await self._write(line, pending)
            if mine:
                assert handler is not None
                self._waiting[handler[1]] += 1
                self._wake.set()
            try:
                return await pending.future
            finally:
                if mine:
                    assert handler is not None
                    self._waiting[handler[1]] -= 1
                    if self._waiting[handler[1]] <= 0:
                        del self._waiting[handler[1]]
        except asyncio.CancelledError:
            future = pending.future  # cancelled with us, unless the answer came first
            if pending.sent and (future.cancelled() or not future.done()):
                self._send_cancel(rid)
            raise
        finally:
            self._pending.pop(rid, None)

    async def notify(self, method: str, params: Any) -> None:
        """Send a notification (nothing to wait for but the write)."""
        if self._closing:
            raise self._closed_error()
        await self._write(self.rpc.encode(Notification(method, params)))

    def _send_cancel(self, rid: Id) -> None:
        self._abandoned[rid] = None
        if len(self._abandoned) > 1024:
            self._abandoned.popitem(last=False)
        spec = self._cancel_spec
        if spec is None or self._closing or not self.send_cancel_request:
            return
        params: Any = {"requestId": rid}
        if spec.params is not None:
            try:
                params = self.rpc.codec.load(spec.params, params)
            except self.rpc.codec.errors:
                pass
        line = self.rpc.encode(Notification(CANCEL_METHOD, params))
        self._spawn(self._write_quietly(line))

    async def _write_quietly(self, line: bytes) -> None:
        try:
            await self._write(line)
        except ConnectionClosedError as exc:
            self.log.debug("not sent (%s): %r", exc.reason, line[:200])

    def _spawn(self, work: Any) -> asyncio.Task[Any]:
        task = self._loop.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task


def _check_values(
    max_line: int, max_in_flight: int, drain_timeout: float, grace: float | None
) -> None:
    if max_line < 2 or max_in_flight < 1:
        raise ValueError("max_line must be >= 2 and max_in_flight >= 1")
    if drain_timeout < 0 or (grace is not None and grace < 0):
        raise ValueError("drain_timeout and close_grace must be >= 0")
