"""The client's reconnect (``_remote_client.reconnect``, the transport RFD's v1 recipe)
against a real server on a loopback port: requests pending when the socket drops fail at
once with ``ConnectionClosedError``; a new connection with the same credentials and the
old one's cookies, ``initialize``, the ``loadSession`` check, ``session/load`` of each
session (its history replayed); transient failures tried again, bounded; the others
raised at once."""

from __future__ import annotations

import asyncio
import socket
import importlib
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ...conftest import import_file
from ..peers import ROOT, sdk_bindings
from .harness import served


def run(coro: Any, timeout: float = 30.0) -> Any:
    """Run a test's coroutine, bounded."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


@pytest.fixture(scope="module")
def v1(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return import_file(sdk_bindings(tmp_path_factory) / "acp_pydantic" / "v1.py")


def closed_error(v1: ModuleType) -> Any:
    return importlib.import_module(v1.__package__).ConnectionClosedError


def remote(v1: ModuleType) -> ModuleType:
    """The bindings' package: ``reconnect`` and its companions, as users import them."""
    return importlib.import_module(v1.__package__)


class World:
    """What the agents of one test share (as server processes share a store): sessions
    by id, each its history of prompts; the agents' connections."""

    def __init__(self, load_session: bool = True) -> None:
        self.load_session = load_session
        self.history: dict[str, list[str]] = {}
        self.ids = 0
        self.conns: list[Any] = []
        self.stuck = asyncio.Event()  # a prompt "hang" waits on it (never set)
        self.prompting = asyncio.Event()


def agent_class(v1: ModuleType) -> Any:
    class Agent(v1.Agent):  # type: ignore[misc,name-defined]
        def __init__(self, conn: Any, world: World) -> None:
            self.client = v1.RemoteClient(conn)
            self.world = world
            world.conns.append(conn)

        async def initialize(self, params: Any) -> Any:
            caps = v1.AgentCapabilities(load_session=self.world.load_session)
            return v1.InitializeResponse(protocol_version=params.protocol_version, agent_capabilities=caps)

        async def session_new(self, params: Any) -> Any:
            self.world.ids += 1
            session_id = f"s-{self.world.ids}"
            self.world.history[session_id] = []
            return v1.NewSessionResponse(session_id=session_id)

        async def session_load(self, params: Any) -> Any:
            history = self.world.history.get(params.session_id)
            if history is None:
                raise v1.RpcError(-32602, "Invalid params", {"sessionId": params.session_id})
            for text in history:  # the conversation replayed, as session/load says
                chunk = v1.UserMessageChunkSessionUpdate(content=v1.TextContentBlock(text=text))
                await self.client.session_update(v1.SessionNotification(session_id=params.session_id, update=chunk))
            return v1.LoadSessionResponse()

        async def session_prompt(self, params: Any) -> Any:
            text = params.prompt[0].text
            self.world.history[params.session_id].append(text)
            if text == "hang":
                self.world.prompting.set()
                await self.world.stuck.wait()
            chunk = v1.AgentMessageChunkSessionUpdate(content=v1.TextContentBlock(text=text))
            await self.client.session_update(v1.SessionNotification(session_id=params.session_id, update=chunk))
            return v1.PromptResponse(stop_reason="end_turn")

    return Agent


class Recorder:
    """A client recording the text of every update, per connection."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def session_update(self, params: Any) -> None:
        self.texts.append(params.update.content.text)


class Sticky:
    """ASGI middleware playing a sticky balancer: sets a cookie on every WebSocket
    handshake and HTTP response, records the headers each handshake or request brought,
    and answers the first ``refuse`` WebSocket handshakes with ``status``."""

    def __init__(self, app: Any, refuse: int = 0, status: int = 503) -> None:
        self.app = app
        self.refuse = refuse
        self.status = status
        self.seen: list[dict[str, str]] = []
        #: Streamable HTTP: the first ``refuse_http`` initialize POSTs are answered ``status``
        self.refuse_http = 0
        self.initializes = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] not in ("websocket", "http"):
            return await self.app(scope, receive, send)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        self.seen.append(headers)
        if scope["type"] == "http":
            if scope["method"] == "POST" and headers.get("acp-connection-id") is None:
                self.initializes += 1
                if self.initializes <= self.refuse_http:  # an initialize, refused
                    await send({"type": "http.response.start", "status": self.status, "headers": []})
                    await send({"type": "http.response.body", "body": b"busy\n"})
                    return None

            async def responding(message: Any) -> None:
                if message["type"] == "http.response.start":
                    extra = [(b"set-cookie", b"SRV=one; Path=/")]
                    message = {**message, "headers": [*message.get("headers", []), *extra]}
                await send(message)

            return await self.app(scope, receive, responding)
        if len(self.seen) <= self.refuse:
            await receive()  # websocket.connect
            await send({"type": "websocket.http.response.start", "status": self.status, "headers": []})
            await send({"type": "websocket.http.response.body", "body": b"busy\n"})
            return None

        async def sending(message: Any) -> None:
            if message["type"] == "websocket.accept":
                extra = [(b"set-cookie", b"SRV=one; Path=/")]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        return await self.app(scope, receive, sending)


def app_for(v1: ModuleType, world: World, **options: Any) -> Any:
    Agent = agent_class(v1)
    return v1.RPC.asgi_app(lambda conn: Agent(conn, world), **options)


async def first_connection(v1: ModuleType, url: str, **options: Any) -> tuple[Any, Any, str]:
    conn = await v1.RPC.connect_url(url, **options)
    conn.start(Recorder())
    agent = v1.RemoteAgent(conn)
    await agent.initialize(v1.InitializeRequest(protocol_version=v1.PROTOCOL_VERSION))
    session = await agent.session_new(v1.NewSessionRequest(cwd=str(ROOT), mcp_servers=[]))
    return conn, agent, session.session_id


def load(v1: ModuleType, session_id: str) -> Any:
    return v1.LoadSessionRequest(session_id=session_id, cwd=str(ROOT), mcp_servers=[])


def init(v1: ModuleType) -> Any:
    return v1.InitializeRequest(protocol_version=v1.PROTOCOL_VERSION)


def test_pending_requests_fail_at_once_when_the_socket_drops(v1: ModuleType) -> None:
    """A prompt pending when the server side goes away fails with ConnectionClosedError
    within a fraction of a second, and so does a request made afterwards."""

    async def body() -> None:
        world = World()
        async with served(app_for(v1, world)) as base:
            conn, agent, sid = await first_connection(v1, base.replace("http", "ws") + "/acp")
            prompt = v1.PromptRequest(session_id=sid, prompt=[v1.TextContentBlock(text="hang")])
            turn = asyncio.ensure_future(agent.session_prompt(prompt))
            await asyncio.wait_for(world.prompting.wait(), 5)
            dropped = time.monotonic()
            served_conn = world.conns[0]
            channel = served_conn.channel
            await channel.websocket.close(1011, "gone")  # the socket dropped, no goodbye
            with pytest.raises(closed_error(v1)):
                await asyncio.wait_for(turn, 5)
            assert time.monotonic() - dropped < 1.0
            with pytest.raises(closed_error(v1)):
                await agent.session_prompt(prompt)
            assert conn.is_closed and "1011" in conn.close_reason

    run(body())


def test_pending_requests_fail_at_once_when_the_network_drops(v1: ModuleType) -> None:
    """The TCP connection aborted under the client (no close frame, as when the network
    or the server's host goes away): the pending prompt fails at once."""

    async def body() -> None:
        world = World()
        async with served(app_for(v1, world)) as base:
            conn, agent, sid = await first_connection(v1, base.replace("http", "ws") + "/acp")
            prompt = v1.PromptRequest(session_id=sid, prompt=[v1.TextContentBlock(text="hang")])
            turn = asyncio.ensure_future(agent.session_prompt(prompt))
            await asyncio.wait_for(world.prompting.wait(), 5)
            dropped = time.monotonic()
            conn.channel.ws.get_extra_info("socket").shutdown(socket.SHUT_RDWR)
            with pytest.raises(closed_error(v1)):
                await asyncio.wait_for(turn, 5)
            assert time.monotonic() - dropped < 1.0
            assert conn.is_closed and "1006" in conn.close_reason
            await asyncio.wait_for(world.conns[0].wait_closed(), 5)  # the server saw it too

    run(body())


@pytest.mark.parametrize("scheme", ["ws", "http"], ids=["websocket", "streamable-http"])
def test_reconnect_restores_the_sessions_with_credentials_and_cookies(v1: ModuleType, scheme: str) -> None:
    if scheme == "http" and not hasattr(importlib.import_module(v1.__package__ + "._http_client"), "connect_http"):
        pytest.skip("this build has no Streamable HTTP client yet (_http_client.connect_http)")

    async def body() -> None:
        world = World()
        rc = remote(v1)
        sticky = Sticky(app_for(v1, world, authenticate=_bearer(v1)))
        async with served(sticky) as base:
            url = base.replace("http", scheme) + "/acp"
            auth = {"Authorization": "Bearer tok"}
            conn, agent, sid = await first_connection(v1, url, headers=auth)
            other = await agent.session_new(v1.NewSessionRequest(cwd=str(ROOT), mcp_servers=[]))
            done = await agent.session_prompt(v1.PromptRequest(session_id=sid, prompt=[v1.TextContentBlock(text="first")]))
            assert done.stop_reason == "end_turn"
            assert conn.remote.cookies == {"SRV": "one"}
            await world.conns[0].close("the server went away")
            await asyncio.wait_for(conn.wait_closed(), 5)
            before = len(sticky.seen)

            recorders: list[Recorder] = []

            def handler(new: Any) -> Recorder:
                recorders.append(Recorder())
                return recorders[-1]

            again = await rc.reconnect(conn, handler, initialize=init(v1), sessions=[load(v1, sid), load(v1, other.session_id)])
            assert sorted(again.loaded) == sorted([sid, other.session_id]) and again.failed == {}
            assert again.attempts == 1 and again.initialized.agent_capabilities.load_session is True
            # the same credentials, the cookie the server set, on every request
            assert len(sticky.seen) > before
            assert all(h.get("authorization") == "Bearer tok" for h in sticky.seen[before:])
            sent = [h.get("cookie") for h in sticky.seen[before:]]
            assert all(c == "SRV=one" for c in sent), sent  # once: a balancer reads the first
            assert recorders[0].texts == ["first"]  # the history, replayed before load answered
            new_agent = v1.RemoteAgent(again.conn)
            done = await new_agent.session_prompt(v1.PromptRequest(session_id=sid, prompt=[v1.TextContentBlock(text="second")]))
            assert done.stop_reason == "end_turn" and recorders[0].texts == ["first", "second"]
            assert world.history[sid] == ["first", "second"]
            await again.conn.close()

    run(body())


def _bearer(v1: ModuleType) -> Any:
    return remote(v1).bearer({"tok": "alice"})


def test_a_session_the_agent_refuses_is_reported_the_others_loaded(v1: ModuleType) -> None:
    async def body() -> None:
        world = World()
        rc = remote(v1)
        async with served(app_for(v1, world)) as base:
            conn, agent, sid = await first_connection(v1, base.replace("http", "ws") + "/acp")
            await conn.close()
            # sessions given in their wire form
            gone = {"sessionId": "s-404", "cwd": str(ROOT), "mcpServers": []}
            again = await rc.reconnect(conn, Recorder(), initialize={"protocolVersion": 1}, sessions=[load(v1, sid), gone])
            assert list(again.loaded) == [sid]
            assert list(again.failed) == ["s-404"] and again.failed["s-404"].code == -32602
            assert not again.conn.is_closed
            await again.conn.close()

    run(body())


def test_an_agent_without_load_session_is_refused_clearly(v1: ModuleType) -> None:
    async def body() -> None:
        world = World(load_session=False)
        rc = remote(v1)
        async with served(app_for(v1, world)) as base:
            conn, agent, sid = await first_connection(v1, base.replace("http", "ws") + "/acp")
            await conn.close()
            with pytest.raises(rc.SessionLoadUnsupportedError, match="loadSession"):
                await rc.reconnect(conn, Recorder(), initialize=init(v1), sessions=[load(v1, sid)], attempts=3)
            assert len(world.conns) == 2  # not tried again
            await asyncio.wait_for(world.conns[1].wait_closed(), 5)  # the new connection was closed
            # without sessions to restore, nothing is checked: a fresh connection
            again = await rc.reconnect(conn, Recorder(), initialize=init(v1))
            assert again.loaded == {} and not again.conn.is_closed
            await again.conn.close()

    run(body())


def test_transient_failures_are_tried_again_with_backoff_bounded(v1: ModuleType) -> None:
    async def body() -> None:
        world = World()
        rc = remote(v1)
        refused = rc.RefusedError
        sticky = Sticky(app_for(v1, world), refuse=0)
        async with served(sticky) as base:
            conn, agent, sid = await first_connection(v1, base.replace("http", "ws") + "/acp")
            await conn.close()
            sticky.seen.clear()
            sticky.refuse = 2  # a balancer without a healthy server, twice: 503
            started = time.monotonic()
            again = await rc.reconnect(conn, Recorder(), initialize=init(v1), sessions=[load(v1, sid)], attempts=3, backoff=0.2)
            assert again.attempts == 3 and list(again.loaded) == [sid]
            assert 0.2 <= time.monotonic() - started < 3  # waited 0.1-0.2 s, then 0.2-0.4 s
            await again.conn.close()
            # bounded: the last failure is raised
            sticky.seen.clear()
            with pytest.raises(refused, match="503"):
                await rc.reconnect(conn, Recorder(), initialize=init(v1), sessions=[load(v1, sid)], attempts=2, backoff=0.01)
            assert len(sticky.seen) == 2
            # not transient (401 from a missing credential): raised at once
            sticky.seen.clear()
            sticky.status = 401
            with pytest.raises(refused, match="401"):
                await rc.reconnect(conn, Recorder(), initialize=init(v1), sessions=[load(v1, sid)], attempts=5, backoff=0.01)
            assert len(sticky.seen) == 1

    run(body())


def test_a_busy_balancer_is_tried_again_over_streamable_http(v1: ModuleType) -> None:
    """Over Streamable HTTP the refusal comes on the initialize POST: tried again too."""
    if not hasattr(importlib.import_module(v1.__package__ + "._http_client"), "connect_http"):
        pytest.skip("this build has no Streamable HTTP client yet (_http_client.connect_http)")

    async def body() -> None:
        world = World()
        rc = remote(v1)
        sticky = Sticky(app_for(v1, world))
        async with served(sticky) as base:
            conn, agent, sid = await first_connection(v1, base + "/acp")
            await conn.close()
            sticky.refuse_http, sticky.initializes = 2, 0
            again = await rc.reconnect(conn, Recorder(), initialize=init(v1), sessions=[load(v1, sid)], attempts=3, backoff=0.05)
            assert again.attempts == 3 and list(again.loaded) == [sid] and sticky.initializes == 3
            await again.conn.close()
            sticky.refuse_http, sticky.initializes = 2, 0
            with pytest.raises(closed_error(v1), match="503"):
                await rc.reconnect(conn, Recorder(), initialize=init(v1), sessions=[load(v1, sid)], attempts=2, backoff=0.01)
            assert sticky.initializes == 2
            # a refusal that is not transient (401): raised at once, its cause the status
            sticky.refuse_http, sticky.initializes, sticky.status = 5, 0, 401
            with pytest.raises(closed_error(v1), match="401") as failed:
                await rc.reconnect(conn, Recorder(), initialize=init(v1), sessions=[load(v1, sid)], attempts=5, backoff=0.01)
            assert sticky.initializes == 1 and failed.value.__cause__.status == 401

    run(body())


def test_nothing_listening_is_tried_again(v1: ModuleType) -> None:
    """Connection refused (the server restarting) is tried again; here it stays down:
    the error after the last attempt."""

    async def body() -> None:
        import socket

        rc = remote(v1)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        info = rc.RemoteInfo(f"ws://127.0.0.1:{port}/acp")
        started = time.monotonic()
        with pytest.raises(OSError):
            await rc.reconnect(info, Recorder(), rpc=v1.RPC, initialize=init(v1), attempts=3, backoff=0.05)
        assert time.monotonic() - started >= 0.07  # two waits of 0.025-0.05 and 0.05-0.1 s
        with pytest.raises(TypeError, match="rpc="):
            await rc.reconnect(info, Recorder(), initialize=init(v1))

    run(body())
