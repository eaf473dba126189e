"""Untagged ``oneOf`` unions and "exactly one" (issue #27 item 1), in all three styles,
against the referee (jsonschema with the file's ``x-deserialize-*`` marks):

* ``Source``: object members told apart by ``kind``, a member typed as an enum
  ``$ref`` (not a ``const``) whose values both members accept, and ``Remote`` requires
  all that ``Local`` requires: a ``Remote`` value is valid for both, so JSON Schema
  rejects it (the earlier upstream case). Checked.
* ``Target``: the same shape, but ``kind`` is required by both and its two enum
  ``$ref``\\ s share no value: disjoint, the fast path.
* ``Amount`` (``integer`` vs ``number``) and ``Setting`` (an enum ``$ref`` vs
  ``string``): scalar members that overlap, checked. ``Label``: kinds that do not
  meet, disjoint.

The decision is read into the IR (``UnionDef.exclusive``) and unit-tested on schema
pairs (``acpgen/normalise/exclusive.py``).
"""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from acpgen import api, ir
from acpgen.normalise.exclusive import exclusivity, may_overlap

from ..conftest import SCHEMAS, fixture_modules, parse_as
from ..referee import Referee
from ..strategies import instances, mutated

FIXTURE = SCHEMAS / "exclusive_unions.json"
STYLES = ("pydantic", "dataclasses", "typeddict")
DOCUMENT = json.loads(FIXTURE.read_text())
REFEREE = Referee(DOCUMENT)
DEFS = DOCUMENT["$defs"]


def resolve(ref: str) -> Any:
    return DEFS.get(ref.removeprefix("#/$defs/"))


@pytest.fixture(scope="module")
def modules(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ModuleType]:
    return fixture_modules("exclusive_unions.json", tmp_path_factory.getbasetemp())


def test_the_decision_is_read_into_the_ir() -> None:
    defs = api.build_ir(FIXTURE)[0].protocol.def_map()
    decided = {k: d.exclusive for k, d in defs.items() if isinstance(d, ir.UnionDef)}
    assert decided == {
        "Source": "checked",
        "Target": "disjoint",
        "Amount": "checked",
        "Setting": "checked",
        "Label": "disjoint",
        "Job.count": "checked",  # an inline oneOf whose members overlap: lifted
    }
    job = defs["Job"]
    assert isinstance(job, ir.ObjectDef)
    types = {f.wire_name: f.type for f in job.fields}
    assert types["count"] == ir.Ref("Job.count")
    assert isinstance(types["tag"], ir.AnyOf)  # one whose members cannot: inline, as before


def test_an_anyof_asks_for_no_exclusivity() -> None:
    defs = api.build_ir(SCHEMAS / "untagged_union.json")[0].protocol.def_map()
    assert {k: d.exclusive for k, d in defs.items() if isinstance(d, ir.UnionDef)} == {
        "RequestId": None,
        "Resource": None,
        "Chunk": None,
    }


OBJ = {"type": "object"}
PAIRS = [
    # (a, b, may overlap)
    ({"type": "integer"}, {"type": "number"}, True),
    ({"type": "integer"}, {"type": "string"}, False),
    ({"type": "number"}, {"type": "boolean"}, False),
    ({"type": "string"}, {"type": "string", "pattern": "^a"}, True),
    ({"const": 1}, {"const": 1.0}, True),
    ({"const": 1}, {"const": True}, False),
    ({"enum": ["a", "b"]}, {"const": "c"}, False),
    ({"enum": ["a", "b"]}, {"type": "string"}, True),
    ({"enum": ["a", None]}, {"type": "integer"}, False),
    ({"type": "null"}, {"type": ["string", "null"]}, True),
    ({"type": "null"}, {"type": "string"}, False),
    ({"$ref": "#/$defs/LocalKind"}, {"$ref": "#/$defs/RemoteKind"}, False),
    ({"$ref": "#/$defs/LocalKind"}, {"$ref": "#/$defs/SourceKind"}, False),
    ({"$ref": "#/$defs/Mode"}, {"enum": ["safe", "x"]}, True),
    ({"$ref": "#/$defs/Elsewhere"}, {"type": "string"}, True),  # unknown: overlaps
    ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, {"type": "boolean"}, False),
    ({"oneOf": [{"type": "string"}, {"type": "integer"}]}, {"type": "number"}, True),
    ({"type": "array"}, {"type": "array", "items": {"type": "string"}}, True),
    # objects: a member one requires, declared by both with disjoint types
    (
        {**OBJ, "properties": {"k": {"const": "a"}}, "required": ["k"]},
        {**OBJ, "properties": {"k": {"$ref": "#/$defs/RemoteKind"}}},
        False,
    ),
    (
        {**OBJ, "properties": {"k": {"const": "http"}}, "required": ["k"]},
        {**OBJ, "properties": {"k": {"$ref": "#/$defs/RemoteKind"}}},
        True,
    ),
    # ... but not required by either: a value without it is valid for both
    ({**OBJ, "properties": {"k": {"const": "a"}}}, {**OBJ, "properties": {"k": {"const": "b"}}}, True),
    # a required member the other rules out
    ({**OBJ, "required": ["x"]}, {**OBJ, "properties": {}, "additionalProperties": False}, False),
    ({**OBJ, "required": ["x"]}, {**OBJ, "not": {"required": ["x"]}}, False),
    ({**OBJ, "required": ["x"]}, {**OBJ, "properties": {"x": False}}, False),
    ({**OBJ, "required": ["x"]}, {**OBJ, "additionalProperties": {"type": "string"}}, True),
    ({**OBJ, "required": ["x"]}, {**OBJ, "required": ["y"]}, True),
    # no `type`: a schema of properties accepts any non-object too
    ({"properties": {"k": {"const": "a"}}, "required": ["k"]}, {"properties": {"k": {"const": "b"}}, "required": ["k"]}, True),
    (True, {"type": "string"}, True),
    (True, {**OBJ, "required": ["x"]}, True),
    ({}, {**OBJ, "properties": {"x": {"const": 1}}, "required": ["x"]}, True),
    (False, {"type": "string"}, False),
]


@pytest.mark.parametrize(("a", "b", "overlap"), PAIRS, ids=[f"{json.dumps(a)}~{json.dumps(b)}" for a, b, _ in PAIRS])
def test_which_members_may_overlap(a: Any, b: Any, overlap: bool) -> None:
    assert may_overlap(a, b, resolve) is overlap
    assert may_overlap(b, a, resolve) is overlap


def test_one_overlapping_pair_is_enough() -> None:
    members = [{"type": "string"}, {"type": "boolean"}, {"type": "integer"}]
    assert exclusivity(members, resolve) == "disjoint"
    assert exclusivity([*members, {"type": "number"}], resolve) == "checked"


REMOTE = {"kind": "remote", "path": "p", "url": "u"}
CASES = [
    ("Source", {"kind": "local", "path": "p"}),
    ("Source", {"kind": "remote", "path": "p"}),  # the kind does not tell them apart
    ("Source", REMOTE),  # valid for Local and Remote: rejected
    ("Source", {"kind": "local", "path": "p", "url": "u"}),
    ("Source", {"kind": "elsewhere", "path": "p"}),
    ("Source", {"path": "p"}),
    ("Target", {"kind": "file", "path": "p"}),
    ("Target", {"kind": "http", "url": "u", "path": "p"}),
    ("Target", {"kind": "file", "path": "p", "url": "u"}),
    ("Target", {"kind": "ftp", "url": "u"}),
    ("Amount", 5),  # an integer is a number too: rejected
    ("Amount", 5.5),
    ("Amount", -1),
    ("Amount", "5"),
    ("Setting", "fast"),  # a Mode and a string: rejected
    ("Setting", "slow"),
    ("Setting", 1),
    ("Label", "x"),
    ("Label", 3),
    ("Label", True),
    ("Label", 1.5),
    ("Job", {"source": {"kind": "local", "path": "p"}, "amount": 0.25, "setting": "slow"}),
    ("Job", {"source": REMOTE}),
    ("Job", {"source": {"kind": "local", "path": "p"}, "amount": 2}),
    ("Job", {"source": {"kind": "local", "path": "p"}, "setting": "safe"}),
    ("Job", {"source": {"kind": "local", "path": "p"}, "count": 3}),
    ("Job", {"source": {"kind": "local", "path": "p"}, "count": 3.5, "tag": 3}),
    ("Job", {"source": {"kind": "local", "path": "p"}, "tag": "t"}),
    ("Job", {"source": {"kind": "local", "path": "p"}, "tag": 1.5}),
]


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize(("name", "value"), CASES, ids=[f"{n}:{json.dumps(v)}" for n, v in CASES])
def test_bindings_agree_with_the_referee(style: str, name: str, value: Any, modules: dict[str, ModuleType]) -> None:
    expected, repaired = REFEREE.judge(name, value)
    accepted, back = parse_as(style, modules[style], name, value)
    assert accepted == expected, f"{style} {'accepted' if accepted else 'rejected'} {value}"
    if accepted:
        assert back == repaired


def _whole_float(value: Any) -> bool:
    """A float with no fraction (``2.0``) anywhere in ``value``: JSON Schema counts it
    as an integer, every binding style (as serde) reads it as a number only: a gap of
    all integer members, not of ``oneOf``, left out here."""
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, dict):
        return any(_whole_float(v) for v in value.values())
    if isinstance(value, list):
        return any(_whole_float(v) for v in value)
    return False


@pytest.mark.parametrize("name", ["Source", "Target", "Amount", "Setting", "Label", "Job"])
def test_drawn_and_mutated_values_agree_with_the_referee(name: str, modules: dict[str, ModuleType]) -> None:
    @given(st.data())
    def check(data: st.DataObject) -> None:
        value = data.draw(instances(DOCUMENT, {"$ref": f"#/$defs/{name}"}))
        if data.draw(st.booleans()):
            value, path = data.draw(mutated(value))
            note(f"mutated at {path}")
        if _whole_float(value):
            return
        expected, repaired = REFEREE.judge(name, value)
        for style in STYLES:
            accepted, back = parse_as(style, modules[style], name, value)
            assert accepted == expected, f"{style} {'accepted' if accepted else 'rejected'} {value}"
            if accepted:
                assert back == repaired

    check()


def test_the_error_names_the_members_that_matched(modules: dict[str, ModuleType]) -> None:
    m = modules["dataclasses"]
    with pytest.raises(m.ValidationError, match=r"exactly one of 'Local', 'Remote' \(oneOf\), found several"):
        m.load(m.Source, REMOTE)
    with pytest.raises(m.ValidationError, match=r"source: expected exactly one of 'Local', 'Remote'"):
        m.load(m.Job, {"source": REMOTE})
    from pydantic import TypeAdapter, ValidationError

    for style in ("pydantic", "typeddict"):
        with pytest.raises(ValidationError, match=r"exactly one of 'Whole', 'Real' \(oneOf\), found several"):
            TypeAdapter(modules[style].Amount).validate_json("5")
        with pytest.raises(ValidationError, match=r"source\n.*exactly one of 'Local', 'Remote'"):
            TypeAdapter(modules[style].Job).validate_python({"source": REMOTE})
        with pytest.raises(ValidationError, match=r"count\n.*exactly one of 'integer', 'number'"):
            TypeAdapter(modules[style].Job).validate_json('{"source": {"kind": "local", "path": "p"}, "count": 1}')


def test_disjoint_unions_keep_the_fast_path(modules: dict[str, ModuleType]) -> None:
    """No check where none can matter: the disjoint unions carry no marker."""
    for style in ("pydantic", "typeddict"):
        source = open(modules[style].__file__).read()  # type: ignore[arg-type]
        assert "_OneOf((" not in source.split("\nTarget: TypeAlias = ", 1)[1].split("\n\n", 1)[0]
        assert "_OneOf" not in source.split("\nLabel: TypeAlias = ", 1)[1].split('"""', 1)[0]
        assert "_OneOf(" in source.split("\nSource: TypeAlias = ", 1)[1].split('"""', 1)[0]
    specs = modules["dataclasses"]._SPECS
    assert type(specs["Target"]).__name__ == "_AnyOf" and type(specs["Label"]).__name__ == "_AnyOf"
    assert type(specs["Source"]).__name__ == "_OneOf" and type(specs["Amount"]).__name__ == "_OneOf"


def test_building_checks_the_union_too(modules: dict[str, ModuleType]) -> None:
    """A member given as an instance is judged on its wire form, as a parsed one."""
    p = modules["pydantic"]
    local = p.SourceLocal(kind="local", path="p")
    assert p.Job(source=local).model_dump(by_alias=True, exclude_unset=True) == {"source": {"kind": "local", "path": "p"}}
    with pytest.raises(ValueError, match="exactly one of 'Local', 'Remote'"):
        p.Job(source=p.SourceRemote(kind="remote", path="p", url="u"))
