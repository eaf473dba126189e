"""The referee: ``jsonschema`` with the schema file's own ``x-deserialize-*`` marks applied.

``Referee(document).judge(name, value)`` returns ``(accepted, repaired)``: the value a
reader that honours the marks would hold (an invalid value of a member marked
``x-deserialize-default-on-error`` replaced by its default: the schema's ``default``,
else ``null`` where the member may be null, else dropped when it is optional, else the
type's empty value (serde's ``Default``); an invalid item of an array marked
``x-deserialize-skip-invalid-items`` dropped; ``null`` in a member marked
``x-deserialize-default-on-null`` replaced likewise), and whether the schema accepts
it. Written from the JSON Schema text alone, never from acpgen's IR.
"""

from __future__ import annotations

import copy
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker

from .strategies import INT_BOUNDS

ON_ERROR = "x-deserialize-default-on-error"
ON_NULL = "x-deserialize-default-on-null"
SKIP_ITEMS = "x-deserialize-skip-invalid-items"
#: the integer formats read as the bounds of the Rust types they name (upstream's serde
#: rejects a u32 out of range; JSON Schema leaves ``format`` as an annotation)
INT_FORMATS = FormatChecker(formats=())
for _name, (_lo, _hi) in INT_BOUNDS.items():
    INT_FORMATS.checks(_name)(lambda v, lo=_lo, hi=_hi: not isinstance(v, int) or isinstance(v, bool) or lo <= v <= hi)
EMPTY = {"array": [], "object": {}, "string": "", "integer": 0, "number": 0, "boolean": False}


class Referee:
    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.defs = document.get("$defs") or document.get("definitions") or {}
        self.prefix = "#/$defs/" if "$defs" in document else "#/definitions/"
        self._validators: dict[int, Draft202012Validator] = {}
        self._keep: list[Any] = []

    def validator(self, schema: Any) -> Draft202012Validator:
        found = self._validators.get(id(schema))
        if found is None:
            root = {"$defs": self.defs, "definitions": self.defs}
            body = schema if isinstance(schema, dict) else {"allOf": [schema]}
            found = Draft202012Validator({**root, **body}, format_checker=INT_FORMATS)
            self._validators[id(schema)] = found
            self._keep.append(schema)
        return found

    def valid(self, schema: Any, value: Any) -> bool:
        return self.validator(schema).is_valid(value)

    def strict(self, name: str, value: Any) -> bool:
        """Whether the schema itself (no marks) accepts ``value`` as ``name``."""
        return self.valid({"$ref": self.prefix + name}, value)

    def judge(self, name: str, value: Any) -> tuple[bool, Any]:
        node = {"$ref": self.prefix + name}
        repaired = self.repair(node, copy.deepcopy(value), 0)
        return self.valid(node, repaired), repaired

    def resolve(self, node: Any) -> Any:
        seen = 0
        while isinstance(node, dict) and isinstance(node.get("$ref"), str) and set(node) <= {"$ref", "description", "title"}:
            node = self.defs.get(node["$ref"].rsplit("/", 1)[-1], {})
            seen += 1
            if seen > 50:
                break
        return node

    def default_of(self, prop: dict[str, Any], required: bool) -> tuple[bool, Any]:
        """(keep the member, its value) for a member whose value is replaced."""
        if "default" in prop:
            return True, copy.deepcopy(prop["default"])
        if self.valid(prop, None):
            return True, None  # an optional member that may be null reads as null
        if not required:
            return False, None
        kind = self.resolve(prop).get("type") if isinstance(self.resolve(prop), dict) else None
        kind = kind if isinstance(kind, str) else None
        return True, copy.deepcopy(EMPTY.get(kind or "", None))

    def repair(self, node: Any, value: Any, depth: int) -> Any:
        if depth > 40:
            return value
        node = self.resolve(node)
        if not isinstance(node, dict):
            return value
        if isinstance(node.get("$ref"), str):
            value = self.repair({"$ref": node["$ref"]}, value, depth + 1)
        if isinstance(value, dict):
            value = self.repair_members(node, value, depth)
        if isinstance(value, list) and isinstance(node.get("items"), (dict, bool)):
            value = [self.repair(node["items"], item, depth + 1) for item in value]
        for sub in node.get("allOf") or ():
            value = self.repair(sub, value, depth + 1)
        for kw in ("anyOf", "oneOf"):
            branches = node.get(kw)
            if not isinstance(branches, list):
                continue
            for sub in branches:
                candidate = self.repair(sub, copy.deepcopy(value), depth + 1)
                if self.valid(sub, candidate):
                    value = candidate
                    break
        return value

    def repair_members(self, node: dict[str, Any], value: dict[str, Any], depth: int) -> dict[str, Any]:
        props = node.get("properties") or {}
        required = set(node.get("required") or ())
        for name, prop in props.items():
            if name not in value or not isinstance(prop, dict):
                continue
            # inside out, as serde reads: the value's own members are repaired first, then
            # invalid items dropped, then an invalid whole replaced
            item = value[name]
            if not (prop.get(ON_NULL) and item is None):
                if prop.get(SKIP_ITEMS) and isinstance(item, list):
                    items = self.resolve(prop).get("items", True)
                    item = [self.repair(items, x, depth + 1) for x in item]
                    item = [x for x in item if self.valid(items, x)]
                else:
                    item = self.repair(prop, item, depth + 1)
            if (prop.get(ON_NULL) and item is None) or (prop.get(ON_ERROR) and not self.valid(prop, item)):
                keep, default = self.default_of(prop, name in required)
                if keep:
                    value[name] = default
                else:
                    del value[name]
                continue
            value[name] = item
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            for name in [k for k in value if k not in props]:
                value[name] = self.repair(extra, value[name], depth + 1)
        return value
