"""Tool calls and permission, for agents: a session's tool calls reported by id, and the
user's permission asked for one of them, in every style and both protocol versions.

Standard library only. :class:`ToolCalls` builds each update in its wire form and lets
the module's bindings validate it (``codec.load`` of the ``session/update`` params), so
what it sends is what the schema allows, in any style: ``start`` sends ``tool_call``
(protocol v1; ``tool_call_update``, the upsert, where the schema has no ``tool_call``, as
in v2), ``update`` a ``tool_call_update`` with the members given (``None`` clears one),
and ``request_permission`` sends ``session/request_permission`` about the call with the
usual options (allow once, allow always, reject once, reject always) and gives a typed
:class:`PermissionOutcome`. The names of ACP it uses are :class:`Acp`'s.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Final

from ._session_state import Acp

__all__ = ["PermissionOutcome", "ToolCalls", "permission_options"]

#: the kinds of the usual permission options, as ACP names them
ALLOW_ONCE: Final = "allow_once"
ALLOW_ALWAYS: Final = "allow_always"
REJECT_ONCE: Final = "reject_once"
REJECT_ALWAYS: Final = "reject_always"
_NAMES: Final = {
    ALLOW_ONCE: "Allow once",
    ALLOW_ALWAYS: "Always allow",
    REJECT_ONCE: "Reject once",
    REJECT_ALWAYS: "Always reject",
}
#: the members of a tool call, by keyword: their wire names
_WIRE: Final = {
    "title": "title",
    "kind": "kind",
    "status": "status",
    "content": "content",
    "locations": "locations",
    "raw_input": "rawInput",
    "raw_output": "rawOutput",
    "meta": "_meta",
}
_UNSET: Final[Any] = object()


def permission_options(
    *kinds: str, names: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """The usual permission options (wire form), each with its kind as its
    ``optionId``: every kind by default (allow once, allow always, reject once, reject
    always), or those given; ``names`` relabels them."""
    labels = {**_NAMES, **(names or {})}
    return [
        {"optionId": k, "name": labels.get(k, k), "kind": k}
        for k in (kinds or tuple(_NAMES))
    ]


@dataclass(slots=True)
class PermissionOutcome:
    """The user's answer to a permission request. ``outcome``: "selected", "cancelled"
    (the turn was cancelled) or another value a newer client sent; ``option_id`` and
    ``kind`` the option chosen; ``response`` the typed answer. Only a selected allow
    option is ``allowed``: an outcome this build does not know never is."""

    outcome: str
    option_id: str | None
    kind: str | None
    response: Any

    @property
    def allowed(self) -> bool:
        return self.outcome == "selected" and self.kind in (ALLOW_ONCE, ALLOW_ALWAYS)

    @property
    def always(self) -> bool:
        """The user's choice is to be remembered (allow always, reject always)."""
        return self.outcome == "selected" and self.kind in (ALLOW_ALWAYS, REJECT_ALWAYS)

    @property
    def cancelled(self) -> bool:
        return self.outcome == "cancelled"


class ToolCalls:
    """The tool calls of one session, for an agent: ``conn`` is its connection to the
    client (any style). Each call is known by its ``toolCallId``; :attr:`calls` holds
    each call as reported so far (wire form)."""

    def __init__(self, conn: Any, session_id: str, *, prefix: str = "call") -> None:
        self.conn = conn
        self.rpc = conn.rpc
        self.session_id = session_id
        self.calls: dict[str, dict[str, Any]] = {}
        self._ids = (f"{prefix}-{n}" for n in itertools.count(1))
        self._start_tag: str | None = None

    async def start(
        self,
        title: str,
        *,
        tool_call_id: str | None = None,
        kind: Any = _UNSET,
        status: Any = _UNSET,
        content: Any = _UNSET,
        locations: Any = _UNSET,
        raw_input: Any = _UNSET,
        raw_output: Any = _UNSET,
        meta: Any = _UNSET,
    ) -> str:
        """Report a new tool call (``tool_call``) and give its id (``tool_call_id``, or
        one made here)."""
        tid = tool_call_id if tool_call_id is not None else next(self._ids)
        members = self._members(
            title=title,
            kind=kind,
            status=status,
            content=content,
            locations=locations,
            raw_input=raw_input,
            raw_output=raw_output,
            meta=meta,
        )
        body = {Acp.TOOL_CALL_ID: tid, **members}
        if self._start_tag is None:
            self._start_tag = self._start_variant()
        params = self._params({Acp.TAG: self._start_tag, **body})
        self.calls[tid] = {k: v for k, v in body.items() if v is not None}
        await self.conn.notify(Acp.UPDATE, params)
        return tid

    async def update(
        self,
        tool_call_id: str,
        *,
        title: Any = _UNSET,
        kind: Any = _UNSET,
        status: Any = _UNSET,
        content: Any = _UNSET,
        locations: Any = _UNSET,
        raw_input: Any = _UNSET,
        raw_output: Any = _UNSET,
        meta: Any = _UNSET,
    ) -> None:
        """Report a change of a tool call (``tool_call_update``): the members given
        replace theirs, ``None`` clears one, the others stay."""
        members = self._members(
            title=title,
            kind=kind,
            status=status,
            content=content,
            locations=locations,
            raw_input=raw_input,
            raw_output=raw_output,
            meta=meta,
        )
        update = {Acp.TAG: Acp.TOOL_CALL_UPDATE, Acp.TOOL_CALL_ID: tool_call_id}
        params = self._params({**update, **members})
        call = self.calls.setdefault(tool_call_id, {Acp.TOOL_CALL_ID: tool_call_id})
        for key, value in members.items():
            if value is None:
                call.pop(key, None)
            else:
                call[key] = value
        await self.conn.notify(Acp.UPDATE, params)

    async def request_permission(
        self,
        tool_call_id: str,
        options: list[Any] | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
    ) -> PermissionOutcome:
        """Ask the user's permission for a tool call (``session/request_permission``)
        with ``options`` (the usual four by default: :func:`permission_options`) and
        give the outcome. ``title`` and ``description`` are the prompt's own where the
        protocol has them (v2; the call's title by default)."""
        codec = self.rpc.codec
        wire_options = [
            o if isinstance(o, dict) else codec.dump(o)
            for o in (options if options is not None else permission_options())
        ]
        call = dict(self.calls.get(tool_call_id) or {Acp.TOOL_CALL_ID: tool_call_id})
        spec = self.rpc.spec(Acp.PERMISSION)
        if spec is None:
            raise LookupError(f"this module has no {Acp.PERMISSION!r} request")
        v1 = {Acp.SESSION_ID: self.session_id, "toolCall": call}
        v2: dict[str, Any] = {
            Acp.SESSION_ID: self.session_id,
            "title": title or str(call.get("title") or "Permission"),
            "subject": {"type": Acp.TOOL_CALL, "toolCall": call},
        }
        if description is not None:
            v2["description"] = description
        try:
            params = codec.load(spec.params, {**v1, "options": wire_options})
        except codec.errors:
            params = codec.load(spec.params, {**v2, "options": wire_options})
        response = await self.conn.request(Acp.PERMISSION, params)
        outcome = codec.dump(response).get("outcome")
        outcome = outcome if isinstance(outcome, dict) else {}
        option_id = outcome.get("optionId")
        kinds = {o.get("optionId"): o.get("kind") for o in wire_options}
        return PermissionOutcome(
            str(outcome.get("outcome")),
            option_id if isinstance(option_id, str) else None,
            kinds.get(option_id) if isinstance(option_id, str) else None,
            response,
        )

    def _start_variant(self) -> str:
        """``tool_call`` where the schema has that variant, else the upsert. A variant
        the schema knows has required members, so its bare tag is rejected; an open
        union takes a bare unknown tag as its "other" variant."""
        try:
            self._params({Acp.TAG: Acp.TOOL_CALL})
        except self.rpc.codec.errors:
            return Acp.TOOL_CALL
        return Acp.TOOL_CALL_UPDATE

    def _members(self, **given: Any) -> dict[str, Any]:
        codec = self.rpc.codec
        out: dict[str, Any] = {}
        for name, value in given.items():
            if value is _UNSET:
                continue
            if isinstance(value, list):
                value = [codec.dump(v) if not isinstance(v, dict) else v for v in value]
            elif value is not None and not isinstance(value, (str, int, float, dict)):
                value = codec.dump(value)
            out[_WIRE[name]] = value
        return out

    def _params(self, update: dict[str, Any]) -> Any:
        spec = self.rpc.spec(Acp.UPDATE, "notification")
        if spec is None:
            raise LookupError(f"this module has no {Acp.UPDATE!r} notification")
        params = {Acp.SESSION_ID: self.session_id, Acp.UPDATE_MEMBER: update}
        return self.rpc.codec.load(spec.params, params)
