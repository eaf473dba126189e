"""The Streamable HTTP client's waits on event streams all end, over HTTP/1.1 (aiohttp) and
HTTP/2 (libcurl), against servers that misbehave: a stream refused with a body that never
ends, a stream whose status never comes. Every test is bounded in time."""

from __future__ import annotations

import asyncio
from types import ModuleType
from typing import Any

import pytest

from acpgen.runtime._channel import ChannelClosed as ChannelClosedError

from .harness import served
from .http_peers import Record, app_for, bindings, client_class, new_session, package, prompt, run, start

BOTH = pytest.mark.parametrize("http2", [False, True], ids=["http1.1", "http2"])


@pytest.fixture(scope="module")
def v1(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return bindings(tmp_path_factory)


def is_stream(scope: Any, session: bool) -> bool:
    names = {k.lower() for k, _ in scope.get("headers", [])}
    return (
        scope["type"] == "http"
        and scope["method"] == "GET"
        and (b"acp-session-id" in names) == session
    )


@BOTH
def test_a_session_stream_refused_with_a_body_that_never_ends_fails_that_request_only(
    v1: ModuleType, http2: bool
) -> None:
    """A server (or a proxy) that refuses a session's stream with ``429`` and a body it
    never ends: the prompt about that session fails with an error naming the status
    within about ``post_timeout`` s, instead of it and every later message waiting on the
    body for ever; the connection goes on."""

    async def main() -> None:
        app = app_for(v1, Record())
        refused = 0

        async def refusing(scope: Any, receive: Any, send: Any) -> None:
            nonlocal refused
            if not is_stream(scope, session=True):
                await app(scope, receive, send)
                return
            refused += 1
            await send({"type": "http.response.start", "status": 429, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"slow down\n", "more_body": True})
            await asyncio.sleep(3600)

        async with served(refusing, http2=http2) as base:
            conn, agent = await start(v1, base + "/acp", client_class(v1)(), http2=http2, post_timeout=0.5)
            sid = (await agent.session_new(new_session(v1))).session_id
            began = asyncio.get_running_loop().time()
            with pytest.raises(package(v1).RemoteError) as failed:
                await asyncio.wait_for(agent.session_prompt(prompt(v1, sid, "count 1")), 10)
            assert asyncio.get_running_loop().time() - began < 3
            assert failed.value.data["status"] == 429
            assert refused >= 1 and not conn.is_closed
            assert (await agent.session_new(new_session(v1))).session_id  # it goes on
            await conn.close()

    run(main())


@BOTH
def test_a_stream_whose_status_never_comes_closes_the_connection_in_time(
    v1: ModuleType, http2: bool
) -> None:
    """A server that takes the connection's stream request and never answers it, not even
    its status: initialize fails (ConnectionClosedError) after ``open_timeout +
    post_timeout`` s, instead of waiting for ever."""

    async def main() -> None:
        app = app_for(v1, Record())

        async def silent(scope: Any, receive: Any, send: Any) -> None:
            if not is_stream(scope, session=False):
                await app(scope, receive, send)
                return
            await asyncio.sleep(3600)

        async with served(silent, http2=http2) as base:
            conn = await v1.RPC.connect_url(base + "/acp", http2=http2, open_timeout=0.5, post_timeout=0.5)
            conn.start(client_class(v1)())
            began = asyncio.get_running_loop().time()
            with pytest.raises(package(v1).ConnectionClosedError) as failed:
                await asyncio.wait_for(
                    v1.RemoteAgent(conn).initialize(v1.InitializeRequest(protocol_version=1)), 10
                )
            assert asyncio.get_running_loop().time() - began < 4
            assert "within 1 s" in str(failed.value)
            await conn.close()

    run(main())


# -- the channel alone, over a wire that plays the server's part (no network) ---------


class Stream:
    """One event stream the fake wire gives: its answer, then what ``feed`` puts (an
    event's data, ``None`` to end it, an exception to fail it)."""

    def __init__(
        self, status: int = 200, body: bytes = b"", set_cookies: tuple[str, ...] = ()
    ) -> None:
        from acpgen.runtime._http_wire import Answer

        self.answer = Answer(status, {}, body, set_cookies)
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.headers: dict[str, str] = {}
        self.exited = False
        #: when set, the stream's answer waits for it (its status is late)
        self.gate: asyncio.Event | None = None
        #: when set, raised before the answer (the request failed on the way)
        self.fails: BaseException | None = None

    def feed(self, *items: Any) -> None:
        for item in items:
            self.queue.put_nowait(item)

    async def events(self) -> Any:
        while True:
            item = await self.queue.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item


class WireFailure(Exception):
    """What the fake wire raises for a request that failed on the way."""


class FakeWire:
    """A wire whose answers the test scripts: ``answers`` (popped in turn, the last one
    kept; a callable of the body gives one), ``streams[session]`` (the streams given in
    turn for that stream; a fresh ``Stream()`` when none is left)."""

    failures: tuple[type[BaseException], ...] = (WireFailure,)

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.posts: list[tuple[str, bytes, dict[str, str]]] = []
        self.gets: list[tuple[str, dict[str, str], str | None]] = []
        self.deletes: list[tuple[str, dict[str, str]]] = []
        self.streams: dict[str | None, list[Stream]] = {}
        self.given: dict[str | None, list[Stream]] = {}
        self.closes = 0
        self.delete_hangs = False
        self.delete_fails: BaseException | None = None

    async def post(self, url: str, body: bytes, headers: Any) -> Any:
        self.posts.append((url, body, dict(headers)))
        answer = self.answers[0] if len(self.answers) == 1 else self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer(body) if callable(answer) else answer

    async def delete(self, url: str, headers: Any) -> None:
        self.deletes.append((url, dict(headers)))
        if self.delete_fails is not None:
            raise self.delete_fails
        if self.delete_hangs:
            await asyncio.sleep(3600)

    def stream(self, url: str, headers: Any, session: str | None) -> Any:
        from contextlib import asynccontextmanager

        from acpgen.runtime._http_wire import EventStream

        self.gets.append((url, dict(headers), session))
        waiting = self.streams.get(session) or []
        stream = waiting.pop(0) if waiting else Stream()
        stream.headers = dict(headers)
        self.given.setdefault(session, []).append(stream)

        @asynccontextmanager
        async def opened() -> Any:
            try:
                if stream.gate is not None:
                    await stream.gate.wait()
                if stream.fails is not None:
                    raise stream.fails
                yield EventStream(stream.answer, stream.events())
            finally:
                stream.exited = True

        return opened()

    async def aclose(self) -> None:
        self.closes += 1


URL = "http://agent.test/acp"
INIT = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}'
INIT_ANSWER = b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}'


def answer(
    status: int = 202,
    body: bytes = b"",
    headers: Any = None,
    set_cookies: tuple[str, ...] = (),
) -> Any:
    from acpgen.runtime._http_wire import Answer

    return Answer(status, headers or {}, body, set_cookies)


def initialized(cid: str = "c-1") -> Any:
    return answer(200, INIT_ANSWER, {"acp-connection-id": cid})


def channel(
    wire: FakeWire, headers: Any = None, cookies: Any = None, max_queued: int = 8
) -> Any:
    from acpgen.runtime._http_client import HttpClientChannel
    from acpgen.runtime._remote_client import RemoteInfo

    info = RemoteInfo(URL, "", dict(headers or {}), dict(cookies or {}))
    return HttpClientChannel(wire, URL, info, max_queued)


def go(coro: Any, timeout: float = 10.0) -> Any:
    """Run a test's coroutine, bounded; what the loop reports (a callback that failed, a
    task's exception never retrieved) fails the test."""
    import gc

    reported: list[dict[str, Any]] = []

    async def main() -> Any:
        asyncio.get_running_loop().set_exception_handler(
            lambda loop, context: reported.append(context)
        )
        result = await asyncio.wait_for(coro, timeout)
        await settle()
        gc.collect()
        await settle()
        return result

    result = asyncio.run(main())
    assert reported == []
    return result


async def settle(times: int = 20) -> None:
    for _ in range(times):
        await asyncio.sleep(0)


def frame(data: bytes | None) -> Any:
    import json

    assert data is not None
    return json.loads(data)


def test_refusals_say_the_status_and_the_first_line() -> None:
    from acpgen.runtime._http_client import BODY_KEPT, _line, _Refused

    assert _line("\n  first line \nsecond\n") == "first line "
    assert _line("   \n ") == "" and _line("") == ""
    assert _line("x" * 300) == "x" * 200
    refused = _Refused(413, "too big\nmore")
    assert str(refused) == "HTTP 413: too big" and refused.status == 413
    assert refused.line == "too big" and refused.body == "too big\nmore"
    assert (
        str(_Refused(500)) == "HTTP 500"
        and _Refused(500).line == ""
        and _Refused(500).body == ""
    )
    assert str(_Refused(0, "said here")) == "said here"
    assert _Refused(400, "b" * (BODY_KEPT + 5)).body == "b" * BODY_KEPT
    assert BODY_KEPT == 8192


def test_initialize_posts_then_opens_the_connection_stream() -> None:
    async def main() -> None:
        wire = FakeWire(
            answer(
                200, INIT_ANSWER, {"acp-connection-id": "c-1"}, ("sticky=a; Path=/acp",)
            )
        )
        ch = channel(wire, headers={"authorization": "Bearer t"}, cookies={"old": "1"})
        await ch.send(bytearray(INIT))
        assert ch.cid == "c-1" and ch.info.connection_id == "c-1"
        assert ch.info.cookies == {"old": "1", "sticky": "a"}
        url, body, headers = wire.posts[0]
        assert (url, body) == (URL, INIT) and type(body) is bytes
        assert headers == {
            "authorization": "Bearer t",
            "content-type": "application/json",
            "accept": "application/json",
            "cookie": "old=1",
        }
        assert await ch.receive() == INIT_ANSWER
        ((url, headers, session),) = wire.gets
        assert (url, session) == (URL, None)
        assert headers == {
            "authorization": "Bearer t",
            "acp-connection-id": "c-1",
            "accept": "text/event-stream",
            "cookie": "old=1; sticky=a",
        }
        stream = wire.given[None][0]
        stream.feed(
            '{"jsonrpc":"2.0","method":"note","params":{"x":"\\u00e9"}}', "é\udce9"
        )
        assert (
            await ch.receive()
            == b'{"jsonrpc":"2.0","method":"note","params":{"x":"\\u00e9"}}'
        )
        assert await ch.receive() == "é\udce9".encode("utf-8", "surrogatepass")
        assert ch.high >= 1
        stream.feed(
            None
        )  # the server ends the connection's stream: the connection ends
        with pytest.raises(
            ChannelClosedError, match="^the server ended the connection's event stream$"
        ):
            await ch.receive()
        with pytest.raises(
            ChannelClosedError, match="^the server ended the connection's event stream$"
        ):
            await ch.send(b'{"jsonrpc":"2.0","method":"x"}')
        await ch.aclose()

    go(main())



def test_messages_after_initialize_name_the_connection_and_their_session() -> None:
    async def main() -> None:
        wire = FakeWire(
            initialized("c-9"),
            answer(202, set_cookies=("n=2",)),
            answer(200),
            answer(202),
        )
        ch = channel(wire, headers={"x-h": "1"})
        await ch.send(INIT)
        cancel = (
            b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}'
        )
        await ch.send(cancel)
        # the session's stream was opened before the post
        assert [g[2] for g in wire.gets] == [None, "s1"]
        assert wire.gets[1][1] == {
            "x-h": "1",
            "acp-connection-id": "c-9",
            "accept": "text/event-stream",
            "acp-session-id": "s1",
        }
        url, body, headers = wire.posts[1]
        assert (url, body) == (URL, cancel)
        assert headers == {
            "x-h": "1",
            "acp-connection-id": "c-9",
            "content-type": "application/json",
            "acp-session-id": "s1",
        }
        assert ch.info.cookies == {"n": "2"}
        # no session named: no session header, no new stream; 200 is taken too
        plain = b'{"jsonrpc":"2.0","id":3,"method":"other","params":{"sessionId":7}}'
        await ch.send(plain)
        assert wire.posts[2][2] == {
            "x-h": "1",
            "acp-connection-id": "c-9",
            "content-type": "application/json",
            "cookie": "n=2",
        }
        assert len(wire.gets) == 2
        # a message that is not JSON is posted as it is
        await ch.send(b"not json")
        assert (
            wire.posts[3][1] == b"not json" and "acp-session-id" not in wire.posts[3][2]
        )
        await ch.aclose()

    go(main())


def test_the_answer_to_a_request_that_came_on_a_session_stream_names_that_session() -> (
    None
):
    async def main() -> None:
        wire = FakeWire(initialized(), answer(202))
        ch = channel(wire)
        await ch.send(INIT)
        assert await ch.receive() == INIT_ANSWER
        await ch.send(
            b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}'
        )
        ask = '{"jsonrpc":"2.0","id":"r1","method":"session/request_permission","params":{"sessionId":"s1"}}'
        wire.given["s1"][0].feed(ask)
        assert await ch.receive() == ask.encode()
        # the same id on the connection's stream, as a number: noted apart
        wire.given[None][0].feed(
            '{"jsonrpc":"2.0","id":1,"method":"fs/read","params":{}}'
        )
        assert frame(await ch.receive())["id"] == 1
        await ch.send(b'{"jsonrpc":"2.0","id":1,"result":{}}')
        assert "acp-session-id" not in wire.posts[-1][2]
        await ch.send(b'{"jsonrpc":"2.0","id":"r1","result":{"outcome":"ok"}}')
        assert wire.posts[-1][2]["acp-session-id"] == "s1"
        # noted once: a second answer with that id names no session
        await ch.send(b'{"jsonrpc":"2.0","id":"r1","result":{}}')
        assert "acp-session-id" not in wire.posts[-1][2]
        await ch.aclose()

    go(main())


def test_a_result_naming_a_session_opens_its_stream() -> None:
    async def main() -> None:
        wire = FakeWire(initialized())
        ch = channel(wire)
        await ch.send(INIT)
        assert await ch.receive() == INIT_ANSWER
        conn_stream = wire.given[None][0]
        conn_stream.feed('{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s7"}}')
        assert frame(await ch.receive())["result"] == {"sessionId": "s7"}
        await settle()
        assert [g[2] for g in wire.gets] == [None, "s7"]
        # named again: already open, not opened twice
        conn_stream.feed('{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s7"}}')
        await ch.receive()
        # a result naming no session, an error, a request naming a session, a
        # notification, a list: no stream opened
        for data in (
            '{"jsonrpc":"2.0","id":3,"result":{"sessionId":5}}',
            '{"jsonrpc":"2.0","id":4,"result":["sessionId"]}',
            '{"jsonrpc":"2.0","id":5,"error":{"code":1,"message":"m","data":{"sessionId":"s8"}}}',
            '{"jsonrpc":"2.0","id":6,"method":"m","params":{"sessionId":"s9"}}',
            '{"jsonrpc":"2.0","method":"m","params":{"sessionId":"s10","id":1}}',
            '[{"jsonrpc":"2.0","id":7,"result":{"sessionId":"s11"}}]',
            '{"id": 8, "sessionId": broken',
        ):
            conn_stream.feed(data)
            assert await ch.receive() == data.encode()
        await settle()
        assert [g[2] for g in wire.gets] == [None, "s7"]
        # a request on the connection's stream is not noted: its answer names no session
        await ch.send(b'{"jsonrpc":"2.0","id":6,"result":{}}')
        assert "acp-session-id" not in wire.posts[-1][2]
        await ch.aclose()

    go(main())


def test_a_session_stream_result_naming_another_session_opens_it() -> None:
    async def main() -> None:
        wire = FakeWire(initialized(), answer(202))
        ch = channel(wire)
        await ch.send(INIT)
        await ch.receive()
        await ch.send(
            b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}'
        )
        wire.given["s1"][0].feed('{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s2"}}')
        await ch.receive()
        await settle()
        assert [g[2] for g in wire.gets] == [None, "s1", "s2"]
        await ch.aclose()

    go(main())


def test_a_first_message_that_is_not_initialize_is_refused_here() -> None:
    async def main() -> None:
        wire = FakeWire(initialized())
        ch = channel(wire)
        # a request: answered with an error, nothing posted, the connection goes on
        await ch.send(b'{"jsonrpc":"2.0","id":4,"method":"session/new","params":{}}')
        error = frame(await ch.receive())
        assert error == {
            "jsonrpc": "2.0",
            "id": 4,
            "error": {
                "code": -32603,
                "message": "the server refused the request: the first message must be the initialize request",
                "data": {
                    "status": 0,
                    "body": "the first message must be the initialize request",
                },
            },
        }
        # an initialize notification, a response, text: each closes the connection
        for message, what in (
            (b'{"jsonrpc":"2.0","method":"initialize","params":{}}', "initialize"),
        ):
            ch2 = channel(wire)
            with pytest.raises(ChannelClosedError) as closed:
                await ch2.send(message)
            assert (
                str(closed.value)
                == f"the server refused {what}: the first message must be the initialize request"
            )
        ch3 = channel(wire)
        with pytest.raises(
            ChannelClosedError, match="^the server refused a response: the first"
        ):
            await ch3.send(b'{"jsonrpc":"2.0","id":1,"result":{}}')
        ch4 = channel(wire)
        with pytest.raises(
            ChannelClosedError, match="^the server refused a message: the first"
        ):
            await ch4.send(b"[1]")
        with pytest.raises(
            ChannelClosedError, match="^the server refused a message: the first"
        ):
            await channel(wire).send(b"{oops")
        assert wire.posts == []
        await ch.send(INIT)  # then initialize
        assert await ch.receive() == INIT_ANSWER and ch.cid == "c-1"
        await ch.aclose()

    go(main())


@pytest.mark.parametrize("status", [401, 503])
def test_initialize_refused_is_the_servers_refusal(status: int) -> None:
    async def main() -> None:
        from acpgen.runtime._remote import RefusedError

        wire = FakeWire(answer(status, b"  go away \nmore", set_cookies=("lb=x",)))
        ch = channel(wire)
        with pytest.raises(RefusedError) as refused:
            await ch.send(INIT)
        assert refused.value.status == status and refused.value.reason == "go away "
        assert (
            str(refused.value)
            == f"{URL} refused the connection: HTTP {status}: go away "
        )
        assert refused.value.__cause__.status == status
        assert ch.cid is None and ch.info.cookies == {"lb": "x"} and wire.gets == []
        await ch.aclose()
        assert wire.deletes == [] and wire.closes == 1

    go(main())


def test_initialize_answered_without_a_connection_id_is_refused() -> None:
    async def main() -> None:
        from acpgen.runtime._remote import RefusedError

        for headers in ({}, {"acp-connection-id": ""}):
            wire = FakeWire(answer(200, INIT_ANSWER, headers))
            ch = channel(wire)
            with pytest.raises(RefusedError) as refused:
                await ch.send(INIT)
            assert refused.value.status == 200
            assert (
                refused.value.reason
                == "no Acp-Connection-Id header in the answer to initialize"
            )
            assert ch.cid is None and ch.info.connection_id == ""

    go(main())


def test_initialize_whose_connection_stream_is_refused_or_fails() -> None:
    async def main() -> None:
        wire = FakeWire(initialized())
        wire.streams[None] = [Stream(410, b"gone\n")]
        ch = channel(wire)
        with pytest.raises(ChannelClosedError) as closed:
            await ch.send(INIT)
        assert (
            str(closed.value)
            == "the connection's event stream was refused: HTTP 410: gone"
        )
        assert ch.cid == "c-1"
        await ch.aclose()
        assert wire.deletes == [(URL, {"acp-connection-id": "c-1"})]
        # the stream fails before its status: the failure says so
        wire = FakeWire(initialized())

        class Failing(FakeWire):
            def stream(self, url: str, headers: Any, session: str | None) -> Any:
                raise WireFailure("reset")

        wire = Failing(initialized())
        ch = channel(wire)
        with pytest.raises(ChannelClosedError) as closed:
            await ch.send(INIT)
        assert (
            str(closed.value)
            == "the connection's event stream failed: WireFailure('reset')"
        )
        await ch.aclose()

    go(main())


def test_initialize_that_fails_on_the_way_closes_with_the_failure() -> None:
    async def main() -> None:
        wire = FakeWire(WireFailure("refused"))
        ch = channel(wire)
        with pytest.raises(ChannelClosedError) as closed:
            await ch.send(INIT)
        assert str(closed.value) == "initialize failed: WireFailure('refused')"
        # another error is not the wire's: raised as it is
        wire = FakeWire(KeyError("bug"))
        with pytest.raises(KeyError):
            await channel(wire).send(INIT)

    go(main())


def test_a_refused_request_gets_an_error_answer_and_the_connection_goes_on() -> None:
    async def main() -> None:
        body = "too large\n" + "x" * 9000
        wire = FakeWire(initialized(), answer(413, body.encode()), answer(202))
        ch = channel(wire)
        await ch.send(INIT)
        assert await ch.receive() == INIT_ANSWER
        await ch.send(
            b'{"jsonrpc":"2.0","id":"q","method":"session/prompt","params":{}}'
        )
        error = frame(await ch.receive())
        assert error["id"] == "q" and error["jsonrpc"] == "2.0"
        assert error["error"]["code"] == -32603
        assert (
            error["error"]["message"]
            == "the server refused the request: HTTP 413: too large"
        )
        assert error["error"]["data"] == {"status": 413, "body": body[:8192]}
        await ch.send(
            b'{"jsonrpc":"2.0","id":"r","method":"session/prompt","params":{}}'
        )
        assert len(wire.posts) == 3
        await ch.aclose()

    go(main())


@pytest.mark.parametrize("status", [401, 403, 404, 410])
def test_a_request_refused_with_a_gone_status_closes_the_connection(
    status: int,
) -> None:
    async def main() -> None:
        wire = FakeWire(initialized(), answer(status, b"no such connection"))
        ch = channel(wire)
        await ch.send(INIT)
        with pytest.raises(ChannelClosedError) as closed:
            await ch.send(
                b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}'
            )
        assert (
            str(closed.value)
            == f"the server refused session/new: HTTP {status}: no such connection"
        )
        await ch.aclose()

    go(main())


def test_a_notification_or_response_refused_closes_the_connection() -> None:
    async def main() -> None:
        wire = FakeWire(initialized(), answer(500, b"oops"))
        ch = channel(wire)
        await ch.send(INIT)
        with pytest.raises(
            ChannelClosedError,
            match="^the server refused session/cancel: HTTP 500: oops$",
        ):
            await ch.send(b'{"jsonrpc":"2.0","method":"session/cancel","params":{}}')
        await ch.aclose()
        wire = FakeWire(initialized(), answer(500, b"oops"))
        ch = channel(wire)
        await ch.send(INIT)
        with pytest.raises(
            ChannelClosedError, match="^the server refused a response: HTTP 500: oops$"
        ):
            await ch.send(b'{"jsonrpc":"2.0","id":1,"result":{}}')
        await ch.aclose()

    go(main())


def test_a_post_that_fails_on_the_way_closes_the_connection() -> None:
    async def main() -> None:
        wire = FakeWire(initialized(), WireFailure("reset"))
        ch = channel(wire)
        await ch.send(INIT)
        with pytest.raises(ChannelClosedError) as closed:
            await ch.send(b'{"jsonrpc":"2.0","method":"n","params":{}}')
        assert str(closed.value) == f"posting to {URL} failed: WireFailure('reset')"
        assert isinstance(closed.value.__cause__, WireFailure)
        await ch.aclose()

    go(main())


def test_a_session_stream_refused_fails_that_message() -> None:
    async def main() -> None:
        wire = FakeWire(initialized(), answer(202))
        wire.streams["s1"] = [Stream(429, b"slow down"), Stream(404, b"gone")]
        ch = channel(wire)
        await ch.send(INIT)
        assert await ch.receive() == INIT_ANSWER
        await ch.send(
            b'{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s1"}}'
        )
        error = frame(await ch.receive())
        assert (
            error["error"]["message"]
            == "the server refused the request: HTTP 429: slow down"
        )
        assert len(wire.posts) == 1  # not posted
        # opened again for the next message; refused as gone: the connection closes
        with pytest.raises(
            ChannelClosedError,
            match="^the server refused session/prompt: HTTP 404: gone$",
        ):
            await ch.send(
                b'{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1"}}'
            )
        assert [g[2] for g in wire.gets] == [None, "s1", "s1"]
        await ch.aclose()

    go(main())


def test_the_connection_stream_failing_closes_the_connection_with_the_failure() -> None:
    async def main() -> None:
        wire = FakeWire(initialized())
        ch = channel(wire)
        await ch.send(INIT)
        wire.given[None][0].feed("one", WireFailure("cut"))
        assert await ch.receive() == INIT_ANSWER
        assert await ch.receive() == b"one"
        with pytest.raises(
            ChannelClosedError, match="^the connection's event stream failed: cut$"
        ):
            await ch.receive()
        await ch.aclose()

    go(main())


def test_a_session_stream_that_ends_is_opened_again_with_pauses_that_double(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from acpgen.runtime import _http_client

    pauses: list[float] = []
    sleep = asyncio.sleep

    async def noted(delay: float, result: Any = None) -> Any:
        pauses.append(delay)
        return await sleep(0, result)

    async def main() -> None:
        wire = FakeWire(initialized(), answer(202))
        ch = channel(wire)
        await ch.send(INIT)
        assert await ch.receive() == INIT_ANSWER
        await ch.send(
            b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}'
        )
        monkeypatch.setattr(_http_client.asyncio, "sleep", noted)
        # it ends 8 times without an event
        for n in range(8):
            wire.given["s1"][n].feed(None)
            while len(wire.given["s1"]) < n + 2:
                await sleep(0)
        assert pauses == [0.0, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0]
        assert _http_client.REOPEN_FIRST == 0.1 and _http_client.REOPEN_MAX == 5.0
        # an event: the count starts over
        pauses.clear()
        wire.given["s1"][8].feed(
            '{"jsonrpc":"2.0","method":"n","params":{"sessionId":"s1"}}', None
        )
        assert frame(await ch.receive())["method"] == "n"
        while len(wire.given["s1"]) < 10:
            await sleep(0)
        assert pauses == [0.0]
        # it fails once open: opened again too
        wire.given["s1"][9].feed(WireFailure("cut"))
        while len(wire.given["s1"]) < 11:
            await sleep(0)
        assert pauses == [0.0, 0.1]
        # refused when opened again with a status that is not "gone": tried again
        wire.streams["s1"] = [Stream(503, b"busy"), Stream(404, b"gone")]
        wire.given["s1"][10].feed(None)
        while not ch._ended:
            await sleep(0)
        assert pauses == [0.0, 0.1, 0.2, 0.4]
        with pytest.raises(
            ChannelClosedError,
            match="^session s1's event stream was refused: HTTP 404: gone$",
        ):
            await ch.receive()
        assert len(wire.given["s1"]) == 13 and len(wire.given[None]) == 1
        await ch.aclose()

    go(main())


def test_a_session_stream_is_not_opened_again_once_the_connection_ends() -> None:
    async def main() -> None:
        wire = FakeWire(initialized(), answer(202))
        ch = channel(wire)
        await ch.send(INIT)
        await ch.send(
            b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}'
        )
        wire.given[None][0].feed(
            None
        )  # the connection's stream ends: the connection ends
        assert await ch.receive() == INIT_ANSWER
        with pytest.raises(ChannelClosedError):
            await ch.receive()
        wire.given["s1"][0].feed(None)
        await settle()
        assert len(wire.given["s1"]) == 1
        wire2 = FakeWire(initialized(), answer(202))
        ch2 = channel(wire2)
        await ch2.send(INIT)
        await ch2.send(
            b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}'
        )
        wire2.given["s1"][0].feed(WireFailure("cut"))
        wire2.given[None][0].feed(WireFailure("down"))
        await settle()
        await ch2.aclose()
        await settle()
        assert len(wire2.given["s1"]) <= 2
        await ch.aclose()

    go(main())


def test_a_session_stream_failing_after_the_connection_ends_is_not_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> None:
        wire = FakeWire(initialized(), answer(202))
        ch = channel(wire)
        await ch.send(INIT)
        await ch.send(
            b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}'
        )
        with caplog.at_level("WARNING", logger="acpgen.runtime._http_client"):
            wire.given["s1"][0].feed(WireFailure("cut"))
            while len(wire.given["s1"]) < 2:
                await asyncio.sleep(0)
            assert [r.getMessage() for r in caplog.records] == [
                "session s1's event stream failed: cut"
            ]
            caplog.clear()
            wire.given[None][0].feed(None)
            while not ch._ended:
                await asyncio.sleep(0)
            wire.given["s1"][1].feed(WireFailure("cut"))
            await settle()
            assert caplog.records == [] and len(wire.given["s1"]) == 2
        await ch.aclose()

    go(main())


def test_a_full_queue_holds_the_streams_back() -> None:
    async def main() -> None:
        wire = FakeWire(initialized())
        ch = channel(wire, max_queued=2)
        assert ch.max_queued == 2
        await ch.send(INIT)
        stream = wire.given[None][0]
        stream.feed(*[f"m{n}" for n in range(6)])
        await settle()
        assert ch.high == 2  # the answer to initialize and one read; one more waits
        assert stream.queue.qsize() == 4
        got = [await ch.receive() for _ in range(7)]
        assert got == [INIT_ANSWER] + [f"m{n}".encode() for n in range(6)]
        await ch.aclose()

    go(main())


def test_close_deletes_the_connection_and_ends_everything() -> None:
    async def main() -> None:
        wire = FakeWire(initialized("c-2"), answer(202, set_cookies=("lb=b",)))
        ch = channel(wire, headers={"authorization": "Bearer t"})
        await ch.send(INIT)
        await ch.send(
            b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}'
        )
        assert ch.cid == "c-2"
        await ch.aclose()
        assert wire.deletes == [
            (
                URL,
                {
                    "authorization": "Bearer t",
                    "acp-connection-id": "c-2",
                    "cookie": "lb=b",
                },
            )
        ]
        assert wire.closes == 1
        assert all(s.exited for streams in wire.given.values() for s in streams)
        assert await ch.receive() == INIT_ANSWER
        assert await ch.receive() is None  # closed here: no reason
        with pytest.raises(ChannelClosedError, match="^the connection is closed$"):
            await ch.send(b"{}")
        await ch.aclose()  # once only
        assert wire.closes == 1 and len(wire.deletes) == 1

    go(main())


def test_close_is_bounded_and_survives_a_failing_delete(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from acpgen.runtime import _http_client

    async def main() -> None:
        monkeypatch.setattr(_http_client, "DELETE_TIMEOUT", 0.05)
        wire = FakeWire(initialized())
        wire.delete_hangs = True
        ch = channel(wire)
        await ch.send(INIT)
        await asyncio.wait_for(ch.aclose(), 5)
        assert wire.closes == 1
        wire = FakeWire(initialized())
        wire.delete_fails = WireFailure("reset")
        ch = channel(wire)
        await ch.send(INIT)
        await ch.aclose()
        assert wire.closes == 1
        wire = FakeWire(initialized())
        wire.delete_fails = KeyError("bug")
        ch = channel(wire)
        await ch.send(INIT)
        with pytest.raises(KeyError):
            await ch.aclose()
        assert wire.closes == 1  # closed all the same
        # never initialized: nothing to delete
        wire = FakeWire(initialized())
        await channel(wire).aclose()
        assert wire.deletes == [] and wire.closes == 1
        assert _http_client.DELETE_TIMEOUT == 0.05

    go(main())


def test_a_cancelled_sender_leaves_its_post_whole() -> None:
    async def main() -> None:
        gate = asyncio.Event()
        posted: list[bytes] = []

        class Slow(FakeWire):
            async def post(self, url: str, body: bytes, headers: Any) -> Any:
                if posted or b"initialize" not in body:
                    await gate.wait()
                posted.append(body)
                return await super().post(url, body, headers)

        wire = Slow(initialized(), answer(202))
        ch = channel(wire)
        await ch.send(INIT)
        first = asyncio.ensure_future(
            ch.send(b'{"jsonrpc":"2.0","method":"a","params":{}}')
        )
        await settle()
        first.cancel()
        second = asyncio.ensure_future(
            ch.send(b'{"jsonrpc":"2.0","method":"b","params":{}}')
        )
        await settle()
        gate.set()
        await second
        assert [p[1] for p in wire.posts][1:] == [
            b'{"jsonrpc":"2.0","method":"a","params":{}}',
            b'{"jsonrpc":"2.0","method":"b","params":{}}',
        ]
        await ch.aclose()

    go(main())


class Made:
    """A wire ``connect_http`` made: the arguments it was given."""

    failures = (WireFailure,)

    def __init__(self, *args: Any) -> None:
        self.args = args
        self.closes = 0

    async def aclose(self) -> None:
        self.closes += 1


class OverRpc:
    """An RPC whose ``over`` records what it was given (or fails with ``fails``)."""

    def __init__(self, fails: BaseException | None = None) -> None:
        self.fails = fails
        self.given: list[tuple[Any, ...]] = []

    def over(self, side: str, channel: Any, **options: Any) -> Any:
        self.given.append((side, channel, options))
        if self.fails is not None:
            raise self.fails

        class Conn:
            remote: Any = None

        return Conn()


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[Made]:
    from acpgen.runtime import _curl_wire, _http_client

    wires: list[Made] = []

    def make(kind: str) -> Any:
        def new(*args: Any) -> Made:
            wire = Made(kind, *args)
            wires.append(wire)
            return wire

        return new

    monkeypatch.setattr(_http_client, "AiohttpWire", make("aiohttp"))
    monkeypatch.setattr(_curl_wire, "CurlWire", make("curl"))
    return wires


def test_connect_http_makes_the_channel_over_the_wire_asked_for(
    made: list[Made],
) -> None:
    from acpgen.runtime._http_client import HttpClientChannel, connect_http

    async def main() -> None:
        rpc = OverRpc()
        headers, cookies = {"authorization": "Bearer t"}, {"lb": "a"}
        conn = await connect_http(rpc, URL, headers=headers, cookies=cookies)  # type: ignore[arg-type]
        ((side, ch, options),) = rpc.given
        assert side == "client" and options == {} and isinstance(ch, HttpClientChannel)
        assert made[0].args == ("aiohttp", 10.0, 60.0, 60.0) and ch.wire is made[0]
        assert ch.url == URL and ch.max_queued == 256
        assert conn.remote is ch.info
        assert (
            ch.info.url,
            ch.info.connection_id,
            ch.info.headers,
            ch.info.cookies,
        ) == (URL, "", headers, cookies)
        assert ch.info.headers is not headers and ch.info.cookies is not cookies
        rpc = OverRpc()
        conn = await connect_http(
            rpc,  # type: ignore[arg-type]
            "HTTPS://agent.test/acp",
            side="agent",
            http2=True,
            open_timeout=1.5,
            post_timeout=0.5,
            stream_timeout=None,
            max_queued=1,
            max_in_flight=7,
        )
        ((side, ch, options),) = rpc.given
        assert (
            side == "agent" and options == {"max_in_flight": 7} and ch.max_queued == 1
        )
        assert made[1].args == ("curl", 1.5, 0.5, True, None)
        assert (ch.info.headers, ch.info.cookies) == ({}, {})
        await connect_http(OverRpc(), URL, http2=True, stream_timeout=0.5)  # type: ignore[arg-type]
        assert made[2].args == ("curl", 10.0, 60.0, False, 0.5)
        assert all(wire.closes == 0 for wire in made)

    go(main())


def test_connect_http_checks_its_options_and_closes_the_wire_on_failure(
    made: list[Made],
) -> None:
    from acpgen.runtime._http_client import connect_http

    async def main() -> None:
        for bad in ({"max_queued": 0}, {"post_timeout": 0}, {"post_timeout": -1.0}):
            with pytest.raises(ValueError) as refused:
                await connect_http(OverRpc(), URL, **bad)  # type: ignore[arg-type]
            assert str(refused.value) == "max_queued must be >= 1 and post_timeout > 0"
        for stream_timeout in (0, -1.0):
            with pytest.raises(ValueError) as refused:
                await connect_http(OverRpc(), URL, stream_timeout=stream_timeout)  # type: ignore[arg-type]
            assert str(refused.value) == "stream_timeout must be > 0 (or None)"
        with pytest.raises(TypeError, match="nonsense"):
            await connect_http(OverRpc(), URL, nonsense=1)  # type: ignore[arg-type]
        assert made == []
        with pytest.raises(KeyError):
            await connect_http(OverRpc(KeyError("bad")), URL)  # type: ignore[arg-type]
        assert made[0].closes == 1

    go(main())


def test_a_session_stream_is_opened_once_and_each_message_waits_for_its_status() -> (
    None
):
    async def main() -> None:
        wire = FakeWire(initialized(), answer(202))
        late = Stream(set_cookies=("s=1",))
        late.gate = asyncio.Event()
        wire.streams["s7"] = [late]
        ch = channel(wire)
        await ch.send(INIT)
        assert await ch.receive() == INIT_ANSWER
        # a result names s7: its stream is opening, its status late
        wire.given[None][0].feed('{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s7"}}')
        await ch.receive()
        await settle()
        sending = asyncio.ensure_future(
            ch.send(
                b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s7"}}'
            )
        )
        await settle()
        assert len(wire.posts) == 1 and not sending.done()  # it waits for the status
        late.gate.set()
        await asyncio.wait_for(sending, 5)
        assert len(wire.posts) == 2 and ch.info.cookies == {"s": "1"}
        for _ in range(3):
            await ch.send(
                b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s7"}}'
            )
        await ch.send(
            b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s8"}}'
        )
        assert [g[2] for g in wire.gets] == [None, "s7", "s8"]
        assert wire.posts[-1][2]["acp-session-id"] == "s8"
        await ch.aclose()

    go(main())


def test_a_message_waiting_for_a_stream_closed_meanwhile_fails() -> None:
    async def main() -> None:
        wire = FakeWire(initialized(), answer(202))
        late = Stream()
        late.gate = asyncio.Event()
        wire.streams["s1"] = [late]
        ch = channel(wire)
        await ch.send(INIT)
        sending = asyncio.ensure_future(
            ch.send(
                b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}'
            )
        )
        after = asyncio.ensure_future(
            ch.send(b'{"jsonrpc":"2.0","method":"later","params":{}}')
        )
        await settle()
        await ch.aclose()
        with pytest.raises(ChannelClosedError) as closed:
            await asyncio.wait_for(sending, 5)
        assert str(closed.value) == "session s1's event stream was closed"
        with pytest.raises(ChannelClosedError) as closed:
            await asyncio.wait_for(after, 5)
        assert str(closed.value) == "the connection is closed"
        assert len(wire.posts) == 1

    go(main())


def test_a_message_waiting_for_the_post_before_it_fails_with_the_reason_of_the_end() -> (
    None
):
    async def main() -> None:
        gate = asyncio.Event()

        class Slow(FakeWire):
            async def post(self, url: str, body: bytes, headers: Any) -> Any:
                if b"initialize" not in body:
                    await gate.wait()
                return await super().post(url, body, headers)

        wire = Slow(initialized(), answer(202))
        ch = channel(wire)
        await ch.send(INIT)
        first = asyncio.ensure_future(
            ch.send(b'{"jsonrpc":"2.0","method":"a","params":{}}')
        )
        second = asyncio.ensure_future(
            ch.send(b'{"jsonrpc":"2.0","method":"b","params":{}}')
        )
        await settle()
        wire.given[None][0].feed(None)  # the connection's stream ends meanwhile
        await settle()
        gate.set()
        await asyncio.wait_for(first, 5)
        with pytest.raises(ChannelClosedError) as closed:
            await asyncio.wait_for(second, 5)
        assert str(closed.value) == "the server ended the connection's event stream"
        await ch.aclose()

    go(main())


def test_connect_http_names_the_packages_each_version_needs(
    made: list[Made], monkeypatch: pytest.MonkeyPatch
) -> None:
    from acpgen.runtime import _http_client

    needed: list[tuple[str, str]] = []
    monkeypatch.setattr(
        _http_client, "need", lambda package, part: needed.append((package, part))
    )

    async def main() -> None:
        await _http_client.connect_http(OverRpc(), URL)  # type: ignore[arg-type]
        assert needed == [("httpx_sse", "http"), ("aiohttp", "http")]
        needed.clear()
        await _http_client.connect_http(OverRpc(), URL, http2=True)  # type: ignore[arg-type]
        assert needed == [("httpx_sse", "http2-client"), ("curl_cffi", "http2-client")]

    go(main())


def test_a_session_stream_that_fails_before_its_status_is_opened_again() -> None:
    async def main() -> None:
        wire = FakeWire(initialized(), answer(202))
        ch = channel(wire)
        await ch.send(INIT)
        assert await ch.receive() == INIT_ANSWER
        await ch.send(
            b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}'
        )
        failing = Stream()
        failing.fails = WireFailure("reset")
        wire.streams["s1"] = [failing]
        wire.given["s1"][0].feed(None)  # it ends; opened again, that fails; again
        while len(wire.given["s1"]) < 3:
            await asyncio.sleep(0.01)
        assert [g[2] for g in wire.gets] == [None, "s1", "s1", "s1"]
        assert len(wire.given[None]) == 1
        await ch.aclose()

    go(main())


def test_what_a_session_stream_brings_is_noted_by_its_session() -> None:
    async def main() -> None:
        wire = FakeWire(initialized(), answer(202))
        ch = channel(wire)
        await ch.send(INIT)
        assert await ch.receive() == INIT_ANSWER
        await ch.send(
            b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}'
        )
        stream = wire.given["s1"][0]
        # a request naming no session in its text: its answer still names the stream's
        stream.feed(
            '{"jsonrpc":"2.0","id":"r2","method":"fs/read_text_file","params":{"path":"/x"}}'
        )
        assert frame(await ch.receive())["id"] == "r2"
        # a notification with an "id" inside: passed on, nothing noted
        note = '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"id":1}}}'
        stream.feed(note)
        assert await ch.receive() == note.encode()
        await ch.send(b'{"jsonrpc":"2.0","id":"r2","result":{"content":""}}')
        assert wire.posts[-1][2]["acp-session-id"] == "s1"
        await ch.send(b'{"jsonrpc":"2.0","id":1,"result":{}}')
        assert "acp-session-id" not in wire.posts[-1][2]
        assert len(wire.given["s1"]) == 1  # the stream was not broken
        await ch.aclose()

    go(main())


def test_a_session_a_result_names_whose_stream_is_refused_leaves_nothing_unread() -> (
    None
):
    async def main() -> None:
        wire = FakeWire(initialized())
        wire.streams["s9"] = [Stream(429, b"busy")]
        ch = channel(wire)
        await ch.send(INIT)
        assert await ch.receive() == INIT_ANSWER
        wire.given[None][0].feed('{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s9"}}')
        await ch.receive()
        while "s9" not in wire.given:
            await asyncio.sleep(0)
        await settle()
        assert ch._tasks == set()  # the opening is done and forgotten
        await ch.aclose()

    go(main())


def test_close_gives_the_streams_a_second_to_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    waits: list[Any] = []
    wait = asyncio.wait

    async def noted(tasks: Any, **kw: Any) -> Any:
        waits.append(kw)
        return await wait(tasks, **kw)

    async def main() -> None:
        wire = FakeWire(initialized())
        ch = channel(wire)
        await ch.send(INIT)
        monkeypatch.setattr(asyncio, "wait", noted)
        await ch.aclose()
        assert waits == [{"timeout": 1.0}]

    go(main())
