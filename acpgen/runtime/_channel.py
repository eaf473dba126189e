"""Message transports: the seam under a :class:`~._connection.Connection` for transports
that carry one JSON-RPC message per frame (a WebSocket text frame, an HTTP body or SSE
event, an in-process queue) rather than a byte stream cut into lines.

A transport gives the connection a :class:`Channel`; the connection is the same one that
runs over stdio (order per session, backpressure, cancellation, every request answered
once, the lifecycle): only reading and writing go through the channel. Reading pauses
while the connection's incoming work is at its bound, so a channel that reads only when
asked (:meth:`Channel.receive`) passes the backpressure on to its peer.
:class:`MessageReader` is a part of :class:`~._connection.Connection`.
"""

from __future__ import annotations

import asyncio
import collections
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import logging


@runtime_checkable
class Channel(Protocol):
    """One JSON-RPC message per frame, both ways.

    ``receive()`` returns the next message's bytes (UTF-8 JSON, no framing), ``None``
    once the peer closed, or raises :class:`ChannelClosed` (or another
    ``ConnectionError``) saying why it broke; ``send(message)`` sends one message,
    waiting while the peer is not reading, and raises ``ConnectionError`` when it cannot;
    ``aclose()`` closes it (idempotent, bounded)."""

    async def receive(self) -> bytes | None: ...

    async def send(self, message: bytes) -> None: ...

    async def aclose(self) -> None: ...


class ChannelClosed(ConnectionError):
    """A channel ended: its argument says why ("the WebSocket closed: code 1009...")."""


class ChannelWriter:
    """A channel seen as the connection's writer: ``write`` keeps one line, ``drain``
    sends it as one message (the connection writes under a lock, one line per drain)."""

    def __init__(self, channel: Channel) -> None:
        self.channel = channel
        self._queued: list[bytes] = []
        self._closing = False

    def write(self, line: bytes) -> None:
        if self._closing:
            raise ConnectionResetError("the channel is closed")
        self._queued.append(line[:-1] if line.endswith(b"\n") else line)

    async def drain(self) -> None:
        while self._queued:
            await self.channel.send(self._queued.pop(0))

    def close(self) -> None:
        self._closing = True
        self._queued.clear()

    async def wait_closed(self) -> None:
        await self.channel.aclose()

    def can_write_eof(self) -> bool:
        return False


class MessageReader:
    """The part of a :class:`~._connection.Connection` that reads a :class:`Channel`."""

    if TYPE_CHECKING:  # what it uses of the connection it is part of
        channel: Channel | None
        log: logging.Logger
        max_line: int
        max_in_flight: int
        _received: int

        def _dispatch(self, line: bytes) -> None: ...
        def _oversized(self, head: bytes, tail: bytes, size: int) -> None: ...
        def _load(self) -> int: ...
        async def _admit(self) -> None: ...
        def _lost(self, reason: str) -> None: ...

    async def _receive_loop(self) -> None:
        from ._skim import SKIM

        channel = self.channel
        assert channel is not None
        reason = "the peer closed the connection"
        limit = self.max_line
        try:
            while True:
                message = await channel.receive()
                if message is None:
                    break
                size = len(message)
                self._received += size
                if size > limit:
                    self._oversized(message[:SKIM], message[-SKIM:], size)
                elif message.strip():
                    self._dispatch(message)
                if self._load() >= self.max_in_flight:
                    await self._admit()
        except ChannelClosed as exc:
            reason = str(exc) or reason
        except (ConnectionError, OSError) as exc:
            reason = f"reading from the peer failed: {exc!r}"
        except Exception as exc:  # noqa: BLE001 - the connection closes, saying why
            self.log.exception("the connection's reader failed")
            reason = f"the reader failed: {exc!r}"
        self._lost(reason)


class Mailbox:
    """A bounded queue of messages that closing wakes: :meth:`put` waits for room,
    :meth:`get` for a message (what was queued before the close is still got); after
    :meth:`close`, ``put`` returns False and ``get`` None once empty. (One event wait per
    message, where racing a queue against an end event would make two tasks.)"""

    def __init__(self, size: int) -> None:
        self.items: collections.deque[bytes] = collections.deque()
        self.size = size
        self.closed = False
        #: the most messages ever held
        self.high = 0
        self._ready = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()

    async def put(self, message: bytes) -> bool:
        while len(self.items) >= self.size and not self.closed:
            self._room.clear()
            await self._room.wait()
        if self.closed:
            return False
        self.items.append(message)
        self.high = max(self.high, len(self.items))
        self._ready.set()
        return True

    async def get(self) -> bytes | None:
        while not self.items:
            if self.closed:
                return None
            self._ready.clear()
            await self._ready.wait()
        self._room.set()
        return self.items.popleft()

    def force(self, message: bytes) -> None:
        """Queue ``message`` now, over the bound if need be (a message made here, not
        read from a peer: the bound is for what a peer sends)."""
        if not self.closed:
            self.items.append(message)
            self.high = max(self.high, len(self.items))
            self._ready.set()

    def close(self) -> None:
        self.closed = True
        self._ready.set()
        self._room.set()


class MemoryChannel:
    """One end of an in-process pair (:func:`memory_pair`): a bounded :class:`Mailbox`
    each way, so a side that stops reading stops the other's sends, never drops. Once
    either end closed, each end still reads what was sent before, then sees the end."""

    def __init__(self, inbox: Mailbox, outbox: Mailbox) -> None:
        self._inbox = inbox
        self._outbox = outbox

    async def receive(self) -> bytes | None:
        return await self._inbox.get()

    async def send(self, message: bytes) -> None:
        if self._outbox.closed:
            raise ChannelClosed("the channel is closed")
        if not await self._outbox.put(bytes(message)):
            raise ChannelClosed("the channel closed while a message waited to be sent")

    async def aclose(self) -> None:
        self._inbox.close()
        self._outbox.close()


def memory_pair(max_queued: int = 64) -> tuple[MemoryChannel, MemoryChannel]:
    """Two channels wired to each other in this process, ``max_queued`` messages each way
    before a send waits."""
    a, b = Mailbox(max_queued), Mailbox(max_queued)
    return MemoryChannel(a, b), MemoryChannel(b, a)


__all__ = [
    "Channel",
    "ChannelClosed",
    "ChannelWriter",
    "Mailbox",
    "MemoryChannel",
    "MessageReader",
    "memory_pair",
]
