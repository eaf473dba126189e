"""Reading newline-delimited JSON (acpgen/runtime/_lines.py), on the source module itself:
a :class:`LineReader` over an ``asyncio.StreamReader`` fed by the test, its connection's
part played by a recorder. Which lines are handed on, which are judged from their two ends
only (over ``max_line``), when reading waits for the incoming work to fall under its
bound, and the reason given when reading ends."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from acpgen.runtime import _lines
from acpgen.runtime._lines import READ_CHUNK, LineReader
from acpgen.runtime._skim import SKIM


class Recorder(LineReader):
    """The connection's side of a :class:`LineReader`: what it was handed, in order."""

    def __init__(self, reader: Any, max_line: int = 1 << 20, max_in_flight: int = 100) -> None:
        self.reader = reader
        self.log = logging.getLogger("test_lines")
        self.max_line = max_line
        self.max_in_flight = max_in_flight
        self._received = 0
        self.events: list[tuple[Any, ...]] = []
        self.load = 0
        self.admitted = 0

    def _dispatch(self, line: bytes) -> None:
        self.events.append(("line", line))

    def _oversized(self, head: bytes, tail: bytes, size: int) -> None:
        self.events.append(("oversized", head, tail, size))

    def _load(self) -> int:
        return self.load

    async def _admit(self) -> None:
        self.admitted += 1
        self.events.append(("admit", self.load))
        self.load = 0

    def _lost(self, reason: str) -> None:
        self.events.append(("lost", reason))


def read_all(*chunks: bytes, **settings: Any) -> Recorder:
    """Feed ``chunks`` (then the end of the stream) and run the reader to its end."""

    async def main() -> Recorder:
        stream = asyncio.StreamReader(limit=1 << 30)
        for chunk in chunks:
            stream.feed_data(chunk)
        stream.feed_eof()
        host = Recorder(stream, **settings)
        await asyncio.wait_for(host._read_loop(), 30)
        return host

    return asyncio.run(main())


class Chunks:
    """A stream that hands out exactly the chunks it was given, one per read."""

    def __init__(self, *chunks: bytes | BaseException) -> None:
        self.chunks = list(chunks)
        self.asked: list[int] = []

    async def read(self, n: int) -> bytes:
        self.asked.append(n)
        if not self.chunks:
            return b""
        chunk = self.chunks.pop(0)
        if isinstance(chunk, BaseException):
            raise chunk
        return chunk


def read_chunks(*chunks: bytes | BaseException, **settings: Any) -> Recorder:
    async def main() -> Recorder:
        host = Recorder(Chunks(*chunks), **settings)
        await asyncio.wait_for(host._read_loop(), 30)
        return host

    return asyncio.run(main())


PEER_CLOSED = ("lost", "the peer closed the connection")


def test_lines_are_handed_on_in_order_without_their_newline() -> None:
    host = read_all(b'{"a":1}\n{"b":2}\n', b'{"c":3}\n')
    assert host.events == [("line", b'{"a":1}'), ("line", b'{"b":2}'), ("line", b'{"c":3}'), PEER_CLOSED]


def test_a_line_split_over_reads_is_put_back_together() -> None:
    host = read_chunks(b'{"a":', b"1}", b'\n{"b"', b":2}\n")
    assert host.events == [("line", b'{"a":1}'), ("line", b'{"b":2}'), PEER_CLOSED]


def test_several_lines_in_one_read_and_the_rest_kept_for_the_next() -> None:
    host = read_chunks(b'{"a":1}\n{"b":2}\n{"c"', b":3}\n")
    assert host.events == [("line", b'{"a":1}'), ("line", b'{"b":2}'), ("line", b'{"c":3}'), PEER_CLOSED]


def test_blank_lines_are_skipped() -> None:
    host = read_all(b"\n  \n\t\r\n", b'{"a":1}\n', b"\n")
    assert host.events == [("line", b'{"a":1}'), PEER_CLOSED]


def test_a_stream_that_begins_with_an_empty_line_skips_it() -> None:
    host = read_all(b'\n{"a":1}\n')
    assert host.events == [("line", b'{"a":1}'), PEER_CLOSED]


def test_a_last_line_without_its_newline_is_handed_on_at_the_end() -> None:
    host = read_all(b'{"a":1}\n{"b":2}')
    assert host.events == [("line", b'{"a":1}'), ("line", b'{"b":2}'), PEER_CLOSED]


def test_only_blanks_after_the_last_newline_hand_nothing_on() -> None:
    host = read_all(b'{"a":1}\n  \t')
    assert host.events == [("line", b'{"a":1}'), PEER_CLOSED]


def test_a_line_whose_carriage_return_stays_is_handed_on_whole() -> None:
    """Only the newline is taken off: what is before it is the line (``\\r`` included)."""
    host = read_all(b'{"a":1}\r\n')
    assert host.events == [("line", b'{"a":1}\r'), PEER_CLOSED]


def test_what_is_read_is_counted() -> None:
    host = read_chunks(b'{"a":1}\n', b'{"b":2}\n', b"  ")
    assert host._received == 18


def test_reads_ask_for_a_chunk_at_a_time() -> None:
    stream = Chunks(b'{"a":1}\n')
    asyncio.run(Recorder(stream)._read_loop())
    assert stream.asked == [READ_CHUNK, READ_CHUNK]


@pytest.mark.parametrize("size", [10, 11])
def test_a_line_of_exactly_max_line_bytes_is_read_and_one_more_is_not(size: int) -> None:
    line = b"x" * size
    host = read_all(line + b"\n" + b'{"a":1}\n', max_line=10)
    if size == 10:
        assert host.events[0] == ("line", line)
    else:
        assert host.events[0] == ("oversized", line, line, 11)
    assert host.events[1:] == [("line", b'{"a":1}'), PEER_CLOSED]


def test_a_long_line_that_came_whole_is_judged_from_its_two_ends() -> None:
    body = b"H" * SKIM + b"m" * 1000 + b"T" * SKIM
    host = read_all(body + b"\nnext\n", max_line=SKIM)
    assert host.events == [
        ("oversized", b"H" * SKIM, b"T" * SKIM, len(body)),
        ("line", b"next"),
        PEER_CLOSED,
    ]


def test_a_long_line_shorter_than_two_ends_gives_both_ends_whole() -> None:
    body = b"a" * 50
    host = read_all(body + b"\n", max_line=10)
    assert host.events == [("oversized", body, body, 50), PEER_CLOSED]


def test_a_line_over_the_limit_over_many_reads_is_never_held_whole() -> None:
    """Skipped a read at a time: its size counted, its two ends kept, what follows its
    newline read as the next lines."""
    head = b"H" * SKIM
    parts = [head + b"a" * 100, b"b" * 300, b"c" * 200 + b"T" * SKIM, b'\n{"n":1}\n{"m"', b":2}\n"]
    size = len(head) + 100 + 300 + 200 + SKIM
    host = read_chunks(*parts, max_line=SKIM)
    assert host.events == [
        ("oversized", head, b"T" * SKIM, size),
        ("line", b'{"n":1}'),
        ("line", b'{"m":2}'),
        PEER_CLOSED,
    ]


def test_the_tail_of_a_skipped_line_spans_the_reads_it_came_in() -> None:
    end = b"0123456789"
    parts = [b"h" * (SKIM + 5), b"x" * (SKIM - 4) + end[:4], end[4:], end[4:] + b"\nok\n"]
    host = read_chunks(*parts, max_line=SKIM)
    kind, got_head, tail, size = host.events[0]
    assert kind == "oversized" and got_head == b"h" * SKIM
    assert tail == (b"x" * (SKIM - 4) + end[:4] + end[4:] + end[4:])[-SKIM:]
    assert size == SKIM + 5 + SKIM - 4 + 4 + 6 + 6
    assert host.events[1:] == [("line", b"ok"), PEER_CLOSED]


def test_the_newline_of_a_skipped_line_at_the_start_of_a_read() -> None:
    parts = [b"h" * 20, b"t" * 10, b"\nnext\n"]
    host = read_chunks(*parts, max_line=15)
    assert host.events == [("oversized", b"h" * 20, (b"h" * 20 + b"t" * 10), 30), ("line", b"next"), PEER_CLOSED]


def test_a_skipped_line_is_counted_as_read() -> None:
    parts = [b"h" * 20, b"t" * 10, b"\nnext\n"]
    host = read_chunks(*parts, max_line=15)
    assert host._received == 36


def test_the_stream_ending_inside_a_long_line_judges_what_came_and_ends() -> None:
    parts = [b"h" * 20, b"t" * 10]
    host = read_chunks(*parts, max_line=15)
    assert host.events == [("oversized", b"h" * 20, b"h" * 20 + b"t" * 10, 30), PEER_CLOSED]


def test_reading_waits_while_the_incoming_work_is_at_its_bound() -> None:
    async def main() -> Recorder:
        stream = asyncio.StreamReader()
        stream.feed_data(b"1\n2\n3\n")
        stream.feed_eof()
        host = Recorder(stream, max_in_flight=2)
        dispatch = host._dispatch

        def counted(line: bytes) -> None:
            dispatch(line)
            host.load += 1

        host._dispatch = counted  # type: ignore[method-assign]
        await asyncio.wait_for(host._read_loop(), 30)
        return host

    host = asyncio.run(main())
    assert host.events == [("line", b"1"), ("line", b"2"), ("admit", 2), ("line", b"3"), PEER_CLOSED]


def test_no_wait_while_under_the_bound() -> None:
    host = read_all(b"1\n2\n3\n", max_in_flight=2)
    assert host.admitted == 0


def test_an_oversized_line_counts_towards_the_bound_check_too() -> None:
    async def main() -> Recorder:
        stream = asyncio.StreamReader()
        stream.feed_data(b"x" * 30 + b"\n2\n")
        stream.feed_eof()
        host = Recorder(stream, max_line=10, max_in_flight=1)
        host.load = 1
        await asyncio.wait_for(host._read_loop(), 30)
        return host

    host = asyncio.run(main())
    assert host.events[:2] == [("oversized", b"x" * 30, b"x" * 30, 30), ("admit", 1)]


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (ConnectionResetError("reset"), "reading from the peer failed: ConnectionResetError('reset')"),
        (OSError(9, "bad"), "reading from the peer failed: OSError(9, 'bad')"),
    ],
)
def test_a_failed_read_ends_reading_saying_why(error: BaseException, reason: str) -> None:
    host = read_chunks(b"1\n", error)
    assert host.events == [("line", b"1"), ("lost", reason)]


def test_a_failure_of_the_reader_itself_is_logged_and_ends_reading(caplog: pytest.LogCaptureFixture) -> None:
    class Broken(Recorder):
        def _dispatch(self, line: bytes) -> None:
            raise ValueError("boom")

    async def main() -> Recorder:
        host = Broken(Chunks(b"1\n2\n"))
        await asyncio.wait_for(host._read_loop(), 30)
        return host

    with caplog.at_level(logging.ERROR, logger="test_lines"):
        host = asyncio.run(main())
    assert host.events == [("lost", "the reader failed: ValueError('boom')")]
    assert [r.getMessage() for r in caplog.records] == ["the connection's reader failed"]


def test_a_failed_read_inside_a_long_line_ends_reading_saying_why() -> None:
    host = read_chunks(b"h" * 20, BrokenPipeError("gone"), max_line=10)
    assert host.events == [("lost", "reading from the peer failed: BrokenPipeError('gone')")]


def test_the_chunk_size_is_a_quarter_mebibyte() -> None:
    assert _lines.READ_CHUNK == 256 * 1024


def test_a_short_long_line_has_its_own_tail_whatever_follows_it_in_the_read() -> None:
    """The tail of a line over the limit but shorter than ``SKIM`` is the line's own
    bytes, however much came after it in the same read."""
    host = read_all(b"a" * 50 + b"\n" + b"b" * (SKIM + 5000) + b"\n", max_line=10)
    assert host.events[0] == ("oversized", b"a" * 50, b"a" * 50, 50)


def test_an_empty_line_right_after_a_line_is_skipped_not_joined_to_the_next() -> None:
    host = read_all(b'{"a":1}\n\n{"b":2}\n')
    assert host.events == [("line", b'{"a":1}'), ("line", b'{"b":2}'), PEER_CLOSED]


def test_a_line_of_max_line_bytes_whose_newline_comes_in_the_next_read_is_read() -> None:
    host = read_chunks(b"x" * 10, b"\n", max_line=10)
    assert host.events == [("line", b"x" * 10), PEER_CLOSED]


def test_a_skipped_line_ending_at_the_start_of_a_read_keeps_the_tail_it_began_with() -> None:
    start = b"h" * SKIM + b"T" * SKIM
    host = read_chunks(start, b"\nok\n", max_line=SKIM)
    assert host.events == [("oversized", b"h" * SKIM, b"T" * SKIM, 2 * SKIM), ("line", b"ok"), PEER_CLOSED]


def test_after_a_skipped_line_the_next_line_is_read_before_the_bound_is_checked() -> None:
    """A line skipped over many reads is answered, not queued: it is not work that the
    bound waits for; the line after it is read at once."""

    async def main() -> Recorder:
        host = Recorder(Chunks(b"h" * 20, b"t\nnext\n"), max_line=15, max_in_flight=1)
        host.load = 1
        await asyncio.wait_for(host._read_loop(), 30)
        return host

    host = asyncio.run(main())
    assert host.events == [("oversized", b"h" * 20, b"h" * 20 + b"t", 21), ("line", b"next"), ("admit", 1), PEER_CLOSED]


def test_an_empty_line_right_after_a_skipped_line_is_skipped_not_joined_to_the_next() -> None:
    host = read_chunks(b"h" * 20, b"t\n\nnext\n", max_line=15)
    assert host.events == [
        ("oversized", b"h" * 20, b"h" * 20 + b"t", 21),
        ("line", b"next"),
        PEER_CLOSED,
    ]


def test_skipping_a_long_line_asks_for_a_chunk_at_a_time() -> None:
    stream = Chunks(b"h" * 20, b"t" * 5, b"t\nnext\n")
    asyncio.run(Recorder(stream, max_line=15)._read_loop())
    assert stream.asked == [READ_CHUNK] * 4
