"""Message sets the parse bench has not been tuned on, drawn from the JSON Schema itself.

Every message type (the params and result of every method of the release) gets instances
drawn by a seeded walk of its schema, so a set is the same on every run and machine:

* ``small``: the smallest instances: required members only, short strings, empty arrays;
  every member of every union at the top of a message taken in turn.
* ``large``: every optional member set, long texts (256 B-2 KiB) and long arrays (8-16 items
  near the top of a message).
* ``mixed``: drawn like real traffic: three in four messages are ``session/update``
  notifications, optional members set one time in two, ids, names and URIs of 8-36
  characters, texts of a word to a paragraph, arrays of 0-4 items, ``_meta`` now and then.

A drawn instance is kept only when JSON Schema (``jsonschema``, Draft 2020-12), the
reference module and acpgen's module all accept it; the walk does not model ``oneOf``
exclusivity and the like, and leaves them to that filter.
"""

from __future__ import annotations

import json
import random
import string
from typing import Any, Callable

SETS = ("small", "large", "mixed")
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
SHORT = ("id", "uri", "path", "name", "title", "type", "version", "command", "cwd")
WORDS = "the agent reads a file and writes a diff while the client shows each tool call to its user".split()


class Profile:
    def __init__(self, name: str, rng: random.Random) -> None:
        self.name, self.rng = name, rng
        self.key = ""  # the member being drawn: ids, names and URIs stay short in ``mixed``

    def optional(self) -> bool:
        return {"small": False, "large": True}.get(self.name, self.rng.random() < 0.5)

    def length(self, depth: int) -> int:
        if self.name == "small":
            return 0
        if self.name == "large":
            return self.rng.randint(8, 16) if depth < 3 else self.rng.randint(0, 2)
        return self.rng.choice([0, 1, 1, 2, 3, 4])

    def text(self) -> str:
        if self.name == "small":
            return "".join(self.rng.choice(string.ascii_lowercase) for _ in range(self.rng.randint(1, 8)))
        if self.name == "large":
            size = self.rng.randint(256, 2048)
        elif self.key.lower().endswith(SHORT):
            size = self.rng.choice([8, 12, 24, 36])
        else:
            size = self.rng.choice([4, 16, 40, 120, 400])
        out: list[str] = []
        while sum(len(w) + 1 for w in out) < size:
            out.append(self.rng.choice(WORDS))
        return " ".join(out)[:size]

    def null(self) -> bool:
        return self.name == "mixed" and self.rng.random() < 0.1


class Walk:
    """One instance of a schema, drawn with ``profile``."""

    def __init__(self, root: dict[str, Any], profile: Profile, depth: int = 6) -> None:
        self.root, self.p, self.max_depth = root, profile, depth

    def ref(self, ref: str) -> Any:
        node: Any = self.root
        for token in ref[2:].split("/"):
            node = node[token]
        return node

    def value(self, schema: Any, depth: int = 0, choice: int | None = None) -> Any:
        if schema is True or schema == {}:
            return {"k": self.p.text()} if self.p.name != "small" else {}
        s = dict(schema)
        if "$ref" in s:
            s = {**self.ref(s.pop("$ref")), **s}
        for key in ("oneOf", "anyOf"):
            if key in s:
                members = s.pop(key)
                if choice is not None:
                    member = members[choice % len(members)]
                elif depth >= self.max_depth:
                    member = next((m for m in members if m.get("type") == "null"), members[0])
                else:
                    non_null = [m for m in members if m.get("type") != "null"]
                    member = members[-1] if non_null != members and self.p.null() else self.p.rng.choice(non_null or members)
                s = merge(s, member)
                return self.value(s, depth + 1)
        if "allOf" in s:
            for part in s.pop("allOf"):
                if "$ref" in part:
                    part = self.ref(part["$ref"])
                s = merge(s, part)
            return self.value(s, depth)
        if "const" in s:
            return s["const"]
        if "enum" in s:
            return self.p.rng.choice(s["enum"])
        kind = s.get("type")
        if isinstance(kind, list):
            kinds = [k for k in kind if k != "null"]
            if "null" in kind and (self.p.null() or not kinds):
                return None
            kind = self.p.rng.choice(kinds)
        if kind == "object" or (kind is None and "properties" in s):
            return self.obj(s, depth)
        if kind == "array":
            n = 0 if depth >= self.max_depth else self.p.length(depth)
            return [self.value(s.get("items", {}), depth + 1) for _ in range(n)]
        if kind == "string":
            return self.p.text()
        if kind == "boolean":
            return self.p.rng.random() < 0.5
        if kind == "integer":
            lo, hi = INT_BOUNDS.get(s.get("format", ""), (-(2**31), 2**31 - 1))
            lo = max(lo, s.get("minimum", lo))
            hi = min(hi, s.get("maximum", hi))
            return self.p.rng.randint(lo, min(hi, lo + 100000))
        if kind == "number":
            return round(self.p.rng.uniform(0, 1000), 3)
        if kind == "null":
            return None
        return self.p.text()

    def obj(self, s: dict[str, Any], depth: int) -> dict[str, Any]:
        required = set(s.get("required", ()))
        out: dict[str, Any] = {}
        for name, prop in s.get("properties", {}).items():
            if name in required or (depth < self.max_depth and self.p.optional()):
                if name == "_meta" and self.p.name == "mixed" and self.p.rng.random() < 0.7:
                    continue
                self.p.key = name
                out[name] = self.value(prop, depth + 1)
        return out


def merge(a: dict[str, Any], b: Any) -> dict[str, Any]:
    """``a`` and ``b`` both hold (allOf), as far as drawing needs it."""
    out = dict(a)
    for key, value in b.items():
        if key == "properties":
            out["properties"] = {**out.get("properties", {}), **value}
        elif key == "required":
            out["required"] = [*out.get("required", []), *value]
        elif key == "allOf" and "allOf" in out:
            out["allOf"] = [*out["allOf"], *value]
        elif key not in out or key in ("$ref", "oneOf", "anyOf"):
            out[key] = value
    return out


def message_types(module: Any) -> dict[str, list[str]]:
    """The params and result types of every method, by method name."""
    out: dict[str, list[str]] = {}
    for spec in module.METHODS:
        for tp in (spec.params, spec.result):
            if isinstance(tp, type):
                out.setdefault(spec.method, []).append(tp.__name__)
    return out


def draw(
    name: str, root: dict[str, Any], module: Any, accepts: Callable[[str, bytes], bool], size: int, seed: int = 36
) -> list[tuple[str, bytes]]:
    """``size`` instances of set ``name`` (about), as (type, JSON bytes) pairs accepted by all."""
    import jsonschema

    rng = random.Random(f"{seed}-{name}")
    profile = Profile(name, rng)
    walk = Walk(root, profile)
    by_method = message_types(module)
    types = sorted({t for ts in by_method.values() for t in ts})
    if name == "mixed":
        updates = ["SessionNotification"] * (3 * len(types))
        pool = updates + types
        wanted = [rng.choice(pool) for _ in range(size)]
    else:
        per = max(1, size // len(types))
        wanted = [t for t in types for _ in range(per)]
    out: list[tuple[str, bytes]] = []
    for i, tp in enumerate(wanted):
        schema = {"$ref": f"#/$defs/{tp}"}
        for attempt in range(20):
            value = walk.value(schema, 0, choice=i + attempt if name == "small" else None)
            if not jsonschema.Draft202012Validator({"$defs": root["$defs"], **schema}).is_valid(value):
                continue
            raw = json.dumps(value).encode()
            if accepts(tp, raw):
                out.append((tp, raw))
                break
    return out
