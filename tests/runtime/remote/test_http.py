"""ACP over Streamable HTTP end to end: our client against our server, a real server on a
loopback port (uvicorn for HTTP/1.1, Hypercorn for HTTP/2 with prior knowledge), bindings
of the TypeScript SDK's schema. Every test is bounded in time."""

from __future__ import annotations

import asyncio
import importlib
from types import ModuleType
from typing import Any

import pytest

from .harness import served
from .http_peers import Record, Seen, app_for, bindings, client_class, new_session, package, prompt, run, start



@pytest.fixture(scope="module")
def v1(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return bindings(tmp_path_factory)


@pytest.mark.parametrize("http2", [False, True], ids=["http1.1", "http2"])
def test_a_thousand_updates_arrive_in_order(v1: ModuleType, http2: bool) -> None:
    """initialize, session/new, a prompt streaming 1,000 updates: all arrive, in order,
    before the prompt's answer; the connection id and the HTTP version are the ones
    expected; DELETE on close forgets the connection on the server."""

    async def main() -> None:
        record = Record()
        app = app_for(v1, record)
        seen = Seen(app)
        async with served(seen, http2=http2) as base:
            client = client_class(v1)()
            conn, agent = await start(v1, base + "/acp", client, http2=http2)
            assert conn.remote.connection_id in app.state.acp.connections
            session = await agent.session_new(new_session(v1))
            result = await agent.session_prompt(prompt(v1, session.session_id, "count 1000"))
            assert result.stop_reason == "end_turn"
            assert client.chunks[session.session_id] == [f"{i} " for i in range(1000)]
            assert seen.versions == {"2" if http2 else "1.1"}
            await conn.close()
            for _ in range(100):
                if not app.state.acp.connections:
                    break
                await asyncio.sleep(0.02)
            assert app.state.acp.connections == {}

    run(main())


def test_permission_round_trip_during_a_prompt(v1: ModuleType) -> None:
    """The agent's session/request_permission comes on the session's stream during the
    prompt; the client's answer is a POST naming the session; the turn goes on with it."""

    async def main() -> None:
        record = Record()
        seen = Seen(app_for(v1, record))
        async with served(seen) as base:
            client = client_class(v1)()
            conn, agent = await start(v1, base + "/acp", client)
            session = await agent.session_new(new_session(v1))
            sid = session.session_id
            result = await agent.session_prompt(prompt(v1, sid, "ask"))
            assert result.stop_reason == "end_turn"
            assert client.asked == [sid]
            assert client.chunks[sid] == ["chose yes"]
            answers = [h for m, h, body in seen.requests if m == "POST" and '"result"' in body]
            assert len(answers) == 1 and answers[0]["acp-session-id"] == sid
            await conn.close()

    run(main())


def test_cancel_mid_prompt_with_session_cancel(v1: ModuleType) -> None:
    async def main() -> None:
        record = Record()
        async with served(app_for(v1, record)) as base:
            conn, agent = await start(v1, base + "/acp", client_class(v1)())
            session = await agent.session_new(new_session(v1))
            turn = asyncio.ensure_future(agent.session_prompt(prompt(v1, session.session_id, "wait")))
            await asyncio.wait_for(record.turn_started.wait(), 10)
            await agent.session_cancel(v1.CancelNotification(session_id=session.session_id))
            result = await asyncio.wait_for(turn, 10)
            assert result.stop_reason == "cancelled"
            assert record.cancelled.is_set()
            await conn.close()

    run(main())


def test_cancel_mid_prompt_with_cancel_request(v1: ModuleType) -> None:
    """Cancelling the task awaiting the prompt sends $/cancel_request: the agent's turn is
    cancelled; the connection goes on serving."""

    async def main() -> None:
        record = Record()
        async with served(app_for(v1, record)) as base:
            client = client_class(v1)()
            conn, agent = await start(v1, base + "/acp", client)
            session = await agent.session_new(new_session(v1))
            turn = asyncio.ensure_future(agent.session_prompt(prompt(v1, session.session_id, "wait")))
            await asyncio.wait_for(record.turn_started.wait(), 10)
            turn.cancel()
            await asyncio.wait_for(record.cancelled.wait(), 10)
            result = await agent.session_prompt(prompt(v1, session.session_id, "count 3"))
            assert result.stop_reason == "end_turn"
            assert client.chunks[session.session_id] == ["0 ", "1 ", "2 "]
            await conn.close()

    run(main())


def test_two_sessions_on_one_connection(v1: ModuleType) -> None:
    """Two sessions prompted at once on one connection: each stream brings its own
    session's updates, in order; the server holds one stream per session."""

    async def main() -> None:
        record = Record()
        app = app_for(v1, record)
        async with served(app) as base:
            client = client_class(v1)()
            conn, agent = await start(v1, base + "/acp", client)
            a = (await agent.session_new(new_session(v1))).session_id
            b = (await agent.session_new(new_session(v1))).session_id
            results = await asyncio.gather(
                agent.session_prompt(prompt(v1, a, "count 300")),
                agent.session_prompt(prompt(v1, b, "count 200")),
            )
            assert [r.stop_reason for r in results] == ["end_turn", "end_turn"]
            assert client.chunks[a] == [f"{i} " for i in range(300)]
            assert client.chunks[b] == [f"{i} " for i in range(200)]
            channel = app.state.acp.connections[conn.remote.connection_id].state
            assert set(channel.streams) == {None, a, b}
            assert all(s.subscribed for s in channel.streams.values())
            await conn.close()

    run(main())


@pytest.mark.parametrize("http2", [False, True], ids=["http1.1", "http2"])
def test_one_megabyte_messages_both_ways(v1: ModuleType, http2: bool) -> None:
    async def main() -> None:
        record = Record()
        async with served(app_for(v1, record), http2=http2) as base:
            client = client_class(v1)()
            conn, agent = await start(v1, base + "/acp", client, http2=http2)
            sid = (await agent.session_new(new_session(v1))).session_id
            size = 1024 * 1024
            text = "big " + str(size) + " " + "y" * size
            result = await agent.session_prompt(prompt(v1, sid, text))
            assert result.stop_reason == "end_turn"
            assert record.received_sizes == [len(text)]
            assert client.chunks[sid] == ["x" * size]
            await conn.close()

    run(main())


def test_connection_stream_dropped_mid_prompt_fails_pending_calls_at_once(v1: ModuleType) -> None:
    """The server ends the connection (as a crash or a proxy would: every stream ends)
    while a prompt waits: the client's pending call fails at once with
    ConnectionClosedError saying the stream ended, well before any timeout."""

    async def main() -> None:
        record = Record()
        app = app_for(v1, record)
        async with served(app) as base:
            conn, agent = await start(v1, base + "/acp", client_class(v1)())
            sid = (await agent.session_new(new_session(v1))).session_id
            turn = asyncio.ensure_future(agent.session_prompt(prompt(v1, sid, "wait")))
            await asyncio.wait_for(record.turn_started.wait(), 10)
            served_conn = app.state.acp.connections[conn.remote.connection_id]
            loop = asyncio.get_running_loop()
            began = loop.time()
            served_conn.state.end()  # every stream of the connection ends now
            with pytest.raises(package(v1).ConnectionClosedError) as failed:
                await asyncio.wait_for(turn, 5)
            assert loop.time() - began < 2
            assert "event stream" in str(failed.value)
            assert conn.is_closed
            await conn.close()

    run(main())


@pytest.mark.parametrize("http2", [False, True], ids=["http1.1", "http2"])
def test_slow_consumer_bounded_ordered_nothing_dropped(v1: ModuleType, http2: bool) -> None:
    """The agent sends 5,000 updates to a client that handles them slowly: the server
    never holds more than stream_queue messages for the stream (its sends wait), the
    client's queue stays within its bound, and every update arrives, in order."""

    async def main() -> None:
        record = Record()
        app = app_for(v1, record, stream_queue=16)
        async with served(app, http2=http2) as base:
            client = client_class(v1)(delay=0.0005)
            conn, agent = await start(v1, base + "/acp", client, max_queued=8, http2=http2)
            sid = (await agent.session_new(new_session(v1))).session_id
            channel = app.state.acp.connections[conn.remote.connection_id].state
            result = await agent.session_prompt(prompt(v1, sid, "count 5000"))
            assert result.stop_reason == "end_turn"
            assert client.chunks[sid] == [f"{i} " for i in range(5000)]
            held = max(s.high for s in channel.streams.values())
            assert 1 <= held <= 16, held
            assert conn.channel.high <= 8 + 1  # the bound, and an answer made here at most
            await conn.close()

    run(main(), timeout=90)


@pytest.mark.parametrize("http2", [False, True], ids=["http1.1", "http2"])
def test_a_client_that_stops_reading_holds_the_server_back(v1: ModuleType, http2: bool) -> None:
    """The agent sends 2,000 updates of 32 KiB (64 MiB) to a client that handles one
    every 0.2 s: once the client's bounds are full it stops reading, and the server's
    sends wait (within a few flow-control windows), instead of the server taking
    everything into its memory."""

    async def main() -> None:
        record = Record()
        app = app_for(v1, record, stream_queue=16)
        async with served(app, http2=http2) as base:
            client = client_class(v1)(delay=0.2)
            conn, agent = await start(v1, base + "/acp", client, max_queued=4, http2=http2)
            sid = (await agent.session_new(new_session(v1))).session_id
            turn = asyncio.ensure_future(agent.session_prompt(prompt(v1, sid, "bulk 2000 32768")))
            await asyncio.sleep(2)
            said = record.said
            assert said < 400, said  # 12.5 MiB: the windows and bounds of both ends
            await agent.session_cancel(v1.CancelNotification(session_id=sid))
            turn.cancel()
            await conn.close()

    run(main(), timeout=60)


@pytest.mark.parametrize("http2", [False, True], ids=["http1.1", "http2"])
def test_an_event_stream_silent_past_stream_timeout_closes_the_connection(v1: ModuleType, http2: bool) -> None:
    """A server whose connection stream goes silent (no keepalive: it sends one every
    100 s here) is taken as gone after the client's stream_timeout: the connection
    closes saying so and the prompt waiting on it fails at once, instead of waiting
    for ever."""

    async def main() -> None:
        record = Record()
        app = app_for(v1, record, keepalive=100)
        async with served(app, http2=http2) as base:
            conn, agent = await start(v1, base + "/acp", client_class(v1)(), http2=http2, stream_timeout=0.5)
            sid = (await agent.session_new(new_session(v1))).session_id
            loop = asyncio.get_running_loop()
            began = loop.time()
            with pytest.raises(package(v1).ConnectionClosedError) as failed:
                await asyncio.wait_for(agent.session_prompt(prompt(v1, sid, "wait")), 10)
            assert loop.time() - began < 2
            assert "nothing came on the stream for 0.5 s" in str(failed.value)
            assert conn.is_closed

    run(main(), timeout=30)


def test_cookies_kept_and_sent_headers_on_every_request(v1: ModuleType) -> None:
    """A cookie the server sets is sent back on every later request and shown in
    conn.remote.cookies; the cookies and headers given go on every request."""
    from starlette.middleware.base import BaseHTTPMiddleware

    async def main() -> None:
        record = Record()
        app = app_for(v1, record)
        seen: list[tuple[str, str, str]] = []

        async def stamp(request: Any, call_next: Any) -> Any:
            seen.append((request.method, request.headers.get("cookie", ""), request.headers.get("x-team", "")))
            response = await call_next(request)
            response.set_cookie("affinity", "node-7")
            return response

        app.add_middleware(BaseHTTPMiddleware, dispatch=stamp)
        async with served(app) as base:
            conn, agent = await start(
                v1, base + "/acp", client_class(v1)(), headers={"X-Team": "blue"}, cookies={"given": "1"}
            )
            sid = (await agent.session_new(new_session(v1))).session_id
            await agent.session_prompt(prompt(v1, sid, "count 2"))
            assert conn.remote.cookies == {"given": "1", "affinity": "node-7"}
            await conn.close()
        assert [m for m, _, _ in seen[:2]] == ["POST", "GET"]
        assert all(team == "blue" for _, _, team in seen)
        assert "affinity=node-7" not in seen[0][1] and "given=1" in seen[0][1]
        assert all("affinity=node-7" in cookie and "given=1" in cookie for _, cookie, _ in seen[1:])

    run(main())


def test_refused_post_fails_that_request_only(v1: ModuleType) -> None:
    """A prompt over the server's body limit is answered 413: that request fails with an
    error naming the status; the connection goes on. A notification refused closes it."""

    async def main() -> None:
        record = Record()
        async with served(app_for(v1, record, max_body=64 * 1024)) as base:
            client = client_class(v1)()
            conn, agent = await start(v1, base + "/acp", client)
            sid = (await agent.session_new(new_session(v1))).session_id
            with pytest.raises(package(v1).RemoteError) as refused:
                await agent.session_prompt(prompt(v1, sid, "count 1 " + "z" * 100_000))
            assert "HTTP 413" in str(refused.value)
            assert refused.value.data["status"] == 413 and "over" in refused.value.data["body"]
            result = await agent.session_prompt(prompt(v1, sid, "count 2"))
            assert result.stop_reason == "end_turn" and not conn.is_closed
            # a notification refused cannot be answered: the connection closes, saying why
            with pytest.raises(package(v1).ConnectionClosedError) as closed:
                await agent.session_cancel(v1.CancelNotification(session_id=sid, meta={"pad": "z" * 100_000}))
            assert "the server refused session/cancel: HTTP 413" in str(closed.value)
            await conn.wait_closed()
            await conn.close()

    run(main())


def test_first_message_must_be_initialize(v1: ModuleType) -> None:
    async def main() -> None:
        async with served(app_for(v1, Record())) as base:
            conn = await v1.RPC.connect_url(base + "/acp")
            conn.start(client_class(v1)())
            agent = v1.RemoteAgent(conn)
            with pytest.raises(package(v1).RemoteError) as failed:
                await agent.session_new(new_session(v1))
            assert "the first message must be the initialize request" in str(failed.value)
            await agent.initialize(v1.InitializeRequest(protocol_version=v1.PROTOCOL_VERSION))
            assert (await agent.session_new(new_session(v1))).session_id
            await conn.close()

    run(main())


def test_session_load_opens_the_session_stream_before_posting(v1: ModuleType) -> None:
    """A session this connection did not create (session/load after a reconnect): its
    stream is opened (200) before the load is posted with Acp-Session-Id, so the answer and
    the turn that follows come on it."""

    async def main() -> None:
        record = Record()
        seen = Seen(app_for(v1, record))
        async with served(seen) as base:
            client = client_class(v1)()
            conn, agent = await start(v1, base + "/acp", client)
            before = len(seen.requests)
            sid = "from-an-earlier-connection"
            await agent.session_load(v1.LoadSessionRequest(session_id=sid, cwd="/", mcp_servers=[]))
            sent = [(m, h.get("acp-session-id")) for m, h, _ in seen.requests[before:]]
            assert sent[:2] == [("GET", sid), ("POST", sid)]
            result = await agent.session_prompt(prompt(v1, sid, "count 3"))
            assert result.stop_reason == "end_turn"
            assert client.chunks[sid] == ["0 ", "1 ", "2 "]
            await conn.close()

    run(main())


class Cutter:
    """A TCP relay in front of the server whose connections can all be cut at once (the
    network failing under the client's streams)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.writers: list[asyncio.StreamWriter] = []
        self.server: asyncio.base_events.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self.writers += [writer, up_writer]

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def cut(self) -> None:
        if self.server is not None:
            self.server.close()  # no new connection either
        for writer in self.writers:
            writer.transport.abort()

    async def close(self) -> None:
        self.cut()


def test_network_cut_mid_prompt_fails_pending_calls_the_server_keeps_the_connection(v1: ModuleType) -> None:
    """The network under the client's streams fails mid-prompt: the pending call fails at
    once with ConnectionClosedError saying the connection's stream failed; on the server
    the connection stays (a disconnect is not a close: its sessions survive)."""

    async def main() -> None:
        record = Record()
        app = app_for(v1, record)
        async with served(app) as base:
            cutter = Cutter(int(base.rsplit(":", 1)[1]))
            port = await cutter.start()
            conn, agent = await start(v1, f"http://127.0.0.1:{port}/acp", client_class(v1)())
            sid = (await agent.session_new(new_session(v1))).session_id
            turn = asyncio.ensure_future(agent.session_prompt(prompt(v1, sid, "wait")))
            await asyncio.wait_for(record.turn_started.wait(), 10)
            loop = asyncio.get_running_loop()
            began = loop.time()
            cutter.cut()
            with pytest.raises(package(v1).ConnectionClosedError) as failed:
                await asyncio.wait_for(turn, 5)
            assert loop.time() - began < 2
            assert "the connection's event stream failed" in str(failed.value)
            await conn.close()  # its DELETE cannot get through either (bounded)
            for _ in range(100):
                if app.state.acp.connections[conn.remote.connection_id].streams == 0:
                    break
                await asyncio.sleep(0.02)
            kept = app.state.acp.connections[conn.remote.connection_id]
            assert kept.streams == 0 and not kept.conn.is_closed
            await cutter.close()

    run(main())


def test_initialize_refused_closes_with_the_status_and_headers_authenticate(v1: ModuleType) -> None:
    """Without the bearer token the server answers initialize 401: the call fails with
    ConnectionClosedError naming the status and the server's line (its cause a
    RefusedError with the status); with the token in
    ``headers`` the connection works."""

    async def main() -> None:
        bearer = importlib.import_module(f"{v1.__package__}._remote").bearer({"secret": "alice"})
        app = app_for(v1, Record(), authenticate=bearer)
        async with served(app) as base:
            conn = await v1.RPC.connect_url(base + "/acp")
            conn.start(client_class(v1)())
            with pytest.raises(package(v1).ConnectionClosedError) as failed:
                await v1.RemoteAgent(conn).initialize(v1.InitializeRequest(protocol_version=1))
            assert str(failed.value) == f"{base}/acp refused the connection: HTTP 401: not authenticated"
            refused = failed.value.__cause__
            assert isinstance(refused, package(v1).RefusedError) and refused.status == 401
            await conn.close()
            conn, agent = await start(v1, base + "/acp", client_class(v1)(), headers={"Authorization": "Bearer secret"})
            assert app.state.acp.connections[conn.remote.connection_id].principal == "alice"
            sid = (await agent.session_new(new_session(v1))).session_id
            assert (await agent.session_prompt(prompt(v1, sid, "count 1"))).stop_reason == "end_turn"
            await conn.close()

    run(main())


def test_close_is_bounded_when_delete_hangs(v1: ModuleType) -> None:
    """A server that never answers DELETE: closing takes about DELETE_TIMEOUT at most, and
    the HTTP client and its streams are closed all the same."""
    from starlette.middleware.base import BaseHTTPMiddleware

    async def main() -> None:
        app = app_for(v1, Record())

        async def stall(request: Any, call_next: Any) -> Any:
            if request.method == "DELETE":
                await asyncio.sleep(4)
            return await call_next(request)

        app.add_middleware(BaseHTTPMiddleware, dispatch=stall)
        async with served(app) as base:
            conn, agent = await start(v1, base + "/acp", client_class(v1)())
            sid = (await agent.session_new(new_session(v1))).session_id
            await agent.session_prompt(prompt(v1, sid, "count 1"))
            channel = conn.channel
            loop = asyncio.get_running_loop()
            began = loop.time()
            await conn.close()
            assert loop.time() - began < 3.5
            assert channel.wire.closed
            assert all(task.done() for task in channel._readers.values())

    run(main())


def test_a_message_about_a_session_the_client_never_named_still_arrives(v1: ModuleType) -> None:
    """The agent sends an update about a session this client never named (no stream of it
    could be opened): it comes on the connection's stream instead of waiting forever."""

    async def main() -> None:
        async with served(app_for(v1, Record())) as base:
            client = client_class(v1)()
            conn, agent = await start(v1, base + "/acp", client)
            sid = (await agent.session_new(new_session(v1))).session_id
            await agent.session_prompt(prompt(v1, sid, "tell elsewhere"))
            for _ in range(200):
                if "elsewhere" in client.chunks:
                    break
                await asyncio.sleep(0.01)
            assert client.chunks.get("elsewhere") == ["psst"]
            await conn.close()

    run(main())


def test_a_post_never_answered_closes_the_connection_instead_of_waiting(v1: ModuleType) -> None:
    """A server (or a proxy) that takes a POST and never answers it: the message's POST
    gives up after ``post_timeout`` s and the connection closes, failing the request with
    ConnectionClosedError, instead of every later message waiting behind it forever."""
    import json

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        if scope["method"] == "GET":  # an event stream that stays silent
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
            await send({"type": "http.response.body", "body": b"", "more_body": True})
            await asyncio.sleep(3600)
        frame = json.loads(body) if body else {}
        if frame.get("method") == "initialize":
            answer = json.dumps({"jsonrpc": "2.0", "id": frame["id"], "result": {"protocolVersion": 1}}).encode()
            headers = [(b"content-type", b"application/json"), (b"acp-connection-id", b"c1")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": answer})
            return
        await asyncio.sleep(3600)  # taken, never answered

    async def main() -> None:
        async with served(app) as base:
            conn = await v1.RPC.connect_url(base + "/acp", post_timeout=0.5)
            conn.start(client_class(v1)())
            agent = v1.RemoteAgent(conn)
            await agent.initialize(v1.InitializeRequest(protocol_version=1))
            began = asyncio.get_running_loop().time()
            with pytest.raises(package(v1).ConnectionClosedError) as failed:
                await asyncio.wait_for(agent.session_new(new_session(v1)), 10)
            assert asyncio.get_running_loop().time() - began < 3
            assert "Timeout" in str(failed.value)
            await conn.close()

    run(main())


class CutSessionStream:
    """An ASGI app in front of ``app`` that breaks the first session stream once it has
    carried ``after`` events (its next send fails: the subscriber is gone, as when a
    proxy drops one long-lived response); the connection and everything else go on."""

    def __init__(self, app: Any, after: int) -> None:
        self.app = app
        self.after = after
        self.cut = asyncio.Event()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        names = {k.lower() for k, _ in scope.get("headers", [])}
        if self.cut.is_set() or scope["type"] != "http" or scope["method"] != "GET" or b"acp-session-id" not in names:
            await self.app(scope, receive, send)
            return
        events = 0

        async def sending(message: Any) -> None:
            nonlocal events
            if message["type"] == "http.response.body" and b"data:" in message.get("body", b""):
                events += 1
                if events > self.after:
                    self.cut.set()
                    raise OSError("the stream was cut")
            await send(message)

        await self.app(scope, receive, sending)


def test_a_session_stream_cut_mid_prompt_is_opened_again_and_the_answer_arrives(v1: ModuleType) -> None:
    """The session's stream breaks mid-prompt while the connection goes on, and nothing
    else about the session is sent: the client opens that stream again by itself, and
    the rest of the turn and its answer come on it (the event being written as it broke
    is lost: the RFD's first version replays nothing), instead of the prompt waiting
    forever."""

    async def main() -> None:
        record = Record()
        app = app_for(v1, record)
        cutting = CutSessionStream(app, after=2)
        async with served(cutting) as base:
            client = client_class(v1)()
            conn, agent = await start(v1, base + "/acp", client)
            sid = (await agent.session_new(new_session(v1))).session_id
            result = await asyncio.wait_for(agent.session_prompt(prompt(v1, sid, "count 30")), 10)
            assert cutting.cut.is_set()
            assert result.stop_reason == "end_turn"
            got = client.chunks[sid]
            expected = [f"{i} " for i in range(30)]
            assert len(got) >= 29 and all(chunk in expected for chunk in got)
            assert got == sorted(got, key=expected.index)  # in order, one at most lost
            await conn.close()

    run(main(), 30)


def test_a_session_stream_that_keeps_ending_is_opened_again_with_growing_pauses(v1: ModuleType) -> None:
    """A server (or a proxy) that ends every session stream at once: the client opens it
    again after pauses that double, not in a tight loop; once the server says the
    connection is gone (404), the connection closes."""

    async def main() -> None:
        record = Record()
        app = app_for(v1, record)
        gets: list[float] = []
        gone = asyncio.Event()

        async def ending(scope: Any, receive: Any, send: Any) -> None:
            names = {k.lower() for k, _ in scope.get("headers", [])}
            if scope["type"] == "http" and scope["method"] == "GET" and b"acp-session-id" in names:
                gets.append(asyncio.get_running_loop().time())
                status = 404 if gone.is_set() else 200
                await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"text/event-stream")]})
                await send({"type": "http.response.body", "body": b""})
                return
            await app(scope, receive, send)

        async with served(ending) as base:
            conn, agent = await start(v1, base + "/acp", client_class(v1)())
            await agent.session_new(new_session(v1))
            await asyncio.sleep(1.6)
            assert 3 <= len(gets) <= 8, gets  # 0, 0.1, 0.2, 0.4, 0.8 s apart
            pauses = [b - a for a, b in zip(gets[1:], gets[2:])]
            assert all(later > earlier for earlier, later in zip(pauses, pauses[1:])), pauses
            gone.set()
            await asyncio.wait_for(conn.closed, 10)
            assert "404" in (conn.close_reason or "")

    run(main(), 30)


def test_http2_a_post_refused_before_its_body_is_read_leaves_the_other_connections(v1: ModuleType) -> None:
    """Over HTTP/2 every connection of a client process shares one TCP connection to the
    server. A POST refused before its body is read (404 for a connection the server does
    not know, 401, 413...) has the rest of its body arrive after its stream is closed:
    Hypercorn then failed the whole TCP connection (a KeyError on the closed stream),
    cutting every other connection's turn. Now they go on."""
    from acpgen.runtime._curl_wire import CurlWire

    async def main() -> None:
        record = Record()
        async with served(app_for(v1, record), http2=True) as base:
            url = base + "/acp"
            conn, agent = await start(v1, url, client_class(v1)(), http2=True)
            sid = (await agent.session_new(new_session(v1))).session_id
            turn = asyncio.ensure_future(agent.session_prompt(prompt(v1, sid, "wait")))
            await asyncio.wait_for(record.turn_started.wait(), 10)
            stale = CurlWire(5.0, 5.0, secure=False)  # on the same loop: the same TCP connection
            try:
                body = b'{"jsonrpc":"2.0","method":"x","params":{"pad":"' + b"x" * 200_000 + b'"}}'
                headers = {"acp-connection-id": "gone", "content-type": "application/json"}
                for _ in range(5):
                    answer = await stale.post(url, body, headers)
                    assert answer.status == 404
            finally:
                await stale.aclose()
            await asyncio.sleep(0.5)
            assert not turn.done() and not conn.is_closed
            await agent.session_cancel(v1.CancelNotification(session_id=sid))
            assert (await asyncio.wait_for(turn, 10)).stop_reason == "cancelled"
            await conn.close()

    run(main())
