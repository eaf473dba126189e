"""Union recognition (acpgen/normalise/unions.py): which member is a union's tag. A tag is a
member every tagged variant *requires* with one constant value, written ``const`` or as a
one-value ``enum``; an optional constant, or an enum of several values, tells no variant
apart (a value without it, or with another of its values, is still valid JSON Schema)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from acpgen import api, ir

from ..conftest import generate, import_file, parse_as


def _obj(tag: dict[str, Any], own: str, required_tag: bool = True) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"kind": tag, own: {"type": "string"}},
        "required": (["kind"] if required_tag else []) + [own],
    }


def _union(tmp_path: Path, members: list[dict[str, Any]]) -> tuple[Path, ir.Def]:
    schema = tmp_path / "v1" / "schema.json"
    schema.parent.mkdir(exist_ok=True)
    schema.write_text(json.dumps({"$defs": {"U": {"oneOf": members}}}))
    (built,) = api.build_ir(schema)
    return schema, built.protocol.def_map()["U"]


@pytest.mark.parametrize(
    "tags",
    [
        [{"const": "a"}, {"const": "b"}],
        [{"type": "string", "enum": ["a"]}, {"type": "string", "enum": ["b"]}],
        [{"const": "a"}, {"type": "string", "enum": ["b"]}],
    ],
    ids=["const", "one-value-enum", "both"],
)
def test_a_required_constant_is_the_tag(tmp_path: Path, tags: list[dict[str, Any]]) -> None:
    _, union = _union(tmp_path, [_obj(tags[0], "x"), _obj(tags[1], "y")])
    assert isinstance(union, ir.TaggedUnionDef) and union.tag == "kind"
    assert [(v.kind, v.tag_value) for v in union.variants] == [("tagged", "a"), ("tagged", "b")]


@pytest.mark.parametrize(
    ("members", "valid"),
    [
        # `kind` optional in both: {"x": ...} is valid without it
        ([_obj({"const": "a"}, "x", False), _obj({"const": "b"}, "y", False)], {"x": "1"}),
        ([_obj({"type": "string", "enum": ["a"]}, "x", False), _obj({"type": "string", "enum": ["b"]}, "y", False)], {"y": "1"}),
        # an enum of several values fixes no variant: {"kind": "c", "y": ...} is the second
        ([_obj({"type": "string", "enum": ["a", "c"]}, "x"), _obj({"type": "string", "enum": ["b", "c"]}, "y")], {"kind": "c", "y": "1"}),
    ],
    ids=["optional-const", "optional-one-value-enum", "several-values"],
)
def test_a_member_that_fixes_no_variant_is_no_tag(tmp_path: Path, members: list[dict[str, Any]], valid: dict[str, Any]) -> None:
    schema, union = _union(tmp_path, members)
    assert not isinstance(union, ir.TaggedUnionDef), union
    assert isinstance(union, ir.UnionDef)
    out = generate(schema, tmp_path / "out", ("pydantic", "dataclasses"), formatted=False)
    for style in ("pydantic", "dataclasses"):
        module = import_file(out / f"acp_{style}" / "v1.py")
        assert parse_as(style, module, "U", valid) == (True, valid), style


@pytest.mark.parametrize("tags", [("text", "a#b"), ("#x", "y"), ("a#b", "a%23b")])
def test_a_tag_holding_a_hash_builds_and_imports(tags: tuple[str, ...], tmp_path: Path) -> None:
    """``#`` separates a union from its variant in a variant's key: a tag value holding one
    (found by ``make fuzz``: a ``const`` replaced by a ``$ref`` string, then an internal
    error in naming) is escaped there, and no two tags share a key."""
    def member(tag: str) -> dict[str, object]:
        return {"type": "object", "properties": {"type": {"type": "string", "const": tag}, "chunk": {"type": "string"}}, "required": ["type", "chunk"]}

    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"$defs": {"Chunk": {"oneOf": [member(t) for t in tags]}}}))
    keys = [v.key for v in next(d for d in api.build_ir(schema)[0].protocol.defs if d.key == "Chunk").variants]  # type: ignore[union-attr]
    assert len(set(keys)) == len(tags) and all(k.count("#") == 1 for k in keys)
    out = generate(schema, tmp_path / "out", ("pydantic", "dataclasses", "typeddict"))
    for style in ("pydantic", "dataclasses", "typeddict"):
        module = import_file(out / f"acp_{style}" / "v1.py")
        assert module.Chunk is not None
    value = TypeAdapter(import_file(out / "acp_pydantic" / "v1.py").Chunk).validate_json(json.dumps({"type": tags[-1], "chunk": "c"}))
    assert value.type_ == tags[-1]


def _def(tmp_path: Path, keyword: str, members: list[Any]) -> ir.Def:
    schema = tmp_path / "v1" / "schema.json"
    schema.parent.mkdir(exist_ok=True)
    schema.write_text(json.dumps({"$defs": {"U": {keyword: members}}}))
    (built,) = api.build_ir(schema)
    return built.protocol.def_map()["U"]


OVERLAPPING = [{"type": "string", "title": "short"}, {"type": "string", "title": "long"}]
DISJOINT = [{"type": "string", "title": "text"}, {"type": "boolean", "title": "flag"}]


@pytest.mark.parametrize(
    ("keyword", "members", "exclusive"),
    [
        ("oneOf", OVERLAPPING, "checked"),  # "a" is valid for both: the bindings count
        ("oneOf", DISJOINT, "disjoint"),
        ("anyOf", OVERLAPPING, None),  # anyOf holds with any number of members matching
        ("anyOf", DISJOINT, None),
    ],
    ids=["oneOf-overlapping", "oneOf-disjoint", "anyOf-overlapping", "anyOf-disjoint"],
)
def test_only_a_oneOf_is_exclusive(tmp_path: Path, keyword: str, members: list[Any], exclusive: str | None) -> None:
    union = _def(tmp_path, keyword, members)
    assert isinstance(union, ir.UnionDef) and union.exclusive == exclusive
