"""Frames by method over every corpus schema file that has a method table, in the three
styles: for every method, a valid frame (a minimal instance of its params def, drawn from
the schema and checked by jsonschema) parses to that method's type; the params of every
other method that jsonschema rejects for it are rejected (-32602), never relabelled; an
extension method keeps its params, an unknown one is ``MethodNotFound``."""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from acpgen import api

from .. import corpus
from ..conftest import generate, import_file

STYLES = ("pydantic", "dataclasses", "typeddict")


def _files() -> list[Path]:
    """Every distinct corpus schema file (by content) whose method table names params."""
    seen: set[str] = set()
    out = []
    for release in corpus.releases():
        for path in sorted((corpus.ACP / release).glob("v*/schema*.json")):
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            if digest not in seen:
                seen.add(digest)
                out.append(path)
    return out


def _simple(root: dict[str, Any], node: Any, depth: int = 0) -> Any:
    """A small value meant to be valid for ``node``: required members only, the first
    const/enum value, the first union member that works, bounds respected. The caller
    checks it with jsonschema."""
    if depth > 12 or not isinstance(node, dict):
        return None
    if "$ref" in node:
        target = root
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part]
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return _simple(root, {**target, **rest} if rest else target, depth + 1)
    if "allOf" in node:
        rest = {k: v for k, v in node.items() if k not in ("allOf", "description", "title")}
        values = [_simple(root, part, depth + 1) for part in node["allOf"]]
        if rest:
            values.append(_simple(root, rest, depth + 1))
        if values and all(isinstance(v, dict) for v in values):
            return {k: v for value in values for k, v in value.items()}
        return next((v for v in values if v is not None), None)
    if "const" in node:
        return node["const"]
    if "enum" in node:
        return node["enum"][0]
    for kw in ("oneOf", "anyOf"):
        if kw in node:
            check = Draft202012Validator({**{k: v for k, v in node.items()}, "$defs": root.get("$defs", {})})
            rest = {k: v for k, v in node.items() if k not in (kw, "description", "title", "discriminator")}
            for member in node[kw]:
                value = _simple(root, member, depth + 1)
                if rest and isinstance(value, dict):
                    base = _simple(root, rest, depth + 1)
                    value = {**(base if isinstance(base, dict) else {}), **value}
                if check.is_valid(value):
                    return value
            return None
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None and ("properties" in node or "required" in node):
        kind = "object"
    if kind == "object":
        props = node.get("properties", {})
        return {k: _simple(root, props.get(k, {}), depth + 1) for k in node.get("required", [])}
    if kind == "array":
        return [_simple(root, node.get("items", {}), depth + 1) for _ in range(node.get("minItems", 0))]
    if kind == "string":
        return "a" * node.get("minLength", 0)
    if kind in ("integer", "number"):
        low = node.get("minimum", node.get("exclusiveMinimum", -1) + 1)
        return max(low, 0) if node.get("maximum", 0) >= 0 else node["maximum"]
    if kind == "boolean":
        return False
    return None


@lru_cache(maxsize=None)
def _root(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())  # type: ignore[no-any-return]


def minimal(path: Path, name: str) -> Any:
    """A valid instance of def ``name`` (checked by jsonschema), or None when the simple
    construction does not find one."""
    root = _root(path)
    value = _simple(root, {"$ref": f"#/$defs/{name}"})
    check = Draft202012Validator({"$defs": root["$defs"], "$ref": f"#/$defs/{name}"})
    return value if check.is_valid(value) else None


def _cases() -> list[Any]:
    return [pytest.param(p, id=f"{p.parent.parent.name}/{p.parent.name}/{p.name}") for p in _files()]


@corpus.needs_corpus
@pytest.mark.parametrize("path", _cases())
def test_every_method_parses_to_its_own_type(path: Path, tmp_path: Path) -> None:
    built = [b for b in api.build_ir(path) if Path(b.raw.source.path).resolve() == path.resolve()]
    assert len(built) == 1
    protocol, names = built[0].protocol, built[0].names
    methods = [m for m in protocol.methods if m.params]
    if not methods:
        pytest.skip("no method names a params def in this schema file")
    root = json.loads(path.read_text())
    out = generate(path, tmp_path, STYLES, formatted=False)
    stem = protocol.tree if protocol.stability == "stable" else f"{protocol.tree}_unstable"
    samples = {m.params: minimal(path, m.params) for m in methods}
    checked = 0
    for style in STYLES:
        mod = import_file(out / f"acp_{style}" / f"{stem}.py")
        for m in methods:
            kind = m.kind
            rid = {"id": 1} if kind == "request" else {}
            sample = samples[m.params]
            if sample is not None:
                frame = mod.RPC.parse({"jsonrpc": "2.0", **rid, "method": m.name, "params": sample})
                assert type(frame).__name__ == ("Request" if kind == "request" else "Notification")
                expected = getattr(mod, names.type(m.params))
                if style != "typeddict" and isinstance(expected, type):
                    assert isinstance(frame.params, expected), (m.name, type(frame.params))
                assert json.loads(mod.RPC.encode(frame))["params"] == sample
                checked += 1
            referee = Draft202012Validator({"$defs": root["$defs"], "$ref": f"#/$defs/{m.params}"})
            for other, other_sample in samples.items():
                if other == m.params or other_sample is None or referee.is_valid(other_sample):
                    continue
                if any(d.get("x-deserialize-default-on-error") for d in _members(root, m.params)):
                    continue  # leniency may legitimately accept it
                with pytest.raises(mod.RpcError) as err:
                    mod.RPC.parse({"jsonrpc": "2.0", **rid, "method": m.name, "params": other_sample})
                assert err.value.code == -32602, (style, m.name, other)
        ext = mod.RPC.parse({"jsonrpc": "2.0", "id": 1, "method": "_vendor/x", "params": {"k": 1}})
        assert ext.params == {"k": 1}
        assert type(mod.RPC.parse({"jsonrpc": "2.0", "id": 1, "method": "vendor/x", "params": {}})).__name__ == "MethodNotFound"
    assert checked > 0


def _members(root: dict[str, Any], name: str) -> list[dict[str, Any]]:
    node = root["$defs"].get(name, {})
    props = node.get("properties", {}) if isinstance(node, dict) else {}
    return [p for p in props.values() if isinstance(p, dict)]
