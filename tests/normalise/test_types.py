"""Type expressions of schema nodes (acpgen/normalise/types.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acpgen import api, ir


def _member(tmp_path: Path, node: dict[str, Any]) -> ir.TypeExpr:
    schema = tmp_path / "v1" / "schema.json"
    schema.parent.mkdir(exist_ok=True)
    thing = {"type": "object", "properties": {"x": node}}
    schema.write_text(json.dumps({"$defs": {"Thing": thing}}))
    (built,) = api.build_ir(schema)
    obj = built.protocol.def_map()["Thing"]
    assert isinstance(obj, ir.ObjectDef)
    (field,) = obj.fields
    return field.type


@pytest.mark.parametrize(
    "node",
    [
        {"enum": ["a", "b", None]},  # null listed, no type at all
        {"type": ["string", "null"], "enum": ["a", "b", None]},
        {"type": ["string", "null"], "enum": ["a", "b"]},
    ],
    ids=["enum-lists-null", "both", "type-lists-null"],
)
def test_an_enum_is_nullable_when_null_is_one_of_its_values(
    tmp_path: Path, node: dict[str, Any]
) -> None:
    assert _member(tmp_path, node) == ir.Nullable(ir.Lit(("a", "b")))


def test_an_enum_without_null_is_not_nullable(tmp_path: Path) -> None:
    assert _member(tmp_path, {"enum": ["a", "b"]}) == ir.Lit(("a", "b"))
