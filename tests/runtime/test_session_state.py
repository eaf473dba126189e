"""The state of a session merged from its updates (``acpgen/runtime/_session_state.py``), on
the wire form the agent sends, and the names of ACP it merges by (``Acp``) checked against
the upstream schemas of protocol v1 and v2 (the corpus), so that a change upstream (a
renamed member, a new variant with no rule) fails here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acpgen.runtime._session_state import Acp, Message, SessionState

from .. import corpus

V1 = corpus.ACP / "main" / "v1"
V2 = corpus.ACP / "main" / "v2"


def merged(*updates: dict[str, Any]) -> Any:
    state = SessionState("s")
    for update in updates:
        state.apply(update)
    return state.snapshot()


def chunk(tag: str, text: str, mid: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"sessionUpdate": tag, "content": {"type": "text", "text": text}}
    if mid is not None:
        out["messageId"] = mid
    return out


def test_chunks_join_by_message_v1() -> None:
    s = merged(
        chunk("user_message_chunk", "hi"),
        chunk("agent_thought_chunk", "thinking "),
        chunk("agent_thought_chunk", "hard"),
        chunk("agent_message_chunk", "hel"),
        {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "x"},
        chunk("agent_message_chunk", "lo"),
        chunk("agent_message_chunk", "!", None),
    )
    assert [(m.role, m.message_id, m.text) for m in s.messages] == [
        ("user", None, "hi"),
        ("thought", None, "thinking hard"),
        ("agent", None, "hello!"),  # a tool call between chunks does not split a message
    ]
    assert s.updates == 7


def test_chunks_join_by_message_id_v2_and_upserts_replace() -> None:
    s = merged(
        chunk("agent_message_chunk", "a", "m1"),
        chunk("agent_message_chunk", "b", "m2"),  # a new id: a new message
        chunk("agent_message_chunk", "c", "m1"),  # back to m1: joins m1
        {"sessionUpdate": "agent_message", "messageId": "m2", "content": [{"type": "text", "text": "B!"}]},
        {"sessionUpdate": "agent_thought", "messageId": "t1"},  # no content: a message with none
        {"sessionUpdate": "user_message", "messageId": "u1", "content": [{"type": "text", "text": "q"}]},
        {"sessionUpdate": "user_message", "messageId": "u1", "content": None},  # null clears
    )
    assert [(m.role, m.message_id, m.text) for m in s.messages] == [
        ("agent", "m1", "ac"),
        ("agent", "m2", "B!"),
        ("thought", "t1", ""),
        ("user", "u1", ""),
    ]
    assert s.messages[3].content == []


def test_tool_calls_updated_in_place_by_id() -> None:
    s = merged(
        {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read", "kind": "read", "status": "pending"},
        {"sessionUpdate": "tool_call", "toolCallId": "t2", "title": "Edit"},
        {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed", "kind": None},
        {"sessionUpdate": "tool_call_update", "toolCallId": "t3", "title": "Unseen before"},  # an upsert
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "t1", "content": {"type": "content", "content": {"type": "text", "text": "1"}}},
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "t1", "content": {"type": "content", "content": {"type": "text", "text": "2"}}},
    )
    assert list(s.tool_calls) == ["t1", "t2", "t3"]
    t1 = s.tool_calls["t1"]
    assert t1["status"] == "completed" and t1["title"] == "Read" and "kind" not in t1  # null cleared it
    assert [c["content"]["text"] for c in t1["content"]] == ["1", "2"]
    assert s.tool_calls["t3"] == {"toolCallId": "t3", "title": "Unseen before"}
    # a tool_call with an id already seen starts it again (v1: a new call under that id)
    again = merged(
        {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "A", "status": "failed"},
        {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "B"},
    )
    assert again.tool_calls["t1"] == {"toolCallId": "t1", "title": "B"}


def test_a_null_member_the_call_never_had_clears_nothing() -> None:
    s = merged(
        {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read"},
        {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "kind": None, "rawInput": None, "status": "completed"},
    )
    assert s.tool_calls["t1"] == {"toolCallId": "t1", "title": "Read", "status": "completed"}


def test_plan_mode_options_commands_usage_info_state_terminals() -> None:
    entry = {"content": "x", "priority": "high", "status": "pending"}
    s = merged(
        {"sessionUpdate": "plan", "entries": [entry]},
        {"sessionUpdate": "current_mode_update", "currentModeId": "code"},
        {"sessionUpdate": "config_option_update", "configOptions": [{"id": "m"}]},
        {"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "web"}]},
        {"sessionUpdate": "usage_update", "used": 1, "size": 10},
        {"sessionUpdate": "session_info_update", "title": "T", "updatedAt": "now"},
        {"sessionUpdate": "session_info_update", "updatedAt": None},
        {"sessionUpdate": "state_update", "state": "running"},
        {"sessionUpdate": "terminal_update", "terminalId": "k", "command": "ls"},
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "k", "data": "aGk="},
        {"sessionUpdate": "terminal_update", "terminalId": "k", "exitStatus": {"exitCode": 0}},
    )
    assert s.plan == {"entries": [entry]}
    assert (s.mode, s.config_options, s.commands) == ("code", [{"id": "m"}], [{"name": "web"}])
    assert s.usage == {"used": 1, "size": 10}
    assert s.info == {"title": "T"}
    assert s.state == {"state": "running"}
    assert s.terminals["k"] == {"terminalId": "k", "command": "ls", "exitStatus": {"exitCode": 0}}
    assert s.output_chunks["k"] == ["aGk="]
    plans = merged(
        {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p1", "entries": []}},
        {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p2", "entries": [entry]}},
        {"sessionUpdate": "plan_removed", "planId": "p2"},
    )
    assert list(plans.plans) == ["p1"] and plans.plan is None


def test_unknown_variants_are_kept_in_order_as_received() -> None:
    notice = {"sessionUpdate": "notice", "severity": "info", "title": "T"}
    custom = {"sessionUpdate": "_acme_progress", "percent": 50}
    s = merged(notice, chunk("agent_message_chunk", "x"), custom, {"no": "tag"}, {"sessionUpdate": "tool_call"})
    assert s.others == [notice, custom, {"no": "tag"}, {"sessionUpdate": "tool_call"}]  # no id: kept too
    assert s.messages == [Message("agent", None, [{"type": "text", "text": "x"}])]


def test_a_snapshot_is_a_copy() -> None:
    state = SessionState("s")
    state.apply({"sessionUpdate": "tool_call", "toolCallId": "t", "rawInput": {"a": [1]}})
    snap = state.snapshot()
    snap.tool_calls["t"]["rawInput"]["a"].append(2)
    assert state.snapshot().tool_calls["t"]["rawInput"] == {"a": [1]}


# -- the names of ACP, against the upstream schemas ------------------------------------------


def _defs(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())["$defs"]  # type: ignore[no-any-return]


def _variants(defs: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """SessionUpdate's variants by tag: the def each refers to (v1 oneOf, v2 anyOf)."""
    union = defs["SessionUpdate"]
    out: dict[str, dict[str, Any]] = {}
    for alt in union.get("oneOf") or union.get("anyOf"):
        const = alt.get("properties", {}).get(Acp.TAG, {}).get("const")
        if const is None:
            continue
        ref = alt["allOf"][0]["$ref"].rsplit("/", 1)[1]
        out[const] = defs[ref]
    return out


@corpus.needs_corpus
@pytest.mark.parametrize("tree", ["v1", "v2"])
def test_every_variant_upstream_has_a_rule(tree: str) -> None:
    """Every variant of the stable schema of each version is merged (a new one upstream
    fails here); the unstable ones are merged or deliberately kept as others."""
    root = corpus.ACP / "main" / tree
    stable = set(_variants(_defs(root / "schema.json")))
    assert stable <= Acp.merged(), stable - Acp.merged()
    unstable = set(_variants(_defs(root / "schema.unstable.json")))
    assert unstable - Acp.merged() <= {"notice", "compaction_update", "compaction_summary_chunk"}


@corpus.needs_corpus
def test_every_rule_names_a_variant_upstream() -> None:
    both = set(_variants(_defs(V1 / "schema.unstable.json"))) | set(_variants(_defs(V2 / "schema.unstable.json")))
    assert Acp.merged() <= both, Acp.merged() - both


@corpus.needs_corpus
@pytest.mark.parametrize("tree", ["v1", "v2"])
def test_the_members_merged_by_are_the_schema_s(tree: str) -> None:
    defs = _defs(corpus.ACP / "main" / tree / "schema.unstable.json")
    variants = _variants(defs)

    def props(tag: str) -> set[str]:
        return set(variants[tag]["properties"]) if tag in variants else set()

    # the discriminator, and the notification that carries an update
    union = defs["SessionUpdate"]
    for alt in union.get("oneOf") or union.get("anyOf"):
        if "const" in alt.get("properties", {}).get(Acp.TAG, {}):
            assert alt["required"] == [Acp.TAG]
    notification = "SessionNotification" if tree == "v1" else "UpdateSessionNotification"
    assert defs[notification]["x-method"] == Acp.UPDATE
    assert {Acp.SESSION_ID, Acp.UPDATE_MEMBER} <= set(defs[notification]["required"])
    meta = json.loads((corpus.ACP / "main" / tree / "meta.json").read_text())
    methods = set(meta["agentMethods"].values()) | set(meta["clientMethods"].values())
    assert {Acp.UPDATE, Acp.INITIALIZE, Acp.NEW, Acp.PROMPT, Acp.PERMISSION} <= methods
    # the members each rule reads
    assert Acp.TOOL_CALL_ID in props(Acp.TOOL_CALL_UPDATE)
    assert "content" in props(Acp.TOOL_CALL_UPDATE)
    assert "content" in props("agent_message_chunk")
    assert "availableCommands" in props(Acp.COMMANDS)
    assert "configOptions" in props(Acp.CONFIG)
    assert {"used", "size"} <= props(Acp.USAGE)
    assert "title" in props(Acp.INFO)
    if tree == "v1":
        assert {Acp.TOOL_CALL_ID, "title"} <= props(Acp.TOOL_CALL)
        assert "entries" in props(Acp.PLAN)
        assert "currentModeId" in props(Acp.MODE)
        assert Acp.STOP_REASON in defs["PromptResponse"]["required"]
        assert "toolCall" in defs["RequestPermissionRequest"]["required"]
        # the reconnect recipe (_remote_client.reconnect): session/load, where it is offered
        assert Acp.AGENT_CAPABILITIES in defs["InitializeResponse"]["properties"]
        assert Acp.LOAD in methods and Acp.LOAD_SESSION in defs["AgentCapabilities"]["properties"]
        assert Acp.SESSION_ID in defs["LoadSessionRequest"]["required"]
    else:
        assert Acp.MESSAGE_ID in props("agent_message_chunk") and Acp.MESSAGE_ID in props("agent_message")
        assert {Acp.TOOL_CALL_ID, "content"} <= props(Acp.TOOL_CALL_CONTENT_CHUNK)
        assert Acp.TERMINAL_ID in props(Acp.TERMINAL) and "data" in props(Acp.TERMINAL_OUTPUT)
        assert "plan" in props(Acp.PLAN_UPDATE) and Acp.PLAN_ID in defs["PlanItems"]["properties"]
        assert Acp.PLAN_ID in props(Acp.PLAN_REMOVED)
        assert Acp.STOP_REASON not in defs["PromptResponse"].get("properties", {})
        states = [a["properties"]["state"].get("const") for a in defs["StateUpdate"]["anyOf"]]
        assert Acp.IDLE in states
        assert Acp.STOP_REASON in defs["IdleStateUpdate"]["properties"]
        assert "title" in defs["RequestPermissionRequest"]["required"]
        subject = [a for a in defs["RequestPermissionSubject"]["anyOf"] if a["properties"]["type"].get("const") == Acp.TOOL_CALL]
        assert subject, "the tool-call subject of a permission request"
        assert Acp.LOAD not in methods  # v2 resumes with session/resume: reconnect refuses clearly
    kinds = [k.get("const") for k in (defs["PermissionOptionKind"].get("oneOf") or defs["PermissionOptionKind"]["anyOf"])]
    assert {"allow_once", "allow_always", "reject_once", "reject_always"} <= set(kinds)


def test_an_update_is_copied_unless_given_away() -> None:
    given = {"sessionUpdate": "tool_call", "toolCallId": "t", "rawInput": {"a": [1]}}
    state = SessionState("s")
    state.apply(given)
    given["rawInput"]["a"].append(2)
    assert state.current.tool_calls["t"]["rawInput"] == {"a": [1]}
    owned = {"sessionUpdate": "tool_call", "toolCallId": "u", "rawInput": {"a": [1]}}
    state.apply(owned, owned=True)  # freshly parsed JSON: kept as is, no copy
    assert state.current.tool_calls["u"]["rawInput"] is owned["rawInput"]


def test_the_snapshot_names_its_session() -> None:
    assert SessionState("s-1").snapshot().session_id == "s-1"


def test_updates_without_a_usable_id_are_kept_as_others() -> None:
    """A tool call, a tool call's content chunk or a terminal without a string id, and an
    update that is no object, are kept as received (an id that is no string is never
    looked up: a list would not even hash)."""
    no_ids = [
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": ["t"],
            "status": "completed",
        },
        {"sessionUpdate": "tool_call_content_chunk", "content": {"type": "content"}},
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": 7,
            "content": {"type": "content"},
        },
        {"sessionUpdate": "terminal_update", "command": "ls"},
        {"sessionUpdate": "terminal_output_chunk", "terminalId": ["k"], "data": "aGk="},
    ]
    s = merged(*no_ids)
    assert s.others == no_ids
    assert (s.tool_calls, s.terminals, s.output_chunks) == ({}, {}, {})
    state = SessionState("s")
    state.apply("not an object")
    state.apply(None)
    assert state.snapshot().others == [{"value": "not an object"}, {"value": None}]
    assert state.snapshot().updates == 2


def test_a_chunk_of_an_unseen_call_or_terminal_starts_it() -> None:
    content = {"type": "content", "content": {"type": "text", "text": "1"}}
    s = merged(
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "t9",
            "content": content,
        },
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "k9", "data": "aGk="},
    )
    assert s.tool_calls == {"t9": {"toolCallId": "t9", "content": [content]}}
    assert s.terminals == {"k9": {"terminalId": "k9"}}
    assert s.output_chunks == {"k9": ["aGk="]}


def test_plans_by_id_and_the_current_plan() -> None:
    """A plan update is the current plan and kept by its id; removing another plan keeps
    the current one, removing the current one (or a removal without an id) clears it;
    a plan update without a ``plan`` member is the update itself."""
    p1 = {"type": "items", "planId": "p1", "entries": []}
    p2 = {"type": "items", "planId": "p2", "entries": [{"content": "x"}]}
    s = merged(
        {"sessionUpdate": "plan_update", "plan": p1},
        {"sessionUpdate": "plan_update", "plan": p2},
    )
    assert s.plan == p2 and s.plans == {"p1": p1, "p2": p2}
    s = merged(
        {"sessionUpdate": "plan_update", "plan": p1},
        {"sessionUpdate": "plan_update", "plan": p2},
        {"sessionUpdate": "plan_removed", "planId": "p1"},  # not the current one
        {"sessionUpdate": "plan_removed", "planId": "p7"},  # never seen
        {"sessionUpdate": "plan_removed", "planId": ["p2"]},  # no string: not removed
    )
    assert s.plan == p2 and s.plans == {"p2": p2}
    s = merged(
        {"sessionUpdate": "plan_update", "plan": p1}, {"sessionUpdate": "plan_removed"}
    )
    assert s.plan is None and s.plans == {"p1": p1}
    bare = {"sessionUpdate": "plan_update", "planId": "p3", "entries": []}
    s = merged(bare)
    assert s.plan == bare and s.plans == {"p3": bare}
