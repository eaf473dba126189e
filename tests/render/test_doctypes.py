"""The type texts of the reference pages (acpgen/render/doctypes.py): an array of a
nullable or several-kind item keeps the item's alternatives together."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acpgen import api, ir
from acpgen.render.doctypes import Types


@pytest.mark.parametrize(
    ("node", "text"),
    [
        ({"type": "array", "items": {"type": ["string", "null"]}}, "(string | null)[]"),
        (
            {"type": "array", "items": {"type": ["string", "integer"]}},
            "(string | integer)[]",
        ),
        ({"type": ["array", "null"], "items": {"type": "string"}}, "string[] | null"),
        ({"type": "array", "items": {"type": "string"}}, "string[]"),
    ],
    ids=["nullable-items", "several-kinds", "nullable-array", "plain"],
)
def test_an_array_of_alternatives_is_bracketed(
    tmp_path: Path, node: dict[str, Any], text: str
) -> None:
    schema = tmp_path / "v1" / "schema.json"
    schema.parent.mkdir()
    schema.write_text(
        json.dumps({"$defs": {"Thing": {"type": "object", "properties": {"x": node}}}})
    )
    (built,) = api.build_ir(schema)
    thing = built.protocol.def_map()["Thing"]
    assert isinstance(thing, ir.ObjectDef)
    (field,) = thing.fields
    assert "".join(seg.text for seg in Types(built.protocol).text(field.type)) == text
