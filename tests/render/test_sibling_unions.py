"""Objects with sibling unions (``anyOf``/``oneOf`` beside their own members), in all three
styles, against the referee (jsonschema with the file's ``x-deserialize-*`` marks):

* ``Idle``: a member the object declares and each branch narrows (upstream v2
  ``IdleStateUpdate``), with a branch extending a def, an open ``other`` branch whose
  ``not`` rules out the known values, and a ``none`` branch;
* ``Elicit``: a ``oneOf`` tagged by ``mode`` beside an ``anyOf`` of scopes: both hold;
* ``Outgoing``: untitled branches named by what they require, one with a nested ``oneOf``;
* ``Exclusive``: a ``oneOf`` of two shapes: a value with both is rejected;
* ``Unstructured``, ``AgentOnly``: an object's own ``not`` (a member forbidden, or all
  of its values but one), checked as a one-branch union.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from acpgen import api, ir

from ..conftest import SCHEMAS, fixture_modules, parse_as
from ..referee import Referee
from ..strategies import instances, mutated

FIXTURE = SCHEMAS / "sibling_unions.json"
STYLES = ("pydantic", "dataclasses", "typeddict")
DOCUMENT = json.loads(FIXTURE.read_text())
REFEREE = Referee(DOCUMENT)


@pytest.fixture(scope="module")
def modules(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ModuleType]:
    return fixture_modules("sibling_unions.json", tmp_path_factory.getbasetemp())


CASES = [
    ("Idle", {"stopReason": "end_turn"}),
    ("Idle", {"stopReason": "cancelled", "usage": {"tokens": 3}}),
    ("Idle", {"stopReason": "error", "message": "boom"}),
    ("Idle", {"stopReason": "error"}),  # the error branch needs ErrorInfo's members
    ("Idle", {"stopReason": "error", "message": 5}),
    ("Idle", {"stopReason": "_acme_paused"}),
    ("Idle", {"stopReason": "max_tokens", "extra": [1]}),
    ("Idle", {}),
    ("Idle", {"stopReason": None}),
    ("Idle", {"stopReason": 5}),  # malformed: defaulted (the mark), then `none` holds
    ("Idle", {"usage": {"tokens": -1}}),
    ("Elicit", {"message": "m", "mode": "form", "fields": ["a"], "sessionId": "s"}),
    ("Elicit", {"message": "m", "mode": "url", "url": "u", "requestId": 7}),
    ("Elicit", {"message": "m", "mode": "url", "url": "u", "sessionId": "s", "requestId": 7}),
    ("Elicit", {"message": "m", "mode": "url", "url": "u"}),  # no scope: the anyOf fails
    ("Elicit", {"message": "m", "mode": "url", "url": "u", "sessionId": 5}),
    ("Elicit", {"message": "m", "mode": "url", "url": "u", "requestId": "7"}),
    ("Elicit", {"message": "m", "mode": "form", "sessionId": "s"}),
    ("Outgoing", {"jsonrpc": "2.0", "id": 1, "method": "m"}),
    ("Outgoing", {"jsonrpc": "2.0", "id": 1, "result": None}),
    ("Outgoing", {"jsonrpc": "2.0", "id": 1, "error": {"message": "x"}}),
    ("Outgoing", {"jsonrpc": "2.0", "id": 1, "result": 1, "error": {"message": "x"}}),
    ("Outgoing", {"jsonrpc": "2.0", "id": 1}),
    ("Outgoing", {"jsonrpc": "2.0", "method": "n"}),
    ("Outgoing", {"jsonrpc": "2.0", "id": 1, "error": {"code": 1}}),
    ("Outgoing", {"jsonrpc": "2.0"}),
    ("Exclusive", {"path": "p"}),
    ("Exclusive", {"uri": "u", "name": "n"}),
    ("Exclusive", {"path": "p", "uri": "u"}),
    ("Exclusive", {"name": "n"}),
    ("Unstructured", {"hint": "h"}),
    ("Unstructured", {"hint": "h", "type": "x"}),  # the `not` forbids `type`
    ("AgentOnly", {"id": "a"}),
    ("AgentOnly", {"id": "a", "type": "agent"}),
    ("AgentOnly", {"id": "a", "type": "terminal"}),  # any other `type` is ruled out
    ("AgentOnly", {"id": "a", "type": 3}),
]


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize(("name", "value"), CASES, ids=[f"{n}:{json.dumps(v)}" for n, v in CASES])
def test_bindings_agree_with_the_referee(style: str, name: str, value: Any, modules: dict[str, ModuleType]) -> None:
    expected, repaired = REFEREE.judge(name, value)
    accepted, back = parse_as(style, modules[style], name, value)
    assert accepted == expected, f"{style} {'accepted' if accepted else 'rejected'} {value}"
    if accepted:
        assert back == repaired


@pytest.mark.parametrize("name", ["Idle", "Elicit", "Outgoing", "Exclusive", "Unstructured", "AgentOnly"])
def test_drawn_and_mutated_values_agree_with_the_referee(name: str, modules: dict[str, ModuleType]) -> None:
    @given(st.data())
    def check(data: st.DataObject) -> None:
        value = data.draw(instances(DOCUMENT, {"$ref": f"#/$defs/{name}"}))
        if data.draw(st.booleans()):
            value, path = data.draw(mutated(value))
            note(f"mutated at {path}")
        expected, repaired = REFEREE.judge(name, value)
        for style in STYLES:
            accepted, back = parse_as(style, modules[style], name, value)
            assert accepted == expected, f"{style} {'accepted' if accepted else 'rejected'} {value}"
            if accepted:
                assert back == repaired

    check()


def test_each_member_is_declared_once(modules: dict[str, ModuleType]) -> None:
    source = Path(modules["pydantic"].__file__).read_text()  # type: ignore[arg-type]
    idle = source[source.index("class Idle(") : source.index("@model_validator", source.index("class Idle("))]
    assert idle.count("stop_reason:") == 1
    assert "stop_reason: _LenientStr" in idle  # Annotated[str | None, _OnErrorDefault(None)]
    assert set(modules["dataclasses"].Idle.__dataclass_fields__) >= {"stop_reason", "usage", "message", "code"}
    assert list(modules["typeddict"].Idle.__annotations__).count("stopReason") == 1


def test_branches_are_named_from_the_schema() -> None:
    protocol = api.build_ir(FIXTURE)[0].protocol
    defs = protocol.def_map()

    def labels(key: str) -> list[tuple[str, str]]:
        d = defs[key]
        mixins = d.mixins if isinstance(d, ir.ObjectDef) else d.variants[0].mixins  # type: ignore[union-attr]
        return [(m.keyword, m.label) for m in mixins]

    assert labels("Idle") == [("anyOf", x) for x in ("end_turn", "cancelled", "error", "other", "none")]
    assert labels("Elicit") == [("anyOf", "Session"), ("anyOf", "Request")]
    assert labels("Outgoing") == [("anyOf", "id, method"), ("anyOf", "id"), ("anyOf", "method")]
    nested = defs["Outgoing"].mixins[1].mixins  # type: ignore[union-attr]
    assert [(m.keyword, m.label) for m in nested] == [("oneOf", "result"), ("oneOf", "error")]
    other = defs["Idle"].mixins[3]  # type: ignore[union-attr]
    assert other.excludes == (("stopReason", ("end_turn", "cancelled", "error")),)


def test_error_names_the_failing_union(modules: dict[str, ModuleType]) -> None:
    m = modules["dataclasses"]
    with pytest.raises(m.ValidationError, match="expected one of 'Session', 'Request'"):
        m.load(m.Elicit, {"message": "m", "mode": "url", "url": "u"})
    with pytest.raises(m.ValidationError, match="exactly one of 'ByPath', 'ByUri'"):
        m.load(m.Exclusive, {"path": "p", "uri": "u"})


def test_building_checks_the_unions_too(modules: dict[str, ModuleType]) -> None:
    p = modules["pydantic"]
    assert p.UrlElicit(message="m", url="u", session_id="s").model_dump(by_alias=True, exclude_unset=True) == {
        "message": "m",
        "url": "u",
        "sessionId": "s",
        "mode": "url",
    }
    with pytest.raises(ValueError, match="Session"):
        p.UrlElicit(message="m", url="u")
    assert p.Idle(stop_reason="error", message="x").stop_reason == "error"
    with pytest.raises(ValueError, match="end_turn"):
        p.Idle(stop_reason="error")


NESTED = [
    {"kind": "state", "state": "running", "task": "t", "pid": 3},
    {"kind": "state", "state": "running", "task": "t", "host": "h"},
    {"kind": "state", "state": "running", "task": "t"},  # neither Local nor Remote
    {"kind": "state", "state": "running", "task": "t", "pid": "3"},
    {"kind": "state", "state": "idle"},
    {"kind": "note", "text": "x"},
]


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("value", NESTED, ids=[json.dumps(v) for v in NESTED])
def test_sibling_unions_of_a_nested_variants_payload(style: str, value: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A variant whose payload is a tagged union (nested_siblings.json, as upstream v2
    ``state_update``) whose inner variant's payload has a sibling ``anyOf``: the product
    classes check it too."""
    modules = fixture_modules("nested_siblings.json", tmp_path_factory.getbasetemp())
    referee = Referee(json.loads((SCHEMAS / "nested_siblings.json").read_text()))
    expected, repaired = referee.judge("Update", value)
    accepted, back = parse_as(style, modules[style], "Update", value)
    assert accepted == expected
    if accepted:
        assert back == repaired
