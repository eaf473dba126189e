"""One acpgen agent and one acpgen client for the remote scenario every real-peer pairing
plays (``test_peers_ts.py``, ``test_peers_python.py``), with the checks every pairing's
record goes through, whoever played the client.

The agent (:class:`ScenarioAgent`, served by ``v1.RPC.asgi_app``) does what a prompt's
text says, as the SDK agents of the pairings do (``tests/interop/remote_agent.mjs``,
``PY_SDK_AGENT`` in ``test_peers_python.py``):

* ``order N``: N ``agent_message_chunk`` updates "0".."N-1", each sent before the next;
* ``permission``: asks ``session/request_permission`` (options ``allow``, ``reject``),
  then sends ``granted <optionId>``;
* ``hang``: sends ``started`` and waits: ``session/cancel`` ends the turn with
  ``stopReason: "cancelled"``; ``$/cancel_request`` cancels the handler, which sends
  ``aborted`` and is answered -32800;
* ``sleep MS`` (acpgen's agent only): sends ``slept`` after MS ms of silence;
* anything else is echoed back as one update (the 1 MB prompt).

The client (:func:`play`, over ``v1.RPC.connect_url``) plays one step on a new connection
and gives its record, shaped as ``tests/interop/remote_client.mjs`` prints it:

* ``order``: initialize, session/new, a prompt of 1,000 updates: all in order;
* ``permission``: the agent's permission request during the prompt, answered;
* ``cancel``: a turn ended by ``session/cancel``, then another turn on the session;
* ``cancel_request``: a turn ended by ``$/cancel_request``, then another turn;
* ``two_sessions``: two sessions on one connection, prompted at once;
* ``large``: a 1 MB prompt, echoed back as a 1 MB update;
* ``load``: ``session/load`` on a new connection of a session made on another one.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ...conftest import generate, import_file
from ..peers import INTEROP, SDK

ORDERED = 1000
BIG = 1_000_000  # characters of the large prompt (a message of about 1 MB each way)
STEPS = ("order", "permission", "cancel", "cancel_request", "two_sessions", "large", "load")
TIMEOUT = 20.0  # seconds one step may take, whoever plays it
_sessions = itertools.count(1)


def blob(n: int) -> str:
    """A text of ``n`` characters: ASCII, then a few outside it (one outside the BMP);
    remote_client.mjs makes the same text."""
    tail = "é€ж😀"
    body = "abcdefghijklmnopqrstuvwxyz0123456789" * (n // 36 + 1)
    return body[: n - len(tail)] + tail


def digest(text: str) -> dict[str, Any]:
    return {"length": len(text), "sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()}


def bindings(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """``v1`` of bindings generated from the schema directory of the pinned TypeScript
    SDK (installed by the first test that needs it; skipped, saying why, without npm)."""
    from ...conftest import npm_install

    npm_install(INTEROP, "@agentclientprotocol/sdk", "the remote real-peer tests")
    npm_install(INTEROP, "ws", "the remote real-peer tests")
    out = generate(SDK / "schema", tmp_path_factory.mktemp("remote-peer-bindings"), ("pydantic",))
    return import_file(Path(out) / "acp_pydantic" / "v1.py")


def needs_http(v1: ModuleType, side: str) -> None:
    """Skip unless the bindings' runtime has acpgen's Streamable HTTP ``side``."""
    import importlib

    module, name = ("_http_client", "connect_http") if side == "client" else ("_http_server", "HttpEndpoint")
    if not hasattr(importlib.import_module(f"{v1.__package__}.{module}"), name):
        pytest.skip(f"acpgen's Streamable HTTP {side} is not in this runtime yet ({module}.{name})")


class Requests:
    """An ASGI app in front of another that keeps, for each HTTP request, its method and
    its ``Acp-*`` headers (what a peer client did on the wire)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[tuple[str, str | None, str | None]] = []  # method, connection, session

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            self.seen.append((scope["method"], headers.get("acp-connection-id"), headers.get("acp-session-id")))
        await self.app(scope, receive, send)

    def about(self, session: str) -> list[tuple[str, str | None, str | None]]:
        """The requests naming ``session`` in ``Acp-Session-Id``, in order."""
        return [r for r in self.seen if r[2] == session]


# -- the agent ------------------------------------------------------------------------------


class Log:
    """What the agents of one server saw, in order: (event, session id, detail)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, Any]] = []

    def add(self, event: str, session: str, detail: Any = None) -> None:
        self.events.append((event, session, detail))

    def of(self, event: str) -> list[tuple[str, str, Any]]:
        return [e for e in self.events if e[0] == event]


def agent_factory(v1: ModuleType, log: Log) -> Any:
    """``serve(conn)`` for ``v1.RPC.asgi_app``: a new :class:`ScenarioAgent` per connection."""
    return lambda conn: scenario_agent(v1, log)(v1.RemoteClient(conn))


def scenario_agent(v1: ModuleType, log: Log) -> type:
    class ScenarioAgent(v1.Agent):  # type: ignore[name-defined,misc]
        def __init__(self, client: Any) -> None:
            self.client = client
            self.cancels: dict[str, asyncio.Event] = {}

        async def initialize(self, params: Any) -> Any:
            caps = v1.AgentCapabilities(load_session=True)
            return v1.InitializeResponse(protocol_version=params.protocol_version, agent_capabilities=caps)

        async def session_new(self, params: Any) -> Any:
            session_id = f"acpgen-{next(_sessions)}"
            log.add("new", session_id, params.cwd)
            return v1.NewSessionResponse(session_id=session_id)

        async def session_load(self, params: Any) -> Any:
            log.add("load", params.session_id)
            return v1.LoadSessionResponse()

        async def _say(self, session_id: str, text: str) -> None:
            chunk = v1.AgentMessageChunkSessionUpdate(content=v1.TextContentBlock(text=text))
            await self.client.session_update(v1.SessionNotification(session_id=session_id, update=chunk))

        async def session_prompt(self, params: Any) -> Any:
            sid = params.session_id
            text = getattr(params.prompt[0], "text", "")
            log.add("prompt", sid, digest(text) if len(text) > 100 else text)
            if text.startswith("order "):
                for i in range(int(text[6:])):
                    await self._say(sid, str(i))
            elif text.startswith("sleep "):  # an idle stream: keepalives only
                await asyncio.sleep(int(text[6:]) / 1000)
                await self._say(sid, "slept")
            elif text == "permission":
                allow = v1.PermissionOption(option_id="allow", name="Allow", kind="allow_once")
                reject = v1.PermissionOption(option_id="reject", name="Reject", kind="reject_once")
                answer = await self.client.session_request_permission(
                    v1.RequestPermissionRequest(
                        session_id=sid,
                        tool_call=v1.ToolCallUpdate(tool_call_id="t1", title="Edit a.txt"),
                        options=[allow, reject],
                    )
                )
                await self._say(sid, f"granted {getattr(answer.outcome, 'option_id', answer.outcome.outcome)}")
            elif text == "hang":
                cancelled = self.cancels[sid] = asyncio.Event()
                await self._say(sid, "started")
                try:
                    await cancelled.wait()
                except asyncio.CancelledError:  # $/cancel_request (or the connection closing)
                    log.add("aborted", sid)
                    await self._say(sid, "aborted")
                    raise
                log.add("cancelled", sid)
                return v1.PromptResponse(stop_reason="cancelled")
            else:
                await self._say(sid, text)
            return v1.PromptResponse(stop_reason="end_turn")

        async def session_cancel(self, params: Any) -> None:
            log.add("session/cancel", params.session_id)
            event = self.cancels.get(params.session_id)
            if event is not None:
                event.set()

    return ScenarioAgent


# -- the client -----------------------------------------------------------------------------


class Seen:
    """What the agent sent an acpgen client: update texts by session, permissions asked,
    and every frame (an observer)."""

    def __init__(self) -> None:
        self.updates: dict[str, list[str]] = {}
        self.asked: list[dict[str, Any]] = []
        self.frames: list[tuple[str, Any]] = []
        self.changed = asyncio.Event()

    def observe(self, traffic: Any) -> None:
        message = traffic.message()
        self.frames.append((traffic.direction, message if traffic.size < 10_000 else "(large)"))
        self.changed.set()

    async def until(self, test: Any, timeout: float = 10.0) -> None:
        async def wait() -> None:
            while not test():
                self.changed.clear()
                await self.changed.wait()

        await asyncio.wait_for(wait(), timeout)


def scenario_client(v1: ModuleType, seen: Seen) -> Any:
    class ScenarioClient(v1.Client):  # type: ignore[name-defined,misc]
        async def session_update(self, params: Any) -> None:
            text = getattr(params.update.content, "text", "")
            seen.updates.setdefault(params.session_id, []).append(text)
            seen.changed.set()

        async def session_request_permission(self, params: Any) -> Any:
            options = [o.option_id for o in params.options]
            seen.asked.append({"sessionId": params.session_id, "toolCallId": params.tool_call.tool_call_id, "options": options})
            outcome = v1.SelectedRequestPermissionOutcome(option_id=options[0])
            return v1.RequestPermissionResponse(outcome=outcome)

    return ScenarioClient()


async def play(v1: ModuleType, url: str, step: str, **options: Any) -> dict[str, Any]:
    """Play ``step`` as an acpgen client of the agent at ``url``, on a new connection
    (``options`` for ``connect_url``): its record."""
    seen = Seen()
    conn = await v1.RPC.connect_url(url, observers=[seen.observe], **options)
    try:
        conn.start(scenario_client(v1, seen))
        return await asyncio.wait_for(_STEPS[step](v1, v1.RemoteAgent(conn), seen, url, options), TIMEOUT)
    finally:
        await asyncio.wait_for(conn.close(), 10)


async def _open(v1: ModuleType, agent: Any, cwd: str = "/w") -> tuple[Any, str]:
    init = await agent.initialize(v1.InitializeRequest(protocol_version=1))
    session = await agent.session_new(v1.NewSessionRequest(cwd=cwd, mcp_servers=[]))
    return init, session.session_id


def _prompt(v1: ModuleType, sid: str, text: str) -> Any:
    return v1.PromptRequest(session_id=sid, prompt=[v1.TextContentBlock(text=text)])


async def _order(v1: ModuleType, agent: Any, seen: Seen, url: str, options: Any) -> dict[str, Any]:
    init, sid = await _open(v1, agent)
    result = await agent.session_prompt(_prompt(v1, sid, f"order {ORDERED}"))
    return {"protocolVersion": init.protocol_version, "sessionId": sid, "stop": result.stop_reason, "updates": seen.updates.get(sid, [])}


async def _permission(v1: ModuleType, agent: Any, seen: Seen, url: str, options: Any) -> dict[str, Any]:
    _, sid = await _open(v1, agent)
    result = await agent.session_prompt(_prompt(v1, sid, "permission"))
    return {"sessionId": sid, "stop": result.stop_reason, "asked": seen.asked, "updates": seen.updates.get(sid, [])}


async def _cancel(v1: ModuleType, agent: Any, seen: Seen, url: str, options: Any) -> dict[str, Any]:
    _, sid = await _open(v1, agent)
    turn = asyncio.ensure_future(agent.session_prompt(_prompt(v1, sid, "hang")))
    await seen.until(lambda: "started" in seen.updates.get(sid, []) or turn.done())
    await agent.session_cancel(v1.CancelNotification(session_id=sid))
    result = await turn
    after = await agent.session_prompt(_prompt(v1, sid, "order 3"))
    return {"sessionId": sid, "stop": result.stop_reason, "after": after.stop_reason}


def _answer_to(seen: Seen, rid: Any) -> Any:
    for direction, message in seen.frames:
        if direction == "in" and isinstance(message, dict) and "method" not in message and message.get("id") == rid:
            return message
    return None


async def _cancel_request(v1: ModuleType, agent: Any, seen: Seen, url: str, options: Any) -> dict[str, Any]:
    _, sid = await _open(v1, agent)
    turn = asyncio.ensure_future(agent.session_prompt(_prompt(v1, sid, "hang")))
    await seen.until(lambda: "started" in seen.updates.get(sid, []) or turn.done())
    rid = next(
        m["id"] for d, m in seen.frames
        if d == "out" and isinstance(m, dict) and m.get("method") == "session/prompt"
    )  # fmt: skip
    turn.cancel()  # sends $/cancel_request for the prompt
    await seen.until(lambda: _answer_to(seen, rid) is not None)
    answer = _answer_to(seen, rid)
    sent = [m for d, m in seen.frames if d == "out" and isinstance(m, dict) and m.get("method") == "$/cancel_request"]
    after = await agent.session_prompt(_prompt(v1, sid, "order 3"))
    return {
        "sessionId": sid,
        "error": answer.get("error", {}).get("code"),
        "sent": [m.get("params") for m in sent],
        "updates": seen.updates.get(sid, []),
        "after": after.stop_reason,
    }


async def _two_sessions(v1: ModuleType, agent: Any, seen: Seen, url: str, options: Any) -> dict[str, Any]:
    _, a = await _open(v1, agent, "/a")
    b = (await agent.session_new(v1.NewSessionRequest(cwd="/b", mcp_servers=[]))).session_id
    ra, rb = await asyncio.gather(
        agent.session_prompt(_prompt(v1, a, "order 300")),
        agent.session_prompt(_prompt(v1, b, "order 200")),
    )
    return {"sessions": [a, b], "stops": [ra.stop_reason, rb.stop_reason], "updates": seen.updates}


async def _large(v1: ModuleType, agent: Any, seen: Seen, url: str, options: Any) -> dict[str, Any]:
    _, sid = await _open(v1, agent)
    sent = blob(BIG)
    result = await agent.session_prompt(_prompt(v1, sid, sent))
    echoed = (seen.updates.get(sid) or [""])[0]
    return {"sessionId": sid, "stop": result.stop_reason, "sent": digest(sent), "echoed": digest(echoed)}


async def _load(v1: ModuleType, agent: Any, seen: Seen, url: str, options: Any) -> dict[str, Any]:
    first = await v1.RPC.connect_url(url, **options)
    try:
        first.start(scenario_client(v1, Seen()))
        _, made = await _open(v1, v1.RemoteAgent(first))
    finally:
        await first.close()
    await agent.initialize(v1.InitializeRequest(protocol_version=1))
    await agent.session_load(v1.LoadSessionRequest(session_id=made, cwd="/w", mcp_servers=[]))
    result = await agent.session_prompt(_prompt(v1, made, "order 5"))
    return {"sessionId": made, "stop": result.stop_reason, "updates": seen.updates.get(made, [])}


_STEPS = {
    "order": _order,
    "permission": _permission,
    "cancel": _cancel,
    "cancel_request": _cancel_request,
    "two_sessions": _two_sessions,
    "large": _large,
    "load": _load,
}


# -- the checks -----------------------------------------------------------------------------


def check(step: str, record: dict[str, Any]) -> None:
    """Assert what ``step``'s record must show, whoever played it."""
    assert "failed" not in record, record
    globals()[f"check_{step}"](record)


def _numbers(n: int) -> list[str]:
    return [str(i) for i in range(n)]


def check_order(record: dict[str, Any]) -> None:
    assert record["protocolVersion"] == 1 and record["stop"] == "end_turn"
    updates = record["updates"]
    assert len(updates) == ORDERED, f"{len(updates)} updates of {ORDERED}"
    assert updates == _numbers(ORDERED), "updates out of order"


def check_permission(record: dict[str, Any]) -> None:
    assert record["asked"] == [{"sessionId": record["sessionId"], "toolCallId": "t1", "options": ["allow", "reject"]}]
    assert record["updates"] == ["granted allow"] and record["stop"] == "end_turn"


def check_cancel(record: dict[str, Any]) -> None:
    assert record["stop"] == "cancelled" and record["after"] == "end_turn", record


def check_cancel_request(record: dict[str, Any]) -> None:
    assert record["error"] == -32800, record
    assert record["updates"][:2] == ["started", "aborted"], record["updates"]
    assert record["after"] == "end_turn"


def check_two_sessions(record: dict[str, Any]) -> None:
    a, b = record["sessions"]
    assert a != b and record["stops"] == ["end_turn", "end_turn"]
    assert record["updates"][a] == _numbers(300) and record["updates"][b] == _numbers(200)


def check_large(record: dict[str, Any]) -> None:
    assert record["stop"] == "end_turn"
    assert record["sent"]["length"] == BIG and record["echoed"] == record["sent"], (record["sent"], record["echoed"])


def check_idle(record: dict[str, Any]) -> None:
    assert record["stop"] == "end_turn" and record["updates"] == ["slept"] and record["after"] == "end_turn", record


def check_load(record: dict[str, Any]) -> None:
    assert record["stop"] == "end_turn" and record["updates"] == _numbers(5), record
