"""Method table: ``x-method``/``x-side`` on defs first, then meta.json by name convention."""

from __future__ import annotations

import re
from typing import Any

from acpgen import ir
from acpgen.build.context import Context

PARAMS_SUFFIXES = ("Request", "Arguments", "Params")
RESULT_SUFFIXES = ("Response", "Output", "Result")
NOTIFICATION_SUFFIXES = ("Notification",)
SIDES = ("agent", "client", "protocol", "both")


def _split(name: str) -> tuple[str, str] | None:
    for role, suffixes in (
        ("params", PARAMS_SUFFIXES),
        ("result", RESULT_SUFFIXES),
        ("notification", NOTIFICATION_SUFFIXES),
    ):
        for suffix in suffixes:
            if name.endswith(suffix) and len(name) > len(suffix):
                return role, name[: -len(suffix)]
    return None


def _words(camel: str) -> frozenset[str]:
    return frozenset(w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", camel))


def build_methods(ctx: Context) -> tuple[ir.Method, ...]:
    by_method: dict[tuple[str, str], dict[str, Any]] = {}
    for name in sorted(ctx.defs):
        schema = ctx.defs[name]
        if not isinstance(schema, dict):
            continue
        wire = schema.get("x-method")
        if not isinstance(wire, str):
            continue
        side = schema.get("x-side")
        if side not in SIDES:
            side = ""
        split = _split(name)
        role = split[0] if split else "params"
        entry = by_method.setdefault((wire, side), {"pointer": ctx.def_pointer(name)})
        entry.setdefault(role, name)

    # a request whose response def carries no x-method (ReadTextFileResponse in
    # v0.1.x): pair them by the Rust naming convention, FooRequest -> FooResponse
    for entry in by_method.values():
        params = entry.get("params")
        if "result" in entry or "notification" in entry or not isinstance(params, str):
            continue
        for suffix in PARAMS_SUFFIXES:
            if params.endswith(suffix):
                stem = params[: -len(suffix)]
                found = [stem + r for r in RESULT_SUFFIXES if stem + r in ctx.defs and "x-method" not in _as_dict(ctx.defs[stem + r])]
                if found:
                    entry["result"] = found[0]
                break

    meta_sides: dict[str, str] = {}
    for m in ctx.raw.meta.methods:
        meta_sides.setdefault(m.wire, m.side)
    linked = {wire for wire, _ in by_method}
    methods: list[ir.Method] = []
    for (wire, side), entry in sorted(by_method.items()):
        methods.append(_method(ctx, wire, side or meta_sides.get(wire, ""), entry, "x-method"))

    # meta.json methods that no def names: link by the Rust naming convention
    candidates: dict[str, list[tuple[str, frozenset[str]]]] = {}
    for name in sorted(ctx.defs):
        split = _split(name)
        if split is not None:
            candidates.setdefault(split[0], []).append((name, _words(split[1])))
    seen: set[tuple[str, str]] = set()
    for m in ctx.raw.meta.methods:
        if m.wire in linked or (m.wire, m.side) in seen:
            continue
        seen.add((m.wire, m.side))
        words = frozenset(m.key.lower().split("_"))
        scoped = frozenset(list(m.key.lower().split("_"))[1:]) if "_" in m.key else words
        entry = {"pointer": "/" + ctx.container}
        for role, defs in candidates.items():
            for name, def_words in defs:
                if def_words in (words, scoped):
                    entry.setdefault(role, name)
        methods.append(_method(ctx, m.wire, m.side, entry, "meta+name" if len(entry) > 1 else "meta"))
    return tuple(sorted(methods, key=lambda m: (m.name, m.side)))


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _method(ctx: Context, wire: str, side: str, entry: dict[str, Any], linked_by: str) -> ir.Method:
    meta_key = next((m.key for m in ctx.raw.meta.methods if m.wire == wire), None)
    if "notification" in entry:
        return ir.Method(
            name=wire,
            side=side,  # type: ignore[arg-type]
            kind="notification",
            origin=ir.Origin(ctx.source.path, entry["pointer"]),
            params=entry["notification"],
            meta_key=meta_key,
            linked_by=linked_by,
        )
    return ir.Method(
        name=wire,
        side=side,  # type: ignore[arg-type]
        kind="request",
        origin=ir.Origin(ctx.source.path, entry["pointer"]),
        params=entry.get("params"),
        result=entry.get("result"),
        meta_key=meta_key,
        linked_by=linked_by,
    )
