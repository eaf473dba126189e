"""What the peer sends a connection, frame by frame: an answer settles one of our
requests (after the notifications of its session that came before it), a request runs in
a task of its own, a notification waits in its session's lane; reading pauses past
``max_in_flight`` (backpressure). :class:`Incoming` is a part of
:class:`~._connection.Connection`: its methods run on a connection, whose docstring states
the promises they keep.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from ._jsonrpc import (
    INVALID_REQUEST,
    Batch,
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
)
from ._router import RequestContext, batch_line
from ._skim import skim
from ._telemetry import IN, Traffic

if TYPE_CHECKING:
    import logging

    from ._jsonrpc import Rpc
    from ._router import Router
    from ._telemetry import Observer, OpenTelemetry

#: the method that cancels a request (ACP's protocol-level notification)
CANCEL_METHOD: Final = "$/cancel_request"

# the connection whose notification handler the current task runs (its requests' answers
# skip the queue), and the handler (request context or notification) it runs for
_IN_NOTIFICATION: contextvars.ContextVar[object | None] = contextvars.ContextVar(
    "acp_in_notification", default=None
)
_HANDLER: contextvars.ContextVar[tuple[object, object] | None] = contextvars.ContextVar(
    "acp_handler", default=None
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


def _urgent(conn: object) -> bool:
    return _IN_NOTIFICATION.get() is conn


def _resolve(reply: _Reply) -> None:
    future = reply.pending.future
    if future.done():
        return
    if reply.error is not None:
        future.set_exception(reply.error)
    else:
        future.set_result(reply.result)


class Incoming:
    """The part of a :class:`~._connection.Connection` that takes in what the peer sends."""

    if TYPE_CHECKING:  # what it uses of the connection it is part of
        rpc: Rpc
        side: str
        log: logging.Logger
        max_line: int
        max_in_flight: int
        router: Router | None
        telemetry: OpenTelemetry | None
        _observers: list[Observer]
        _loop: asyncio.AbstractEventLoop
        _pending: dict[Id, _Pending]
        _abandoned: collections.OrderedDict[Id, None]
        _incoming: dict[Id, tuple[asyncio.Task[None], RequestContext]]
        _lanes: dict[str | None, _Lane]
        _queued_notes: int
        _notes_running: int
        _requests_running: int
        _waiting: collections.Counter[object]
        _wake: asyncio.Event
        _write_lock: asyncio.Lock
        _started: set[asyncio.Task[None]]
        _paused: bool
        _closing: bool

        def _lost(self, reason: str) -> None: ...
        def _observe(self, traffic: Traffic) -> None: ...
        def _spawn(self, work: Any) -> asyncio.Task[Any]: ...
        async def _write_quietly(self, line: bytes) -> None: ...

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
            detail = exc.data if isinstance(exc, FrameError) else exc.detail
            self.log.warning("frame rejected: %s (%s)", exc, detail)
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
        if rid is _MISSING:
            self.log.debug("%s without a requestId: nothing cancelled", CANCEL_METHOD)
            return
        entry = self._incoming.get(rid)  # type: ignore[arg-type]
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
        self,
        frame: Request[Any],
        context: RequestContext,
        batch: _BatchAnswer | None,
    ) -> None:
        _HANDLER.set((self, context))
        router = self.router
        assert router is not None
        task = asyncio.current_task(self._loop)  # (no lookup of the running loop)
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
        if not self._write_lock.locked():
            # nothing is being written: the answer goes out from this task, at once
            # (written whole before any wait; nothing cancels a request's task once
            # it has left ``_incoming`` but a close, which cancels a writer's as well)
            await self._write_quietly(line)
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
