"""A union most of whose variants carry a constant tag and two of which carry the tag's
enum def (early releases' tool-call updates, #19 item 2): built without configuration,
its members named from the schema, and read as JSON Schema reads it in all three styles
(the referee: jsonschema)."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acpgen import api, ir

from ..conftest import SCHEMAS, fixture_modules, parse_as
from ..referee import Referee
from ..strategies import instances, mutated

FIXTURE = SCHEMAS / "enum_tagged.json"
STYLES = ("pydantic", "dataclasses", "typeddict")
DOCUMENT = json.loads(FIXTURE.read_text())
REFEREE = Referee(DOCUMENT)


@pytest.fixture(scope="module")
def modules(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ModuleType]:
    return fixture_modules("enum_tagged.json", tmp_path_factory.getbasetemp())


def test_members_are_named_from_the_schema() -> None:
    (built,) = api.build_ir(FIXTURE)
    update = built.protocol.def_map()["Update"]
    assert isinstance(update, ir.UnionDef)
    keys = [m.type.key for m in update.members if isinstance(m.type, ir.Ref)]
    # own required members first; the two ToolKind members share theirs except `status`
    assert keys == ["Update.text", "Update.entries", "Update.kind_toolCallId_title", "Update.status"]
    assert [built.names.type(k) for k in keys] == ["UpdateText", "UpdateEntries", "UpdateKindToolCallIdTitle", "UpdateStatus"]


CASES = [
    {"kind": "message", "text": "hi"},
    {"kind": "plan", "entries": ["a"]},
    {"kind": "read", "toolCallId": "t", "title": "Read"},
    {"kind": "edit", "toolCallId": "t", "title": "Edit", "status": "done"},
    {"kind": "read", "toolCallId": "t"},
    {"kind": "fly", "toolCallId": "t", "title": "x"},
    {"kind": "message"},
    {"kind": "plan", "entries": "a"},
]


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("value", CASES, ids=[json.dumps(c) for c in CASES])
def test_bindings_agree_with_the_referee(style: str, value: Any, modules: dict[str, ModuleType]) -> None:
    expected, repaired = REFEREE.judge("Update", value)
    accepted, back = parse_as(style, modules[style], "Update", value)
    assert accepted == expected
    if accepted:
        assert back == repaired


def test_drawn_and_mutated_values_agree_with_the_referee(modules: dict[str, ModuleType]) -> None:
    @given(st.data())
    def check(data: st.DataObject) -> None:
        value = data.draw(instances(DOCUMENT, {"$ref": "#/$defs/Update"}))
        if data.draw(st.booleans()):
            value = data.draw(mutated(value))[0]
        expected, repaired = REFEREE.judge("Update", value)
        for style in STYLES:
            accepted, back = parse_as(style, modules[style], "Update", value)
            assert accepted == expected, f"{style}: {value}"
            if accepted:
                assert back == repaired, style

    check()
