"""acpgen's remote transports against the official Python SDK, both directions, over
WebSocket and Streamable HTTP (HTTP/1.1, and HTTP/2 with prior knowledge): the PyPI
package ``agent-client-protocol[http]`` 0.12.1 (``import acp``, a pinned dev dependency;
skipped, saying why, when it is not installed).

* acpgen client -> SDK server: ``acp.http.asgi.create_asgi_app`` serving
  :class:`PySdkAgent` (the scenario agent of ``peers.py`` on the SDK's agent API), under
  uvicorn (HTTP/1.1, WebSocket) or Hypercorn (HTTP/2); ``v1.RPC.connect_url`` plays each
  step of ``peers.py``.
* SDK client -> acpgen server: ``acp.ws.create_websocket_stream`` and
  ``acp.http.create_http_stream`` (an ``httpx`` client, HTTP/2 with prior knowledge for
  the HTTP/2 pairing) under ``acp.connect_to_agent`` play the same steps
  (:func:`sdk_play`) against ``v1.RPC.asgi_app`` serving ``peers.ScenarioAgent``.

The SDK neither sends nor handles ``$/cancel_request`` (0.12.1 has no such method in its
routers): that step is skipped both ways, saying so; ``session/cancel`` is played.

Interop choices acpgen makes, seen here (and where the SDK differs):

* acpgen's server takes a method's session from ``params.sessionId`` and never requires
  ``Acp-Session-Id``: the SDK's HTTP client posts ``session/load`` without it (its
  session-scoped set leaves load out), and the load is answered.
* acpgen's client follows the RFD's resume flow, as the TS client does: before it posts
  anything about a session its connection has no stream for (``session/load``
  included) it opens that session's stream, and it names the session in
  ``Acp-Session-Id``. The SDK's server answers 404 to both for a session not loaded yet
  on the connection (its reading of the RFD's routing rule): the load pairing is xfail
  there (``SERVER_LOAD_404``), and the raw request is pinned
  (``test_python_sdk_server_opens_a_session_stream_before_load``).
* The SDK's HTTP client opens no stream for a session it loads, so on its own server it
  never hears that session again (shown). acpgen's server sends what is about a session
  on the connection's stream until the client listens for the session (opens its stream,
  or was given it in a result), so the SDK's client loads, and prompts the loaded session,
  on acpgen's server.
* Over Streamable HTTP a connection outlives its streams (the RFD's v1 durability): it
  ends with ``DELETE`` (which the SDK's client sends when it closes) or after
  ``idle_timeout``; over WebSocket it ends with the socket.
* HTTP/2 with prior knowledge both ways (acpgen's client with ``http2=True``; the SDK's
  with an ``httpx`` client made ``http1=False``), the servers under Hypercorn.
* A JSON-RPC batch is answered 501 (the RFD; the SDK's server agrees).
* The SDK's WebSocket client keeps ``websockets``' default limit of 1 MiB a message; the
  1 MB step fits under it, a larger message closes its socket (pinned, xfail).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import sys
from contextlib import asynccontextmanager
from types import ModuleType
from typing import Any, AsyncIterator

import pytest

from . import peers
from .harness import served
from .peers import BIG, ORDERED, STEPS, Log, agent_factory, blob, check, digest, play

acp = pytest.importorskip("acp", reason="the Python SDK agent-client-protocol[http] is not installed")
pytest.importorskip("acp.http.asgi", reason="the Python SDK's [http] extra is not installed")

# pairing -> (URL scheme, HTTP/2)
TRANSPORTS = {"ws": ("ws", False), "http1": ("http", False), "http2": ("http", True)}
NO_CANCEL_REQUEST = "the Python SDK 0.12.1 neither sends nor handles $/cancel_request"
#: session/load over Streamable HTTP, a session made on another connection: where the SDK is at fault
SERVER_LOAD_404 = (
    "the Python SDK 0.12.1 server answers 404 to the stream (and the Acp-Session-Id) of a session"
    " not loaded yet on the connection, which the RFD's resume flow opens before session/load"
    " (so do acpgen's and the TS client)"
)
_ids = itertools.count(1)


def run(coro: Any, timeout: float = 40.0) -> Any:
    return asyncio.run(asyncio.wait_for(coro, timeout))


def url(base: str, scheme: str) -> str:
    return base.replace("http", scheme, 1) + "/acp"


@pytest.fixture(scope="module")
def v1(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return peers.bindings(tmp_path_factory)


def _needs(v1: ModuleType, transport: str, side: str) -> None:
    if transport != "ws":
        peers.needs_http(v1, side)


# -- the Python SDK's agent ------------------------------------------------------------------


class PySdkAgent:
    """The scenario agent of ``peers.py`` on the SDK's agent API (no ``$/cancel_request``)."""

    def __init__(self, conn: Any, log: Log) -> None:
        self.conn = conn
        self.log = log
        self.cancels: dict[str, asyncio.Event] = {}

    async def initialize(self, protocol_version: int, **kwargs: Any) -> Any:
        caps = acp.schema.AgentCapabilities(load_session=True)
        return acp.InitializeResponse(protocol_version=protocol_version, agent_capabilities=caps)

    async def new_session(self, cwd: str, **kwargs: Any) -> Any:
        session_id = f"py-{next(_ids)}"
        self.log.add("new", session_id, cwd)
        return acp.NewSessionResponse(session_id=session_id)

    async def load_session(self, cwd: str, session_id: str, **kwargs: Any) -> Any:
        self.log.add("load", session_id)
        return acp.schema.LoadSessionResponse()

    async def _say(self, session_id: str, text: str) -> None:
        await self.conn.session_update(session_id, acp.update_agent_message_text(text))

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> Any:
        text = getattr(prompt[0], "text", "")
        self.log.add("prompt", session_id, digest(text) if len(text) > 100 else text)
        if text.startswith("order "):
            for i in range(int(text[6:])):
                await self._say(session_id, str(i))
        elif text == "permission":
            options = [
                acp.schema.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                acp.schema.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
            ]
            tool = acp.schema.ToolCallUpdate(tool_call_id="t1", title="Edit a.txt")
            answer = await self.conn.request_permission(session_id=session_id, tool_call=tool, options=options)
            await self._say(session_id, f"granted {getattr(answer.outcome, 'option_id', answer.outcome.outcome)}")
        elif text == "hang":
            cancelled = self.cancels[session_id] = asyncio.Event()
            await self._say(session_id, "started")
            await cancelled.wait()
            self.log.add("cancelled", session_id)
            return acp.PromptResponse(stop_reason="cancelled")
        else:
            await self._say(session_id, text)
        return acp.PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self.log.add("session/cancel", session_id)
        event = self.cancels.get(session_id)
        if event is not None:
            event.set()


def sdk_app(log: Log) -> Any:
    from acp.http.asgi import create_asgi_app

    return create_asgi_app(lambda conn: PySdkAgent(conn, log))


# -- acpgen client -> the Python SDK server --------------------------------------------------


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_acpgen_client_to_python_sdk_server(
    v1: ModuleType, transport: str, step: str, request: pytest.FixtureRequest
) -> None:
    if step == "cancel_request":
        pytest.skip(NO_CANCEL_REQUEST)
    if step == "load" and transport != "ws":
        request.applymarker(pytest.mark.xfail(strict=True, reason=SERVER_LOAD_404))
    _needs(v1, transport, "client")
    scheme, http2 = TRANSPORTS[transport]
    log = Log()

    async def body() -> dict[str, Any]:
        async with served(sdk_app(log), http2=http2) as base:
            options = {"http2": True} if http2 else {}
            return await play(v1, url(base, scheme), step, **options)

    record = run(body())
    check(step, record)
    sid = record.get("sessionId")
    if step == "cancel":
        assert ("session/cancel", sid, None) in log.events and ("cancelled", sid, None) in log.events
    if step == "load":
        assert ("load", sid, None) in log.events


# -- the Python SDK client -> acpgen server --------------------------------------------------


class SdkScenarioClient:
    """What the agent sends an SDK client: update texts by session, permissions asked."""

    def __init__(self) -> None:
        self.updates: dict[str, list[str]] = {}
        self.asked: list[dict[str, Any]] = []
        self.changed = asyncio.Event()

    def on_connect(self, conn: Any) -> None:
        pass

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.setdefault(session_id, []).append(getattr(update.content, "text", ""))
        self.changed.set()

    async def request_permission(self, options: list[Any], session_id: str, tool_call: Any, **kwargs: Any) -> Any:
        ids = [o.option_id for o in options]
        self.asked.append({"sessionId": session_id, "toolCallId": tool_call.tool_call_id, "options": ids})
        return acp.RequestPermissionResponse(outcome=acp.schema.AllowedOutcome(option_id=ids[0], outcome="selected"))

    async def until(self, test: Any, timeout: float = 10.0) -> None:
        async def wait() -> None:
            while not test():
                self.changed.clear()
                await self.changed.wait()

        await asyncio.wait_for(wait(), timeout)

    async def handled(self, sid: str, count: int) -> list[str]:
        """The updates of ``sid`` once ``count`` were handled (5 s at most): the SDK
        handles each notification in a task of its own and an answer at once, so a
        prompt's result can return before the updates sent ahead of it were handled
        (acpgen's client hands them over in order)."""
        with contextlib.suppress(asyncio.TimeoutError):
            await self.until(lambda: len(self.updates.get(sid, [])) >= count, 5.0)
        return self.updates.get(sid, [])


async def sdk_connect(target: str, http2: bool, sent: list[Any] | None = None) -> tuple[Any, SdkScenarioClient]:
    """An SDK client connection to ``target`` (ws:// or http://); over HTTP the
    requests it makes are appended to ``sent`` (``httpx.Request``)."""
    client = SdkScenarioClient()
    if target.startswith("ws"):
        from acp.ws import create_websocket_stream

        transport = await create_websocket_stream(target)
    else:
        import httpx
        from acp.http import create_http_stream

        # the SDK's own client is HTTP/2-enabled, which httpx speaks on https:// only;
        # prior knowledge (http1=False) for HTTP/2 on http://
        async def keep(request: httpx.Request) -> None:
            if sent is not None:
                sent.append(request)

        http = httpx.AsyncClient(
            http1=not http2, http2=http2, timeout=httpx.Timeout(None), event_hooks={"request": [keep]}
        )
        transport = create_http_stream(target, client=http)
    return acp.connect_to_agent(client, transport), client


def _text(value: str) -> list[Any]:
    return [acp.text_block(value)]


async def sdk_play(target: str, step: str, http2: bool = False, timeout: float = peers.TIMEOUT) -> dict[str, Any]:
    """Play ``step`` as an SDK client of the agent at ``target``: its record, shaped as
    ``peers.play`` gives it."""
    conn, client = await sdk_connect(target, http2)
    try:
        return await asyncio.wait_for(_sdk_step(conn, client, step, target, http2), timeout)
    finally:
        await asyncio.wait_for(conn.close(), 10)


async def _sdk_open(conn: Any, cwd: str = "/w") -> tuple[Any, str]:
    init = await conn.initialize(protocol_version=1)
    return init, (await conn.new_session(cwd=cwd, mcp_servers=[])).session_id


async def _sdk_step(conn: Any, client: SdkScenarioClient, step: str, target: str, http2: bool) -> dict[str, Any]:
    updates = client.updates
    if step == "two_sessions":
        _, a = await _sdk_open(conn, "/a")
        b = (await conn.new_session(cwd="/b", mcp_servers=[])).session_id
        ra, rb = await asyncio.gather(
            conn.prompt(session_id=a, prompt=_text("order 300")), conn.prompt(session_id=b, prompt=_text("order 200"))
        )
        return {"sessions": [a, b], "stops": [ra.stop_reason, rb.stop_reason], "updates": updates}
    if step == "load":
        first, _ = await sdk_connect(target, http2)
        try:
            _, made = await _sdk_open(first)
        finally:
            await first.close()
        await conn.initialize(protocol_version=1)
        await conn.load_session(cwd="/w", session_id=made, mcp_servers=[])
        result = await conn.prompt(session_id=made, prompt=_text("order 5"))
        return {"sessionId": made, "stop": result.stop_reason, "updates": await client.handled(made, 5)}
    init, sid = await _sdk_open(conn)
    if step == "order":
        result = await conn.prompt(session_id=sid, prompt=_text(f"order {ORDERED}"))
        got = await client.handled(sid, ORDERED)
        return {"protocolVersion": init.protocol_version, "sessionId": sid, "stop": result.stop_reason, "updates": got}
    if step == "permission":
        result = await conn.prompt(session_id=sid, prompt=_text("permission"))
        return {"sessionId": sid, "stop": result.stop_reason, "asked": client.asked, "updates": updates.get(sid, [])}
    if step == "cancel":
        turn = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=_text("hang")))
        await client.until(lambda: "started" in updates.get(sid, []) or turn.done())
        await conn.cancel(session_id=sid)
        result = await turn
        after = await conn.prompt(session_id=sid, prompt=_text("order 3"))
        return {"sessionId": sid, "stop": result.stop_reason, "after": after.stop_reason}
    if step == "idle":
        result = await conn.prompt(session_id=sid, prompt=_text("sleep 400"))
        after = await conn.prompt(session_id=sid, prompt=_text("order 3"))
        return {"sessionId": sid, "stop": result.stop_reason, "updates": updates.get(sid, [])[:1], "after": after.stop_reason}
    if step == "large":
        sent = blob(BIG)
        result = await conn.prompt(session_id=sid, prompt=_text(sent))
        return {"sessionId": sid, "stop": result.stop_reason, "sent": digest(sent), "echoed": digest((updates.get(sid) or [""])[0])}
    raise AssertionError(f"no step {step!r}")


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_python_sdk_client_to_acpgen_server(v1: ModuleType, transport: str, step: str) -> None:
    if step == "cancel_request":
        pytest.skip(NO_CANCEL_REQUEST)
    _needs(v1, transport, "server")
    scheme, http2 = TRANSPORTS[transport]
    log = Log()

    async def body() -> dict[str, Any]:
        async with served(v1.RPC.asgi_app(agent_factory(v1, log)), http2=http2) as base:
            return await sdk_play(url(base, scheme), step, http2)

    record = run(body())
    check(step, record)
    sid = record.get("sessionId")
    if step == "cancel":
        assert ("session/cancel", sid, None) in log.events and ("cancelled", sid, None) in log.events
    if step == "load":
        assert ("load", sid, None) in log.events


@pytest.mark.parametrize("transport", ["http1", "http2"])
def test_python_sdk_client_reads_acpgen_keepalives(v1: ModuleType, transport: str) -> None:
    """acpgen's server with a keepalive every 20 ms: the SDK's client reads through the
    keepalive comments of an idle turn (sse-starlette's ``: ping`` lines, CRLF)."""
    _needs(v1, transport, "server")
    scheme, http2 = TRANSPORTS[transport]

    async def body() -> dict[str, Any]:
        async with served(v1.RPC.asgi_app(agent_factory(v1, Log()), keepalive=0.02), http2=http2) as base:
            return await sdk_play(url(base, scheme), "idle", http2)

    check("idle", run(body()))


# -- pinned divergences ----------------------------------------------------------------------


def test_python_sdk_client_posts_load_without_a_session_header_and_acpgen_answers_it(v1: ModuleType) -> None:
    """Pinned: the SDK's HTTP client posts ``session/load`` without ``Acp-Session-Id``
    (the TS and Rust servers want it there); acpgen's server takes the session from the
    params, and the load is answered."""
    import json

    _needs(v1, "http1", "server")
    sent: list[Any] = []
    log = Log()

    async def body() -> str:
        async with served(v1.RPC.asgi_app(agent_factory(v1, log))) as base:
            target = url(base, "http")
            made_by, _ = await sdk_connect(target, False)
            try:
                _, made = await _sdk_open(made_by)
            finally:
                await made_by.close()
            conn, _client = await sdk_connect(target, False, sent)
            try:
                await conn.initialize(protocol_version=1)
                await asyncio.wait_for(conn.load_session(cwd="/w", session_id=made, mcp_servers=[]), 10)
            finally:
                await conn.close()
            return made

    made = run(body())
    loads = [r for r in sent if r.method == "POST" and json.loads(r.content).get("method") == "session/load"]
    assert len(loads) == 1 and "acp-session-id" not in loads[0].headers
    assert ("load", made, None) in log.events


def test_python_sdk_client_cannot_load_on_its_own_server() -> None:
    """Pinned: the SDK's HTTP client and server
    together cannot prompt a session loaded on a new connection either (the server 404s
    the prompt's ``Acp-Session-Id``: nothing told it the session is on the connection)."""
    from acp.http.client import AcpHttpStatusError

    async def body() -> BaseException | None:
        async with served(sdk_app(Log())) as base:
            target = url(base, "http")
            made_by, _ = await sdk_connect(target, False)
            try:
                _, made = await _sdk_open(made_by)
            finally:
                await made_by.close()
            conn, _client = await sdk_connect(target, False)
            try:
                await conn.initialize(protocol_version=1)
                await asyncio.wait_for(conn.load_session(cwd="/w", session_id=made, mcp_servers=[]), 10)
                await asyncio.wait_for(conn.prompt(session_id=made, prompt=_text("order 5")), 10)
            except AcpHttpStatusError as exc:
                return exc
            finally:
                await conn.close()
            return None

    failed = run(body())
    assert isinstance(failed, AcpHttpStatusError) and failed.status_code == 404, repr(failed)


def _sdk_server_raw(check: Any) -> Any:
    async def body() -> Any:
        import httpx

        async with served(sdk_app(Log())) as base:
            async with httpx.AsyncClient(timeout=10) as http:
                return await check(http, url(base, "http"))

    return run(body())


async def _initialize(http: Any, target: str) -> str:
    response = await http.post(target, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
    assert response.status_code == 200, response.text
    return str(response.headers["acp-connection-id"])


@pytest.mark.xfail(
    strict=True,
    reason="the Python SDK 0.12.1 server answers 404 to a session stream opened before session/load"
    " on a new connection (the RFD's resume flow opens it first; the TS client does)",
)
def test_python_sdk_server_opens_a_session_stream_before_load() -> None:
    """Pinned divergence: on a new connection, the RFD's resume flow (and the TS client)
    opens the session's SSE stream before posting ``session/load``."""

    async def check(http: Any, target: str) -> int:
        first = await _initialize(http, target)
        new = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w", "mcpServers": []}}
        async with http.stream("GET", target, headers={"accept": "text/event-stream", "acp-connection-id": first}):
            assert (await http.post(target, json=new, headers={"acp-connection-id": first})).status_code == 202
        second = await _initialize(http, target)
        headers = {"accept": "text/event-stream", "acp-connection-id": second, "acp-session-id": "py-1"}
        async with http.stream("GET", target, headers=headers) as response:
            status = int(response.status_code)
        for cid in (first, second):  # ends the SDK's streams (it sees no client leave an idle one)
            await http.delete(target, headers={"acp-connection-id": cid})
        return status

    assert _sdk_server_raw(check) == 200


def test_python_sdk_server_answers_a_batch_501() -> None:
    """The Python SDK server answers a JSON-RPC batch 501, as the RFD and acpgen do (the
    TS server says 400)."""

    async def check(http: Any, target: str) -> int:
        batch = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}]
        return int((await http.post(target, json=batch)).status_code)

    assert _sdk_server_raw(check) == 501



@pytest.mark.xfail(
    strict=True,
    reason="the Python SDK 0.12.1 WebSocket client keeps websockets' default max_size (1 MiB a message)",
)
def test_python_sdk_ws_client_takes_a_message_over_1_mib(v1: ModuleType) -> None:
    """A 2 MB update from acpgen's server reaches the SDK's WebSocket client (acpgen, the
    TS SDK and the RFD's 16 MiB body limit allow it; the SDK's client closes with 1009)."""

    async def body() -> dict[str, Any]:
        async with served(v1.RPC.asgi_app(agent_factory(v1, Log()))) as base:
            conn, client = await sdk_connect(url(base, "ws"), False)
            try:
                _, sid = await _sdk_open(conn)
                sent = blob(2 * BIG)
                result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=_text(sent)), 10)
                return {"stop": result.stop_reason, "sent": digest(sent), "echoed": digest((client.updates.get(sid) or [""])[0])}
            finally:
                await asyncio.wait_for(conn.close(), 10)

    record = run(body())
    assert record["stop"] == "end_turn" and record["echoed"] == record["sent"]


# -- lifecycle across the two ---------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_python_sdk_client_gone_mid_prompt_ends_the_acpgen_connection(v1: ModuleType, transport: str) -> None:
    """The SDK client closes its transport in the middle of a turn: acpgen's server
    cancels the turn's handler and forgets the connection (bounded)."""
    _needs(v1, transport, "server")
    scheme, http2 = TRANSPORTS[transport]
    log = Log()

    async def body() -> tuple[str, int]:
        app = v1.RPC.asgi_app(agent_factory(v1, log))
        async with served(app, http2=http2) as base:
            conn, client = await sdk_connect(url(base, scheme), http2)
            _, sid = await _sdk_open(conn)
            turn = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=_text("hang")))
            await client.until(lambda: "started" in client.updates.get(sid, []))
            await asyncio.wait_for(conn.close(), 10)
            turn.cancel()
            server = app.state.acp
            while server.connections or ("aborted", sid, None) not in log.events:
                await asyncio.sleep(0.02)
            return sid, len(server.connections)

    sid, left = run(body(), 30)
    assert ("aborted", sid, None) in log.events and left == 0


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_acpgen_client_learns_the_python_sdk_connection_id(v1: ModuleType, transport: str) -> None:
    """``conn.remote.connection_id`` is the ``Acp-Connection-Id`` the SDK server gave."""
    _needs(v1, transport, "client")
    scheme, http2 = TRANSPORTS[transport]

    async def body() -> str:
        async with served(sdk_app(Log()), http2=http2) as base:
            conn = await v1.RPC.connect_url(url(base, scheme), **({"http2": True} if http2 else {}))
            try:
                conn.start(peers.scenario_client(v1, peers.Seen()))
                await v1.RemoteAgent(conn).initialize(v1.InitializeRequest(protocol_version=1))
                return str(conn.remote.connection_id)
            finally:
                await conn.close()

    assert len(run(body())) == 32  # the SDK's uuid4().hex


@asynccontextmanager
async def stopped_at_exit(app: Any, http2: bool) -> AsyncIterator[str]:
    """``served``, but the server's open streams are cut at the exit, not drained: the
    SDK's event streams never end by themselves, so uvicorn's graceful shutdown would
    wait on them (Hypercorn's, for HTTP/2, gives up after its grace period)."""
    if http2:
        async with served(app, http2=True) as base:
            yield base
        return
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", timeout_graceful_shutdown=0.2))
    task = asyncio.ensure_future(server.serve())
    while not server.started:
        assert not task.done(), "uvicorn did not start"
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_python_sdk_server_gone_mid_prompt_fails_the_acpgen_prompt(v1: ModuleType, transport: str) -> None:
    """The SDK server shuts down in the middle of a turn: acpgen's pending
    ``session/prompt`` raises ``ConnectionClosedError``, nothing hangs."""
    _needs(v1, transport, "client")
    scheme, http2 = TRANSPORTS[transport]
    closed = sys.modules[v1.__package__].ConnectionClosedError

    async def body() -> BaseException:
        seen = peers.Seen()
        async with stopped_at_exit(sdk_app(Log()), http2) as base:
            conn = await v1.RPC.connect_url(url(base, scheme), **({"http2": True} if http2 else {}))
            conn.start(peers.scenario_client(v1, seen))
            agent = v1.RemoteAgent(conn)
            await agent.initialize(v1.InitializeRequest(protocol_version=1))
            sid = (await agent.session_new(v1.NewSessionRequest(cwd="/w", mcp_servers=[]))).session_id
            prompt = v1.PromptRequest(session_id=sid, prompt=[v1.TextContentBlock(text="hang")])
            turn = asyncio.ensure_future(agent.session_prompt(prompt))
            await seen.until(lambda: "started" in seen.updates.get(sid, []))
        try:  # the server is gone
            await asyncio.wait_for(turn, 5)
        except BaseException as exc:  # noqa: BLE001 - what it raised is the point
            return exc
        finally:
            await conn.close()
        raise AssertionError("the prompt was answered by a stopped server")

    raised = run(body(), 30)
    assert isinstance(raised, closed), repr(raised)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_acpgen_server_stopped_under_a_python_sdk_client_stops_at_once(v1: ModuleType, transport: str) -> None:
    """Cancelling ``run_server`` while an SDK client holds its socket or event streams
    open mid-prompt: the server stops within 2 s, ``run_server`` ends cancelled (not
    with the server library's errors), and the client's pending prompt ends."""
    import importlib
    import time

    run_server = importlib.import_module(f"{v1.__package__}._remote_server").run_server  # the bindings' runtime
    _needs(v1, transport, "server")
    scheme, http2 = TRANSPORTS[transport]

    async def body() -> tuple[float, str, str]:
        app = v1.RPC.asgi_app(agent_factory(v1, Log()))
        port: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        server = asyncio.ensure_future(run_server(app, "127.0.0.1", 0, http2=http2, started=port.set_result))
        await asyncio.wait_for(asyncio.shield(port), 10)
        conn, client = await sdk_connect(url(f"http://127.0.0.1:{port.result()}", scheme), http2)
        try:
            _, sid = await _sdk_open(conn)
            turn = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=_text("hang")))
            await client.until(lambda: "started" in client.updates.get(sid, []))
            began = time.monotonic()
            server.cancel()
            await asyncio.wait([server], timeout=10)
            took = time.monotonic() - began
            outcome = "cancelled" if server.cancelled() else repr(server.exception() if server.done() else "running")
            try:
                await asyncio.wait_for(turn, 5)
                ended = "answered"
            except asyncio.TimeoutError:
                ended = "still waiting"
            except BaseException as exc:  # noqa: BLE001 - any failure ends it
                ended = type(exc).__name__
            return took, outcome, ended
        finally:
            await asyncio.wait_for(conn.close(), 10)

    took, outcome, ended = run(body())
    assert outcome == "cancelled" and ended != "still waiting", (outcome, ended)
    assert took < 2.0, f"the server took {took:.1f} s to stop"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_run_server_serving_the_python_sdk_app_stops_when_cancelled(v1: ModuleType, transport: str) -> None:
    """``run_server`` serving another ASGI app (the SDK's, whose event streams never end
    by themselves), cancelled while an acpgen client holds its streams or socket open
    mid-prompt: it ends cancelled within the server's grace period (3 s), and the
    client's pending prompt fails."""
    import importlib
    import time

    run_server = importlib.import_module(f"{v1.__package__}._remote_server").run_server
    _needs(v1, transport, "client")
    scheme, http2 = TRANSPORTS[transport]
    closed = sys.modules[v1.__package__].ConnectionClosedError

    async def body() -> tuple[float, str, BaseException | None]:
        port: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        server = asyncio.ensure_future(run_server(sdk_app(Log()), "127.0.0.1", 0, http2=http2, started=port.set_result))
        await asyncio.wait_for(asyncio.shield(port), 10)
        seen = peers.Seen()
        conn = await v1.RPC.connect_url(url(f"http://127.0.0.1:{port.result()}", scheme), **({"http2": True} if http2 else {}))
        try:
            conn.start(peers.scenario_client(v1, seen))
            agent = v1.RemoteAgent(conn)
            await agent.initialize(v1.InitializeRequest(protocol_version=1))
            sid = (await agent.session_new(v1.NewSessionRequest(cwd="/w", mcp_servers=[]))).session_id
            prompt = v1.PromptRequest(session_id=sid, prompt=[v1.TextContentBlock(text="hang")])
            turn = asyncio.ensure_future(agent.session_prompt(prompt))
            await seen.until(lambda: "started" in seen.updates.get(sid, []))
            began = time.monotonic()
            server.cancel()
            await asyncio.wait([server], timeout=15)
            took = time.monotonic() - began
            outcome = "cancelled" if server.cancelled() else repr(server.exception() if server.done() else "running")
            try:
                await asyncio.wait_for(turn, 5)
                raised = None
            except BaseException as exc:  # noqa: BLE001 - what it raised is the point
                raised = exc
            return took, outcome, raised
        finally:
            await asyncio.wait_for(conn.close(), 10)

    took, outcome, raised = run(body())
    assert outcome == "cancelled", outcome
    assert took < 4.0, f"the server took {took:.1f} s to stop"
    assert isinstance(raised, closed), repr(raised)
