"""The asyncio connection: newline-delimited JSON-RPC over a pair of streams.

What it promises (the README's "The JSON-RPC layer" says the same for users):

* **Lines of any size.** It reads lines itself (``reader.read``), whatever the reader's
  own limit, up to ``max_line`` bytes (:data:`DEFAULT_MAX_LINE`). A longer line is never
  held whole: a request on it is answered with an error carrying its own id, a response
  to one of our requests fails that request with :class:`OversizedFrameError`; when
  neither can be known the line is logged, and the connection closes if one of our
  requests could be waiting for it. Every line it cannot handle is logged, and answered
  where JSON-RPC allows.
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
import contextvars
import itertools
import logging
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Final, Iterable

from ._jsonrpc import (
    DEFAULT_MAX_LINE,
    INVALID_REQUEST,
    Batch,
    ConnectionClosedError,
    ErrorResponse,
    Frame,
    FrameError,
    Id,
    InvalidResultError,
    MethodNotFound,
    Notification,
    OversizedFrameError,
    RemoteError,
    Request,
    Response,
    Rpc,
)
from ._router import RequestContext, Router, batch_line
from ._skim import SKIM, skim
from ._telemetry import IN, OUT, Observer, OpenTelemetry, Traffic
from ._versions import Versions

#: incoming requests running plus notifications queued, past which reading pauses
DEFAULT_MAX_IN_FLIGHT: Final = 64
#: seconds a closing connection gives its handlers to answer and a spawned agent to exit
CLOSE_GRACE: Final = 2.0
#: bytes asked of the reader at a time
READ_CHUNK: Final = 256 * 1024
#: seconds of silence after a spawned agent exited before its output counts as ended
#: (a process it started may hold the pipe open: no end of input would come)
EXIT_GRACE: Final = 0.25
#: the method that cancels a request (ACP's protocol-level notification)
CANCEL_METHOD: Final = "$/cancel_request"

# the connection whose notification handler the current task runs (its requests' answers
# skip the queue), and the handler (request context or notification) it runs for
_IN_NOTIFICATION: contextvars.ContextVar[Connection | None] = contextvars.ContextVar(
    "acp_in_notification", default=None
)
_HANDLER: contextvars.ContextVar[tuple[Connection, object] | None] = (
    contextvars.ContextVar("acp_handler", default=None)
)
_MISSING: Final = object()


@dataclass(slots=True)
class _Pending:
    """One of our requests waiting for its answer."""

    method: str
    future: asyncio.Future[Any]
    #: made by a notification handler: its answer is delivered at once
    urgent: bool
    #: the session the request is about (its answer waits for that session's updates)
    lane: str | None = None
    sent: bool = False


@dataclass(slots=True)
class _Reply:
    """An answer to deliver after the notifications queued before it."""

    pending: _Pending
    result: Any = None
    error: BaseException | None = None


@dataclass(slots=True)
class _Lane:
    """The notifications about one session (or about none) and the answers queued behind
    them, handled in arrival order by one task, which ends when the lane is empty."""

    items: collections.deque[Notification[Any] | _Reply] = field(
        default_factory=collections.deque
    )
    task: asyncio.Task[None] | None = None


@dataclass(slots=True)
class _BatchAnswer:
    """The answers of one batch's calls, written as one array when all are in."""

    lines: list[bytes] = field(default_factory=list)
    waiting: int = 0


class Connection:
    """A JSON-RPC connection over newline-delimited JSON streams (stdio, a pipe, a
    socket): serves a handler for ``side`` through a :class:`Router` and sends typed
    requests and notifications to the peer. See the module docstring for its promises.

    ``max_line``: the longest line read, in bytes; ``max_in_flight``: incoming work
    running or queued before reading pauses; ``drain_timeout``: seconds a closing
    connection keeps handling the notifications already received; ``process``: the
    agent process behind the streams (:meth:`Rpc.spawn`), ended on close;
    ``observers``: callables that see every frame (:class:`Traffic`); ``telemetry``: an
    :class:`OpenTelemetry` that opens a span per request."""

    def __init__(
        self,
        rpc: Rpc,
        side: str,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        logger: logging.Logger | None = None,
        max_line: int = DEFAULT_MAX_LINE,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        drain_timeout: float = 5.0,
        process: asyncio.subprocess.Process | None = None,
        observers: Iterable[Observer] = (),
        telemetry: OpenTelemetry | None = None,
    ) -> None:
        if max_line < 2 or max_in_flight < 1:
            raise ValueError("max_line must be >= 2 and max_in_flight >= 1")
        self.rpc = rpc
        self.side = side
        #: the protocol version spoken (None until negotiated, see ``_versions.py``)
        self.version: int | None = rpc.version
        self.reader = reader
        self.writer = writer
        self.log = logger or logging.getLogger(__name__)
        self.max_line = max_line
        self.max_in_flight = max_in_flight
        self.drain_timeout = drain_timeout
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
            raise ConnectionClosedError(self._close_reason)
        if self._reader_task is not None:
            raise RuntimeError("this connection is serving already")
        if isinstance(handler, Versions):
            self.router = handler.begin(self)
        else:
            self.router = Router(self.rpc, self.side, handler, self.log)
        self._reader_task = self._loop.create_task(self._read_loop())

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
                pending.future.set_exception(ConnectionClosedError(reason))
        for task, context in list(self._incoming.values()):
            if task is not current:
                self._interrupt(task, context)
        await self._drain()
        deadline = self._loop.time() + CLOSE_GRACE
        while True:  # the handlers answer, then their answers are written
            busy = [t for t in self._tasks if not t.done() and t is not current]
            left = deadline - self._loop.time()
            if not busy or left <= 0:
                break
            await asyncio.wait(busy, timeout=left)
        try:
            self.writer.close()
            await asyncio.wait_for(self.writer.wait_closed(), CLOSE_GRACE)
        except (ConnectionError, OSError, asyncio.TimeoutError, RuntimeError):
            pass
        if self._watcher is not None and self._watcher is not current:
            self._watcher.cancel()
        if self._end_process is not None:
            await self._end_process()
        elif self.process is not None:
            await end_process(self.process)
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
        self._watcher = self._loop.create_task(self._watch(exited))

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
            self._closer = self._loop.create_task(self.close(reason))

    # -- sending ---------------------------------------------------------------------
    async def _write(self, line: bytes, pending: _Pending | None = None) -> None:
        async with self._write_lock:
            if self._closed.done():
                raise ConnectionClosedError(self._close_reason)
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
                self._lost(reason)
                raise ConnectionClosedError(reason) from exc

    async def _ready(self) -> None:
        """Fail at once when no answer can come."""
        if self._closing:
            raise ConnectionClosedError(self._close_reason)
        if self._reader_task is None:
            await asyncio.sleep(0)  # a serve() task created just before gets to start
            if self._closing:
                raise ConnectionClosedError(self._close_reason)
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
        task sends ``$/cancel_request`` for it (where the schema has the method)."""
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
            raise ConnectionClosedError(self._close_reason)
        await self._write(self.rpc.encode(Notification(method, params)))

    def _send_cancel(self, rid: Id) -> None:
        self._abandoned[rid] = None
        if len(self._abandoned) > 1024:
            self._abandoned.popitem(last=False)
        spec = self._cancel_spec
        if spec is None or self._closing:
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

    # -- reading ---------------------------------------------------------------------
    async def _read_loop(self) -> None:
        reason = "the peer closed the connection"
        buf = bytearray()
        scanned = 0
        read = self.reader.read
        limit = self.max_line
        try:
            while True:
                nl = buf.find(b"\n", scanned)
                if nl >= 0:
                    if nl > limit:  # over the limit, but it came whole in one read
                        self._oversized(
                            bytes(buf[: min(SKIM, nl)]),
                            bytes(buf[max(0, nl - SKIM) : nl]),
                            nl,
                        )
                    else:
                        line = bytes(buf[:nl])
                        if line.strip():
                            self._dispatch(line)
                    del buf[: nl + 1]
                    scanned = 0
                    if self._load() >= self.max_in_flight:
                        await self._admit()
                    continue
                scanned = len(buf)
                if scanned > limit:
                    buf = await self._skip(buf)
                    scanned = 0
                    continue
                chunk = await read(READ_CHUNK)
                if not chunk:
                    if buf.strip():
                        self._dispatch(bytes(buf))
                    break
                self._received += len(chunk)
                buf += chunk
        except _EndOfStream:
            pass
        except (ConnectionError, OSError) as exc:
            reason = f"reading from the peer failed: {exc!r}"
        except Exception as exc:  # noqa: BLE001 - the connection closes, saying why
            self.log.exception("the connection's reader failed")
            reason = f"the reader failed: {exc!r}"
        self._lost(reason)

    async def _skip(self, start: bytearray) -> bytearray:
        """Skip the line that ``start`` begins (over ``max_line``, no newline yet) without
        holding it; handle it from its two ends; return what follows its newline."""
        head = bytes(start[:SKIM])
        tail = bytes(start[-SKIM:])
        size = len(start)
        del start[:]
        while True:
            chunk = await self.reader.read(READ_CHUNK)
            if not chunk:
                self._oversized(head, tail, size)
                raise _EndOfStream
            self._received += len(chunk)
            nl = chunk.find(b"\n")
            if nl >= 0:
                break
            size += len(chunk)
            tail = (tail + chunk)[-SKIM:]
        size += nl
        tail = (tail + chunk[:nl])[-SKIM:]
        self._oversized(head, tail, size)
        return bytearray(chunk[nl + 1 :])

    def _oversized(self, head: bytes, tail: bytes, size: int) -> None:
        if self._observers:
            self._observe(Traffic(IN, head, size, whole=False))
        found = skim(head, tail)
        limit = self.max_line
        if found.kind == "call" and found.has_id:
            self.log.warning(
                "request %r (%s) is a line of %d bytes, over the limit of %d: answered"
                " with an error",
                found.id,
                found.method,
                size,
                limit,
            )
            assert self.router is not None
            data = {"reason": "line too long", "size": size, "limit": limit}
            line = self.router.error_line(
                found.id, INVALID_REQUEST, "Invalid request", data
            )
            self._spawn(self._write_quietly(line))
        elif found.kind == "call":
            self.log.warning(
                "notification %s is a line of %d bytes, over the limit of %d: dropped",
                found.method,
                size,
                limit,
            )
        elif found.has_id and found.id in self._pending:
            pending = self._pending[found.id]
            self.log.warning(
                "the answer to %r (id %r) is a line of %d bytes, over the limit of %d",
                pending.method,
                found.id,
                size,
                limit,
            )
            error = OversizedFrameError(pending.method, found.id, size, limit)
            self._settle(_Reply(pending, error=error))
        elif found.has_id:
            self.log.warning(
                "a line of %d bytes (over the limit) answers id %r: no request in flight",
                size,
                found.id,
            )
        elif self._pending:
            self.log.error(
                "a line of %d bytes, over the limit of %d, could not be read: it may"
                " answer one of our requests, which would then wait forever",
                size,
                limit,
            )
            self._lost(
                f"an unreadable line of {size} bytes (over the limit of {limit})"
            )
        else:
            self.log.error(
                "a line of %d bytes, over the limit of %d, could not be read: dropped",
                size,
                limit,
            )

    def _load(self) -> int:
        return self._requests_running + self._queued_notes + self._notes_running

    def _stalled(self) -> bool:
        """Every running handler waits for one of our requests: reading must go on."""
        running = self._requests_running + self._notes_running
        return running > 0 and len(self._waiting) >= running

    async def _admit(self) -> None:
        """Backpressure: wait until the incoming work is under the bound."""
        self._paused = True
        try:
            while (
                self._load() >= self.max_in_flight
                and not self._stalled()
                and not self._closing
            ):
                self._wake.clear()
                await self._wake.wait()
        finally:
            self._paused = False

    # -- dispatching -----------------------------------------------------------------
    def _method_of(self, rid: Id) -> str | None:
        entry = self._pending.get(rid)
        return entry.method if entry is not None else None

    def _dispatch(self, line: bytes) -> None:
        if self._observers:
            self._observe(Traffic(IN, line, len(line)))
        try:
            frame = self.rpc.parse(line, side=self.side, method_of=self._method_of)
        except (FrameError, InvalidResultError) as exc:
            self._rejected(exc)
            return
        if isinstance(frame, Batch):
            self._batch(frame)
        else:
            self._route(frame, None)

    def _rejected(self, exc: FrameError | InvalidResultError) -> None:
        """A frame that could not be accepted: answered, or failing our request."""
        pending = self._pending.get(exc.id) if exc.id is not None else None
        if isinstance(exc, FrameError) and exc.answer and exc.call:
            pending = None  # a call: its id is the peer's, not one of ours
        ours = pending is not None or exc.id in self._abandoned
        if isinstance(exc, FrameError) and exc.answer and (exc.call or not ours):
            self.log.warning(
                "frame rejected (answered): %s (%s)", exc.message, exc.data
            )
            self._spawn(self._write_quietly(exc.response_line()))
            return
        # what is left is a broken answer to one of our requests (or a stray one)
        if pending is None or pending.future.done():
            self.log.warning("frame rejected: %s", exc)
            return
        self.log.warning(
            "the answer to %r (id %r) is invalid: %s", pending.method, exc.id, exc
        )
        if isinstance(exc, FrameError):
            exc = InvalidResultError(
                pending.method, exc.id, None, f"{exc.message}: {exc.data}"
            )
        self._settle(_Reply(pending, error=exc))

    def _route(self, frame: Frame, batch: _BatchAnswer | None) -> None:
        if isinstance(frame, Response):
            self._answered(frame.id, frame.result, None)
        elif isinstance(frame, ErrorResponse):
            self._answered(frame.id, None, frame.error)
        elif isinstance(frame, Request):
            self._start_request(frame, batch)
        elif isinstance(frame, MethodNotFound) and frame.request:
            assert self.router is not None
            line = self.router.error_line(
                frame.id, -32601, "Method not found", {"method": frame.method}
            )
            self._reply(line, batch)
        else:
            assert isinstance(frame, (Notification, MethodNotFound))
            if frame.method == CANCEL_METHOD:
                self._cancel_incoming(frame.params)
            if isinstance(frame, MethodNotFound):
                if frame.method != CANCEL_METHOD:
                    self.log.warning(
                        "notification of unknown method %r ignored", frame.method
                    )
                return
            self._queued_notes += 1
            lane = self.rpc.session_of(frame.method, "notification", frame.params)
            self._enqueue(lane, frame)

    def _answered(self, rid: Id, result: Any, error: Any) -> None:
        pending = self._pending.get(rid)
        if pending is None or pending.future.done():
            if self._abandoned.pop(rid, _MISSING) is not _MISSING:
                self.log.debug("late answer to cancelled request %r", rid)
            elif rid is None and error is not None:
                self.log.error(
                    "the peer answered with an error and a null id, which JSON-RPC"
                    " gives when it could not read a frame's id: %r",
                    error if isinstance(error, dict) else self.rpc.codec.dump(error),
                )
            else:
                self.log.warning("response to id %r with no request in flight", rid)
            return
        if error is None:
            self._settle(_Reply(pending, result))
            return
        body = self.rpc.codec.dump(error)
        self._settle(
            _Reply(
                pending,
                error=RemoteError(
                    body["code"],
                    body["message"],
                    body.get("data"),
                    method=pending.method,
                    id=rid,
                ),
            )
        )

    def _fail(self, pending: _Pending, error: BaseException) -> None:
        self._settle(_Reply(pending, error=error))

    def _settle(self, reply: _Reply) -> None:
        """Deliver an answer after the notifications of its session that arrived before
        it (a lane exists while it has work: then the answer waits behind it)."""
        lane = None if reply.pending.urgent else self._lanes.get(reply.pending.lane)
        if lane is None:
            _resolve(reply)
        else:
            lane.items.append(reply)

    def _enqueue(self, key: str | None, note: Notification[Any]) -> None:
        lane = self._lanes.get(key)
        if lane is None:
            lane = self._lanes[key] = _Lane()
            lane.items.append(note)
            lane.task = self._loop.create_task(self._consume(key, lane))
        else:
            lane.items.append(note)

    def _batch(self, batch: Batch) -> None:
        answer = _BatchAnswer()
        for item in batch.items:
            if isinstance(item, (FrameError, InvalidResultError)):
                if isinstance(item, FrameError) and item.answer:
                    answer.lines.append(item.response_line())
                else:
                    self._rejected(item)
            else:
                self._route(item, answer)
        if not answer.waiting:
            self._flush(answer)

    def _reply(self, line: bytes, batch: _BatchAnswer | None) -> None:
        if batch is None:
            self._spawn(self._write_quietly(line))
        else:
            batch.lines.append(line)

    def _flush(self, batch: _BatchAnswer) -> None:
        line = batch_line(batch.lines)
        if line is not None:
            self._spawn(self._write_quietly(line))

    def _cancel_incoming(self, params: Any) -> None:
        if not isinstance(params, dict):
            try:
                params = self.rpc.codec.dump(params)
            except Exception:  # noqa: BLE001 - an unreadable cancel is logged
                params = None
        rid = (
            params.get("requestId", _MISSING) if isinstance(params, dict) else _MISSING
        )
        entry = self._incoming.get(rid) if rid is not _MISSING else None  # type: ignore[arg-type]
        if entry is None:
            self.log.debug("%s for %r: no such request running", CANCEL_METHOD, rid)
            return
        task, context = entry
        self.log.info("request %r (%s) cancelled by the peer", rid, context.method)
        self._interrupt(task, context)

    def _interrupt(self, task: asyncio.Task[None], context: RequestContext) -> None:
        """Cancel a request's handler, which answers -32800. A task that has not run yet
        is left to start and see ``context.cancelled``: cancelled before its first step,
        it would run none of its body (no answer, and its place in ``max_in_flight``
        never given back)."""
        if context.cancelled is not None:
            context.cancelled.set()
        if task in self._started:
            task.cancel()

    # -- handling --------------------------------------------------------------------
    def _start_request(self, frame: Request[Any], batch: _BatchAnswer | None) -> None:
        context = RequestContext(frame.id, frame.method, self, asyncio.Event())
        if frame.id in self._incoming:
            self.log.warning(
                "request id %r reused while the first is running", frame.id
            )
        self._requests_running += 1
        if batch is not None:
            batch.waiting += 1
        task = self._spawn(self._run_request(frame, context, batch))
        self._incoming[frame.id] = (task, context)

    async def _run_request(
        self, frame: Request[Any], context: RequestContext, batch: _BatchAnswer | None
    ) -> None:
        _HANDLER.set((self, context))
        router = self.router
        assert router is not None
        task = asyncio.current_task()
        assert task is not None
        self._started.add(task)
        try:
            if context.cancelled is not None and context.cancelled.is_set():
                raise asyncio.CancelledError  # cancelled before it ran: see _interrupt
            if self.telemetry is None:
                line = await router.handle(frame, context)
            else:
                with self.telemetry.span(IN, frame.method, frame.id) as span:
                    line = await router.handle(frame, context)
                    span.answered(line)
        except BaseException as exc:  # noqa: BLE001 - every request gets one answer
            if not isinstance(exc, (Exception, asyncio.CancelledError)):
                raise
            line = router.failure(frame, exc)
        finally:
            self._started.discard(task)
            self._requests_running -= 1
            entry = self._incoming.get(frame.id)
            if entry is not None and entry[1] is context:
                del self._incoming[frame.id]
            self._wake.set()
        assert line is not None
        if batch is not None:
            batch.lines.append(line)
            batch.waiting -= 1
            if not batch.waiting:
                self._flush(batch)
            return
        write = self._spawn(self._write_quietly(line))
        try:
            await asyncio.shield(write)
        except asyncio.CancelledError:
            pass  # closing: the answer is written by then, or cannot be

    async def _consume(self, key: str | None, lane: _Lane) -> None:
        """Handle a lane's notifications one at a time, and deliver the answers queued
        behind them, in arrival order; end when the lane is empty (and leave it)."""
        router = self.router
        assert router is not None
        items = lane.items
        try:
            while items:
                item = items.popleft()
                if isinstance(item, _Reply):
                    _resolve(item)
                    continue
                self._queued_notes -= 1
                self._notes_running += 1
                marker = object()
                notes = _IN_NOTIFICATION.set(self)
                handler = _HANDLER.set((self, marker))
                try:
                    await router.handle(item)
                except asyncio.CancelledError:
                    if self._closing:
                        raise
                    self.log.warning(
                        "handler of notification %r raised CancelledError", item.method
                    )
                    task = asyncio.current_task()
                    if task is not None:
                        task.uncancel()
                finally:
                    _IN_NOTIFICATION.reset(notes)
                    _HANDLER.reset(handler)
                    self._notes_running -= 1
                    self._wake.set()
        finally:
            if not items and self._lanes.get(key) is lane:
                del self._lanes[key]


class _EndOfStream(Exception):
    """The stream ended inside a line too long to read."""


def _urgent(conn: Connection) -> bool:
    return _IN_NOTIFICATION.get() is conn


def _resolve(reply: _Reply) -> None:
    future = reply.pending.future
    if future.done():
        return
    if reply.error is not None:
        future.set_exception(reply.error)
    else:
        future.set_result(reply.result)


async def end_process(
    process: asyncio.subprocess.Process,
    exited: Callable[[], Awaitable[Any]] | None = None,
) -> None:
    """Let an agent process exit on its own (its stdin is closed), then terminate it, then
    kill it, waiting at most CLOSE_GRACE s each time. ``exited`` waits for its exit (by
    default ``process.wait``, which on Python 3.11 also waits until no process holds its
    pipes)."""
    wait = exited or process.wait
    for send in (None, process.terminate, process.kill):
        if send is not None:
            try:
                send()
            except ProcessLookupError:
                return
        try:
            await asyncio.wait_for(wait(), CLOSE_GRACE)
            return
        except asyncio.TimeoutError:
            pass
