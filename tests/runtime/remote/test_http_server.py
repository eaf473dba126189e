"""The Streamable HTTP server's parts in process, without a socket: the channel's
routing of the agent's messages to streams, the endpoint's answers to requests (a
stand-in request object, the answer the app would send), and what a subscription gives
back when it ends. The same rules seen over a real server are in ``test_http_status.py``.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from types import ModuleType, SimpleNamespace
from typing import Any, AsyncIterator

import pytest

from .harness import pauses_noted
from .http_peers import Record, app_for, bindings

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 1},
}
NEW = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "session/new",
    "params": {"cwd": "/", "mcpServers": []},
}


@pytest.fixture(scope="module")
def v1(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return bindings(tmp_path_factory)


@pytest.fixture(scope="module")
def hs(v1: ModuleType) -> ModuleType:
    return importlib.import_module(f"{v1.__package__}._http_server")


def run(coro: Any, timeout: float = 30) -> Any:
    return asyncio.run(asyncio.wait_for(coro, timeout))


def dumps(message: Any) -> bytes:
    return json.dumps(message).encode()


class Request:
    """What the endpoint reads of a Starlette request: its method, headers, the body in
    ``chunks``, the path."""

    def __init__(
        self, method: str, headers: dict[str, str] | None = None, *chunks: bytes
    ) -> None:
        self.method = method
        self.headers = headers or {}
        self.chunks = chunks
        self.url = SimpleNamespace(path="/acp")
        self.read = 0

    async def stream(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            self.read += 1
            yield chunk


def held(stream: Any) -> list[Any]:
    return [json.loads(item) for item in stream.box.items]


async def answer(server: Any, request: Request) -> tuple[int, str, Any]:
    """(status, body text, the response) the endpoint gives ``request``."""
    response = await server._http_endpoint(request)
    return response.status_code, bytes(response.body).decode(), response


async def opened(server: Any, **headers: str) -> str:
    status, body, response = await answer(
        server,
        Request("POST", {"Content-Type": "application/json", **headers}, dumps(INIT)),
    )
    assert status == 200, body
    assert json.loads(body)["id"] == 0 and "result" in json.loads(body)
    assert response.media_type == "application/json"
    return str(response.headers["acp-connection-id"])


def post(cid: str, message: Any, **headers: str) -> Request:
    body = message if isinstance(message, bytes) else dumps(message)
    return Request(
        "POST",
        {"Content-Type": "application/json", "Acp-Connection-Id": cid, **headers},
        body,
    )


# -- the channel ---------------------------------------------------------------------


def test_the_agents_messages_go_to_the_stream_of_what_they_are_about(
    hs: ModuleType,
) -> None:
    async def main() -> None:
        channel = hs.HttpChannel(8)
        assert set(channel.streams) == {None} and channel.stream_queue == 8
        assert channel.streams[None].box.size == 8 and channel.inbox.size == 8
        # about a session the client has no stream for: the connection's stream
        ask = {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "session/request_permission",
            "params": {"sessionId": "s"},
        }
        await channel.send(dumps(ask))
        assert held(channel.streams[None]) == [ask] and set(channel.streams) == {None}
        # once the session has a stream (not known yet), there; and it is known now
        session = channel.stream("s", known=False)
        assert (
            not session.known
            and channel.stream("s", known=False) is session
            and not session.known
        )
        await channel.send(dumps(ask))
        assert held(session) == [ask] and session.known
        # a response goes where its request came from
        channel.note({"jsonrpc": "2.0", "id": "r", "method": "session/prompt"}, "s")
        channel.note({"jsonrpc": "2.0", "id": 7, "method": "session/prompt"}, None)
        channel.note(
            {"jsonrpc": "2.0", "method": "session/cancel"}, "s"
        )  # a notification
        channel.note({"jsonrpc": "2.0", "id": 8, "result": {}}, "s")  # not a request
        channel.note([{"id": 9, "method": "x"}], "s")
        assert channel.origins == {("str", "r"): "s", ("int", 7): None}
        await channel.send(
            dumps({"jsonrpc": "2.0", "id": "r", "result": {"stopReason": "end_turn"}})
        )
        await channel.send(dumps({"jsonrpc": "2.0", "id": 7, "result": {}}))
        assert (
            held(session)[-1]["id"] == "r"
            and held(channel.streams[None])[-1]["id"] == 7
        )
        assert channel.origins == {}
        # not JSON, a JSON list, a response to no request: the connection's stream
        await channel.send(b"not json")
        await channel.send(b"[1]")
        await channel.send(
            dumps({"jsonrpc": "2.0", "id": 99, "error": {"code": 1, "message": "m"}})
        )
        assert list(channel.streams[None].box.items)[-3:-1] == [b"not json", b"[1]"]
        assert json.loads(channel.streams[None].box.items[-1])["id"] == 99
        assert len(session.box.items) == 2

    run(main())


def test_a_result_naming_a_session_gives_it_a_stream(hs: ModuleType) -> None:
    async def main() -> None:
        channel = hs.HttpChannel(4)
        channel.note(NEW, None)
        await channel.send(
            dumps({"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "n"}})
        )
        assert set(channel.streams) == {None, "n"} and channel.streams["n"].known
        assert held(channel.streams[None])[0]["result"] == {"sessionId": "n"}
        update = {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "n"},
        }
        await channel.send(dumps(update))
        assert held(channel.streams["n"]) == [update]
        # a sessionId that is no string, or a result that is no object: no stream
        channel.note({**NEW, "id": 2}, None)
        channel.note({**NEW, "id": 3}, None)
        await channel.send(
            dumps({"jsonrpc": "2.0", "id": 2, "result": {"sessionId": 5}})
        )
        await channel.send(dumps({"jsonrpc": "2.0", "id": 3, "result": ["sessionId"]}))
        assert set(channel.streams) == {None, "n"}

    run(main())


def test_the_initialize_answer_is_given_to_its_post_not_to_a_stream(
    hs: ModuleType,
) -> None:
    async def main() -> None:
        channel = hs.HttpChannel(4)
        channel.origins[("int", 0)] = hs._INIT
        first = dumps({"jsonrpc": "2.0", "id": 0, "result": {"a": 1}})
        await channel.send(first)
        assert channel.initialized.result() == first
        assert not channel.streams[None].box.items and channel.origins == {}
        channel.origins[("int", 0)] = hs._INIT  # answered twice: the first stays
        await channel.send(dumps({"jsonrpc": "2.0", "id": 0, "result": {}}))
        assert (
            channel.initialized.result() == first
            and not channel.streams[None].box.items
        )

    run(main())


def test_an_ended_channel_takes_nothing_more(hs: ModuleType, v1: ModuleType) -> None:
    ChannelClosed = importlib.import_module(f"{v1.__package__}._channel").ChannelClosed
    Refused = importlib.import_module(f"{v1.__package__}._remote").Refused

    async def main() -> None:
        channel = hs.HttpChannel(4)
        await channel.deliver(b"one")
        assert await channel.receive() == b"one"
        session = channel.stream("s")
        await channel.streams[None].put(b"kept")
        channel.end()
        assert channel.ended.is_set() and channel.inbox.closed
        assert channel.streams[None].box.closed and session.box.closed
        assert channel.stream("late").box.closed  # a stream made after the end is ended
        with pytest.raises(ChannelClosed, match="^the connection is closed$"):
            await channel.send(b"{}")
        with pytest.raises(Refused) as refused:
            await channel.deliver(b"two")
        assert (refused.value.status, refused.value.reason) == (
            404,
            "the connection is closed",
        )
        assert await channel.receive() is None
        # what was held is still given, then the stream ends
        assert [event async for event in channel.streams[None].events()] == [
            {"data": "kept"}
        ]
        with pytest.raises(
            ChannelClosed, match="^the connection closed while a message waited$"
        ):
            await session.put(b"x")

    run(main())


def test_a_delivery_waiting_when_the_inbox_closes_is_refused(
    hs: ModuleType, v1: ModuleType
) -> None:
    Refused = importlib.import_module(f"{v1.__package__}._remote").Refused

    async def main() -> None:
        channel = hs.HttpChannel(1)
        await channel.deliver(b"one")
        waiting = asyncio.ensure_future(channel.deliver(b"two"))
        await asyncio.sleep(0.01)
        assert not waiting.done()
        channel.inbox.close()
        with pytest.raises(Refused) as refused:
            await waiting
        assert (refused.value.status, refused.value.reason) == (
            404,
            "the connection closed",
        )

    run(main())


def test_closing_before_initialize_was_answered(hs: ModuleType, v1: ModuleType) -> None:
    ChannelClosed = importlib.import_module(f"{v1.__package__}._channel").ChannelClosed

    async def main() -> None:
        channel = hs.HttpChannel(4)
        await channel.aclose()
        assert channel.ended.is_set() and channel.inbox.closed
        with pytest.raises(
            ChannelClosed,
            match="^the connection closed before initialize was answered$",
        ):
            channel.initialized.result()
        await channel.aclose()  # again: nothing more
        answered = hs.HttpChannel(4)
        answered.initialized.set_result(b"x")
        await answered.aclose()
        assert answered.initialized.result() == b"x" and answered.ended.is_set()

    run(main())


def test_events_are_the_messages_as_sse_data(hs: ModuleType) -> None:
    async def main() -> None:
        stream = hs.OutStream(3)
        assert stream.known and not stream.subscribed and stream.high == 0
        assert not hs.OutStream(3, known=False).known
        for item in (b'{"a":1}', "é".encode(), b"\xed\xa0\x80"):
            await stream.put(item)
        assert stream.high == 3
        waiting = asyncio.ensure_future(stream.put(b"4"))
        await asyncio.sleep(0.01)
        assert not waiting.done()  # full: the sender waits
        events = stream.events()
        assert await events.__anext__() == {"data": '{"a":1}'}
        await waiting
        stream.box.close()
        assert [event async for event in events] == [
            {"data": "é"},
            {"data": "\ud800"},
            {"data": "4"},
        ]
        assert stream.high == 3

    run(main())


def test_only_a_made_up_sessions_idle_empty_stream_is_forgotten(hs: ModuleType) -> None:
    async def main() -> None:
        channel = hs.HttpChannel(4)
        channel.forget(None)
        channel.forget("nothing")
        assert set(channel.streams) == {None}
        made_up = channel.stream("m", known=False)
        made_up.subscribed = True
        channel.forget("m")
        assert "m" in channel.streams
        made_up.subscribed = False
        await made_up.put(b"x")
        channel.forget("m")
        assert "m" in channel.streams
        await made_up.box.get()
        channel.forget("m")
        assert "m" not in channel.streams
        channel.stream("k")
        channel.forget("k")
        assert "k" in channel.streams
        # a message naming a session that has a stream makes it known
        channel.stream("n", known=False)
        channel.note({"jsonrpc": "2.0", "method": "session/cancel"}, "n")
        channel.forget("n")
        assert channel.streams["n"].known
        channel.stream("p", known=False)
        channel.stream("p")
        assert channel.streams["p"].known
        channel.note({"jsonrpc": "2.0", "method": "x"}, "absent")
        assert "absent" not in channel.streams
        channel.streams[None].known = False
        channel.forget(None)
        assert None in channel.streams

    run(main())


def test_a_subscription_gives_its_stream_up_however_it_ends(hs: ModuleType) -> None:
    async def main() -> None:
        channel = hs.HttpChannel(4)
        stream = channel.stream("m", known=False)
        stream.subscribed = True
        served = SimpleNamespace(streams=2, state=channel, touched=0)
        served.touch = lambda: setattr(served, "touched", served.touched + 1)
        seen: list[Any] = []

        async def response(scope: Any, receive: Any, send: Any) -> None:
            seen.append((scope, receive, send))
            raise OSError("gone")

        subscription = hs._Subscription(response, stream, served, "m")
        with pytest.raises(OSError):
            await subscription("scope", "receive", "send")
        assert seen == [("scope", "receive", "send")]
        assert not stream.subscribed and served.streams == 1 and served.touched == 1
        assert "m" not in channel.streams

    run(main())


# -- the endpoint ----------------------------------------------------------------------


def server_of(v1: ModuleType, **options: Any) -> Any:
    return app_for(v1, Record(), **options).state.acp


def test_initialize_opens_a_connection_and_answers_in_the_body(
    v1: ModuleType, hs: ModuleType
) -> None:
    async def main() -> None:
        server = server_of(v1)
        cid = await opened(server)
        served = server.connections[cid]
        assert served.kind == "http" and served.principal == "" and served.id == cid
        assert (
            isinstance(served.state, hs.HttpChannel) and served.state.initialized.done()
        )
        assert served.state.origins == {} and not served.state.streams[None].box.items
        assert (
            isinstance(server._http, hs.HttpEndpoint) and server._http.server is server
        )
        other = await opened(server, **{"Content-Type": "application/vnd.acp+json"})
        assert other != cid and set(server.connections) == {cid, other}
        assert await opened(
            server, **{"Content-Type": " Application/JSON ; charset=utf-8; v=1"}
        )
        await server.close()

    run(main())


def test_post_refusals_say_why(v1: ModuleType) -> None:
    async def main() -> None:
        server = server_of(v1, max_body=40)
        json_type = {"Content-Type": "application/json"}
        for headers, body, expected, text in [
            ({}, dumps(INIT), 415, "the body must be application/json"),
            (
                {"Content-Type": "text/plain"},
                dumps(INIT),
                415,
                "the body must be application/json",
            ),
            (
                {"Content-Type": "application/jsonx"},
                dumps(INIT),
                415,
                "the body must be application/json",
            ),
            (
                json_type,
                b' \n[{"jsonrpc":"2.0"}]',
                501,
                "JSON-RPC batches are not supported",
            ),
            (json_type, b"[]", 501, "JSON-RPC batches are not supported"),
            (
                json_type,
                b"{not json",
                400,
                "missing Acp-Connection-Id header (only initialize opens a connection)",
            ),
            (
                json_type,
                dumps(NEW)[:40],
                400,
                "missing Acp-Connection-Id header (only initialize opens a connection)",
            ),
            (
                json_type,
                b'{"method":"initialize"}',
                400,
                "missing Acp-Connection-Id header (only initialize opens a connection)",
            ),
            (
                json_type,
                b'{"id":0,"method":"initializ"}',
                400,
                "missing Acp-Connection-Id header (only initialize opens a connection)",
            ),
            (json_type, b'["initialize"]', 501, "JSON-RPC batches are not supported"),
            (
                json_type,
                b'"initialize"',
                400,
                "missing Acp-Connection-Id header (only initialize opens a connection)",
            ),
            (
                {**json_type, "Acp-Connection-Id": "nope"},
                dumps(INIT),
                404,
                "unknown Acp-Connection-Id",
            ),
        ]:
            status, body_text, response = await answer(
                server, Request("POST", headers, body)
            )
            assert (status, body_text) == (expected, text + "\n"), (headers, body)
            assert response.media_type == "text/plain"
        assert server.connections == {}

    run(main())


def test_a_body_is_read_up_to_the_limit_and_no_further(v1: ModuleType) -> None:
    async def main() -> None:
        server = server_of(v1, max_body=len(dumps(INIT)))
        json_type = {"Content-Type": "application/json"}
        at_limit = str(len(dumps(INIT)))
        cid = await opened(server, **{"Content-Length": at_limit})
        assert cid in server.connections
        over = str(len(dumps(INIT)) + 1)
        request = Request("POST", {**json_type, "Content-Length": over}, dumps(INIT))
        status, text, _ = await answer(server, request)
        assert (status, text) == (
            413,
            f"the body is over {at_limit} bytes\n",
        ) and request.read == 0
        # no length given (or not a number): decided while reading, reading no further
        body = dumps(INIT)
        request = Request(
            "POST",
            {**json_type, "Content-Length": "x"},
            body[:10],
            body[10:] + b" ",
            b"never",
        )
        status, text, _ = await answer(server, request)
        assert (status, text) == (
            413,
            f"the body is over {at_limit} bytes\n",
        ) and request.read == 2
        request = Request("POST", json_type, body[:10], body[10:])
        status, text, _ = await answer(server, request)
        assert status == 200 and request.read == 2
        await server.close()

    run(main())


def test_posts_to_a_connection(v1: ModuleType) -> None:
    async def main() -> None:
        server = server_of(v1)
        cid = await opened(server)
        served = server.connections[cid]
        channel = served.state
        served.last_seen = 0.0
        status, text, _ = await answer(server, post(cid, NEW))
        assert (status, text) == (202, "") and served.last_seen > 0
        (answered,) = [json.loads(await channel.streams[None].box.get())]
        sid = answered["result"]["sessionId"]
        assert channel.streams[sid].known
        # the session header and the params must agree
        cancel = {
            "jsonrpc": "2.0",
            "method": "session/cancel",
            "params": {"sessionId": sid},
        }
        status, text, _ = await answer(
            server, post(cid, cancel, **{"Acp-Session-Id": "other"})
        )
        assert (status, text) == (
            400,
            "Acp-Session-Id names another session than the params\n",
        )
        status, _, _ = await answer(
            server, post(cid, cancel, **{"Acp-Session-Id": sid})
        )
        assert status == 202
        status, _, _ = await answer(server, post(cid, cancel, **{"Acp-Session-Id": ""}))
        assert status == 202
        # a request with only the header: its answer goes to the session's stream
        load = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "session/load",
            "params": {"sessionId": sid, "cwd": "/", "mcpServers": []},
        }
        noted = {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "session/set_mode",
            "params": {"modeId": "m"},
        }
        status, _, _ = await answer(server, post(cid, noted, **{"Acp-Session-Id": sid}))
        assert status == 202
        status, _, _ = await answer(server, post(cid, load))
        assert status == 202
        got = sorted(
            [json.loads(await channel.streams[sid].box.get()) for _ in range(2)],
            key=lambda m: m["id"],
        )
        assert [m["id"] for m in got] == [3, 4]
        # not JSON, posted to a connection: a parse error on its stream
        status, _, _ = await answer(server, post(cid, b"{oops"))
        assert status == 202
        error = json.loads(await channel.streams[None].box.get())
        assert error["id"] is None and error["error"]["code"] == -32700
        # initialize again, to the connection: fed to it like any message
        status, _, _ = await answer(server, post(cid, {**INIT, "id": 9}))
        assert status == 202 and len(server.connections) == 1
        assert json.loads(await channel.streams[None].box.get())["id"] == 9
        await server.close()

    run(main())


def test_get_opens_a_stream_once(v1: ModuleType, hs: ModuleType) -> None:
    async def main() -> None:
        server = server_of(v1, max_streams=3, keepalive=7.5)
        cid = await opened(server)
        served = server.connections[cid]
        channel = served.state
        sse = {"Accept": "text/event-stream", "Acp-Connection-Id": cid}
        for headers, status, text in [
            ({"Acp-Connection-Id": cid}, 406, "GET needs Accept: text/event-stream"),
            (
                {**sse, "Accept": "application/json"},
                406,
                "GET needs Accept: text/event-stream",
            ),
            ({"Accept": "text/event-stream"}, 400, "missing Acp-Connection-Id header"),
            ({**sse, "Acp-Connection-Id": ""}, 400, "missing Acp-Connection-Id header"),
            ({**sse, "Acp-Connection-Id": "nope"}, 404, "unknown Acp-Connection-Id"),
        ]:
            got = await server._http_endpoint(Request("GET", headers))
            assert (got.status_code, bytes(got.body).decode()) == (
                status,
                text + "\n",
            ), headers
        served.last_seen = 0.0
        subscription = await server._http_endpoint(
            Request("GET", {**sse, "Accept": "application/json, text/event-stream"})
        )
        assert isinstance(subscription, hs._Subscription) and served.last_seen > 0
        assert (
            subscription.stream is channel.streams[None]
            and subscription.stream.subscribed
        )
        assert (
            subscription.served is served
            and subscription.session is None
            and served.streams == 1
        )
        response = subscription.response
        assert (
            response.headers["acp-connection-id"] == cid
            and "acp-session-id" not in response.headers
        )
        assert response.ping_interval == 7.5
        again = await server._http_endpoint(Request("GET", sse))
        assert (again.status_code, bytes(again.body).decode()) == (
            409,
            "this stream has a subscriber already\n",
        )
        assert served.streams == 1
        # a session's stream, made on demand, not known; then the limit
        session = await server._http_endpoint(
            Request("GET", {**sse, "Acp-Session-Id": "a"})
        )
        assert (
            session.session == "a"
            and session.stream is channel.streams["a"]
            and not session.stream.known
        )
        assert session.response.headers["acp-session-id"] == "a" and served.streams == 2
        channel.stream("b")
        refused = await server._http_endpoint(
            Request("GET", {**sse, "Acp-Session-Id": "c"})
        )
        assert (refused.status_code, bytes(refused.body).decode()) == (
            429,
            "the connection has 3 event streams (the limit)\n",
        )
        assert "c" not in channel.streams
        existing = await server._http_endpoint(
            Request("GET", {**sse, "Acp-Session-Id": "b"})
        )
        assert existing.stream is channel.streams["b"] and served.streams == 3
        await server.close()

    run(main())


def test_the_stream_limit_counts_the_streams_held(v1: ModuleType) -> None:
    async def main() -> None:
        server = server_of(v1, max_streams=2)
        cid = await opened(server)
        sse = {"Accept": "text/event-stream", "Acp-Connection-Id": cid}
        one = await server._http_endpoint(
            Request("GET", {**sse, "Acp-Session-Id": "a"})
        )
        assert one.session == "a"
        two = await server._http_endpoint(
            Request("GET", {**sse, "Acp-Session-Id": "b"})
        )
        assert two.status_code == 429
        await server.close()

    run(main())


def test_delete_closes_the_connection(v1: ModuleType) -> None:
    async def main() -> None:
        server = server_of(v1)
        cid = await opened(server)
        served = server.connections[cid]
        for headers, status, text in [
            ({}, 400, "missing Acp-Connection-Id header"),
            ({"Acp-Connection-Id": "nope"}, 404, "unknown Acp-Connection-Id"),
        ]:
            got = await server._http_endpoint(Request("DELETE", headers))
            assert (got.status_code, bytes(got.body).decode()) == (status, text + "\n")
        got = await server._http_endpoint(Request("DELETE", {"Acp-Connection-Id": cid}))
        assert (got.status_code, bytes(got.body)) == (202, b"")
        later = await server._http_endpoint(post(cid, NEW))
        assert later.status_code == 404
        await served.conn.closed
        assert cid not in server.connections
        assert served.conn.close_reason == "the client closed the connection (DELETE)"
        await asyncio.sleep(0)
        assert not server._http._tasks

    run(main())


def test_other_methods_and_failures_are_one_line(v1: ModuleType) -> None:
    async def main() -> None:
        server = server_of(v1)
        got = await server._http_endpoint(Request("PUT"))
        assert (got.status_code, bytes(got.body).decode()) == (
            405,
            "method PUT not allowed\n",
        )

        class Broken(Request):
            @property
            def headers(self) -> Any:
                raise RuntimeError("broken")

            @headers.setter
            def headers(self, value: Any) -> None:
                pass

        got = await server._http_endpoint(Broken("POST"))
        assert (got.status_code, bytes(got.body).decode()) == (
            500,
            "internal server error\n",
        )

    run(main())


HANG = {
    **INIT,
    "params": {"protocolVersion": 1, "clientInfo": {"name": "hang", "version": "1"}},
}


def opening(server: Any) -> list[Any]:
    """The connections ``server`` opens, noted as it opens them."""
    made: list[Any] = []
    open_ = server.open

    def noted(*args: Any, **kwargs: Any) -> Any:
        made.append(open_(*args, **kwargs))
        return made[-1]

    server.open = noted
    return made


def test_a_channel_ended_before_initialize_was_answered_is_503(v1: ModuleType) -> None:
    async def main() -> None:
        server = server_of(v1)
        made = opening(server)
        post = asyncio.ensure_future(
            server._http_endpoint(
                Request("POST", {"Content-Type": "application/json"}, dumps(HANG))
            )
        )
        while not made:
            await asyncio.sleep(0.01)
        await made[0].state.aclose()
        got = await post
        reason = "the connection closed before initialize was answered"
        assert (got.status_code, bytes(got.body).decode()) == (503, reason + "\n")
        assert server.connections == {}
        await asyncio.gather(*server._http._tasks)
        assert made[0].conn.is_closed

    run(main())


def test_an_initialize_not_answered_in_time_is_504_and_forgotten(
    v1: ModuleType,
) -> None:
    async def main() -> None:
        server = server_of(v1, init_timeout=0.2)
        made = opening(server)
        got = await server._http_endpoint(
            Request("POST", {"Content-Type": "application/json"}, dumps(HANG))
        )
        assert (got.status_code, bytes(got.body).decode()) == (
            504,
            "the agent did not answer initialize in time\n",
        )
        assert server.connections == {}
        (task,) = server._http._tasks
        await task
        await asyncio.sleep(0)
        assert not server._http._tasks
        assert made[0].conn.close_reason == "initialize not answered within 0.2 s"

    run(main())


def test_what_is_no_message_goes_to_the_connections_stream_even_with_a_session_named_empty(
    hs: ModuleType,
) -> None:
    async def main() -> None:
        channel = hs.HttpChannel(4)
        channel.note(NEW, None)
        await channel.send(
            dumps({"jsonrpc": "2.0", "id": 1, "result": {"sessionId": ""}})
        )
        assert "" in channel.streams
        await channel.send(b"not json")
        await channel.send(b'{"jsonrpc": "2.0"}')
        assert list(channel.streams[None].box.items)[1:] == [
            b"not json",
            b'{"jsonrpc": "2.0"}',
        ]
        assert not channel.streams[""].box.items

    run(main())


@pytest.mark.parametrize("module", ["starlette.responses", "sse_starlette.sse"])
def test_the_endpoint_says_what_to_install(
    v1: ModuleType, hs: ModuleType, module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = importlib.import_module(f"{v1.__package__}._remote")
    server = server_of(v1)
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(
        remote.RemoteDependencyError,
        match=r"^the ACP remote transport \(server\) needs",
    ):
        hs.HttpEndpoint(server)


def test_a_client_leaving_before_initialize_is_answered_closes_the_connection(
    v1: ModuleType,
) -> None:
    async def main() -> None:
        server = server_of(v1)
        made = opening(server)
        post = asyncio.ensure_future(
            server._http_endpoint(
                Request("POST", {"Content-Type": "application/json"}, dumps(HANG))
            )
        )
        while not made:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        post.cancel()
        with pytest.raises(asyncio.CancelledError):
            await post
        assert server.connections == {}
        await asyncio.gather(*server._http._tasks)
        assert (
            made[0].conn.close_reason
            == "the client left before initialize was answered"
        )

    run(main())


def test_delete_keeps_the_connection_registered_until_it_is_closed(
    v1: ModuleType, hs: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    pauses = pauses_noted(monkeypatch, hs)

    async def main() -> None:
        server = server_of(v1)
        cid = await opened(server)
        conn = server.connections[cid].conn
        release = asyncio.Event()
        close = conn.close

        async def slow_close(reason: str) -> None:
            await release.wait()
            await close(reason)

        conn.close = slow_close
        got = await server._http_endpoint(Request("DELETE", {"Acp-Connection-Id": cid}))
        assert got.status_code == 202 and pauses == [
            0
        ]  # one turn of the loop: the close has begun
        assert cid in server.connections
        release.set()
        await asyncio.gather(*server._http._tasks)
        for _ in range(100):
            if cid not in server.connections:
                break
            await asyncio.sleep(0.01)
        assert cid not in server.connections

    run(main())
