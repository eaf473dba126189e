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


# -- what each helper sends, on a connection that records it ---------------------------------


class Recording:
    """What :class:`ToolCalls` uses of a connection: its ``rpc``, ``notify`` and
    ``request``; it keeps what was sent (wire form) and answers a permission request with
    ``answer``."""

    def __init__(self, m: ModuleType, answer: Any = None, rpc: Any = None) -> None:
        self.m = m
        self.rpc = rpc or m.RPC
        self.sent: list[tuple[str, Any]] = []
        self.answer = answer

    async def notify(self, method: str, params: Any) -> None:
        self.sent.append((method, self.m.RPC.codec.dump(params)))

    async def request(self, method: str, params: Any) -> Any:
        self.sent.append((method, self.m.RPC.codec.dump(params)))
        return self.answer


def selected(m: ModuleType, option_id: str) -> Any:
    return m.RPC.codec.load(m.RPC.spec("session/request_permission").result, {"outcome": {"outcome": "selected", "optionId": option_id}})


EVERY_MEMBER = {
    "kind": "edit",
    "status": "in_progress",
    "locations": [{"path": "/w/a.txt", "line": 3}],
    "raw_input": {"path": "/w/a.txt"},
    "raw_output": {"bytes": 5},
    "meta": {"trace": "t1"},
}
EVERY_WIRE = {"kind": "edit", "status": "in_progress", "locations": [{"path": "/w/a.txt", "line": 3}], "rawInput": {"path": "/w/a.txt"}, "rawOutput": {"bytes": 5}, "_meta": {"trace": "t1"}}
CONTENT = [{"type": "content", "content": {"type": "text", "text": "hello"}}]


@pytest.mark.parametrize("version", ["v1", "v2"])
@pytest.mark.parametrize("style", STYLES)
def test_start_sends_every_member_given(style: str, version: str, sdk: Path) -> None:
    m = sdk_module(sdk, style, version)
    conn = Recording(m)
    calls = package(m).ToolCalls(conn, "s-1")
    tid = run(calls.start("Edit a.txt", tool_call_id="mine", content=CONTENT, **EVERY_MEMBER))
    tag = "tool_call" if version == "v1" else "tool_call_update"  # v2 has only the upsert
    body = {"toolCallId": "mine", "title": "Edit a.txt", **EVERY_WIRE, "content": CONTENT}
    assert tid == "mine"
    assert conn.sent == [("session/update", {"sessionId": "s-1", "update": {"sessionUpdate": tag, **body}})]
    assert calls.calls == {"mine": body}


@pytest.mark.parametrize("style", ["pydantic", "dataclasses"])
def test_typed_members_are_sent_in_their_wire_form(style: str, sdk: Path) -> None:
    m = sdk_module(sdk, style, "v1")
    codec = m.RPC.codec
    conn = Recording(m)
    calls = package(m).ToolCalls(conn, "s-1")
    location = codec.load(m.ToolCallLocation, {"path": "/w/b.txt"})
    content = codec.load(m.ToolCallContent, CONTENT[0])
    run(calls.start("Read", locations=[location, {"path": "/w/c.txt"}], content=[content]))
    run(calls.update("call-1", locations=[location]))
    run(calls.update("call-1", raw_output=location, raw_input=("a", 1)))  # a value of the bindings, a tuple
    first, second, third = (params["update"] for _, params in conn.sent)
    assert first["locations"] == [{"path": "/w/b.txt"}, {"path": "/w/c.txt"}] and first["content"] == CONTENT
    assert second["locations"] == [{"path": "/w/b.txt"}]
    assert third["rawOutput"] == {"path": "/w/b.txt"} and third["rawInput"] == ["a", 1]
    assert calls.calls["call-1"]["rawOutput"] == {"path": "/w/b.txt"} and calls.calls["call-1"]["rawInput"] == ["a", 1]


@pytest.mark.parametrize("style", STYLES)
def test_ids_are_made_in_order_with_the_prefix_asked(style: str, sdk: Path) -> None:
    m = sdk_module(sdk, style, "v1")
    calls = package(m).ToolCalls(Recording(m), "s-1", prefix="tool")
    ids = [run(calls.start("a")), run(calls.start("b", tool_call_id="x")), run(calls.start("c"))]
    assert ids == ["tool-1", "x", "tool-2"]
    assert package(m).ToolCalls(Recording(m), "s-1")._ids.__next__() == "call-1"


@pytest.mark.parametrize("version", ["v1", "v2"])
@pytest.mark.parametrize("style", STYLES)
def test_update_sends_the_members_given_and_none_clears_one(style: str, version: str, sdk: Path) -> None:
    m = sdk_module(sdk, style, version)
    conn = Recording(m)
    calls = package(m).ToolCalls(conn, "s-1")
    run(calls.start("Edit", kind="edit", status="pending"))
    conn.sent.clear()
    run(calls.update("call-1", title="Edit a.txt", content=CONTENT, **EVERY_MEMBER))
    run(calls.update("call-1", kind=None, raw_input=None, status="completed"))
    every = {"title": "Edit a.txt", **EVERY_WIRE, "content": CONTENT}
    assert conn.sent == [
        ("session/update", {"sessionId": "s-1", "update": {"sessionUpdate": "tool_call_update", "toolCallId": "call-1", **every}}),
        ("session/update", {"sessionId": "s-1", "update": {"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "kind": None, "rawInput": None, "status": "completed"}}),
    ]
    kept = {k: v for k, v in every.items() if k not in ("kind", "rawInput")}
    assert calls.calls == {"call-1": {"toolCallId": "call-1", **kept, "status": "completed"}}


@pytest.mark.parametrize("style", STYLES)
def test_an_update_of_a_call_not_started_here_is_kept_from_then_on(style: str, sdk: Path) -> None:
    m = sdk_module(sdk, style, "v1")
    calls = package(m).ToolCalls(Recording(m), "s-1")
    run(calls.update("theirs", status="in_progress", title=None))
    assert calls.calls == {"theirs": {"toolCallId": "theirs", "status": "in_progress"}}


@pytest.mark.parametrize("version", ["v1", "v2"])
@pytest.mark.parametrize("style", STYLES)
def test_request_permission_asks_about_the_call_as_reported(style: str, version: str, sdk: Path) -> None:
    m = sdk_module(sdk, style, version)
    conn = Recording(m, selected(m, "allow_always"))
    calls = package(m).ToolCalls(conn, "s-1")
    run(calls.start("Edit a.txt", kind="edit"))
    conn.sent.clear()
    outcome = run(calls.request_permission("call-1", description="It writes a.txt"))
    (method, asked), = conn.sent
    call = {"toolCallId": "call-1", "title": "Edit a.txt", "kind": "edit"}
    options = [
        {"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
        {"optionId": "allow_always", "name": "Always allow", "kind": "allow_always"},
        {"optionId": "reject_once", "name": "Reject once", "kind": "reject_once"},
        {"optionId": "reject_always", "name": "Always reject", "kind": "reject_always"},
    ]
    assert method == "session/request_permission"
    if version == "v1":  # v1 has no title nor description of its own
        assert asked == {"sessionId": "s-1", "toolCall": call, "options": options}
    else:
        assert asked == {"sessionId": "s-1", "title": "Edit a.txt", "description": "It writes a.txt", "subject": {"type": "tool_call", "toolCall": call}, "options": options}
    assert (outcome.outcome, outcome.option_id, outcome.kind, outcome.allowed, outcome.always) == ("selected", "allow_always", "allow_always", True, True)
    assert outcome.response is conn.answer


@pytest.mark.parametrize("style", STYLES)
def test_a_v2_prompt_is_titled_as_asked_or_after_the_call_or_permission(style: str, sdk: Path) -> None:
    m = sdk_module(sdk, style, "v2")
    conn = Recording(m, selected(m, "reject_once"))
    calls = package(m).ToolCalls(conn, "s-1")
    run(calls.start("Edit a.txt"))
    run(calls.request_permission("call-1", title="Edit it?"))
    run(calls.request_permission("call-1"))
    run(calls.request_permission("unknown"))
    asked = [params for method, params in conn.sent if method == "session/request_permission"]
    assert [a["title"] for a in asked] == ["Edit it?", "Edit a.txt", "Permission"]
    assert all("description" not in a for a in asked)
    assert asked[2]["subject"] == {"type": "tool_call", "toolCall": {"toolCallId": "unknown"}}


@pytest.mark.parametrize("style", STYLES)
def test_the_options_given_typed_or_wire_are_offered_and_name_the_kind_chosen(style: str, sdk: Path) -> None:
    m = sdk_module(sdk, style, "v1")
    pkg = package(m)
    typed_option = m.RPC.codec.load(m.PermissionOption, {"optionId": "yes", "name": "Yes", "kind": "allow_once"})
    wire_option = {"optionId": "no", "name": "No", "kind": "reject_always"}
    for chosen, kind in (("yes", "allow_once"), ("no", "reject_always")):
        conn = Recording(m, selected(m, chosen))
        outcome = run(pkg.ToolCalls(conn, "s-1").request_permission("c", [typed_option, wire_option]))
        assert conn.sent[0][1]["options"] == [{"optionId": "yes", "name": "Yes", "kind": "allow_once"}, wire_option]
        assert (outcome.option_id, outcome.kind) == (chosen, kind)


@pytest.mark.parametrize("style", STYLES)
def test_an_outcome_without_a_usable_option_names_none(style: str, sdk: Path) -> None:
    """An answer whose outcome is not an object, or names its option by something other
    than a string, gives no option and no approval (what a newer client might send)."""
    m = sdk_module(sdk, style, "v1")
    pkg = package(m)
    for answer in ({"outcome": "granted"}, {"outcome": {"outcome": "selected", "optionId": 1}}):
        outcome = run(pkg.ToolCalls(Recording(m, answer), "s-1").request_permission("c"))
        assert (outcome.option_id, outcome.kind, outcome.allowed, outcome.always) == (None, None, False, False)


@pytest.mark.parametrize("style", STYLES)
def test_a_module_without_the_methods_says_which_is_missing(style: str, sdk: Path) -> None:
    m = sdk_module(sdk, style, "v1")

    class NoSpecs:
        codec = m.RPC.codec

        def spec(self, method: str, kind: str = "request") -> None:
            return None

    calls = package(m).ToolCalls(Recording(m, rpc=NoSpecs()), "s-1")
    with pytest.raises(LookupError, match="^this module has no 'session/request_permission' request$"):
        run(calls.request_permission("c"))
    with pytest.raises(LookupError, match="^this module has no 'session/update' notification$"):
        run(calls.update("c", status="completed"))


def test_the_usual_options_label_a_kind_they_do_not_know_by_itself() -> None:
    from acpgen.runtime._tool_calls import permission_options

    assert permission_options("allow_once", "_remember_for_a_day") == [
        {"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
        {"optionId": "_remember_for_a_day", "name": "_remember_for_a_day", "kind": "_remember_for_a_day"},
    ]
    assert [o["kind"] for o in permission_options()] == ["allow_once", "allow_always", "reject_once", "reject_always"]
