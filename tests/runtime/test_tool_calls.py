"""Tool calls and permission, for agents (``acpgen/runtime/_tool_calls.py``), in the three
styles and both protocol versions: ``ToolCalls.start`` sends ``tool_call`` (v1; the
``tool_call_update`` upsert in v2, whose schema has no ``tool_call``), ``update`` a
``tool_call_update`` by id (``None`` clears a member), ``request_permission`` the request
with the usual four options and a typed outcome. Driven by acpgen clients (the session
object's snapshot), the Python SDK 0.12.1's client and the TypeScript SDK 2.4.0's clients
(v1 and v2), real peers skipped with a reason when absent."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from .harness import STYLES, socket_streams
from .peers import env_with
from .sessions_harness import main_packages, package, run, sdk_module, sdk_packages, typed

PEERS = Path(__file__).parent / "peers"
TOOL_AGENT = PEERS / "tool_agent.py"
OUTCOMES = {  # the option kind the user picks -> what the agent reads of the outcome
    "allow_always": (True, True, "allowed always"),
    "allow_once": (True, False, "allowed once"),
    "reject_once": (False, False, "rejected once"),
    "reject_always": (False, True, "rejected always"),
}


@pytest.fixture(scope="module")
def sdk(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sdk_packages(tmp_path_factory)


@pytest.fixture(scope="module", params=["sdk", "main"])
def bindings(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bindings of the TypeScript SDK 2.4.0's schema files, and of upstream main."""
    if request.param == "sdk":
        return sdk_packages(tmp_path_factory)
    return main_packages(tmp_path_factory)


class Agent:
    """An acpgen agent whose prompt reports a tool call with the helpers."""

    def __init__(self, m: ModuleType) -> None:
        self.m = m
        self.conn: Any = None
        self.outcome: Any = None
        self.v2 = m.__name__.endswith("v2")

    async def session_prompt(self, params: Any) -> Any:
        session = self.m.RPC.codec.dump(params)["sessionId"]
        calls = package(self.m).ToolCalls(self.conn, session)
        tid = await calls.start("Edit b.txt", kind="edit", status="pending", locations=[{"path": "/w/b.txt"}])
        assert tid == "call-1" and calls.calls[tid]["kind"] == "edit"
        self.outcome = await calls.request_permission(tid, title="Edit b.txt?")
        await calls.update(tid, status="completed" if self.outcome.allowed else "failed", kind=None, raw_output={"ok": True})
        assert "kind" not in calls.calls[tid]
        if self.v2:
            idle = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
            notification = typed(self.m, "session/update", {"sessionId": session, "update": idle}, "notification")
            asyncio.get_running_loop().call_later(0.01, lambda: asyncio.ensure_future(self.conn.notify("session/update", notification)))
            result = self.m.RPC.spec("session/prompt").result
            try:  # the SDK's v2 answers a prompt with the id of its user message
                return self.m.RPC.codec.load(result, {"messageId": "u1"})
            except self.m.RPC.codec.errors:
                return self.m.RPC.codec.load(result, {})
        return self.m.RPC.codec.load(self.m.RPC.spec("session/prompt").result, {"stopReason": "end_turn"})


class Client:
    """Picks the option of ``kind`` (cancels when there is none), and keeps the request."""

    def __init__(self, m: ModuleType, kind: str) -> None:
        self.m = m
        self.kind = kind
        self.asked: Any = None

    async def session_request_permission(self, params: Any) -> Any:
        self.asked = self.m.RPC.codec.dump(params)
        chosen = [o["optionId"] for o in self.asked["options"] if o["kind"] == self.kind]
        outcome = {"outcome": "selected", "optionId": chosen[0]} if chosen else {"outcome": "cancelled"}
        return self.m.RPC.codec.load(self.m.RPC.spec("session/request_permission").result, {"outcome": outcome})


@pytest.mark.parametrize("kind", [*OUTCOMES, "none"])
@pytest.mark.parametrize("version", ["v1", "v2"])
@pytest.mark.parametrize("style", STYLES)
def test_between_acpgen_peers(style: str, version: str, kind: str, bindings: Path) -> None:
    m = sdk_module(bindings, style, version)
    agent, client = Agent(m), Client(m, kind)

    async def body() -> None:
        a_r, a_w, c_r, c_w = await socket_streams()
        agent_conn = m.RPC.connect("agent", a_r, a_w)
        client_conn = m.RPC.connect("client", c_r, c_w)
        agent.conn = agent_conn
        agent_conn.start(agent)
        sessions = package(m).ClientSessions(client_conn)
        client_conn.start(sessions.handler(client))
        try:
            session = sessions.session("s-1")
            end = await session.prompt("edit b.txt")
            assert end.stop_reason == "end_turn"
            call = session.snapshot().tool_calls["call-1"]
        finally:
            await client_conn.close()
            await agent_conn.close()
        allowed, always, _ = OUTCOMES.get(kind, (False, False, ""))
        outcome = agent.outcome
        assert (outcome.allowed, outcome.always, outcome.cancelled) == (allowed, always, kind == "none")
        assert outcome.kind == (None if kind == "none" else kind) and outcome.option_id == (None if kind == "none" else kind)
        assert m.RPC.codec.dump(outcome.response)["outcome"]["outcome"] == ("cancelled" if kind == "none" else "selected")
        assert call == {"toolCallId": "call-1", "title": "Edit b.txt", "status": "completed" if allowed else "failed", "locations": [{"path": "/w/b.txt"}], "rawOutput": {"ok": True}}
        asked = client.asked
        assert [o["kind"] for o in asked["options"]] == ["allow_once", "allow_always", "reject_once", "reject_always"]
        if version == "v1":
            assert asked["toolCall"]["toolCallId"] == "call-1" and asked["toolCall"]["title"] == "Edit b.txt"
        else:
            assert asked["title"] == "Edit b.txt?" and asked["subject"]["toolCall"]["toolCallId"] == "call-1"

    run(body())


def test_the_usual_options_and_an_outcome_this_build_does_not_know() -> None:
    from acpgen.runtime._tool_calls import PermissionOutcome, permission_options

    assert permission_options("allow_once", "reject_once", names={"allow_once": "Yes"}) == [
        {"optionId": "allow_once", "name": "Yes", "kind": "allow_once"},
        {"optionId": "reject_once", "name": "Reject once", "kind": "reject_once"},
    ]
    future = PermissionOutcome("_granted_forever", None, None, None)
    assert not future.allowed and not future.always and not future.cancelled  # never approval


# -- the SDKs' clients ---------------------------------------------------------------------


@pytest.mark.parametrize("style", STYLES)
def test_the_python_sdk_client(style: str, sdk: Path) -> None:
    acp = pytest.importorskip("acp", reason="the Python SDK agent-client-protocol is not installed")

    class SdkClient:
        def __init__(self) -> None:
            self.updates: list[Any] = []
            self.asked: Any = None

        def on_connect(self, conn: Any) -> None:
            pass

        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            self.updates.append(update)

        async def request_permission(self, options: Any, session_id: str, tool_call: Any, **kwargs: Any) -> Any:
            self.asked = (options, tool_call)
            chosen = next(o for o in options if o.kind == "allow_always")
            return acp.RequestPermissionResponse(outcome=acp.schema.AllowedOutcome(option_id=chosen.option_id, outcome="selected"))

    async def body() -> None:
        client = SdkClient()
        env = env_with(sdk)
        async with acp.spawn_agent_process(client, sys.executable, str(TOOL_AGENT), style, "v1", env=env) as (conn, _):
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            session = await conn.new_session(cwd="/w", mcp_servers=[])
            done = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("read a.txt")])
        assert done.stop_reason == "end_turn"
        # the SDK typed each of our frames with its own models
        start, progress, completed, said = client.updates
        assert type(start).__name__ == "ToolCallStart" and start.tool_call_id == "call-1" and start.status == "pending"
        assert type(progress).__name__ == "ToolCallProgress" and progress.status == "in_progress"
        assert completed.status == "completed" and completed.raw_output == {"bytes": 5}
        assert said.content.text == "allowed always"
        options, tool_call = client.asked
        assert [o.kind for o in options] == ["allow_once", "allow_always", "reject_once", "reject_always"]
        assert tool_call.tool_call_id == "call-1" and tool_call.title == "Read a.txt"

    run(body(), 30)


def _ts_client(sdk: Path, version: str, kind: str, style: str) -> dict[str, Any]:
    node = shutil.which("node")
    assert node is not None  # sdk_packages skipped the test otherwise
    done = subprocess.run(
        [node, str(PEERS / "tool_client.mjs"), version, kind, sys.executable, str(TOOL_AGENT), style, version],
        env=env_with(sdk), capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.parametrize("kind", ["allow_always", "reject_once"])
@pytest.mark.parametrize("version", ["v1", "v2"])
@pytest.mark.parametrize("style", STYLES)
def test_the_typescript_sdk_client(style: str, version: str, kind: str, sdk: Path) -> None:
    record = _ts_client(sdk, version, kind, style)
    tags = [u["sessionUpdate"] for u in record["updates"]]
    calls = [u for u in record["updates"] if u.get("toolCallId") == "call-1"]
    if version == "v1":
        assert tags[:3] == ["tool_call", "tool_call_update", "tool_call_update"] and record["prompt"] == {"stopReason": "end_turn"}
        assert record["permission"]["toolCall"]["toolCallId"] == "call-1"
    else:
        assert tags[0] == "state_update" and tags[-1] == "state_update" and record["prompt"] == {"messageId": "u1"}
        assert [c["sessionUpdate"] for c in calls] == ["tool_call_update"] * 3  # the v2 upsert starts it
        assert record["permission"]["title"] == "Read a.txt" and record["permission"]["subject"]["type"] == "tool_call"
    assert calls[0]["title"] == "Read a.txt" and calls[0]["status"] == "pending"
    assert calls[1] == {"toolCallId": "call-1", "kind": None, "status": "in_progress", "sessionUpdate": "tool_call_update"}
    allowed, always, said = OUTCOMES[kind]
    assert calls[2]["status"] == ("completed" if allowed else "failed")
    assert [u["content"]["text"] for u in record["updates"] if u["sessionUpdate"] == "agent_message_chunk"] == [said]
    assert [o["kind"] for o in record["permission"]["options"]] == ["allow_once", "allow_always", "reject_once", "reject_always"]
