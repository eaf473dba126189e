"""Sessions as objects, for clients: a session's updates in order, its turns, and the
state of the session merged from its updates, in every style and both protocol versions.

Standard library only. The merging works on the wire form of an update (the JSON the
agent sent), so one implementation serves every binding style and every variant, known
or not. What it knows of ACP, the names of the methods, members and variants it merges,
is in one place, :class:`Acp`, checked against the schemas of every protocol version by
acpgen's tests; an update whose variant it has no rule for is kept, as received, in
:attr:`SessionSnapshot.others`.

* :class:`ClientSessions` watches a client connection (an observer: every
  ``session/update`` frame, in the order read, even one the bindings reject as unknown)
  and gives a :class:`Session` per session id: :meth:`ClientSessions.new` sends
  ``session/new``, :meth:`ClientSessions.session` wraps an id you already have.
* :meth:`Session.prompt` returns when the turn has ended with every update of it seen
  (the prompt's answer where it carries a ``stopReason``; otherwise the ``state_update``
  that says ``idle``, as protocol v2 ends a turn); :meth:`Session.turn` gives the
  updates of one turn as an async iterator, :meth:`Session.updates` every update from now.
* :meth:`Session.snapshot` is the session merged from its updates: messages (chunks
  joined by message), tool calls (updated in place by id), the plan, mode, config options,
  commands, usage, session info, state, terminals, and the others.

An iterator holds at most ``max_queued`` updates: serving ``sessions.handler(...)`` makes
the connection wait for room (backpressure: reading pauses); without it, or for an update
the bindings rejected, an iterator that falls ``max_queued`` plus the connection's
``max_in_flight`` behind loses its oldest updates (counted in ``dropped``). The snapshot
never loses one.
"""

from __future__ import annotations

import asyncio
import copy
import json
import weakref
from collections import deque
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Final

from ._jsonrpc import ConnectionClosedError
from ._session_state import Acp, Message, SessionSnapshot, SessionState
from ._telemetry import IN, Traffic

__all__ = [
    "Acp",
    "ClientSessions",
    "Message",
    "Session",
    "SessionSnapshot",
    "SessionState",
    "Turn",
    "TurnEnd",
    "Update",
    "Updates",
]


@dataclass(slots=True)
class Update:
    """One ``session/update``: its session, its variant's tag (``kind``) and the update
    as received (``data``, wire form). :meth:`typed` gives the bindings' value."""

    session_id: str
    kind: str | None
    data: dict[str, Any]
    _rpc: Any = field(default=None, repr=False, compare=False)

    def typed(self) -> Any:
        """The whole notification's params as the bindings type them (``.update`` is
        the update); raises the codec's error for a variant the bindings do not know."""
        spec = self._rpc.spec(Acp.UPDATE, "notification")
        params = {Acp.SESSION_ID: self.session_id, Acp.UPDATE_MEMBER: self.data}
        return self._rpc.codec.load(spec.params, params)


@dataclass(slots=True)
class TurnEnd:
    """How a turn ended: its ``stop_reason``, the prompt's typed answer (``response``)
    and, in protocol v2, the ``state_update`` that said ``idle`` (wire form)."""

    stop_reason: str | None
    response: Any
    state: dict[str, Any] | None = None


class _Feed:
    """One iterator's queue of updates."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.items: deque[Update] = deque()
        self.ready = asyncio.Event()
        self.done = False
        self.dropped = 0

    def put(self, update: Update) -> None:
        self.items.append(update)
        limit = (
            self.session.sessions.max_queued + self.session.sessions.conn.max_in_flight
        )
        while len(self.items) > limit:
            self.items.popleft()
            self.dropped += 1
        self.ready.set()

    def end(self) -> None:
        self.done = True
        self.ready.set()

    async def next(self) -> Update:
        while not self.items:
            if self.done:
                raise StopAsyncIteration
            self.ready.clear()
            await self.session.sessions._wait_or_closed(self.ready)
            if not self.items and self.session.sessions.conn.is_closed:
                raise StopAsyncIteration
        item = self.items.popleft()
        self.session.sessions._room_changed()
        return item


class Updates:
    """An async iterator over a session's updates from the moment it was made, in the
    order the agent sent them; it ends when the connection closes. ``aclose()``, or
    dropping the iterator (leaving ``async for ... in session.updates()`` with
    ``break``), stops queueing for it."""

    def __init__(self, feed: _Feed) -> None:
        self._feed = feed
        self._stop = weakref.finalize(self, feed.session._unsubscribe, feed)

    def __aiter__(self) -> Updates:
        return self

    async def __anext__(self) -> Update:
        try:
            return await self._feed.next()
        except StopAsyncIteration:
            await self.aclose()
            raise

    @property
    def dropped(self) -> int:
        """Updates this iterator lost by falling too far behind (see the module doc)."""
        return self._feed.dropped

    async def aclose(self) -> None:
        self._stop()


class Turn:
    """One prompt turn: iterate it for the updates of the turn, in order (the iteration
    ends when the turn has ended); :meth:`end` (or ``await turn``) gives its
    :class:`TurnEnd`. The prompt is sent when the turn is made."""

    def __init__(self, session: Session, prompt: Any) -> None:
        self._feed = feed = session._subscribe()
        self._stop = weakref.finalize(self, session._unsubscribe, feed)
        self._task: asyncio.Task[TurnEnd] = asyncio.ensure_future(
            session.prompt(prompt)
        )
        self._task.add_done_callback(lambda _: feed.ready.set())

    def __aiter__(self) -> Turn:
        return self

    async def __anext__(self) -> Update:
        feed = self._feed
        while not feed.items:
            if self._task.done():
                self._stop()
                self._task.result()  # the turn's own failure, if it failed
                raise StopAsyncIteration
            feed.ready.clear()
            await feed.ready.wait()
        item = feed.items.popleft()
        feed.session.sessions._room_changed()
        return item

    async def end(self) -> TurnEnd:
        """Wait for the turn's end (updates not iterated are still in the snapshot)."""
        try:
            return await self._task
        finally:
            self._stop()

    def __await__(self) -> Any:
        return self.end().__await__()

    async def aclose(self) -> None:
        """Stop queueing the turn's updates (the turn goes on)."""
        self._stop()


class Session:
    """A session of a client connection: its updates, its turns and its snapshot.
    ``response`` is the answer of the ``session/new`` that made it (``None`` for a
    session made from an id)."""

    def __init__(self, sessions: ClientSessions, session_id: str) -> None:
        self.sessions = sessions
        self.id = session_id
        self.response: Any = None
        self._state = SessionState(session_id)
        self._feeds: list[_Feed] = []
        self._idles = 0
        self._idle: dict[str, Any] | None = None
        self._idled = asyncio.Event()

    def snapshot(self) -> SessionSnapshot:
        """The session merged from every update so far (a copy: plain data)."""
        return self._state.snapshot()

    def updates(self) -> Updates:
        """Every update from now on, in order (see :class:`Updates`)."""
        return Updates(self._subscribe())

    def turn(self, prompt: Any) -> Turn:
        """Send a prompt and iterate the updates of its turn (see :class:`Turn`)."""
        return Turn(self, prompt)

    async def prompt(self, prompt: Any) -> TurnEnd:
        """Send a prompt (text, a list of content blocks, or the module's prompt
        params) and return when its turn has ended with every update of it merged into
        the snapshot: at the prompt's answer where it has a ``stopReason`` (protocol
        v1), otherwise at the ``state_update`` that says ``idle`` (protocol v2).
        Cancelling it sends ``$/cancel_request``; ``session/cancel`` is ACP's way to
        end a turn early."""
        sessions = self.sessions
        rpc = sessions.rpc
        if isinstance(prompt, str):
            prompt = [{"type": "text", "text": prompt}]
        if isinstance(prompt, list):
            blocks = [b if isinstance(b, dict) else rpc.codec.dump(b) for b in prompt]
            prompt = sessions._typed(
                Acp.PROMPT, {Acp.SESSION_ID: self.id, "prompt": blocks}
            )
        idles = self._idles
        response = await sessions.conn.request(Acp.PROMPT, prompt)
        answer = rpc.codec.dump(response)
        if isinstance(answer, dict) and Acp.STOP_REASON in answer:
            return TurnEnd(answer[Acp.STOP_REASON], response)
        while self._idles == idles:
            if sessions.conn.is_closed:
                raise ConnectionClosedError(sessions.conn.close_reason or "closed")
            self._idled.clear()
            await sessions._wait_or_closed(self._idled)
        idle = self._idle or {}
        return TurnEnd(idle.get(Acp.STOP_REASON), response, idle)

    # -- what the observer and the handler call
    def _receive(self, data: Any) -> None:
        self._state.apply(data, owned=True)  # parsed from the line: ours, not copied
        tag = data.get(Acp.TAG) if isinstance(data, dict) else None
        if tag == Acp.STATE and data.get("state") == Acp.IDLE:
            self._idles += 1
            self._idle = {k: v for k, v in data.items() if k != Acp.TAG}
            self._idled.set()
        if self._feeds:
            update = Update(self.id, tag if isinstance(tag, str) else None, data)
            update._rpc = self.sessions.rpc
            for feed in self._feeds:
                feed.put(update)

    def _subscribe(self) -> _Feed:
        feed = _Feed(self)
        self._feeds.append(feed)
        return feed

    def _unsubscribe(self, feed: _Feed) -> None:
        feed.end()
        if feed in self._feeds:
            self._feeds.remove(feed)
        self.sessions._room_changed()

    async def _room(self) -> None:
        """Wait until every iterator of this session has room (backpressure)."""
        sessions = self.sessions
        limit = sessions.max_queued
        while any(len(f.items) >= limit for f in self._feeds):
            if sessions.conn.is_closed:
                return
            sessions._room.clear()
            await sessions._wait_or_closed(sessions._room)


class ClientSessions:
    """The sessions of a client connection (see the module doc). Make it before the
    connection starts reading, so that it sees every update: ``sessions =
    ClientSessions(conn)``, then ``conn.start(sessions.handler(MyClient()))``."""

    def __init__(self, conn: Any, *, max_queued: int = 1024) -> None:
        if max_queued < 1:
            raise ValueError("max_queued must be >= 1")
        self.conn = conn
        self.rpc = conn.rpc
        self.max_queued = max_queued
        self._sessions: dict[str, Session] = {}
        self._room = asyncio.Event()
        conn.add_observer(self._observe)

    def session(self, session_id: str) -> Session:
        """The session of this id (made on first use: a loaded or resumed session)."""
        session = self._sessions.get(session_id)
        if session is None:
            session = self._sessions[session_id] = Session(self, session_id)
        return session

    async def new(self, params: Any) -> Session:
        """Send ``session/new`` (the module's params, or their wire form as a dict) and
        give the new session; the mode and config options of the answer seed its
        snapshot."""
        response = await self.conn.request(Acp.NEW, self._typed(Acp.NEW, params))
        answer = self.rpc.codec.dump(response)
        session = self.session(str(answer[Acp.SESSION_ID]))
        session.response = response
        current = session._state.current
        modes = answer.get("modes")
        if isinstance(modes, dict) and current.mode is None:
            current.mode = modes.get("currentModeId")
        options = answer.get("configOptions")
        if isinstance(options, list) and current.config_options is None:
            current.config_options = copy.deepcopy(options)
        return session

    def forget(self, session_id: str) -> None:
        """Drop a session's handle and state (a session closed or deleted): its
        iterators end; a later update of that id starts a new handle."""
        session = self._sessions.pop(session_id, None)
        if session is not None:
            for feed in tuple(session._feeds):
                session._unsubscribe(feed)

    def handler(self, inner: Any = None) -> Any:
        """A handler to serve (``conn.start(sessions.handler(MyClient()))``): ``inner``'s
        methods, its ``session_update`` called after the update is merged, and the
        connection made to wait while an iterator of the session is full."""
        return _Handler(self, inner)

    def close(self) -> None:
        """Stop watching the connection."""
        self.conn.remove_observer(self._observe)

    def _typed(self, method: str, params: Any) -> Any:
        spec = self.rpc.spec(method)
        if isinstance(params, dict) and spec is not None and spec.params is not None:
            return self.rpc.codec.load(spec.params, params)
        return params

    def _observe(self, traffic: Traffic) -> None:
        if traffic.direction != IN or not traffic.whole:
            return
        if _UPDATE_BYTES not in traffic.line:
            return
        try:
            frame = json.loads(traffic.line)
        except ValueError:
            return
        batch = type(frame) is list and self.rpc.batches  # where the schema has them
        if batch:
            for item in frame:
                self._note(item)
        else:
            self._note(frame)

    def _note(self, frame: Any) -> None:
        """A ``session/update`` notification (parsed JSON) to its session."""
        if type(frame) is not dict or frame.get("method") != Acp.UPDATE:
            return
        if "id" in frame or frame.get("jsonrpc") != "2.0":
            return
        params = frame.get("params")
        if type(params) is not dict:
            return
        session_id = params.get(Acp.SESSION_ID)
        if type(session_id) is str:
            self.session(session_id)._receive(params.get(Acp.UPDATE_MEMBER))

    def _room_changed(self) -> None:
        self._room.set()

    async def _wait_or_closed(self, event: asyncio.Event) -> None:
        if self.conn.is_closed:
            return
        waiter = asyncio.ensure_future(event.wait())
        closed = self.conn.closed
        try:
            await asyncio.wait({waiter, closed}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
            closed.cancel()


_UPDATE_BYTES: Final = Acp.UPDATE.encode()


class _Handler:
    """What :meth:`ClientSessions.handler` gives: ``inner``, with backpressure."""

    def __init__(self, sessions: ClientSessions, inner: Any) -> None:
        spec = sessions.rpc.spec(Acp.UPDATE, "notification")
        self._sessions = sessions
        self._inner = inner
        self._name = spec.handler if spec is not None else None

    def __getattr__(self, name: str) -> Any:
        if name == self._name:
            return self._update
        if self._inner is None:
            raise AttributeError(name)
        return getattr(self._inner, name)

    async def _update(self, params: Any) -> None:
        sessions = self._sessions
        session_id = sessions.rpc.session_of(Acp.UPDATE, "notification", params)
        session = sessions._sessions.get(session_id) if session_id is not None else None
        if session is not None:
            await session._room()
        assert self._name is not None
        own = getattr(self._inner, self._name, None)
        if own is not None:
            await own(params)
