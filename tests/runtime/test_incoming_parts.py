"""The small parts of what the peer sends a connection (acpgen/runtime/_incoming.py), on
the source module itself, the connection's part played by a host with only the counts and
tables they read: how the incoming work is counted, when every running handler waits for
us, when reading waits, and where an answer goes (at once, or behind its session's
notifications). The promises with a peer are in ``test_incoming.py``."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from acpgen.runtime._frames import (
    Batch,
    ErrorResponse,
    FrameError,
    InvalidResultError,
    MethodNotFound,
    Notification,
    OversizedFrameError,
    RemoteError,
    Request,
)
from acpgen.runtime._incoming import _HANDLER, Incoming, _Lane, _Pending, _Reply, _urgent
from acpgen.runtime._router import RequestContext
from acpgen.runtime._telemetry import Traffic


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


class Peer(Host):
    """A host that also answers, logs and hands notifications to a router: what it would
    write is kept in ``written``, the notifications handled in ``handled``."""

    def __init__(self, **counts: int) -> None:
        super().__init__(**counts)
        self.log = logging.getLogger("test.incoming_parts")
        self.rpc: Any = SimpleNamespace(
            codec=SimpleNamespace(dump=lambda value: getattr(value, "__dict__", value)),
            session_of=lambda method, kind, params: params.get("sessionId"),
        )
        self.router: Any = SimpleNamespace(
            error_line=self._error_line, handle=self._handle, failure=self._failure
        )
        self.telemetry: Any = None
        self._started: set[asyncio.Task[None]] = set()
        self._write_lock = asyncio.Lock()
        self._loop = asyncio.get_running_loop()
        self._abandoned: collections.OrderedDict[Any, None] = collections.OrderedDict()
        self._incoming: dict[Any, Any] = {}
        self._observers: list[Any] = []
        self.written: list[Any] = []
        self.writers: list[asyncio.Task[Any] | None] = []
        self.handled: list[tuple[str, str]] = []
        #: per notification handled: whether our requests would skip the lanes, and the
        #: cancellations requested of its task
        self.seen: list[tuple[bool, int]] = []
        self.max_line = 1024
        self.traffic: list[Traffic] = []
        self.lost: list[str] = []

    @staticmethod
    def _error_line(rid: Any, code: int, message: str, data: Any = None) -> bytes:
        error = {"code": code, "message": message, "data": data}
        return json.dumps({"jsonrpc": "2.0", "id": rid, "error": error}).encode() + b"\n"

    async def _handle(self, item: Any, context: Any = None) -> bytes | None:
        await asyncio.sleep(0)
        if isinstance(item, Request):
            handler = _HANDLER.get()
            assert handler is not None and handler[0] is self and handler[1] is context
            assert isinstance(context, RequestContext)
            if item.method == "wait":
                await asyncio.Event().wait()
            self.handled.append((item.method, context.method))
            return self._result_line(item.id, "done")
        task = asyncio.current_task()
        assert task is not None
        self.seen.append((_urgent(self), task.cancelling()))
        if item.params["text"] == "cancel me":
            task.cancel()
            await asyncio.sleep(1)
        if item.params["text"] == "wait":
            await asyncio.Event().wait()
        self.handled.append((item.params["sessionId"], item.params["text"]))
        return None

    @staticmethod
    def _result_line(rid: Any, result: Any) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode() + b"\n"

    def _failure(self, frame: Request[Any], exc: BaseException) -> bytes:
        return self._result_line(frame.id, type(exc).__name__)

    def _observe(self, traffic: Traffic) -> None:
        self.traffic.append(traffic)

    def _lost(self, reason: str) -> None:
        self.lost.append(reason)

    def _spawn(self, work: Any) -> asyncio.Task[Any]:
        return asyncio.ensure_future(work)

    async def _write_quietly(self, line: bytes) -> None:
        self.written.append(json.loads(line))
        self.writers.append(asyncio.current_task())


def note(session: str, text: str) -> Notification[Any]:
    return Notification("session/update", {"sessionId": session, "text": text})


def test_an_error_answer_fails_our_request_with_the_peers_error_naming_it() -> None:
    async def main() -> None:
        host = Peer()
        host._pending[7] = asked = pending()
        body = {"code": -32000, "message": "no such file", "data": {"path": "/a"}}
        host._route(ErrorResponse(7, body), None)
        error = asked.future.exception()
        assert isinstance(error, RemoteError)
        assert (error.code, error.message, error.data) == (-32000, "no such file", {"path": "/a"})
        assert (error.method, error.id) == ("session/prompt", 7)

    asyncio.run(main())


def test_notifications_wait_in_their_sessions_lane_which_is_left_once_empty() -> None:
    async def main() -> None:
        host = Peer()
        for session, text in [("a", "1"), ("b", "2"), ("a", "3")]:
            host._queued_notes += 1
            host._enqueue(session, note(session, text))
        assert sorted(host._lanes, key=str) == ["a", "b"]
        assert [getattr(n, "params")["text"] for n in host._lanes["a"].items] == ["1", "3"]
        tasks = [lane.task for lane in host._lanes.values() if lane.task is not None]
        await asyncio.wait_for(asyncio.gather(*tasks), 5)
        assert sorted(host.handled) == [("a", "1"), ("a", "3"), ("b", "2")]
        assert host._lanes == {} and host._load() == 0

    asyncio.run(main())


def test_a_batch_is_answered_in_one_array_of_the_answers_of_its_items() -> None:
    """A broken call is answered in the array, a request of an unknown method too; a
    broken answer (a frame error not answered, an invalid result) is only logged, a
    notification handled; nothing else is written."""

    async def main() -> None:
        host = Peer()
        broken = FrameError(-32600, "Invalid request", "no method", id=1, answer=True)
        stray = FrameError(-32600, "Invalid response", "x", id=2, answer=False, call=False)
        invalid = InvalidResultError("session/prompt", 3, {}, "bad")
        unknown = MethodNotFound(4, "no/such", {}, True)
        items: list[Any] = [broken, stray, invalid, unknown, note("s", "n")]
        host._queued_notes += 1
        host._batch(Batch(items))
        await asyncio.sleep(0.05)
        assert host.written == [
            [
                {"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "Invalid request", "data": "no method"}},
                {"jsonrpc": "2.0", "id": 4, "error": {"code": -32601, "message": "Method not found", "data": {"method": "no/such"}}},
            ]
        ]
        assert host.handled == [("s", "n")]

    asyncio.run(main())


def test_a_batch_with_nothing_to_answer_writes_nothing() -> None:
    async def main() -> None:
        host = Peer()
        host._queued_notes += 1
        host._batch(Batch([note("s", "n")]))
        await asyncio.sleep(0.05)
        assert host.written == [] and host.handled == [("s", "n")]

    asyncio.run(main())


class Telemetry:
    """Records the spans of requests and the line each was answered with."""

    def __init__(self) -> None:
        self.spans: list[tuple[Any, ...]] = []

    @contextlib.contextmanager
    def span(self, direction: str, method: str, rid: Any) -> Iterator[Any]:
        record = [direction, method, rid]
        yield SimpleNamespace(answered=record.append)
        self.spans.append(tuple(record))


def test_a_request_runs_in_a_span_naming_it_and_its_answer() -> None:
    async def main() -> None:
        host = Peer()
        host.telemetry = Telemetry()
        request: Request[Any] = Request(5, "session/prompt", {})
        host._start_request(request, None)
        await asyncio.wait_for(host._incoming[5][0], 5)
        line = host._result_line(5, "done")
        assert host.telemetry.spans == [("in", "session/prompt", 5, line)]
        assert host.written == [json.loads(line)] and host._incoming == {}
        assert host._started == set() and host._requests_running == 0

    asyncio.run(main())


def test_a_request_cancelled_before_it_ran_is_answered_without_its_handler() -> None:
    async def main() -> None:
        host = Peer()
        request: Request[Any] = Request(5, "session/prompt", {})
        context = RequestContext(5, "session/prompt", host, asyncio.Event())
        context.cancelled.set()  # type: ignore[union-attr]
        host._requests_running += 1
        await asyncio.wait_for(host._run_request(request, context, None), 5)
        assert host.handled == [] and host._requests_running == 0
        assert host._started == set()
        assert host.written == [{"jsonrpc": "2.0", "id": 5, "result": "CancelledError"}]

    asyncio.run(main())


@pytest.mark.parametrize("writing", [False, True])
def test_an_answer_is_written_from_the_requests_task_unless_a_write_is_under_way(
    writing: bool,
) -> None:
    """With nothing being written the request's task writes its answer itself; else a
    task of its own does, which the request's task waits for."""

    async def main() -> None:
        host = Peer()
        if writing:
            await host._write_lock.acquire()
        host._start_request(Request(5, "session/prompt", {}), None)
        task = host._incoming[5][0]
        await asyncio.wait_for(task, 5)
        assert host.written == [{"jsonrpc": "2.0", "id": 5, "result": "done"}]
        assert (host.writers[0] is task) is not writing

    asyncio.run(main())


def test_a_batch_of_requests_is_answered_once_every_request_is() -> None:
    async def main() -> None:
        host = Peer()
        items: list[Any] = [
            Request(1, "session/prompt", {}),
            MethodNotFound(2, "no/such", {}, True),
            Request(3, "session/load", {}),
        ]
        host._batch(Batch(items))
        tasks = [host._incoming[1][0], host._incoming[3][0]]
        await asyncio.wait_for(asyncio.gather(*tasks), 5)
        await asyncio.sleep(0.05)
        assert len(host.written) == 1
        answers = sorted(host.written[0], key=lambda answer: answer["id"])
        assert [answer["id"] for answer in answers] == [1, 2, 3]
        assert answers[0]["result"] == answers[2]["result"] == "done"
        assert sorted(host.handled) == [("session/load",) * 2, ("session/prompt",) * 2]

    asyncio.run(main())


def test_an_answer_queued_in_a_lane_is_delivered_between_its_notifications() -> None:
    async def main() -> None:
        host = Peer()
        asked = pending("a")
        seen: list[list[tuple[str, str]]] = []
        asked.future.add_done_callback(lambda _: seen.append(list(host.handled)))
        host._queued_notes += 2
        host._enqueue("a", note("a", "1"))
        host._settle(_Reply(asked, "answer"))
        host._enqueue("a", note("a", "2"))
        await asyncio.wait_for(host._lanes["a"].task, 5)  # type: ignore[arg-type]
        assert asked.future.result() == "answer" and seen == [[("a", "1")]]
        assert host.handled == [("a", "1"), ("a", "2")] and host._lanes == {}

    asyncio.run(main())


def test_a_notification_handler_cancelled_outside_a_close_leaves_its_lane_going_on() -> None:
    """Its requests skip the lanes (their answers are delivered at once); a handler whose
    task is cancelled while the connection is not closing is logged, and the next one runs
    with no cancellation left pending on the lane's task."""

    async def main() -> None:
        host = Peer()
        host._queued_notes += 2
        host._enqueue("a", note("a", "cancel me"))
        host._enqueue("a", note("a", "after"))
        await asyncio.wait_for(host._lanes["a"].task, 5)  # type: ignore[arg-type]
        assert host.handled == [("a", "after")] and host._lanes == {}
        assert host.seen == [(True, 0), (True, 0)] and not _urgent(host)

    asyncio.run(main())


def test_a_lane_stopped_by_a_close_stays_with_what_it_did_not_deliver() -> None:
    """The close then resolves the answers queued in it and counts the notifications it
    drops."""

    async def main() -> None:
        host = Peer()
        asked = pending("a")
        host._queued_notes += 2
        host._enqueue("a", note("a", "wait"))
        reply = _Reply(asked, "answer")
        host._settle(reply)
        host._enqueue("a", later := note("a", "later"))
        lane = host._lanes["a"]
        await asyncio.sleep(0.05)
        host._closing = True
        lane.task.cancel()  # type: ignore[union-attr]
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(lane.task, 5)  # type: ignore[arg-type]
        assert host._lanes == {"a": lane} and list(lane.items) == [reply, later]
        assert not asked.future.done() and host._notes_running == 0

    asyncio.run(main())


@pytest.mark.parametrize("observed", [False, True])
def test_an_oversized_line_is_shown_to_observers_by_its_head_and_size(observed: bool) -> None:
    async def main() -> None:
        host = Peer()
        if observed:
            host._observers.append(print)
        head, tail = b'{"jsonrpc":"2.0","method":"session/cancel","params":', b'"x"}}'
        host._oversized(head, tail, 5000)
        expected = [Traffic("in", head, 5000, whole=False)] if observed else []
        assert host.traffic == expected and host.written == [] and host.lost == []

    asyncio.run(main())


def test_an_oversized_answer_fails_our_request_naming_it_its_size_and_the_limit() -> None:
    async def main() -> None:
        host = Peer()
        host._pending[7] = asked = pending()
        host._oversized(b'{"jsonrpc":"2.0","id":7,"result":{"stopReason":', b'"x"}}', 5000)
        error = asked.future.exception()
        assert isinstance(error, OversizedFrameError)
        assert (error.method, error.id, error.size, error.limit) == ("session/prompt", 7, 5000, 1024)

    asyncio.run(main())


def test_an_unreadable_oversized_line_ends_the_connection_while_we_wait_for_an_answer() -> None:
    async def main() -> None:
        host = Peer()
        host._oversized(b'["zzz', b'zzz"]', 5000)
        assert host.lost == []
        host._pending[7] = asked = pending()
        host._oversized(b'["zzz', b'zzz"]', 5000)
        assert host.lost == ["an unreadable line of 5000 bytes (over the limit of 1024)"]
        assert not asked.future.done()

    asyncio.run(main())


def test_answers_to_no_request_in_flight_are_only_logged(caplog: pytest.LogCaptureFixture) -> None:
    """An answer to a request we gave up is a debug line, once (the id is then forgotten);
    a second answer, or one to an id never used, a warning; an error with a null id an
    error."""

    async def main() -> None:
        host = Peer()
        host._pending[7] = asked = pending()
        host._abandoned[9] = None
        host._answered(7, "first", None)
        host._answered(7, "second", None)
        host._answered(9, "late", None)
        assert host._abandoned == {}
        host._answered(9, "later", None)
        host._answered(8, None, {"code": -32000, "message": "late"})
        host._answered(None, None, {"code": -32700, "message": "Parse error"})
        host._answered(None, None, SimpleNamespace(code=-32700, message="typed"))
        assert asked.future.result() == "first"

    caplog.set_level(logging.DEBUG, logger="test.incoming_parts")
    asyncio.run(main())
    assert [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "test.incoming_parts"] == [
        ("WARNING", "response to id 7 with no request in flight"),
        ("DEBUG", "late answer to cancelled request 9"),
        ("WARNING", "response to id 9 with no request in flight"),
        ("WARNING", "response to id 8 with no request in flight"),
        (
            "ERROR",
            "the peer answered with an error and a null id, which JSON-RPC gives when it"
            " could not read a frame's id: {'code': -32700, 'message': 'Parse error'}",
        ),
        (
            "ERROR",
            "the peer answered with an error and a null id, which JSON-RPC gives when it"
            " could not read a frame's id: {'code': -32700, 'message': 'typed'}",
        ),
    ]


def test_the_peer_cancelling_a_running_request_cancels_its_handler() -> None:
    """Its context says so and its task is cancelled: it is answered (here with the
    failure's name); a cancel whose params are typed is read through the codec."""

    async def main() -> None:
        host = Peer()
        for rid in (5, 6):
            host._start_request(Request(rid, "wait", {}), None)
        (first, first_context), (second, second_context) = host._incoming[5], host._incoming[6]
        await asyncio.sleep(0.05)
        host._cancel_incoming({"requestId": 5})
        host._cancel_incoming(SimpleNamespace(requestId=6))
        assert first_context.cancelled is not None and first_context.cancelled.is_set()
        assert second_context.cancelled is not None and second_context.cancelled.is_set()
        await asyncio.wait_for(asyncio.gather(first, second), 5)
        assert sorted(answer["id"] for answer in host.written) == [5, 6]
        assert {answer["result"] for answer in host.written} == {"CancelledError"}
        assert host._incoming == {} and host.handled == []

    asyncio.run(main())
