"""Reading newline-delimited JSON: a connection's reader takes lines of any size off its
stream, up to ``max_line`` bytes each; a longer line is never held whole, only its two ends
(``SKIM`` bytes each), which :meth:`~._incoming.Incoming._oversized` judges. Reading pauses
while the connection's incoming work is at its bound. :class:`LineReader` is a part of
:class:`~._connection.Connection`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ._skim import SKIM

if TYPE_CHECKING:
    import asyncio
    import logging

#: bytes asked of the reader at a time
READ_CHUNK: Final = 256 * 1024


class _EndOfStream(Exception):
    """The stream ended inside a line too long to read."""


class LineReader:
    """The part of a :class:`~._connection.Connection` that reads its lines."""

    if TYPE_CHECKING:  # what it uses of the connection it is part of
        reader: asyncio.StreamReader | None
        log: logging.Logger
        max_line: int
        max_in_flight: int
        _received: int

        def _dispatch(self, line: bytes) -> None: ...
        def _oversized(self, head: bytes, tail: bytes, size: int) -> None: ...
        def _load(self) -> int: ...
        async def _admit(self) -> None: ...
        def _lost(self, reason: str) -> None: ...

    async def _read_loop(self) -> None:
        reason = "the peer closed the connection"
        buf = bytearray()
        scanned = 0
        assert self.reader is not None
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
            assert self.reader is not None
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
