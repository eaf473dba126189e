"""The state of an ACP session merged from its updates, and the names of ACP it merges by.

Standard library only, on the wire form of an update (the JSON the agent sent), so one
implementation serves every binding style and every variant, known or not: an update
whose variant has no rule here is kept, as received, in :attr:`SessionSnapshot.others`.
:class:`Acp` holds every name of ACP the session helpers rely on (``_sessions.py``,
``_tool_calls.py``), in one place; acpgen's tests check each against the schemas of
protocol v1 and v2, so that a change upstream is caught.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable, Final


class Acp:
    """The names of ACP that the session helpers merge by, in one place (acpgen's tests
    check each against the schemas of protocol v1 and v2): methods, members, and the
    variants of ``SessionUpdate`` by their ``sessionUpdate`` tag."""

    UPDATE: Final = "session/update"
    INITIALIZE: Final = "initialize"
    NEW: Final = "session/new"
    LOAD: Final = "session/load"  # v1 (v2 resumes with session/resume)
    PROMPT: Final = "session/prompt"
    PERMISSION: Final = "session/request_permission"
    SESSION_ID: Final = "sessionId"
    UPDATE_MEMBER: Final = "update"
    TAG: Final = "sessionUpdate"
    STOP_REASON: Final = "stopReason"
    MESSAGE_ID: Final = "messageId"
    TOOL_CALL_ID: Final = "toolCallId"
    TERMINAL_ID: Final = "terminalId"
    PLAN_ID: Final = "planId"
    #: where ``initialize``'s answer says the agent can load a session (v1)
    AGENT_CAPABILITIES: Final = "agentCapabilities"
    LOAD_SESSION: Final = "loadSession"
    #: chunks of a message, by role (v1 and v2)
    CHUNKS: Final = {
        "user_message_chunk": "user",
        "agent_message_chunk": "agent",
        "agent_thought_chunk": "thought",
    }
    #: whole-message upserts by ``messageId`` (v2)
    MESSAGES: Final = {
        "user_message": "user",
        "agent_message": "agent",
        "agent_thought": "thought",
    }
    TOOL_CALL: Final = "tool_call"  # v1: a new tool call
    TOOL_CALL_UPDATE: Final = "tool_call_update"  # v1: a patch; v2: an upsert
    TOOL_CALL_CONTENT_CHUNK: Final = "tool_call_content_chunk"  # v2
    PLAN: Final = "plan"  # v1: the whole plan
    PLAN_UPDATE: Final = "plan_update"  # v2 (v1 unstable): a plan by its id
    PLAN_REMOVED: Final = "plan_removed"
    COMMANDS: Final = "available_commands_update"
    MODE: Final = "current_mode_update"  # v1
    CONFIG: Final = "config_option_update"
    INFO: Final = "session_info_update"
    USAGE: Final = "usage_update"
    STATE: Final = "state_update"  # v2: the turn's state; "idle" ends a turn
    IDLE: Final = "idle"
    TERMINAL: Final = "terminal_update"  # v2
    TERMINAL_OUTPUT: Final = "terminal_output_chunk"  # v2

    @classmethod
    def merged(cls) -> frozenset[str]:
        """The tags :class:`SessionState` has a rule for."""
        singles = (
            cls.TOOL_CALL,
            cls.TOOL_CALL_UPDATE,
            cls.TOOL_CALL_CONTENT_CHUNK,
            cls.PLAN,
            cls.PLAN_UPDATE,
            cls.PLAN_REMOVED,
            cls.COMMANDS,
            cls.MODE,
            cls.CONFIG,
            cls.INFO,
            cls.USAGE,
            cls.STATE,
            cls.TERMINAL,
            cls.TERMINAL_OUTPUT,
        )
        return frozenset((*cls.CHUNKS, *cls.MESSAGES, *singles))


@dataclass(slots=True)
class Message:
    """A message of the session: ``role`` ("user", "agent" or "thought"), its
    ``message_id`` where the agent gave one, and its content blocks (wire form)."""

    role: str
    message_id: str | None = None
    content: list[Any] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The text of its text blocks, joined."""
        return "".join(
            b.get("text", "")
            for b in self.content
            if isinstance(b, dict) and b.get("type") == "text"
        )


@dataclass(slots=True)
class SessionSnapshot:
    """A session merged from its updates, as plain data (wire names inside: a tool call
    is its merged ``ToolCall`` object, ``{"toolCallId": ..., "status": ...}``)."""

    session_id: str
    messages: list[Message] = field(default_factory=list)
    #: by ``toolCallId``, in the order first seen
    tool_calls: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: the current plan (v1: ``{"entries": [...]}``; v2: the last plan updated)
    plan: dict[str, Any] | None = None
    #: v2 plans by ``planId``
    plans: dict[str, dict[str, Any]] = field(default_factory=dict)
    mode: str | None = None
    config_options: list[Any] | None = None
    commands: list[Any] | None = None
    usage: dict[str, Any] | None = None
    #: ``session_info_update`` merged (title, updatedAt...)
    info: dict[str, Any] = field(default_factory=dict)
    #: the last ``state_update`` (v2): ``{"state": "idle", "stopReason": ...}``
    state: dict[str, Any] | None = None
    #: v2 terminals by ``terminalId``; ``output_chunks`` their appended output (base64)
    terminals: dict[str, dict[str, Any]] = field(default_factory=dict)
    output_chunks: dict[str, list[str]] = field(default_factory=dict)
    #: updates with no rule here (a variant this build does not know), as received
    others: list[dict[str, Any]] = field(default_factory=list)
    #: how many updates were merged
    updates: int = 0


def _keep(value: Any) -> Any:
    return value


def _patch(
    target: dict[str, Any], update: dict[str, Any], skip: str, c: Callable[[Any], Any]
) -> None:
    """Patch semantics: a member present replaces, ``null`` clears, absent leaves."""
    for key, value in update.items():
        if key == skip:
            continue
        if value is None:
            target.pop(key, None)
        else:
            target[key] = c(value)


class SessionState:
    """Merges a session's updates (wire form, in order) into a :class:`SessionSnapshot`."""

    def __init__(self, session_id: str) -> None:
        self.current = SessionSnapshot(session_id)

    def apply(self, update: Any, *, owned: bool = False) -> None:
        """Merge one update (wire form). ``owned``: the update is the caller's to give
        away (freshly parsed JSON), kept without a copy."""
        c: Callable[[Any], Any] = _keep if owned else copy.deepcopy
        s = self.current
        s.updates += 1
        if not isinstance(update, dict):
            s.others.append({"value": c(update)})
            return
        a = Acp
        tag = update.get(a.TAG)
        if tag in a.CHUNKS:
            self._chunk(a.CHUNKS[tag], update, c)
        elif tag in a.MESSAGES:
            self._message(a.MESSAGES[tag], update, c)
        elif tag == a.TOOL_CALL or tag == a.TOOL_CALL_UPDATE:
            tid = update.get(a.TOOL_CALL_ID)
            call = s.tool_calls.get(tid) if isinstance(tid, str) else None
            if not isinstance(tid, str):
                s.others.append(c(update))
                return
            if call is None or tag == a.TOOL_CALL:
                call = s.tool_calls[tid] = {a.TOOL_CALL_ID: tid}
            _patch(call, update, a.TAG, c)
        elif tag == a.TOOL_CALL_CONTENT_CHUNK:
            tid = update.get(a.TOOL_CALL_ID)
            if not isinstance(tid, str):
                s.others.append(c(update))
                return
            call = s.tool_calls.setdefault(tid, {a.TOOL_CALL_ID: tid})
            call.setdefault("content", []).append(c(update.get("content")))
        elif tag == a.PLAN:
            s.plan = {k: c(v) for k, v in update.items() if k != a.TAG}
        elif tag == a.PLAN_UPDATE:
            plan = update.get("plan")
            plan = c(plan if isinstance(plan, dict) else update)
            pid = plan.get(a.PLAN_ID) if isinstance(plan, dict) else None
            if isinstance(pid, str):
                s.plans[pid] = plan
            s.plan = plan
        elif tag == a.PLAN_REMOVED:
            pid = update.get(a.PLAN_ID)
            removed = s.plans.pop(pid, None) if isinstance(pid, str) else None
            if s.plan is not None and (removed is s.plan or pid is None):
                s.plan = None
        elif tag == a.COMMANDS:
            s.commands = c(update.get("availableCommands"))
        elif tag == a.MODE:
            s.mode = update.get("currentModeId")
        elif tag == a.CONFIG:
            s.config_options = c(update.get("configOptions"))
        elif tag == a.INFO:
            _patch(s.info, update, a.TAG, c)
        elif tag == a.USAGE:
            s.usage = {k: c(v) for k, v in update.items() if k != a.TAG}
        elif tag == a.STATE:
            s.state = {k: c(v) for k, v in update.items() if k != a.TAG}
        elif tag == a.TERMINAL or tag == a.TERMINAL_OUTPUT:
            term = update.get(a.TERMINAL_ID)
            if not isinstance(term, str):
                s.others.append(c(update))
            elif tag == a.TERMINAL:
                _patch(s.terminals.setdefault(term, {}), update, a.TAG, c)
            else:
                s.terminals.setdefault(term, {a.TERMINAL_ID: term})
                s.output_chunks.setdefault(term, []).append(str(update.get("data")))
        else:
            s.others.append(c(update))

    def _chunk(
        self, role: str, update: dict[str, Any], c: Callable[[Any], Any]
    ) -> None:
        """A chunk joins its message: the one of its ``messageId`` (v2), else the last
        message when that has the same role and no id either; otherwise it starts one.
        """
        messages = self.current.messages
        mid = update.get(Acp.MESSAGE_ID)
        if mid is not None:
            target = self._by_id(role, mid)
        else:
            last = messages[-1] if messages else None
            same = last is not None and last.role == role and last.message_id is None
            target = last if same else None
        if target is None:
            target = Message(role, mid)
            messages.append(target)
        target.content.append(c(update.get("content")))

    def _message(
        self, role: str, update: dict[str, Any], c: Callable[[Any], Any]
    ) -> None:
        """A whole-message upsert by id: its ``content`` replaces what was there."""
        mid = update.get(Acp.MESSAGE_ID)
        message = self._by_id(role, mid)
        if message is None:
            message = Message(role, mid)
            self.current.messages.append(message)
        if "content" in update:
            content = update["content"]
            message.content = c(content) if content is not None else []

    def _by_id(self, role: str, mid: Any) -> Message | None:
        for message in reversed(self.current.messages):
            if message.message_id == mid and message.role == role:
                return message
        return None

    def snapshot(self) -> SessionSnapshot:
        return copy.deepcopy(self.current)
