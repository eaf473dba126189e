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


class MemoryChannel:
    """One end of an in-process pair (:func:`memory_pair`): a bounded queue each way, so
    a side that stops reading stops the other's sends, never drops. Once either end
    closed, each end still reads what was sent before, then sees the end."""

    def __init__(
        self,
        inbox: asyncio.Queue[bytes],
        outbox: asyncio.Queue[bytes],
        ended: asyncio.Event,
    ) -> None:
        self._inbox = inbox
        self._outbox = outbox
        self._ended = ended  # shared by both ends

    async def receive(self) -> bytes | None:
        while True:
            if not self._inbox.empty():
                return self._inbox.get_nowait()
            if self._ended.is_set():
                return None
            get = asyncio.ensure_future(self._inbox.get())
            end = asyncio.ensure_future(self._ended.wait())
            try:
                await asyncio.wait((get, end), return_when=asyncio.FIRST_COMPLETED)
            finally:
                end.cancel()
                if not get.done():
                    get.cancel()
            if get.done() and not get.cancelled():
                return get.result()

    async def send(self, message: bytes) -> None:
        if self._ended.is_set():
            raise ChannelClosed("the channel is closed")
        put = asyncio.ensure_future(self._outbox.put(bytes(message)))
        end = asyncio.ensure_future(self._ended.wait())
        try:
            await asyncio.wait((put, end), return_when=asyncio.FIRST_COMPLETED)
        finally:
            end.cancel()
            if not put.done():
                put.cancel()
        if not put.done() or put.cancelled():
            raise ChannelClosed("the channel closed while a message waited to be sent")

    async def aclose(self) -> None:
        self._ended.set()


def memory_pair(max_queued: int = 64) -> tuple[MemoryChannel, MemoryChannel]:
    """Two channels wired to each other in this process, ``max_queued`` messages each way
    before a send waits."""
    a: asyncio.Queue[bytes] = asyncio.Queue(max_queued)
    b: asyncio.Queue[bytes] = asyncio.Queue(max_queued)
    ended = asyncio.Event()
    return MemoryChannel(a, b, ended), MemoryChannel(b, a, ended)


__all__ = [
    "Channel",
    "ChannelClosed",
    "ChannelWriter",
    "MemoryChannel",
    "MessageReader",
    "memory_pair",
]
