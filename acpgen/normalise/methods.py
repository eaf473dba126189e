"""Method table: ``x-method``/``x-side`` on defs first, then meta.json by name convention."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from acpgen import ir
from acpgen.normalise.context import Context

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
        entry = by_method.setdefault((wire, side), {"pointer": ctx.def_pointer(name), "types": []})
        entry.setdefault(role, name)
        entry["types"].append(name)

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
    prose = method_prose(ctx)
    methods = [replace(m, description=prose.get(m.params or "")) for m in methods]
    return tuple(sorted(methods, key=lambda m: (m.name, m.side)))


def _ref_name(node: dict[str, Any]) -> str | None:
    ref = node.get("$ref")
    if ref is None:
        all_of = node.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
            ref = all_of[0].get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        return ref.rsplit("/", 1)[-1]
    return None


def method_prose(ctx: Context) -> dict[str, str]:
    """Type name -> method prose, from the routing unions (``x-docs-ignore`` defs and the
    root ``anyOf``): each member is titled with the type it carries and described with
    the method's documentation, the text upstream's docs take from rustdoc."""
    found: dict[str, str] = {}

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
            return
        if not isinstance(node, dict):
            return
        title, description = node.get("title"), node.get("description")
        if isinstance(title, str) and isinstance(description, str) and _ref_name(node) == title:
            found.setdefault(title, description)
        for key in ("anyOf", "oneOf", "allOf", "properties"):
            value = node.get(key)
            walk(list(value.values()) if isinstance(value, dict) and key == "properties" else value)

    walk(ctx.raw.data.get("anyOf"))
    routers = sorted(ctx.defs, key=lambda n: (_as_dict(ctx.defs[n]).get("x-docs-ignore") is not True, n))
    for name in routers:  # the x-docs-ignore routers first; older releases did not mark them
        walk(ctx.defs[name])
    return found


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _types(entry: dict[str, Any]) -> tuple[str, ...]:
    """The defs that name the method with ``x-method`` (not those paired by name)."""
    return tuple(sorted(set(entry.get("types", ()))))


def _method(ctx: Context, wire: str, side: str, entry: dict[str, Any], linked_by: str) -> ir.Method:
    meta_key = next((m.key for m in ctx.raw.meta.methods if m.wire == wire), None)
    carrier = entry.get("notification") or entry.get("params")
    origin = ctx.origin(entry["pointer"], ctx.defs.get(carrier) if isinstance(carrier, str) else None)
    if "notification" in entry:
        return ir.Method(
            name=wire,
            side=side,  # type: ignore[arg-type]
            kind="notification",
            origin=origin,
            params=entry["notification"],
            meta_key=meta_key,
            linked_by=linked_by,
            types=_types(entry),
        )
    return ir.Method(
        name=wire,
        side=side,  # type: ignore[arg-type]
        kind="request",
        origin=origin,
        params=entry.get("params"),
        result=entry.get("result"),
        meta_key=meta_key,
        linked_by=linked_by,
        types=_types(entry),
    )
