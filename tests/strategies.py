"""Hypothesis strategies read from the JSON Schema itself (not from acpgen's IR, so that
the property tests check the IR against an independent reading of the schema).

``instances(root, schema)`` draws JSON values meant to be valid: it interprets the
keywords ACP uses (``$ref``, ``allOf``/``anyOf``/``oneOf``, ``const``/``enum``, ``type``
lists, object properties and extras, arrays, numeric and integer-format bounds, string
patterns and lengths). Keywords it does not model (``not``, ``oneOf`` exclusivity) are
left to the caller's jsonschema filter. Past a nesting budget it draws only required
members, empty arrays and the cheapest union member, so recursive schemas terminate.

``mutated(value)`` draws one structural change of a value (a node retyped, a required
member dropped, a tag or enum value replaced by an unknown one, a node duplicated into
a list) for the "invalid instances are rejected" property.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

from acpgen.naming import snake

DEPTH = 4
ANNOTATIONS = {
    "description",
    "title",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
    "discriminator",
    "x-docs-ignore",
    "x-deserialize-default-on-error",
    "x-deserialize-skip-invalid-items",
    "x-deserialize-default-on-null",
    "x-method",
    "x-side",
    "x-acpgen-overlay",
}
INT_BOUNDS = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint8": (0, 2**8 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
}
SCALARS = st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=4)
ANY_JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2),
    max_leaves=4,
)


def _resolve(root: dict[str, Any], ref: str) -> Any:
    if not ref.startswith("#"):
        raise ValueError(f"remote $ref {ref}")
    node: Any = root
    for token in ref[1:].lstrip("/").split("/") if ref != "#" else []:
        token = token.replace("~1", "/").replace("~0", "~")
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node


def _meaningful(schema: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k not in ANNOTATIONS}


def _merge(a: Any, b: Any) -> Any:
    """allOf of two schemas, as far as instance generation needs it."""
    if not isinstance(a, dict):
        return b
    if not isinstance(b, dict):
        return a
    out = {**a, **b}
    if "properties" in a and "properties" in b:
        out["properties"] = {**a["properties"], **b["properties"]}
    if "required" in a and "required" in b:
        out["required"] = sorted(set(a["required"]) | set(b["required"]))
    return out


def _cheap(root: dict[str, Any], member: Any) -> int:
    """Lower is cheaper to draw near the depth limit: null, scalars, then refs."""
    if not isinstance(member, dict):
        return 1
    if member.get("type") == "null":
        return 0
    return 2 if ("$ref" in member or "properties" in member or "allOf" in member) else 1


@st.composite
def instances(draw: st.DrawFn, root: dict[str, Any], schema: Any, depth: int = 0) -> Any:
    return _value(draw, root, schema, depth)


def _value(draw: st.DrawFn, root: dict[str, Any], schema: Any, depth: int) -> Any:
    if schema is True:
        return draw(ANY_JSON)
    if schema is False or not isinstance(schema, dict):
        raise ValueError("cannot draw from the schema `false`")
    body = _meaningful(schema)
    if not body:
        return draw(ANY_JSON)
    if "$ref" in body:
        target = _resolve(root, body.pop("$ref"))
        return _value(draw, root, _merge(target, body) if body else target, depth + 1)
    if "allOf" in body:
        merged: Any = {k: v for k, v in body.items() if k != "allOf"}
        for part in body["allOf"]:
            while isinstance(part, dict) and "$ref" in part:
                rest = {k: v for k, v in part.items() if k != "$ref"}
                part = _merge(_resolve(root, part["$ref"]), rest)
            merged = _merge(merged, part)
        return _value(draw, root, merged, depth + 1)
    if "const" in body:
        return copy.deepcopy(body["const"])
    if "enum" in body:
        return copy.deepcopy(draw(st.sampled_from(body["enum"])))
    for kw in ("oneOf", "anyOf"):
        if kw in body:
            members = body[kw]
            if depth >= DEPTH:
                cheapest = min(_cheap(root, m) for m in members)
                members = [m for m in members if _cheap(root, m) == cheapest]
            member = draw(st.sampled_from(members))
            rest = {k: v for k, v in body.items() if k != kw}
            if not _meaningful(rest):
                return _value(draw, root, member, depth + 1)
            base, chosen = _value(draw, root, rest, depth + 1), _value(draw, root, member, depth + 1)
            if isinstance(base, dict) and isinstance(chosen, dict):
                return {**base, **chosen}
            return chosen
    kinds = body.get("type")
    if isinstance(kinds, list):
        kind = draw(st.sampled_from(kinds))
    elif isinstance(kinds, str):
        kind = kinds
    elif "properties" in body or "additionalProperties" in body or "required" in body:
        kind = "object"
    elif "items" in body or "prefixItems" in body:
        kind = "array"
    else:
        return draw(ANY_JSON)
    return _DRAW[kind](draw, root, body, depth)


def _null(draw: st.DrawFn, root: dict[str, Any], s: dict[str, Any], depth: int) -> Any:
    return None


def _boolean(draw: st.DrawFn, root: dict[str, Any], s: dict[str, Any], depth: int) -> Any:
    return draw(st.booleans())


def _integer(draw: st.DrawFn, root: dict[str, Any], s: dict[str, Any], depth: int) -> Any:
    lo, hi = INT_BOUNDS.get(s.get("format", ""), (-(2**53), 2**53))
    if isinstance(s.get("minimum"), (int, float)):
        lo = max(lo, int(s["minimum"]))
    if isinstance(s.get("maximum"), (int, float)):
        hi = min(hi, int(s["maximum"]))
    if isinstance(s.get("exclusiveMinimum"), (int, float)):
        lo = max(lo, int(s["exclusiveMinimum"]) + 1)
    if isinstance(s.get("exclusiveMaximum"), (int, float)):
        hi = min(hi, int(s["exclusiveMaximum"]) - 1)
    return draw(st.integers(lo, hi))


def _number(draw: st.DrawFn, root: dict[str, Any], s: dict[str, Any], depth: int) -> Any:
    lo, hi = s.get("minimum"), s.get("maximum")
    return draw(
        st.floats(lo, hi, allow_nan=False, allow_infinity=False, width=64)
        | st.integers(int(lo) if lo is not None else -1000, int(hi) if hi is not None else 1000)
    )


def _string(draw: st.DrawFn, root: dict[str, Any], s: dict[str, Any], depth: int) -> Any:
    lo, hi = s.get("minLength", 0), s.get("maxLength", 12)
    if isinstance(s.get("pattern"), str):
        # ECMA-262 `$` (JSON Schema, and pydantic's Rust regex) does not match before a
        # final newline as Python's does: such strings are not valid instances
        return draw(
            st.from_regex(s["pattern"]).filter(lambda t: lo <= len(t) <= max(hi, lo) and not t.endswith("\n"))
        )
    return draw(st.text(min_size=lo, max_size=max(hi, lo)))


def _array(draw: st.DrawFn, root: dict[str, Any], s: dict[str, Any], depth: int) -> Any:
    if "prefixItems" in s:
        return [_value(draw, root, item, depth + 1) for item in s["prefixItems"]]
    lo = s.get("minItems", 0)
    hi = lo if depth >= DEPTH else max(lo, min(s.get("maxItems", 3), 3))
    size = draw(st.integers(lo, hi))
    items = s.get("items", True)
    return [_value(draw, root, items, depth + 1) for _ in range(size)]


def _object(draw: st.DrawFn, root: dict[str, Any], s: dict[str, Any], depth: int) -> Any:
    props: dict[str, Any] = s.get("properties", {})
    required = set(s.get("required", []))
    out: dict[str, Any] = {}
    for name in sorted(props):
        if name in required or (depth < DEPTH and draw(st.booleans())):
            out[name] = _value(draw, root, props[name], depth + 1)
    for name in sorted(required - set(props)):
        out[name] = draw(ANY_JSON)
    extra = s.get("additionalProperties", True)
    if extra is not False and depth < DEPTH and draw(st.integers(0, 3)) == 0:
        taken = set(props) | _attribute_names(props)
        key = draw(st.text(min_size=1, max_size=6).filter(lambda k: k not in taken))
        out[key] = _value(draw, root, extra, depth + 1) if isinstance(extra, dict) else draw(ANY_JSON)
    return out


def _attribute_names(props: dict[str, Any]) -> set[str]:
    """The Python attribute names the bindings may give these members (``_meta`` ->
    ``meta``, ``mimeType`` -> ``mime_type``, ``type`` -> ``type_``). An unknown member
    named so is the Pydantic style's one known limitation
    (tests/render/test_pydantic_behaviour.py::test_an_unknown_member_named_like_an_aliased_attribute),
    so the extra member drawn here is never one of them."""
    out: set[str] = set()
    for name in props:
        attr = snake(name)
        out.update({attr, attr + "_"})
    return out


_DRAW = {
    "null": _null,
    "boolean": _boolean,
    "integer": _integer,
    "number": _number,
    "string": _string,
    "array": _array,
    "object": _object,
}


def paths_of(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [at]
    if isinstance(value, dict):
        for k, v in value.items():
            out += paths_of(v, (*at, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += paths_of(v, (*at, i))
    return out


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for token in path:
        value = value[token]
    return value


def _set(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    _get(value, path[:-1])[path[-1]] = new
    return value


WRONG = st.sampled_from([None, True, 0, -1, 2**70, 1.5, "", "_unknown_value", [], {}, [None], {"_": 1}])


@st.composite
def mutated(draw: st.DrawFn, value: Any) -> tuple[Any, tuple[Any, ...]]:
    """One structural change of ``value`` and the path where it was made."""
    out = copy.deepcopy(value)
    path = draw(st.sampled_from(paths_of(out)))
    node = _get(out, path)
    kind = draw(st.sampled_from(["retype", "drop", "unknown-string", "wrap"]))
    if kind == "drop" and isinstance(node, dict) and node:
        del node[draw(st.sampled_from(sorted(node)))]
        return out, path
    if kind == "unknown-string" and isinstance(node, str):
        return _set(out, path, node + "_not_a_known_value"), path
    if kind == "wrap":
        return _set(out, path, [copy.deepcopy(node)]), path
    return _set(out, path, draw(WRONG)), path
