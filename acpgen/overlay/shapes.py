"""Reading and writing the shapes overlays touch, in the dialect upstream's schemars emits.

- :func:`canon` is the comparison B7 asks for: key order ignored, ``required``/``enum``/
  ``anyOf``/``oneOf`` compared as sets, descriptions, ``discriminator`` and acpgen's own
  ``x-acpgen-*`` marks ignored, ``{"allOf": [{"$ref": X}]}`` equal to ``{"$ref": X}``.
- :func:`expand` turns the compact type notation (``boolean``, ``Name``, ``T[]``,
  ``T | null``) into schema JSON.
- :class:`Union` reads a tagged union: its tag property, known tags and fallback.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

IGNORED = frozenset({"description", "discriminator", "$comment", "examples"})
#: era boilerplate, not what an RFD is about: ``_meta`` (on every object since v0.2) and
#: the ``x-deserialize-*`` leniency marks (added to existing fields in v1.x)
ERA = frozenset({"_meta"})
SETS = frozenset({"required", "enum", "anyOf", "oneOf", "type"})
SCALARS = {"boolean", "string", "integer", "number", "object"}
MARK = "x-acpgen-overlay"
#: what a difference report names first: the kind of schema before its details
FIRST = ("type", "$ref", "const", "enum")


def marks_of(node: Any) -> tuple[str, ...]:
    """The overlay ids in a node's ``x-acpgen-overlay`` (one id, or a list when several)."""
    mark = node.get(MARK) if isinstance(node, dict) else None
    if isinstance(mark, str):
        return (mark,)
    if isinstance(mark, list):
        return tuple(m for m in mark if isinstance(m, str))
    return ()


def canon(node: Any, descriptions: bool = False) -> Any:
    if isinstance(node, list):
        return [canon(v, descriptions) for v in node]
    if not isinstance(node, dict):
        return node
    node = _unwrap_ref(node)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key.startswith(("x-acpgen-", "x-deserialize-")) or (key in IGNORED and not (descriptions and key == "description")):
            continue
        value = canon(value, descriptions)
        if key in SETS and isinstance(value, list):
            value = sorted(value, key=_sort_key)
        elif key == "properties" and isinstance(value, dict):
            value = {k: value[k] for k in sorted(value) if k not in ERA}
        out[key] = value
    return {k: out[k] for k in sorted(out)}


def _unwrap_ref(node: dict[str, Any]) -> dict[str, Any]:
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict) and set(all_of[0]) == {"$ref"}:
        node = {k: v for k, v in node.items() if k != "allOf"}
        node["$ref"] = all_of[0]["$ref"]
    return node


def _sort_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def same(a: Any, b: Any, descriptions: bool = False) -> bool:
    return bool(canon(a, descriptions) == canon(b, descriptions))


def difference(expected: Any, actual: Any, pointer: str = "") -> str:
    """The first place two schemas differ canonically, as ``/pointer: expected X, found Y``."""
    a, b = canon(expected), canon(actual)

    def walk(x: Any, y: Any, at: str) -> str | None:
        if x == y:
            return None
        if isinstance(x, dict) and isinstance(y, dict):
            for key in sorted(set(x) | set(y), key=lambda k: (k not in FIRST, k)):
                if key not in y:
                    return f"{at}/{key}: missing (expected {short(x[key])})"
                if key not in x:
                    return f"{at}/{key}: unexpected {short(y[key])}"
                found = walk(x[key], y[key], f"{at}/{key}")
                if found:
                    return found
        if isinstance(x, list) and isinstance(y, list):
            xs, ys = {_sort_key(v): v for v in x}, {_sort_key(v): v for v in y}
            missing = [xs[k] for k in xs if k not in ys]
            extra = [ys[k] for k in ys if k not in xs]
            if missing or extra:
                parts = ([f"missing {short(missing)}"] if missing else []) + ([f"unexpected {short(extra)}"] if extra else [])
                return f"{at or '/'}: " + "; ".join(parts)
        return f"{at or '/'}: expected {short(x)}, found {short(y)}"

    return walk(a, b, pointer) or ""


def short(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --------------------------------------------------------------------------- notation


class NotationError(ValueError):
    pass


def ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/$defs/{name}"}


def expand(notation: str, description: str | None = None) -> dict[str, Any]:
    """``SessionConfigValueId`` -> ``{"allOf": [{"$ref": ...}], "description": ...}`` (schemars'
    spelling of a described reference); ``string[] | null`` -> ``{"type": ["array", "null"], ...}``."""
    text = notation.strip()
    nullable = False
    if text.endswith("| null"):
        nullable, text = True, text[: -len("| null")].strip()
    out: dict[str, Any]
    if text.endswith("[]"):
        out = {"type": ["array", "null"] if nullable else "array", "items": _base(text[:-2].strip())}
    else:
        base = _base(text)
        if nullable and "type" in base:
            out = {"type": [base["type"], "null"]}
        elif nullable:
            out = {"anyOf": [base, {"type": "null"}]}
        elif "$ref" in base and description is not None:
            out = {"allOf": [base]}
        else:
            out = dict(base)
    if description is not None:
        out["description"] = description
    return out


def _base(text: str) -> dict[str, Any]:
    if text == "any":
        return {}
    if text in SCALARS:
        return {"type": text}
    if text.endswith("[]"):
        return {"type": "array", "items": _base(text[:-2].strip())}
    if text.isidentifier():
        return ref(text)
    raise NotationError(f"bad type notation {text!r}: use boolean, string, integer, number, object, any, a $defs name, T[], T | null")


def refs_in(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        r = node.get("$ref")
        if isinstance(r, str) and r.startswith("#/$defs/"):
            found.add(r[len("#/$defs/") :])
        for v in node.values():
            found |= refs_in(v)
    elif isinstance(node, list):
        for v in node:
            found |= refs_in(v)
    return found


def field_schema(spec: dict[str, Any]) -> dict[str, Any]:
    """A field entry (``type`` or ``schema``, optional ``description``) as schema JSON."""
    if "schema" in spec:
        out = copy.deepcopy(spec["schema"])
        if "description" in spec:
            out["description"] = spec["description"]
        return dict(out)
    return expand(spec["type"], spec.get("description"))


# --------------------------------------------------------------------------- unions


def is_free_string(branch: Any) -> bool:
    return isinstance(branch, dict) and branch.get("type") == "string" and "const" not in branch and "enum" not in branch


def branch_tag(branch: Any, prop: str) -> str | None:
    if not isinstance(branch, dict):
        return None
    p = branch.get("properties", {})
    value = p.get(prop) if isinstance(p, dict) else None
    if isinstance(value, dict) and isinstance(value.get("const"), str):
        return str(value["const"])
    return None


def is_fallback(branch: Any, prop: str) -> bool:
    """A raw fallback: an object whose tag is any string (upstream pairs it with ``not``)."""
    if not isinstance(branch, dict) or branch_tag(branch, prop) is not None:
        return False
    p = branch.get("properties", {})
    tag = p.get(prop) if isinstance(p, dict) else None
    return isinstance(tag, dict) and tag.get("type") == "string" and prop in branch.get("required", [])


@dataclass
class Union:
    keyword: str  # oneOf | anyOf
    branches: list[Any]
    prop: str | None  # the tag property, inferred from the const-valued property branches share

    @property
    def tags(self) -> list[str]:
        if self.prop is None:
            return []
        return [t for b in self.branches if (t := branch_tag(b, self.prop)) is not None]

    def fallback(self) -> dict[str, Any] | None:
        if self.prop is None:
            return None
        return next((b for b in self.branches if is_fallback(b, self.prop)), None)

    def titled(self, title: str) -> dict[str, Any] | None:
        return next((b for b in self.branches if isinstance(b, dict) and b.get("title") == title and self.prop and branch_tag(b, self.prop) is None), None)


def read_union(schema: Any, prop: str | None = None) -> Union | None:
    if not isinstance(schema, dict):
        return None
    for keyword in ("oneOf", "anyOf"):
        branches = schema.get(keyword)
        if isinstance(branches, list) and branches and all(isinstance(b, dict) for b in branches):
            if any(b.get("type") not in (None, "object") for b in branches):
                continue  # an enum or a nullable wrapper, not a tagged union
            return Union(keyword, branches, prop or _infer_tag(branches))
    return None


def _infer_tag(branches: list[dict[str, Any]]) -> str | None:
    counts: dict[str, int] = {}
    for b in branches:
        props = b.get("properties", {})
        if not isinstance(props, dict):
            continue
        for name, value in props.items():
            if isinstance(value, dict) and isinstance(value.get("const"), str):
                counts[name] = counts.get(name, 0) + 1
    if not counts:
        return None
    return max(sorted(counts), key=lambda n: counts[n])


def tag_test(prop: str, tag: str) -> dict[str, Any]:
    return {"type": "object", "properties": {prop: {"type": "string", "const": tag}}, "required": [prop]}


def fallback_text(template: str | None, noun: str, default: str) -> str:
    return (template or default).replace("{noun}", noun)
