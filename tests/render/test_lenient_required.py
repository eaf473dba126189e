"""The schema's ``x-deserialize-*`` marks where the bindings were strict before: on
required members (upstream ``ListSessionsResponse.sessions``: an invalid value becomes
the type's empty value, as serde's ``Default``), and ``x-deserialize-default-on-null``
(upstream schemas from SDK 2.1: ``McpServerStdio.args``), in all three styles, against
the referee (jsonschema with the marks applied, tests/referee.py)."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from acpgen import api

from ..conftest import SCHEMAS, fixture_modules, parse_as
from ..referee import Referee
from ..strategies import instances, mutated

FIXTURE = SCHEMAS / "lenient_required.json"
STYLES = ("pydantic", "dataclasses", "typeddict")
DOCUMENT = json.loads(FIXTURE.read_text())
REFEREE = Referee(DOCUMENT)
BASE = {"sessions": [{"id": "a"}], "args": ["x"], "env": {"K": "v"}, "name": "n", "options": ["o"]}


@pytest.fixture(scope="module")
def modules(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ModuleType]:
    return fixture_modules("lenient_required.json", tmp_path_factory.getbasetemp())


CASES = [
    ({}, True, BASE),
    ({"sessions": 5}, True, {**BASE, "sessions": []}),  # required, invalid: the empty list
    ({"sessions": [{"id": "a"}, {"id": 1}]}, True, BASE),  # the invalid item is dropped
    ({"sessions": None}, True, {**BASE, "sessions": []}),
    ({"args": None}, True, {**BASE, "args": []}),  # default-on-null, required: empty list
    ({"args": 5}, False, None),  # the null mark does not forgive other values
    ({"env": None}, True, {**BASE, "env": {}}),
    ({"env": {"K": 1}}, True, {**BASE, "env": {}}),
    ({"name": 7}, True, {**BASE, "name": ""}),
    ({"options": 3}, False, None),  # [] would break minItems: no lenient value, strict
    ({"options": []}, False, None),
    ({"tags": None}, True, BASE),  # optional, no default: null reads as absent
    ({"tags": ["t"]}, True, {**BASE, "tags": ["t"]}),
    ({"limit": None}, True, {**BASE, "limit": 10}),  # null reads as the schema default
    ({"limit": "x"}, False, None),
    ({"note": None}, True, {**BASE, "note": None}),  # null is valid: nothing to do
]


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize(("change", "accepted", "back"), CASES, ids=[json.dumps(c[0]) for c in CASES])
def test_marks_on_required_members_and_null(
    style: str, change: dict[str, Any], accepted: bool, back: Any, modules: dict[str, ModuleType]
) -> None:
    value = {**BASE, **change}
    assert REFEREE.judge("ListResponse", value) == (accepted, back if accepted else REFEREE.judge("ListResponse", value)[1])
    got, given_back = parse_as(style, modules[style], "ListResponse", value)
    assert got == accepted
    if accepted:
        assert given_back == back


def test_absent_required_members_stay_errors(modules: dict[str, ModuleType]) -> None:
    for member in ("sessions", "args"):
        value = {k: v for k, v in BASE.items() if k != member}
        assert not REFEREE.judge("ListResponse", value)[0]
        for style in STYLES:
            assert parse_as(style, modules[style], "ListResponse", value) == (False, None)


def test_null_read_as_absent_compares_as_absent(modules: dict[str, ModuleType]) -> None:
    m = modules["pydantic"]
    parsed = m.ListResponse.model_validate_json(json.dumps({**BASE, "tags": None}))
    assert parsed.tags is None and "tags" not in parsed.model_fields_set
    assert parsed == m.ListResponse.model_validate(BASE)
    assert not m.ListResponse.__pydantic_decorators__.model_validators


def test_the_mark_is_read_into_the_ir() -> None:
    (built,) = api.build_ir(FIXTURE)
    fields = {f.wire_name: f for f in built.protocol.def_map()["ListResponse"].fields}  # type: ignore[union-attr]
    assert [n for n, f in fields.items() if f.default_on_null] == ["args", "env", "tags", "limit", "note"]


def test_drawn_and_mutated_values_agree_with_the_referee(modules: dict[str, ModuleType]) -> None:
    @given(st.data())
    def check(data: st.DataObject) -> None:
        value = data.draw(instances(DOCUMENT, {"$ref": "#/$defs/ListResponse"}))
        if data.draw(st.booleans()):
            value, path = data.draw(mutated(value))
            note(f"mutated at {path}")
        expected, repaired = REFEREE.judge("ListResponse", value)
        for style in STYLES:
            accepted, back = parse_as(style, modules[style], "ListResponse", value)
            assert accepted == expected, f"{style} {'accepted' if accepted else 'rejected'} {value}"
            if accepted:
                assert back == repaired, style

    check()
