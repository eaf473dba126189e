"""Type expressions of schema nodes (acpgen/normalise/types.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acpgen import api, ir
from acpgen.errors import AcpgenError
from acpgen.load import Meta, RawDocument
from acpgen.normalise import build_protocol
from acpgen.normalise.context import ANNOTATIONS
from acpgen.normalise.types import _is_simple, constraints, is_any, is_null, single_ref
from acpgen.source import SourceFile


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


# -- the build, on schemas held in memory ------------------------------------------------


def _protocol(defs: dict[str, Any]) -> ir.Protocol:
    data = {"$defs": defs}
    source = SourceFile("schema.json", json.dumps(data), "0" * 64)
    return build_protocol(RawDocument(source, data, Meta(None, 1, ()), "v1", "stable"))


def _field(node: Any, **defs: Any) -> ir.TypeExpr:
    """The type of member ``x`` of def ``T``, whose schema is ``node``."""
    obj = _protocol({"T": {"type": "object", "properties": {"x": node}}, **defs}).def_map()["T"]
    assert isinstance(obj, ir.ObjectDef)
    (field,) = obj.fields
    return field.type


def _failure(node: Any, **defs: Any) -> list[tuple[str, str, str]]:
    with pytest.raises(AcpgenError) as exc:
        _field(node, **defs)
    return [(d.code, d.pointer, d.message) for d in exc.value.diagnostics]


AT = "/$defs/T/properties/x"
OBJ = {"type": "object", "properties": {"a": {"type": "string"}}}
STRING = ir.Prim("string")


# -- single_ref, is_any, is_null ---------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "found"),
    [
        ({"$ref": "#/$defs/A"}, ("#/$defs/A", "/$ref")),
        ({"$ref": "#/$defs/A", "allOf": [{"$ref": "#/$defs/B"}]}, ("#/$defs/A", "/$ref")),
        ({"allOf": [{"$ref": "#/$defs/A"}]}, ("#/$defs/A", "/allOf/0/$ref")),
        ({"allOf": [{"$ref": "#/$defs/A", "description": "d"}], "title": "t"}, ("#/$defs/A", "/allOf/0/$ref")),
        ({"allOf": [{"$ref": "#/$defs/A", "type": "object"}]}, (None, "")),
        ({"allOf": [{"description": "d"}]}, (None, "")),
        ({"allOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]}, (None, "")),
        ({"allOf": [True]}, (None, "")),
        ({"allOf": {"$ref": "#/$defs/A"}}, (None, "")),
        ({"allOf": []}, (None, "")),
        ({"type": "string"}, (None, "")),
    ],
)
def test_single_ref(schema: dict[str, Any], found: tuple[Any, str]) -> None:
    assert single_ref(schema) == found


@pytest.mark.parametrize(
    ("schema", "any_"),
    [(True, True), ({}, True), ({"description": "d", "title": "t"}, True), (False, False),
     ({"type": "string"}, False), ({"description": "d", "const": 1}, False), ([], False)],
)
def test_is_any(schema: Any, any_: bool) -> None:
    assert is_any(schema) is any_


@pytest.mark.parametrize(
    ("schema", "null"),
    [({"type": "null"}, True), ({"type": "null", "description": "d"}, True), ({"type": "null", "const": None}, False),
     ({"type": ["null"]}, False), ({"const": None}, False), ("null", False), (None, False)],
)
def test_is_null(schema: Any, null: bool) -> None:
    assert is_null(schema) is null


# -- constraints -------------------------------------------------------------------------


def test_constraints_read_each_keyword() -> None:
    schema = {
        "minimum": 1, "maximum": 2.5, "exclusiveMinimum": 0, "exclusiveMaximum": 3,
        "multipleOf": 0.5, "minLength": 1, "maxLength": 9, "pattern": "^a", "format": "uri",
        "contentEncoding": "base64", "minItems": 2, "maxItems": 4,
    }
    assert constraints(schema) == ir.Constraints(
        minimum=1, maximum=2.5, exclusive_minimum=0, exclusive_maximum=3, multiple_of=0.5,
        min_length=1, max_length=9, pattern="^a", format="uri", content_encoding="base64",
        min_items=2, max_items=4,
    )


def test_constraints_ignore_values_of_the_wrong_kind() -> None:
    schema = {
        "minimum": True, "maximum": "2", "exclusiveMinimum": None, "exclusiveMaximum": False,
        "multipleOf": [1], "minLength": 1.0, "maxLength": True, "pattern": 1, "format": 2,
        "contentEncoding": 3, "minItems": "2", "maxItems": False,
    }
    assert constraints(schema) == ir.Constraints()
    assert constraints({}) == ir.Constraints()


# -- type_expr ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        (True, ir.AnyT()),
        ({}, ir.AnyT()),
        ({"description": "anything"}, ir.AnyT()),
        ({"$ref": "#/$defs/A"}, ir.Ref("A")),
        ({"allOf": [{"$ref": "#/$defs/A"}], "description": "d"}, ir.Ref("A")),
        ({"$ref": "#/$defs/A", "type": ["object", "null"]}, ir.Nullable(ir.Ref("A"))),
        ({"$ref": "#/$defs/A", "type": "object"}, ir.Ref("A")),
        ({"const": "a"}, ir.Lit(("a",))),
        ({"const": None}, ir.Lit((None,))),
        ({"type": "string", "const": 3}, ir.Lit((3,))),
        ({"type": ["null"]}, ir.NullT()),
        ({"type": "null"}, ir.NullT()),
        ({"type": ["string", "null"]}, ir.Nullable(STRING)),
        ({"type": ["null", "string"], "minLength": 2}, ir.Nullable(ir.Prim("string", ir.Constraints(min_length=2)))),
        ({"type": ["string"]}, STRING),
        ({"type": ["string", "integer"]}, ir.AnyOf((STRING, ir.Prim("integer")))),
        ({"type": ["string", "integer", "null"]}, ir.Nullable(ir.AnyOf((STRING, ir.Prim("integer"))))),
        ({"type": "number", "maximum": 3}, ir.Prim("number", ir.Constraints(maximum=3))),
        ({"type": "boolean"}, ir.Prim("boolean")),
        ({"additionalProperties": {"type": "string"}}, ir.Map(STRING)),
        ({"type": "object"}, ir.Map(ir.AnyT())),
        ({"type": "object", "additionalProperties": True}, ir.Map(ir.AnyT())),
        ({"items": {"type": "string"}}, ir.Array(STRING)),
        ({"type": "array"}, ir.Array(ir.AnyT())),
        ({"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
         ir.Array(STRING, ir.Constraints(min_items=1, max_items=3))),
        ({"prefixItems": [{"type": "string"}, {"type": "integer"}]}, ir.Tuple((STRING, ir.Prim("integer")))),
        ({"type": "array", "prefixItems": []}, ir.Tuple(())),
    ],
)
def test_type_of_a_member(node: Any, expected: ir.TypeExpr) -> None:
    assert _field(node, A=OBJ) == expected


def test_a_ref_into_the_middle_of_a_def_is_read_inline() -> None:
    protocol = _protocol({
        "T": {"type": "object", "properties": {"x": {"$ref": "#/$defs/A/properties/q"}, "s": {"$ref": "#/$defs/A/properties/s"}}},
        "A": {"type": "object", "properties": {"q": OBJ, "s": {"type": "string", "minLength": 1}}},
    })
    t = protocol.def_map()["T"]
    assert isinstance(t, ir.ObjectDef)
    assert [f.type for f in t.fields] == [ir.Ref("Ref.$defs.A.properties.q"), ir.Prim("string", ir.Constraints(min_length=1))]
    lifted = protocol.def_map()["Ref.$defs.A.properties.q"]
    assert isinstance(lifted, ir.ObjectDef) and lifted.origin.pointer == "/$defs/A/properties/q"


def test_inline_objects_are_lifted_under_the_name_of_their_place() -> None:
    inner = OBJ
    protocol = _protocol({"T": {"type": "object", "properties": {
        "x": inner,
        "arr": {"type": "array", "items": inner},
        "tup": {"prefixItems": [{"type": "string"}, inner]},
        "map": {"type": "object", "additionalProperties": inner},
        "opt": {"type": ["object", "null"], "properties": {"a": {"type": "string"}}},
        "ref": {"allOf": [{"$ref": "#/$defs/A"}], "properties": {"b": {"type": "string"}}},
    }}, "A": OBJ})
    t = protocol.def_map()["T"]
    assert isinstance(t, ir.ObjectDef)
    assert {f.wire_name: f.type for f in t.fields} == {
        "x": ir.Ref("T.x"),
        "arr": ir.Array(ir.Ref("T.arr.item")),
        "tup": ir.Tuple((STRING, ir.Ref("T.tup.1"))),
        "map": ir.Map(ir.Ref("T.map.value")),
        "opt": ir.Nullable(ir.Ref("T.opt")),
        "ref": ir.Ref("T.ref"),
    }
    at = {d.key: d.origin.pointer for d in protocol.defs}
    assert at["T.arr.item"] == "/$defs/T/properties/arr/items"
    assert at["T.tup.1"] == "/$defs/T/properties/tup/prefixItems/1"
    assert at["T.map.value"] == "/$defs/T/properties/map/additionalProperties"


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        (False, [("ACPG207", AT, "the schema `false` accepts nothing")]),
        (3, [("ACPG202", AT, "expected a schema object, found int")]),
        ("s", [("ACPG202", AT, "expected a schema object, found str")]),
        ({"const": [1]}, [("ACPG207", AT + "/const", "a constant that is an array or an object is not supported")]),
        ({"enum": ["a", {"b": 1}]}, [("ACPG207", AT + "/enum", "a constant that is an array or an object is not supported")]),
        ({"minLength": 1}, [("ACPG207", AT, "cannot tell what type this schema describes")]),
        ({"type": "array", "prefixItems": [True], "items": True}, [("ACPG207", AT + "/items", "prefixItems with items is not supported")]),
        ({"type": "object", "additionalProperties": False}, [("ACPG207", AT, "an object that accepts no members")]),
        ({"items": False}, [("ACPG207", AT + "/items", "the schema `false` accepts nothing")]),
        ({"type": "array", "prefixItems": [True, False]}, [("ACPG207", AT + "/prefixItems/1", "the schema `false` accepts nothing")]),
        ({"additionalProperties": 1}, [("ACPG202", AT + "/additionalProperties", "expected a schema object, found int")]),
    ],
)
def test_a_member_that_cannot_be_read(node: Any, expected: list[tuple[str, str, str]]) -> None:
    assert _failure(node) == expected


@pytest.mark.parametrize(("types", "shown"), [("tuple", "'tuple'"), (["string", 1], "1")])
def test_an_unknown_type_is_refused_at_its_pointer(types: Any, shown: str) -> None:
    """Found twice, by the check of the node's keywords and by the type it would read:
    reported once."""
    assert _failure({"type": types}) == [("ACPG202", AT + "/type", f"unknown type {shown}")]


@pytest.mark.parametrize(
    ("node", "keyword", "message"),
    [
        ({"type": "string", "minLength": -1}, "minLength", "minLength must be a non-negative integer"),
        ({"type": "integer", "maximum": "9"}, "maximum", "maximum must be a number"),
        ({"$ref": "#/$defs/A", "title": 1}, "title", "title must be a string"),
    ],
)
def test_the_keywords_of_a_member_are_checked(node: dict[str, Any], keyword: str, message: str) -> None:
    assert _failure(node, A=OBJ) == [("ACPG202", f"{AT}/{keyword}", message)]


# -- unions inline -----------------------------------------------------------------------


@pytest.mark.parametrize("key", ["anyOf", "oneOf"])
@pytest.mark.parametrize(
    ("members", "expected"),
    [
        ([{"type": "string"}, {"type": "null"}], ir.Nullable(STRING)),
        ([{"type": "null"}, {"$ref": "#/$defs/A"}], ir.Nullable(ir.Ref("A"))),
        ([{"type": "string"}], STRING),
        ([{"type": "null"}], ir.NullT()),
        ([{"type": "null"}, {"type": "null", "description": "d"}], ir.NullT()),
        ([{"const": "a"}, {"const": "b"}], ir.Lit(("a", "b"))),
        ([{"enum": ["a", "b"]}, {"const": "c"}, {"type": "null"}], ir.Nullable(ir.Lit(("a", "b", "c")))),
        ([{"const": "a"}, {"type": "integer"}], ir.AnyOf((ir.Lit(("a",)), ir.Prim("integer")))),
        ([{"type": "string"}, {"type": "integer"}, {"type": "null"}], ir.Nullable(ir.AnyOf((STRING, ir.Prim("integer"))))),
        ([{"$ref": "#/$defs/A"}, {"type": "array", "items": {"type": "string"}}], ir.AnyOf((ir.Ref("A"), ir.Array(STRING)))),
        ([{"type": "object", "additionalProperties": {"type": "string"}}, {"type": "integer"}],
         ir.AnyOf((ir.Map(STRING), ir.Prim("integer")))),
        ([{"type": ["object", "null"], "additionalProperties": {"type": "string"}}, {"type": "integer"}],
         ir.AnyOf((ir.Nullable(ir.Map(STRING)), ir.Prim("integer")))),
    ],
)
def test_an_inline_union_of_simple_members_has_no_def(key: str, members: list[Any], expected: ir.TypeExpr) -> None:
    assert _field({key: members}, A=OBJ) == expected


def test_an_any_of_with_a_member_that_accepts_anything() -> None:
    assert _field({"anyOf": [True, {"type": "integer"}]}) == ir.AnyOf((ir.AnyT(), ir.Prim("integer")))


@pytest.mark.parametrize(
    "members",
    [
        [{**OBJ, "title": "O"}, {"type": "integer"}],
        [{"type": "object"}, {"type": "integer"}],
        [{"type": ["object", "null"]}, {"type": "integer"}],
        [{"type": "object", "additionalProperties": True, "properties": {}, "title": "O"}, {"type": "integer"}],
        [{"oneOf": [{"type": "string"}, {"type": "boolean"}]}, {"type": "integer"}],
        [{"anyOf": [{"type": "string"}, {"type": "boolean"}]}, {"type": "integer"}],
        [{"$ref": "#/$defs/A", "properties": {"b": {"type": "string"}}, "title": "O"}, {"type": "integer"}],
    ],
)
def test_an_inline_union_with_a_member_that_needs_a_class_is_lifted(members: list[Any]) -> None:
    protocol = _protocol({"T": {"type": "object", "properties": {"x": {"anyOf": [*members, {"type": "null"}]}}}, "A": OBJ})
    t = protocol.def_map()["T"]
    assert isinstance(t, ir.ObjectDef)
    assert t.fields[0].type == ir.Nullable(ir.Ref("T.x"))
    lifted = protocol.def_map()["T.x"]
    assert lifted.origin.pointer == AT
    assert isinstance(lifted, ir.UnionDef) and len(lifted.members) == 2


def test_an_inline_one_of_whose_members_overlap_is_lifted_to_a_checked_union() -> None:
    protocol = _protocol({"T": {"type": "object", "properties": {"x": {"oneOf": [{"type": "string"}, {"type": "string", "minLength": 2}]}}}})
    t = protocol.def_map()["T"]
    assert isinstance(t, ir.ObjectDef) and t.fields[0].type == ir.Ref("T.x")  # not nullable
    lifted = protocol.def_map()["T.x"]
    assert isinstance(lifted, ir.UnionDef) and lifted.exclusive
    # the same members under anyOf need no check: no def
    assert _field({"anyOf": [{"type": "string"}, {"type": "string", "minLength": 2}]}) == ir.AnyOf(
        (STRING, ir.Prim("string", ir.Constraints(min_length=2)))
    )


def test_a_union_beside_properties_is_an_object() -> None:
    node = {"type": "object", "properties": {"a": {"type": "string"}}, "anyOf": [{"required": ["a"]}]}
    protocol = _protocol({"T": {"type": "object", "properties": {"x": node}}})
    t = protocol.def_map()["T"]
    assert isinstance(t, ir.ObjectDef) and t.fields[0].type == ir.Ref("T.x")


@pytest.mark.parametrize(
    ("member", "simple"),
    [
        (True, True),
        (False, False),
        (3, False),
        ({"$ref": "#/$defs/A"}, True),
        ({"allOf": [{"$ref": "#/$defs/A"}]}, True),
        ({"$ref": "#/$defs/A", "type": "object"}, True),
        ({"$ref": "#/$defs/A", "properties": {}}, False),
        ({"$ref": "#/$defs/A", "required": ["a"]}, True),
        ({"properties": {}}, False),
        ({"oneOf": []}, False),
        ({"anyOf": []}, False),
        ({"type": "string", "not": {"const": "a"}}, False),
        ({"type": "object"}, False),
        ({"type": ["object", "null"]}, False),
        ({"type": "object", "additionalProperties": True}, True),
        ({"type": ["null", "object"], "additionalProperties": {}}, True),
        ({"type": ["string", "null"]}, True),
        ({"type": "string"}, True),
        ({"const": 1}, True),
        ({"items": {}}, True),
    ],
)
def test_a_simple_member_needs_no_class(member: Any, simple: bool) -> None:
    assert _is_simple(member) is simple


def test_a_ref_to_an_object_in_a_union_needs_no_class() -> None:
    node = {"anyOf": [{"$ref": "#/$defs/A", "type": "object"}, {"type": "integer"}]}
    assert _field(node, A=OBJ) == ir.AnyOf((ir.Ref("A"), ir.Prim("integer")))


@pytest.mark.parametrize("key", ["anyOf", "oneOf"])
@pytest.mark.parametrize(
    ("node", "expected"),
    [
        ({"type": ["string", "null"]}, ir.Nullable(STRING)),
        ({"type": "string"}, STRING),
    ],
)
def test_the_type_beside_an_inline_union_is_read(key: str, node: dict[str, Any], expected: ir.TypeExpr) -> None:
    """The members say what the union holds; the ``type`` beside them is consumed, not
    refused as a keyword the build would drop (ACPG209)."""
    members = [{"type": "string"}, {"type": "null"}] if "null" in node["type"] else [{"type": "string"}]
    assert _field({**node, key: members}) == expected


def test_the_one_member_of_a_nullable_union_is_lifted_under_the_name_of_its_place() -> None:
    protocol = _protocol({"T": {"type": "object", "properties": {"x": {"anyOf": [{"type": "null"}, OBJ]}}}})
    t = protocol.def_map()["T"]
    assert isinstance(t, ir.ObjectDef) and t.fields[0].type == ir.Nullable(ir.Ref("T.x"))
    assert protocol.def_map()["T.x"].origin.pointer == AT + "/anyOf/1"


def test_two_inline_unions_lifted_under_one_name_are_refused() -> None:
    """``T.x.item`` is both the items of member ``x`` and member ``x.item``."""
    union = {"oneOf": [{"type": "string"}, {"type": "string", "minLength": 2}]}  # lifted: a checked union
    with pytest.raises(AcpgenError) as exc:
        _protocol({"T": {"type": "object", "properties": {"x": {"type": "array", "items": union}, "x.item": union}}})
    assert [(d.code, d.pointer, d.message) for d in exc.value.diagnostics] == [
        ("ACPG301", "/$defs/T/properties/x.item", "inline schema key 'T.x.item' is also used at /$defs/T/properties/x/items")
    ]


@pytest.mark.parametrize(
    "node",
    [
        {"type": "object", "allOf": [{"$ref": "#/$defs/A"}], "required": ["a"]},
        {"type": "object", "required": ["a"], "oneOf": [{"title": "P", "properties": {"a": {"type": "string"}}},
                                                        {"title": "Q", "properties": {"a": {"type": "integer"}}}]},
        {"type": "object", "required": ["a"], "anyOf": [{"title": "P", "properties": {"a": {"type": "string"}}},
                                                        {"title": "Q", "properties": {"a": {"type": "integer"}}}]},
        {"type": "object", "required": ["a"], "anyOf": [{"required": ["b"]}, {"required": ["c"]}]},
    ],
    ids=["ref", "oneOf", "anyOf", "anyOf-of-required"],
)
def test_an_object_that_requires_members_beside_a_ref_or_a_union_is_lifted(node: dict[str, Any]) -> None:
    """Not a map of anything: its ``required`` keeps it out of the inline union's path, and
    the def it is lifted to reads the ref or the union."""
    protocol = _protocol({"T": {"type": "object", "properties": {"x": node}}, "A": OBJ})
    t = protocol.def_map()["T"]
    assert isinstance(t, ir.ObjectDef) and t.fields[0].type == ir.Ref("T.x")
    assert isinstance(protocol.def_map()["T.x"], ir.ObjectDef)


def test_an_inline_object_is_lifted_from_its_place() -> None:
    protocol = _protocol({"T": {"type": "object", "properties": {"x": OBJ, "y": {"type": "array", "items": OBJ}}}})
    lifted = {k: d for k, d in protocol.def_map().items() if k != "T"}
    assert {k: (type(d).__name__, getattr(d, "lifted_from", None)) for k, d in lifted.items()} == {
        "T.x": ("ObjectDef", "T.x"),
        "T.y.item": ("ObjectDef", "T.y.item"),
    }


def test_two_inline_objects_lifted_under_one_name_are_refused() -> None:
    with pytest.raises(AcpgenError) as exc:
        _protocol({"T": {"type": "object", "properties": {"x": {"type": "array", "items": OBJ}, "x.item": OBJ}}})
    assert [(d.code, d.pointer, d.message) for d in exc.value.diagnostics] == [
        ("ACPG301", "/$defs/T/properties/x.item", "inline schema key 'T.x.item' is also used at /$defs/T/properties/x/items")
    ]


def test_a_ref_beside_every_annotation_is_still_one_ref() -> None:
    every = {k: "x" for k in ANNOTATIONS}
    assert is_any(every)
    assert single_ref({"allOf": [{**every, "$ref": "#/$defs/A"}]}) == ("#/$defs/A", "/allOf/0/$ref")


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        ({"properties": {"a": {"type": "string"}}}, ir.Ref("T.x")),
        ({"type": ["object", "string"], "properties": {"a": {"type": "string"}}}, ir.AnyOf((ir.Ref("T.x"), STRING))),
    ],
    ids=["no-type", "two-types"],
)
def test_an_inline_object_without_type_or_beside_another_type(node: dict[str, Any], expected: ir.TypeExpr) -> None:
    protocol = _protocol({"T": {"type": "object", "properties": {"x": node}}})
    t = protocol.def_map()["T"]
    assert isinstance(t, ir.ObjectDef) and t.fields[0].type == expected
    assert protocol.def_map()["T.x"].origin.pointer == AT
