"""The TypedDict style's markers (acpgen/runtime/_runtime_typeddict.py) and the
annotations the generator writes with them (acpgen/render/tdviews.py): an optional,
non-nullable ``x-deserialize-default-on-error`` member with a bad value is left out,
not kept as ``null`` (which the schema would reject)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import TypeAdapter
from typing_extensions import NotRequired, TypedDict

from acpgen.runtime._runtime_typeddict import _OnErrorDefault

from ..conftest import generate, import_file, parse_as


class _Omit(TypedDict):
    x: NotRequired[Annotated[int, _OnErrorDefault(omit=True)]]


class _Default(TypedDict):
    x: NotRequired[Annotated[int, _OnErrorDefault(7)]]


def test_a_bad_value_of_an_omitted_member_drops_the_key() -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(_Omit)
    assert adapter.validate_python({"x": "bad"}) == {}
    assert adapter.validate_python({"x": 3}) == {"x": 3}
    assert adapter.validate_python({}) == {}


def test_a_bad_value_of_a_member_with_a_default_reads_as_the_default() -> None:
    assert TypeAdapter(_Default).validate_python({"x": "bad"}) == {"x": 7}


@pytest.mark.parametrize(
    ("node", "back"),
    [
        ({"type": "integer"}, {}),  # optional, not nullable: left out
        ({"type": ["integer", "null"]}, {"x": None}),  # nullable: null is valid
        ({"type": "integer", "default": 5}, {"x": 5}),  # a default: the default
    ],
    ids=["left-out", "nullable", "default"],
)
def test_a_generated_typeddict_leaves_a_bad_optional_member_out(
    tmp_path: Path, node: dict[str, Any], back: dict[str, Any]
) -> None:
    schema = tmp_path / "schema.json"
    thing = {
        "type": "object",
        "properties": {"x": {**node, "x-deserialize-default-on-error": True}},
    }
    schema.write_text(json.dumps({"$defs": {"Thing": thing}}))
    out = generate(schema, tmp_path / "out", ("typeddict",))
    module = import_file(out / "acp_typeddict" / "v1.py")
    assert parse_as("typeddict", module, "Thing", {"x": "bad"}) == (True, back)
    assert parse_as("typeddict", module, "Thing", {"x": 3}) == (True, {"x": 3})
