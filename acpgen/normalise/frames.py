"""The schema's JSON-RPC envelope defs (``ClientRequest``, ``AgentNotification``...):
objects whose ``params`` member is typed by their ``method`` member.

Upstream spells such a def as an object with ``method: string`` and ``params: anyOf [the
params of every method ...]``: JSON Schema accepts params that match *any* method, so
bindings that pick a member by shape mislabel (``session/close`` params read as
``DeleteSessionRequest``). This pass marks the def with the kind of method it carries
(``ObjectDef.by_method``); the bindings then validate ``params``, when present and not
null, as the params of the method named by ``method`` (an extension method, leading
``_``, keeps its params as the schema allows them; any other unknown method is
rejected)."""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from acpgen import ir


def _refs(t: ir.TypeExpr) -> set[str]:
    if isinstance(t, ir.Nullable):
        return _refs(t.inner)
    if isinstance(t, ir.AnyOf):
        return set().union(*(_refs(m) for m in t.members)) if t.members else set()
    if isinstance(t, ir.Ref):
        return {t.key}
    return set()


def mark_envelopes(defs: list[ir.Def], methods: tuple[ir.Method, ...]) -> list[ir.Def]:
    params_of = {
        kind: {m.params for m in methods if m.kind == kind and m.params} for kind in ("request", "notification")
    }
    out: list[ir.Def] = []
    for d in defs:
        if isinstance(d, ir.ObjectDef):
            members = {f.wire_name: f for f in d.fields}
            method, params = members.get("method"), members.get("params")
            if (
                method is not None
                and method.required
                and isinstance(method.type, ir.Prim)
                and method.type.kind == "string"
                and params is not None
            ):
                kind: Literal["request", "notification"] = "request" if "id" in members else "notification"
                if _refs(params.type) & params_of[kind]:
                    d = replace(d, by_method=kind)
        out.append(d)
    return out
