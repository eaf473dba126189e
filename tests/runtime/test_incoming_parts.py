"""The small parts of what the peer sends a connection (acpgen/runtime/_incoming.py), on
the source module itself, the connection's part played by a host with only the counts and
tables they read: how the incoming work is counted, when every running handler waits for
us, when reading waits, and where an answer goes (at once, or behind its session's
notifications). The promises with a peer are in ``test_incoming.py``."""

from __future__ import annotations

import asyncio
import collections
from typing import Any

import pytest

from acpgen.runtime._incoming import Incoming, _Lane, _Pending, _Reply


class Host(Incoming):
    def __init__(
        self,
        requests: int = 0,
        queued: int = 0,
        running: int = 0,
        waiting: int = 0,
        max_in_flight: int = 4,
    ) -> None:
        self._requests_running = requests
        self._queued_notes = queued
        self._notes_running = running
        self._waiting = collections.Counter({object(): 1 for _ in range(waiting)})
        self.max_in_flight = max_in_flight
        self._pending: dict[Any, _Pending] = {}
        self._lanes: dict[str | None, _Lane] = {}
        self._closing = False
        self._paused = False
        self._wake = asyncio.Event()


def pending(lane: str | None = None, urgent: bool = False) -> _Pending:
    return _Pending(
        "session/prompt", asyncio.get_running_loop().create_future(), urgent, lane
    )


def test_the_load_counts_requests_running_and_notifications_queued_and_running() -> (
    None
):
    assert Host(requests=1, queued=2, running=4)._load() == 7


@pytest.mark.parametrize(
    ("requests", "running", "waiting", "stalled"),
    [
        (0, 0, 0, False),  # nothing runs: nothing to wait for
        (0, 0, 1, False),
        (1, 0, 1, True),
        (0, 1, 1, True),
        (1, 1, 2, True),
        (1, 1, 1, False),  # one of two waits for us
        (2, 1, 2, False),
        (1, 0, 0, False),
        (1, 0, 2, True),
    ],
)
def test_stalled_when_every_running_handler_waits_for_us(
    requests: int, running: int, waiting: int, stalled: bool
) -> None:
    assert (
        Host(requests=requests, running=running, waiting=waiting)._stalled() is stalled
    )


def test_reading_waits_at_the_bound_until_the_load_falls_under_it() -> None:
    async def main() -> None:
        host = Host(requests=4, max_in_flight=4)
        admit = asyncio.ensure_future(host._admit())
        await asyncio.sleep(0.01)
        assert not admit.done() and host._paused is True
        host._requests_running = 3
        host._wake.set()
        await asyncio.wait_for(admit, 5)
        assert host._paused is False

    asyncio.run(main())


@pytest.mark.parametrize(
    "settings",
    [
        {"requests": 3, "max_in_flight": 4},  # under the bound
        {"requests": 4, "max_in_flight": 5},
        {"requests": 1, "running": 3, "waiting": 4, "max_in_flight": 4},  # stalled
    ],
)
def test_reading_does_not_wait_under_the_bound_or_when_stalled(
    settings: dict[str, int],
) -> None:
    async def main() -> None:
        host = Host(**settings)
        await asyncio.wait_for(host._admit(), 5)
        assert host._paused is False

    asyncio.run(main())


def test_reading_does_not_wait_on_a_closing_connection() -> None:
    async def main() -> None:
        host = Host(requests=9, max_in_flight=4)
        host._closing = True
        await asyncio.wait_for(host._admit(), 5)

    asyncio.run(main())


def test_the_method_of_one_of_our_requests_by_its_id() -> None:
    async def main() -> None:
        host = Host()
        host._pending[3] = pending()
        assert host._method_of(3) == "session/prompt"
        assert host._method_of(4) is None
        assert host._method_of(None) is None

    asyncio.run(main())


def test_an_answer_goes_behind_its_sessions_lane_or_at_once() -> None:
    async def main() -> None:
        host = Host()
        lane = host._lanes["s"] = _Lane()
        queued, other, urgent = pending("s"), pending("t"), pending("s", urgent=True)
        reply = _Reply(queued, "late")
        host._settle(reply)
        assert list(lane.items) == [reply] and not queued.future.done()
        host._settle(_Reply(other, "now"))
        assert other.future.result() == "now"
        host._settle(_Reply(urgent, "now too"))
        assert urgent.future.result() == "now too" and list(lane.items) == [reply]
        none = pending(None)
        host._lanes[None] = _Lane()
        host._settle(_Reply(pending("t"), "t"))
        host._settle(_Reply(none, "none"))
        assert not none.future.done() and len(host._lanes[None].items) == 1

    asyncio.run(main())


def test_a_failure_is_delivered_as_the_answer() -> None:
    async def main() -> None:
        host = Host()
        p = pending()
        error = RuntimeError("gone")
        host._fail(p, error)
        assert p.future.exception() is error

    asyncio.run(main())
