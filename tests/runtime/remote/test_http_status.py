"""The Streamable HTTP server answers every case of the transport RFD with its status,
seen with raw httpx against a real server (uvicorn on a loopback port): 400, 404, 406,
409, 413, 415, 501, 504, 202 for DELETE; the streams' rules (held messages for a late
subscriber, keepalive comments, a disconnect is not a close, idle connections closed)."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
from types import ModuleType
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import httpx
import httpx_sse
import pytest

from .harness import served
from .http_peers import Record, app_for, bindings

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
JSON = {"content-type": "application/json"}
SSE = {"accept": "text/event-stream"}


@pytest.fixture(scope="module")
def v1(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return bindings(tmp_path_factory)


def run(coro: Any, timeout: float = 30) -> Any:
    return asyncio.run(asyncio.wait_for(coro, timeout))


def runtime(v1: ModuleType, name: str) -> ModuleType:
    return importlib.import_module(f"{v1.__package__}.{name}")


async def initialize(http: httpx.AsyncClient, url: str, headers: dict[str, str] | None = None) -> str:
    response = await http.post(url, json=INIT, headers=headers or {})
    assert response.status_code == 200, response.text
    assert response.json()["id"] == 0 and "result" in response.json()
    return response.headers["acp-connection-id"]


def post(http: httpx.AsyncClient, url: str, cid: str, message: Any, **headers: str) -> Any:
    return http.post(url, json=message, headers={"acp-connection-id": cid, **headers})


async def events(http: httpx.AsyncClient, url: str, headers: dict[str, str], count: int) -> list[Any]:
    """The next ``count`` messages of a stream (opened here)."""
    got: list[Any] = []
    async with httpx_sse.aconnect_sse(http, "GET", url, headers={**SSE, **headers}) as source:
        assert source.response.status_code == 200
        async for event in source.aiter_sse():
            got.append(json.loads(event.data))
            if len(got) == count:
                break
    return got


@asynccontextmanager
async def endpoint(
    v1: ModuleType, record: Record | None = None, *, http2: bool = False, **options: Any
) -> AsyncIterator[tuple[Any, httpx.AsyncClient, str]]:
    """(the app, a raw client, the endpoint's URL) for a served app (``http2``: Hypercorn,
    and a client speaking HTTP/2 with prior knowledge)."""
    app = app_for(v1, record or Record(), **options)
    async with served(app, http2=http2) as base:
        timeout = httpx.Timeout(10.0, read=10.0)
        async with httpx.AsyncClient(timeout=timeout, http1=not http2, http2=http2) as http:
            yield app, http, base + "/acp"


def test_400_without_a_connection_id(v1: ModuleType) -> None:
    async def main() -> None:
        async with endpoint(v1) as (_, http, url):
            new = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
            response = await http.post(url, json=new)
            assert response.status_code == 400 and "Acp-Connection-Id" in response.text
            assert (await http.post(url, content=b"{not json", headers=JSON)).status_code == 400
            assert (await http.get(url, headers=SSE)).status_code == 400
            assert (await http.delete(url)).status_code == 400

    run(main())


def test_404_unknown_after_delete_and_another_principal(v1: ModuleType) -> None:
    """An unknown id is 404; DELETE is 202 and ends the open stream, then the id is 404 for
    every method; a connection named with another principal's credential is 404."""

    async def main() -> None:
        bearer = runtime(v1, "_remote").bearer({"t-alice": "alice", "t-bob": "bob"})
        async with endpoint(v1, authenticate=bearer) as (app, http, url):
            alice = {"authorization": "Bearer t-alice"}
            bob = {"authorization": "Bearer t-bob"}
            assert (await http.post(url, json=INIT)).status_code == 401
            cid = await initialize(http, url, alice)
            note = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "x"}}
            assert (await post(http, url, "nope", note, **alice)).status_code == 404
            assert (await post(http, url, cid, note, **bob)).status_code == 404
            assert (await http.get(url, headers={**SSE, **bob, "acp-connection-id": cid})).status_code == 404
            assert (await post(http, url, cid, note, **alice)).status_code == 202

            async def listen() -> str:
                async with http.stream("GET", url, headers={**SSE, **alice, "acp-connection-id": cid}) as stream:
                    assert stream.status_code == 200
                    async for _ in stream.aiter_bytes():
                        pass
                return "ended"

            listening = asyncio.ensure_future(listen())
            for _ in range(100):
                if app.state.acp.connections[cid].streams:
                    break
                await asyncio.sleep(0.01)
            assert (await http.delete(url, headers={**alice, "acp-connection-id": cid})).status_code == 202
            assert await asyncio.wait_for(listening, 5) == "ended"
            assert (await post(http, url, cid, note, **alice)).status_code == 404
            assert (await http.get(url, headers={**SSE, **alice, "acp-connection-id": cid})).status_code == 404
            assert (await http.delete(url, headers={**alice, "acp-connection-id": cid})).status_code == 404
            for _ in range(100):
                if not app.state.acp.connections:
                    break
                await asyncio.sleep(0.02)
            assert app.state.acp.connections == {}

    run(main())


def test_406_without_accept_event_stream(v1: ModuleType) -> None:
    async def main() -> None:
        async with endpoint(v1) as (_, http, url):
            cid = await initialize(http, url)
            response = await http.get(url, headers={"acp-connection-id": cid, "accept": "application/json"})
            assert response.status_code == 406

    run(main())


@pytest.mark.parametrize("http2", [False, True], ids=["http1.1", "http2"])
def test_409_second_subscriber_and_a_disconnect_is_not_a_close(v1: ModuleType, http2: bool) -> None:
    """A second GET on a stream with a subscriber is 409 (the connection's and a
    session's alike); once the first one disconnects, the connection is still there and
    the stream can be opened again."""

    async def main() -> None:
        async with endpoint(v1, http2=http2) as (app, http, url):
            cid = await initialize(http, url)
            for extra in ({}, {"acp-session-id": "s-1"}):
                headers = {**SSE, "acp-connection-id": cid, **extra}
                # the first subscriber on a client of its own, closed to disconnect: over
                # HTTP/2, httpx closing a response early does not reset its stream
                async with httpx.AsyncClient(http1=not http2, http2=http2) as other:
                    async with other.stream("GET", url, headers=headers) as first:
                        assert first.status_code == 200
                        assert (await http.get(url, headers=headers)).status_code == 409
                for _ in range(200):
                    if app.state.acp.connections[cid].streams == 0:
                        break
                    await asyncio.sleep(0.01)
                assert app.state.acp.connections[cid].streams == 0
                async with httpx.AsyncClient(http1=not http2, http2=http2) as other:
                    async with other.stream("GET", url, headers=headers) as again:
                        assert again.status_code == 200
                for _ in range(200):
                    if app.state.acp.connections[cid].streams == 0:
                        break
                    await asyncio.sleep(0.01)
            assert cid in app.state.acp.connections

    run(main())


def test_429_past_max_streams_and_made_up_sessions_are_not_held(v1: ModuleType) -> None:
    """A connection holds at most ``max_streams`` event streams: one more session's GET
    is 429 with its line. A stream opened for a session no message named is forgotten
    once its subscriber leaves, so opening streams for made-up sessions one after the
    other holds nothing; a session the agent named (``session/new``) keeps its stream."""

    async def main() -> None:
        record = Record()
        async with endpoint(v1, record, max_streams=4) as (app, http, url):
            cid = await initialize(http, url)
            channel = app.state.acp.connections[cid].state
            # the stream of the session the agent is about to make, opened first (as if
            # made up): the result naming it makes it known, and it stays
            sid = f"s-1-{id(record.agents[-1])}"
            early = {**SSE, "acp-connection-id": cid, "acp-session-id": sid}
            new = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
            async with httpx.AsyncClient() as other:
                async with other.stream("GET", url, headers=early) as opened:
                    assert opened.status_code == 200
                    assert (await post(http, url, cid, new)).status_code == 202
                    (answer,) = await events(http, url, {"acp-connection-id": cid}, 1)
                    assert answer["result"]["sessionId"] == sid
            for _ in range(100):
                if not channel.streams[sid].subscribed:
                    break
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.1)
            assert sid in channel.streams
            for n in range(50):  # one made-up session after the other: nothing held
                made_up = {**SSE, "acp-connection-id": cid, "acp-session-id": f"made-up-{n}"}
                async with httpx.AsyncClient() as other:
                    async with other.stream("GET", url, headers=made_up) as opened:
                        assert opened.status_code == 200
                for _ in range(200):
                    if f"made-up-{n}" not in channel.streams:
                        break
                    await asyncio.sleep(0.01)
            assert set(channel.streams) == {None, sid}
            async with contextlib.AsyncExitStack() as held:  # two at once fill the four
                for n in range(2):
                    other = await held.enter_async_context(httpx.AsyncClient())
                    headers = {**SSE, "acp-connection-id": cid, "acp-session-id": f"open-{n}"}
                    opened = await held.enter_async_context(other.stream("GET", url, headers=headers))
                    assert opened.status_code == 200
                one_more = {**SSE, "acp-connection-id": cid, "acp-session-id": "one-more"}
                refused = await http.get(url, headers=one_more)
                assert refused.status_code == 429
                assert refused.text.strip() == "the connection has 4 event streams (the limit)"
            assert sid in channel.streams  # the agent's own session is no made-up one

    run(main())


def test_413_body_over_the_limit(v1: ModuleType) -> None:
    """A body over max_body is 413, with a Content-Length and streamed without one."""

    async def main() -> None:
        async with endpoint(v1, max_body=4096) as (_, http, url):
            cid = await initialize(http, url)
            big = {"jsonrpc": "2.0", "method": "x", "params": {"pad": "p" * 5000}}
            assert (await post(http, url, cid, big)).status_code == 413

            async def chunks() -> AsyncIterator[bytes]:
                for _ in range(10):
                    yield b" " * 1000

            response = await http.post(url, content=chunks(), headers={**JSON, "acp-connection-id": cid})
            assert response.status_code == 413
            assert (await http.post(url, content=b" " * 5000, headers=JSON)).status_code == 413

    run(main())


def test_413_is_decided_while_reading(v1: ModuleType) -> None:
    """The body is read no further than the limit: the endpoint stops pulling chunks as
    soon as it is over (it never reads the whole body first)."""
    from starlette.requests import Request

    async def main() -> None:
        app = app_for(v1, Record(), max_body=4096)
        server = app.state.acp
        endpoint_mod = runtime(v1, "_http_server")
        pulled = 0

        async def receive() -> dict[str, Any]:
            nonlocal pulled
            pulled += 1
            return {"type": "http.request", "body": b" " * 1000, "more_body": pulled < 1000}

        scope = {
            "type": "http", "method": "POST", "path": "/acp", "headers": [(b"content-type", b"application/json")],
            "query_string": b"", "server": ("127.0.0.1", 80), "scheme": "http", "root_path": "",
        }  # fmt: skip
        refused = runtime(v1, "_remote").Refused
        with pytest.raises(refused) as caught:
            await endpoint_mod.HttpEndpoint(server).handle(Request(scope, receive))
        assert caught.value.status == 413
        assert pulled == 5

    run(main())


def test_415_not_json(v1: ModuleType) -> None:
    async def main() -> None:
        async with endpoint(v1) as (_, http, url):
            response = await http.post(url, content=json.dumps(INIT), headers={"content-type": "text/plain"})
            assert response.status_code == 415
            cid = await initialize(http, url)
            response = await http.post(url, content=b"{}", headers={"content-type": "text/plain", "acp-connection-id": cid})
            assert response.status_code == 415

    run(main())


def test_501_batch(v1: ModuleType) -> None:
    async def main() -> None:
        async with endpoint(v1) as (_, http, url):
            assert (await http.post(url, json=[INIT])).status_code == 501
            cid = await initialize(http, url)
            note = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "x"}}
            assert (await post(http, url, cid, [note, note])).status_code == 501

    run(main())


def test_504_hung_initialize_is_cleaned_up(v1: ModuleType) -> None:
    """An agent that does not answer initialize in init_timeout: 504, and the connection
    is closed and forgotten (the registry is empty, the agent's handler cancelled)."""

    async def main() -> None:
        record = Record()
        async with endpoint(v1, record, init_timeout=0.5) as (app, http, url):
            hung = {**INIT, "params": {"protocolVersion": 1, "clientInfo": {"name": "hang", "version": "1"}}}
            loop = asyncio.get_running_loop()
            began = loop.time()
            response = await http.post(url, json=hung)
            assert response.status_code == 504
            assert 0.4 < loop.time() - began < 3
            assert "acp-connection-id" not in response.headers
            assert app.state.acp.connections == {}
            await asyncio.wait_for(record.cancelled.wait(), 5)  # the agent's initialize was cancelled

    run(main())


def test_unparseable_json_is_answered_on_the_connection_stream(v1: ModuleType) -> None:
    """A body that is not JSON, posted to a connection, is answered as on stdio: 202, then
    a parse error with id null on the connection's stream."""

    async def main() -> None:
        async with endpoint(v1) as (_, http, url):
            cid = await initialize(http, url)
            response = await http.post(url, content=b"{oops", headers={**JSON, "acp-connection-id": cid})
            assert response.status_code == 202
            [answer] = await asyncio.wait_for(events(http, url, {"acp-connection-id": cid}, 1), 5)
            assert answer["id"] is None and answer["error"]["code"] == -32700

    run(main())


def test_late_session_stream_gets_what_was_held_in_order(v1: ModuleType) -> None:
    """A prompt posted before its session's stream is open: the updates are held, at most
    stream_queue of them (the agent's sends wait beyond), and the stream opened later gets
    them all and the answer, in order. The answer to session/new comes on the
    connection's stream."""

    async def main() -> None:
        async with endpoint(v1, stream_queue=4) as (app, http, url):
            cid = await initialize(http, url)
            new = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
            assert (await post(http, url, cid, new)).status_code == 202
            [created] = await asyncio.wait_for(events(http, url, {"acp-connection-id": cid}, 1), 5)
            sid = created["result"]["sessionId"]
            turn = {"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
                    "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "count 20"}]}}  # fmt: skip
            assert (await post(http, url, cid, turn, **{"acp-session-id": sid})).status_code == 202
            channel = app.state.acp.connections[cid].state
            for _ in range(100):
                if sid in channel.streams and len(channel.streams[sid].box.items) >= channel.streams[sid].box.size:
                    break
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.2)
            held = channel.streams[sid]
            assert len(held.box.items) == 4 and held.high == 4 and not held.subscribed
            got = await asyncio.wait_for(events(http, url, {"acp-connection-id": cid, "acp-session-id": sid}, 21), 5)
            texts = [m["params"]["update"]["content"]["text"] for m in got[:20]]
            assert texts == [f"{i} " for i in range(20)]
            assert got[20] == {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}}
            assert held.high == 4

    run(main())


def test_what_the_agent_says_about_a_new_session_waits_for_its_stream(v1: ModuleType) -> None:
    """An update the agent sends right after session/new, before the client opened the
    session's stream, is held for that stream (the client learnt the session from the
    result), not sent on the connection's stream."""

    async def main() -> None:
        async with endpoint(v1) as (_, http, url):
            cid = await initialize(http, url)
            new = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/greet", "mcpServers": []}}
            assert (await post(http, url, cid, new)).status_code == 202
            [created] = await asyncio.wait_for(events(http, url, {"acp-connection-id": cid}, 1), 5)
            sid = created["result"]["sessionId"]
            await asyncio.sleep(0.3)  # the update has been sent meanwhile
            [hello] = await asyncio.wait_for(events(http, url, {"acp-connection-id": cid, "acp-session-id": sid}, 1), 5)
            assert hello["params"]["update"]["content"]["text"] == "hello"

    run(main())


def test_session_header_must_match_the_params(v1: ModuleType) -> None:
    async def main() -> None:
        async with endpoint(v1) as (_, http, url):
            cid = await initialize(http, url)
            note = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "a"}}
            assert (await post(http, url, cid, note, **{"acp-session-id": "b"})).status_code == 400
            assert (await post(http, url, cid, note, **{"acp-session-id": "a"})).status_code == 202

    run(main())


def test_keepalive_comment_on_an_idle_stream(v1: ModuleType) -> None:
    async def main() -> None:
        async with endpoint(v1, keepalive=0.2) as (_, http, url):
            cid = await initialize(http, url)
            headers = {**SSE, "acp-connection-id": cid}
            async with http.stream("GET", url, headers=headers) as stream:
                assert stream.headers["content-type"].startswith("text/event-stream")
                async for line in stream.aiter_lines():
                    if line.startswith(":"):
                        break

    run(main(), timeout=10)


def test_idle_connection_closed_unless_a_stream_is_open(v1: ModuleType) -> None:
    """With no stream open and no request, a connection is closed after idle_timeout; an
    open stream keeps it, however long."""

    async def main() -> None:
        async with endpoint(v1, idle_timeout=0.4) as (app, http, url):
            kept = await initialize(http, url)
            dropped = await initialize(http, url)
            async with http.stream("GET", url, headers={**SSE, "acp-connection-id": kept}) as stream:
                assert stream.status_code == 200
                for _ in range(100):
                    if dropped not in app.state.acp.connections:
                        break
                    await asyncio.sleep(0.05)
                assert dropped not in app.state.acp.connections
                await asyncio.sleep(0.6)
                assert kept in app.state.acp.connections
            note = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "x"}}
            assert (await post(http, url, dropped, note)).status_code == 404

    run(main())
