"""Message transports (acpgen/runtime/_channel.py), on the source module itself: the
channel seen as the connection's writer, the reader of a channel (its connection's part
played by a recorder), the bounded mailbox and the in-process pair."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, TypeVar

import pytest

from acpgen.runtime._channel import (
    Channel,
    ChannelClosed,
    ChannelWriter,
    Mailbox,
    MemoryChannel,
    MessageReader,
    memory_pair,
)
from acpgen.runtime._skim import SKIM

T = TypeVar("T")


def run(awaitable: Awaitable[T]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(awaitable, 10)

    return asyncio.run(bounded())


class Script:
    """A channel that hands out the messages (or raises the errors) it was given."""

    def __init__(self, *items: bytes | BaseException | None) -> None:
        self.items = list(items)
        self.sent: list[bytes] = []
        self.closed = 0

    async def receive(self) -> bytes | None:
        if not self.items:
            return None
        item = self.items.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item

    async def send(self, message: bytes) -> None:
        self.sent.append(message)

    async def aclose(self) -> None:
        self.closed += 1


class Recorder(MessageReader):
    def __init__(self, channel: Any, max_line: int = 1 << 20, max_in_flight: int = 100) -> None:
        self.channel = channel
        self.log = logging.getLogger("test_channel")
        self.max_line = max_line
        self.max_in_flight = max_in_flight
        self._received = 0
        self.events: list[tuple[Any, ...]] = []
        self.load = 0

    def _dispatch(self, line: bytes) -> None:
        self.events.append(("message", line))

    def _oversized(self, head: bytes, tail: bytes, size: int) -> None:
        self.events.append(("oversized", head, tail, size))

    def _load(self) -> int:
        return self.load

    async def _admit(self) -> None:
        self.events.append(("admit", self.load))
        self.load = 0

    def _lost(self, reason: str) -> None:
        self.events.append(("lost", reason))


def receive_all(*items: bytes | BaseException | None, **settings: Any) -> Recorder:
    host = Recorder(Script(*items), **settings)
    run(host._receive_loop())
    return host


PEER_CLOSED = ("lost", "the peer closed the connection")


# ---------------------------------------------------------------- the writer


def test_the_writer_sends_each_line_as_one_message_without_its_newline() -> None:
    channel = Script()
    writer = ChannelWriter(channel)
    writer.write(b'{"a":1}\n')
    writer.write(b'{"b":2}')
    run(writer.drain())
    assert channel.sent == [b'{"a":1}', b'{"b":2}']
    run(writer.drain())
    assert channel.sent == [b'{"a":1}', b'{"b":2}']


def test_only_one_newline_is_taken_off() -> None:
    channel = Script()
    writer = ChannelWriter(channel)
    writer.write(b"x\n\n")
    run(writer.drain())
    assert channel.sent == [b"x\n"]


def test_a_closed_writer_refuses_lines_and_drops_what_it_held() -> None:
    channel = Script()
    writer = ChannelWriter(channel)
    writer.write(b"kept until the close\n")
    writer.close()
    with pytest.raises(ConnectionResetError, match="^the channel is closed$"):
        writer.write(b"late\n")
    run(writer.drain())
    assert channel.sent == []


def test_waiting_for_the_writer_to_close_closes_the_channel() -> None:
    channel = Script()
    writer = ChannelWriter(channel)
    run(writer.wait_closed())
    assert channel.closed == 1
    assert writer.can_write_eof() is False


def test_the_channel_protocol_is_checked_at_run_time() -> None:
    assert isinstance(Script(), Channel)
    assert isinstance(memory_pair()[0], Channel)
    assert not isinstance(object(), Channel)


def test_a_closed_channel_is_a_connection_error_with_its_reason() -> None:
    exc = ChannelClosed("the WebSocket closed: code 1009")
    assert isinstance(exc, ConnectionError) and str(exc) == "the WebSocket closed: code 1009"


# ---------------------------------------------------------------- the reader


def test_messages_are_handed_on_in_order_until_the_peer_closes() -> None:
    host = receive_all(b'{"a":1}', b'{"b":2}', None, b"never read")
    assert host.events == [("message", b'{"a":1}'), ("message", b'{"b":2}'), PEER_CLOSED]


def test_blank_messages_are_skipped() -> None:
    host = receive_all(b"", b"  \n", b'{"a":1}')
    assert host.events == [("message", b'{"a":1}'), PEER_CLOSED]


def test_what_is_received_is_counted() -> None:
    host = receive_all(b'{"a":1}', b"  ", b"x" * 30, max_line=10)
    assert host._received == 7 + 2 + 30


@pytest.mark.parametrize("size", [10, 11])
def test_a_message_of_max_line_bytes_is_read_and_one_more_is_judged_from_its_ends(size: int) -> None:
    message = b"y" * size
    host = receive_all(message, max_line=10)
    expected = ("message", message) if size == 10 else ("oversized", message, message, 11)
    assert host.events == [expected, PEER_CLOSED]


def test_an_oversized_message_gives_its_two_ends() -> None:
    message = b"H" * SKIM + b"m" * 100 + b"T" * SKIM
    host = receive_all(message, max_line=SKIM)
    assert host.events == [("oversized", b"H" * SKIM, b"T" * SKIM, len(message)), PEER_CLOSED]


def test_reading_waits_while_the_incoming_work_is_at_its_bound() -> None:
    class Counting(Recorder):
        def _dispatch(self, line: bytes) -> None:
            super()._dispatch(line)
            self.load += 1

    host = Counting(Script(b"1", b"2", b"3"), max_in_flight=2)
    run(host._receive_loop())
    assert host.events == [("message", b"1"), ("message", b"2"), ("admit", 2), ("message", b"3"), PEER_CLOSED]


def test_the_bound_is_checked_after_an_oversized_or_blank_message_too() -> None:
    host = Recorder(Script(b" ", b"x" * 20), max_line=10, max_in_flight=1)
    host.load = 1
    run(host._receive_loop())
    assert host.events == [("admit", 1), ("oversized", b"x" * 20, b"x" * 20, 20), PEER_CLOSED]


def test_a_closed_channel_gives_its_own_reason() -> None:
    host = receive_all(b"1", ChannelClosed("the WebSocket closed: code 1011 (gone)"))
    assert host.events == [("message", b"1"), ("lost", "the WebSocket closed: code 1011 (gone)")]


def test_a_closed_channel_without_a_reason_is_the_peer_closing() -> None:
    host = receive_all(ChannelClosed())
    assert host.events == [PEER_CLOSED]


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (ConnectionResetError("reset"), "reading from the peer failed: ConnectionResetError('reset')"),
        (OSError(5, "io"), "reading from the peer failed: OSError(5, 'io')"),
    ],
)
def test_a_failed_receive_ends_reading_saying_why(error: BaseException, reason: str) -> None:
    assert receive_all(error).events == [("lost", reason)]


def test_a_failure_of_the_reader_itself_is_logged_and_ends_reading(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="test_channel"):
        host = receive_all(b"1", ValueError("boom"))
    assert host.events == [("message", b"1"), ("lost", "the reader failed: ValueError('boom')")]
    assert [r.getMessage() for r in caplog.records] == ["the connection's reader failed"]


# ---------------------------------------------------------------- the mailbox


def test_the_mailbox_gives_messages_in_order_and_remembers_its_high_mark() -> None:
    async def main() -> tuple[list[bytes | None], int]:
        box = Mailbox(3)
        assert box.high == 0  # nothing held yet
        for m in (b"1", b"2", b"3"):
            assert await box.put(m)
        got = [await box.get(), await box.get()]
        assert await box.put(b"4")
        got += [await box.get(), await box.get()]
        return got, box.high

    assert run(main()) == ([b"1", b"2", b"3", b"4"], 3)


def test_a_put_waits_for_room_and_a_get_makes_it() -> None:
    async def main() -> list[str]:
        box = Mailbox(1)
        seen: list[str] = []
        await box.put(b"1")

        async def second() -> None:
            await box.put(b"2")
            seen.append("put 2")

        task = asyncio.create_task(second())
        for _ in range(5):
            await asyncio.sleep(0)
        seen.append("waited")
        assert list(box.items) == [b"1"]
        seen.append(repr(await box.get()))
        await task
        seen.append(repr(await box.get()))
        return seen

    assert run(main()) == ["waited", "b'1'", "put 2", "b'2'"]


def test_a_get_waits_for_a_message() -> None:
    async def main() -> bytes | None:
        box = Mailbox(2)
        task = asyncio.create_task(box.get())
        for _ in range(5):
            await asyncio.sleep(0)
        assert not task.done()
        await box.put(b"x")
        return await task

    assert run(main()) == b"x"


def test_a_get_on_an_emptied_mailbox_waits_for_the_next_message() -> None:
    """Once emptied, a get waits (the loop goes on) until a message comes: run in a
    thread of its own, so that a get that spun without ever waiting fails the test
    rather than hang it."""
    import threading

    got: list[bytes | None] = []

    async def main() -> None:
        box = Mailbox(2)
        await box.put(b"x")
        got.append(await box.get())
        asyncio.get_running_loop().call_later(0.01, box.force, b"y")
        got.append(await box.get())

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive(), "the get never waited"
    assert got == [b"x", b"y"]


def test_closing_wakes_a_waiting_put_which_fails() -> None:
    async def main() -> bool:
        box = Mailbox(1)
        await box.put(b"1")
        task = asyncio.create_task(box.put(b"2"))
        await asyncio.sleep(0)
        box.close()
        return await task

    assert run(main()) is False


def test_closing_wakes_a_waiting_get_which_sees_the_end() -> None:
    async def main() -> bytes | None:
        box = Mailbox(1)
        task = asyncio.create_task(box.get())
        await asyncio.sleep(0)
        box.close()
        return await task

    assert run(main()) is None


def test_what_was_queued_before_the_close_is_still_got() -> None:
    async def main() -> list[bytes | None]:
        box = Mailbox(4)
        await box.put(b"1")
        await box.put(b"2")
        box.close()
        assert not await box.put(b"3")
        return [await box.get(), await box.get(), await box.get()]

    assert run(main()) == [b"1", b"2", None]


def test_force_queues_over_the_bound_but_not_after_the_close() -> None:
    async def main() -> tuple[list[bytes], int, list[bytes]]:
        box = Mailbox(1)
        await box.put(b"1")
        box.force(b"made here")
        held = list(box.items)
        high = box.high
        box.close()
        box.force(b"after")
        return held, high, list(box.items)

    held, high, after = run(main())
    assert held == [b"1", b"made here"] and high == 2 and after == held


def test_a_forced_message_wakes_a_waiting_get() -> None:
    async def main() -> bytes | None:
        box = Mailbox(1)
        task = asyncio.create_task(box.get())
        await asyncio.sleep(0)
        box.force(b"now")
        return await task

    assert run(main()) == b"now"


# ---------------------------------------------------------------- the in-process pair


def test_a_memory_pair_carries_messages_both_ways() -> None:
    async def main() -> tuple[bytes | None, bytes | None]:
        a, b = memory_pair()
        await a.send(b"to b")
        await b.send(bytearray(b"to a"))  # type: ignore[arg-type]
        return await b.receive(), await a.receive()

    to_b, to_a = run(main())
    assert to_b == b"to b" and to_a == b"to a" and type(to_a) is bytes


def test_a_side_that_stops_reading_stops_the_others_sends() -> None:
    async def main() -> tuple[bool, bytes | None]:
        a, b = memory_pair(max_queued=2)
        await a.send(b"1")
        await a.send(b"2")
        third = asyncio.create_task(a.send(b"3"))
        for _ in range(5):
            await asyncio.sleep(0)
        waiting = not third.done()
        first = await b.receive()
        await third
        return waiting, first

    assert run(main()) == (True, b"1")


def test_after_a_close_each_end_reads_what_was_sent_then_the_end() -> None:
    async def main() -> list[Any]:
        a, b = memory_pair()
        await a.send(b"1")
        await b.send(b"2")
        await a.aclose()
        return [await b.receive(), await b.receive(), await a.receive(), await a.receive()]

    assert run(main()) == [b"1", None, b"2", None]


def test_sending_on_a_closed_pair_fails_saying_so() -> None:
    async def main() -> None:
        a, b = memory_pair()
        await b.aclose()
        await a.send(b"x")

    with pytest.raises(ChannelClosed, match="^the channel is closed$"):
        run(main())


def test_a_send_waiting_for_room_fails_when_the_pair_closes() -> None:
    async def main() -> None:
        a, b = memory_pair(max_queued=1)
        await a.send(b"1")
        task = asyncio.create_task(a.send(b"2"))
        await asyncio.sleep(0)
        await b.aclose()
        await task

    with pytest.raises(ChannelClosed, match="^the channel closed while a message waited to be sent$"):
        run(main())


def test_the_pair_is_made_of_memory_channels_bounded_as_asked() -> None:
    a, b = memory_pair(max_queued=7)
    assert isinstance(a, MemoryChannel) and isinstance(b, MemoryChannel)
    assert a._outbox is b._inbox and b._outbox is a._inbox
    assert a._outbox.size == 7 and a._inbox.size == 7
    assert memory_pair()[0]._inbox.size == 64
