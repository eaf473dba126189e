"""Operations on defs, fields and methods: add_def, add_field, remove_field,
set_field_type, add_method, annotate, json_patch.

Each checks its precondition (it can be applied) and its postcondition (it is
already there) against the current schema and reports one row per target.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch  # type: ignore[import-untyped,unused-ignore]
import jsonpointer

from acpgen.load import MethodName
from acpgen.overlay.model import Op, Row
from acpgen.overlay.shapes import difference, expand, field_schema, ref, same
from acpgen.overlay.work import Work, op


@op("add_def")
def add_def(w: Work, o: Op) -> list[Row]:
    name, schema = o.args["name"], o.args["schema"]
    current = w.defs.get(name)
    if current is None:
        w.defs[name] = w.mark(copy.deepcopy(schema))
        return [w.row(name, "applied", w.at(name))]
    if same(current, schema):
        return [w.row(name, "already-present", w.at(name))]
    return [w.row(name, "conflict", w.at(name), "def exists with a different shape: " + difference(schema, current))]


def _field_op(w: Work, o: Op) -> tuple[str, str, str, dict[str, Any] | None, list[Row]]:
    """(def, field, target label, the object def or None, the rows saying why not)."""
    name, field = o.args["def"], o.args["field"]
    target = f"{name}.{field}"
    d, missing = w.def_or_row(name, target)
    if d is not None and d.get("type") != "object" and not isinstance(d.get("properties"), dict):
        return name, field, target, None, [w.row(target, "conflict", w.at(name), "not an object schema")]
    return name, field, target, d, missing


def _required(d: dict[str, Any]) -> list[str]:
    req = d.get("required")
    return req if isinstance(req, list) else []


@op("add_field")
def add_field(w: Work, o: Op) -> list[Row]:
    name, field, target, d, rows = _field_op(w, o)
    if d is None:
        return rows
    want = field_schema(o.args)
    want_required = bool(o.args.get("required", False))
    props = d.setdefault("properties", {})
    at = w.at(name, "properties", field)
    current = props.get(field)
    if current is None:
        props[field] = w.mark(want)
        if want_required:
            d["required"] = [*_required(d), field]
        w.mark(d)
        return [w.row(target, "applied", at)]
    if same(current, want) and (field in _required(d)) == want_required:
        return [w.row(target, "already-present", at)]
    if not same(current, want):
        return [w.row(target, "conflict", at, "field exists with a different schema: " + difference(want, current))]
    return [w.row(target, "conflict", at, f"field exists but is {'optional' if want_required else 'required'}")]


@op("remove_field")
def remove_field(w: Work, o: Op) -> list[Row]:
    name, field, target, d, rows = _field_op(w, o)
    if d is None:
        return rows
    at = w.at(name, "properties", field)
    props = d.get("properties", {})
    if field not in props:
        return [w.row(target, "already-present", at, "field is not there")]
    del props[field]
    if field in _required(d):
        d["required"] = [r for r in _required(d) if r != field]
    w.mark(d)
    return [w.row(target, "applied", at)]


@op("set_field_type")
def set_field_type(w: Work, o: Op) -> list[Row]:
    name, field, target, d, rows = _field_op(w, o)
    if d is None:
        return rows
    at = w.at(name, "properties", field)
    current = d.get("properties", {}).get(field)
    if not isinstance(current, dict):
        return [w.row(target, "conflict", at, "field gone")]
    description = o.args.get("description", current.get("description"))
    old, new = expand(o.args["from"], description), expand(o.args["to"], description)
    if same(current, new):
        return [w.row(target, "already-present", at)]
    if not same(current, old):
        return [w.row(target, "conflict", at, "field has another type: " + difference(old, current))]
    keep = {k: v for k, v in current.items() if k.startswith("x-") or k in ("default", "title")}
    d["properties"][field] = w.mark({**new, **keep})
    return [w.row(target, "applied", at)]


#: side that handles the method -> the routing unions that list its messages
ROUTERS = {
    "agent": {"request": "ClientRequest", "response": "AgentResponse", "notification": "ClientNotification"},
    "client": {"request": "AgentRequest", "response": "ClientResponse", "notification": "AgentNotification"},
}


@op("add_method")
def add_method(w: Work, o: Op) -> list[Row]:
    method, side = o.args["method"], o.args["side"]
    kinds = {"notification" if o.args.get("notification") else "request": o.args["request"]}
    if "response" in o.args:
        kinds["response"] = o.args["response"]
    at = w.at(o.args["request"])
    for def_name in kinds.values():
        if def_name not in w.defs:
            return [w.row(method, "not-applicable", w.at(def_name), f"{def_name} does not exist")]
    bound = {n: d.get("x-method") for n, d in w.defs.items() if isinstance(d, dict) and isinstance(d.get("x-method"), str)}
    ours = set(kinds.values())
    others = sorted(n for n, m in bound.items() if m == method and n not in ours)
    wrong = sorted(n for n in ours if bound.get(n) not in (None, method))
    if others or wrong:
        why = f"{method} is already bound to {', '.join(others)}" if others else f"{', '.join(wrong)} already belong to another method"
        return [w.row(method, "conflict", at, why)]
    in_meta = any(m.wire == method for m in w.methods)
    if in_meta and all(bound.get(n) == method and w.defs[n].get("x-side") == side for n in ours):
        return [w.row(method, "already-present", at)]
    for def_name in sorted(ours):
        d = w.defs[def_name]
        d["x-method"], d["x-side"] = method, side
        w.mark(d)
    if not in_meta:
        w.methods.append(MethodName(method.replace("/", "_"), method, side))
    for kind, def_name in sorted(kinds.items()):
        _route(w, ROUTERS[side][kind], def_name, o.args.get("description"))
    return [w.row(method, "applied", at)]


def _route(w: Work, router: str, def_name: str, description: str | None) -> None:
    """List the message in an old-style routing union (``anyOf`` of titled ``$ref`` members)."""
    union = w.defs.get(router)
    members = union.get("anyOf") if isinstance(union, dict) else None
    if not isinstance(members, list) or not all(isinstance(m, dict) and "$ref" in m for m in members):
        return
    if any(m["$ref"] == ref(def_name)["$ref"] for m in members):
        return
    member: dict[str, Any] = {**ref(def_name), "title": def_name}
    if description:
        member["description"] = description
    members.append(w.mark(member))


def _resolve(data: Any, pointer: str) -> Any:
    try:
        return jsonpointer.resolve_pointer(data, pointer)
    except jsonpointer.JsonPointerException:
        return None


@op("annotate")
def annotate(w: Work, o: Op) -> list[Row]:
    pointer, keys = o.args["pointer"], o.args["set"]
    node = _resolve(w.data, pointer)
    if not isinstance(node, dict):
        return [w.row(pointer, "not-applicable", pointer, "nothing at this pointer")]
    if all(node.get(k) == v for k, v in keys.items()):
        return [w.row(pointer, "already-present", pointer)]
    node.update(copy.deepcopy(keys))
    w.mark(node)
    return [w.row(pointer, "applied", pointer)]


@op("json_patch")
def json_patch(w: Work, o: Op) -> list[Row]:
    patch = o.args["patch"]
    target = o.args.get("description", f"{len(patch)} RFC 6902 operation(s)")
    first = patch[0]["path"]
    expect = o.args.get("expect")
    if expect:
        try:
            jsonpatch.apply_patch(w.data, expect)
            return [w.row(target, "already-present", first)]
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException):
            pass
    try:
        result = jsonpatch.apply_patch(w.data, patch)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
        return [w.row(target, "conflict", first, f"patch does not apply: {exc}")]
    w.data.clear()
    w.data.update(result)
    prefix = "/" + w.container + "/"
    for step in patch:
        path = step["path"]
        if path.startswith(prefix):
            name = jsonpointer.unescape(path[len(prefix) :].split("/", 1)[0])
            if isinstance(w.defs.get(name), dict):
                w.mark(w.defs[name])
    return [w.row(target, "applied", first)]
