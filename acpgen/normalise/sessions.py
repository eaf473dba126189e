"""Which methods are about a session: their params have a required string member
``sessionId`` (ACP's ``SessionId``), directly or through an alias of a string.

The runtime orders the messages of such methods per session (a slow session never holds
up another), so this is decided here once, from the schema, and kept in the IR
(``Method.session``)."""

from __future__ import annotations

from dataclasses import replace

from acpgen import ir

#: the member that names a session in ACP's params
SESSION_MEMBER = "sessionId"


def _is_string(t: ir.TypeExpr, defs: dict[str, ir.Def], seen: frozenset[str] = frozenset()) -> bool:
    if isinstance(t, ir.Prim):
        return t.kind == "string"
    if isinstance(t, ir.Ref) and t.key not in seen:
        d = defs.get(t.key)
        return isinstance(d, ir.AliasDef) and _is_string(d.type, defs, seen | {t.key})
    return False


def session_member(params: str | None, defs: dict[str, ir.Def]) -> str | None:
    """The wire name of the member of ``params`` that names a session, else None."""
    d = defs.get(params) if params else None
    if not isinstance(d, ir.ObjectDef):
        return None
    for f in d.fields:
        if f.wire_name == SESSION_MEMBER and f.required and _is_string(f.type, defs):
            return f.wire_name
    return None


def mark_sessions(methods: tuple[ir.Method, ...], defs: list[ir.Def]) -> tuple[ir.Method, ...]:
    by_key = {d.key: d for d in defs}
    return tuple(replace(m, session=session_member(m.params, by_key)) for m in methods)
