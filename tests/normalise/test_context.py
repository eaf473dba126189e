"""The shared state of one build (acpgen/normalise/context.py): where the defs are, the
keywords read into the IR, references to the file's own defs, lifted nodes, and the
checks of malformed keywords."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acpgen import ir
from acpgen.errors import AcpgenError
from acpgen.load import Meta, RawDocument
from acpgen.normalise.context import Context, check_schema
from acpgen.source import SourceFile


def _ctx(data: dict[str, Any]) -> Context:
    source = SourceFile("schema.json", json.dumps(data), "0" * 64)
    return Context(RawDocument(source, data, Meta(None, 1, ()), "v1", "stable"))


def _problems(schema: Any, pointer: str = "/$defs/T") -> list[tuple[str, str, str]]:
    ctx = _ctx({"$defs": {"T": schema}})
    check_schema(ctx, schema, pointer)
    return [(d.code, d.pointer, d.message) for d in ctx.problems.items]


# -- where the defs are ------------------------------------------------------------------


def test_the_defs_are_read_from_dollar_defs_first() -> None:
    ctx = _ctx({"$defs": {"A": {}}, "definitions": {"B": {}}})
    assert (ctx.defs, ctx.container, ctx.def_pointer("A")) == ({"A": {}}, "$defs", "/$defs/A")
    assert ctx.problems.items == []


def test_the_defs_are_read_from_definitions_without_dollar_defs() -> None:
    ctx = _ctx({"definitions": {"B": {}}})
    assert (ctx.defs, ctx.container, ctx.def_pointer("B")) == ({"B": {}}, "definitions", "/definitions/B")


def test_a_file_without_defs_has_none_and_no_problem() -> None:
    ctx = _ctx({"title": "no defs"})
    assert (ctx.defs, ctx.container, ctx.problems.items) == ({}, "definitions", [])


@pytest.mark.parametrize(("container", "defs"), [("$defs", []), ("definitions", "x"), ("$defs", None)])
def test_defs_that_are_no_object_are_one_problem(container: str, defs: Any) -> None:
    ctx = _ctx({container: defs})
    assert ctx.defs == {}
    assert [(d.code, d.pointer, d.message) for d in ctx.problems.items] == [
        ("ACPG202", f"/{container}", f"{container} must be an object")
    ]


def test_def_pointer_escapes_the_name() -> None:
    assert _ctx({"$defs": {}}).def_pointer("a/b~c") == "/$defs/a~1b~0c"


# -- keywords read into the IR -----------------------------------------------------------


def test_use_records_only_the_keywords_the_schema_holds() -> None:
    ctx = _ctx({"$defs": {}})
    ctx.use("/p", {"type": "string", "minLength": 1}, "type", "maxLength", "minLength")
    ctx.use("/q", True, "type")
    ctx.use("/r", ["type"], "type")
    assert ctx.consumed == {("/p", "type"), ("/p", "minLength")}


def test_resolve_consumes_the_ref_at_its_pointer() -> None:
    ctx = _ctx({"$defs": {"A": {"type": "string"}}})
    target = ctx.resolve("#/$defs/A", "/$defs/B/properties/x/$ref")
    assert (target.def_name, target.schema, target.pointer) == ("A", {"type": "string"}, "/$defs/A")
    assert ctx.consumed == {("/$defs/B/properties/x", "$ref")}
    ctx.resolve("#/$defs/A", "/$defs/B/allOf/0")  # not the pointer of a `$ref`: nothing consumed
    assert ctx.consumed == {("/$defs/B/properties/x", "$ref")}


@pytest.mark.parametrize(
    ("ref", "code", "message"),
    [
        ("#/$defs/Missing", "ACPG203", "$ref '#/$defs/Missing' does not resolve"),
        ("other.json#/$defs/A", "ACPG204", "remote $ref 'other.json#/$defs/A' is not supported; inline it"),
        (3, "ACPG202", "$ref must be a string"),
    ],
)
def test_a_ref_that_cannot_be_resolved_is_refused_at_its_pointer(ref: Any, code: str, message: str) -> None:
    ctx = _ctx({"$defs": {"A": {"type": "string"}}})
    with pytest.raises(AcpgenError) as exc:
        ctx.resolve(ref, "/$defs/B/properties/x/$ref")
    assert [(d.code, d.pointer, d.message) for d in exc.value.diagnostics] == [
        (code, "/$defs/B/properties/x/$ref", message)
    ]


# -- diagnostics and origins -------------------------------------------------------------


def test_error_is_one_diagnostic_at_the_pointer() -> None:
    error = _ctx({"$defs": {"A": {}}}).error("ACPG207", "bad", "/$defs/A")
    assert isinstance(error, AcpgenError)
    ((code, message, file, pointer),) = [(d.code, d.message, d.file, d.pointer) for d in error.diagnostics]
    assert (code, message, file, pointer) == ("ACPG207", "bad", "schema.json", "/$defs/A")


def test_origin_names_the_file_the_pointer_and_the_overlays() -> None:
    ctx = _ctx({"$defs": {}})
    assert ctx.origin("/$defs/A") == ir.Origin("schema.json", "/$defs/A", ())
    assert ctx.origin("/$defs/A", {"x-acpgen-overlay": ["o1", "o2"]}) == ir.Origin("schema.json", "/$defs/A", ("o1", "o2"))


# -- references to the file's own defs ---------------------------------------------------


@pytest.mark.parametrize(
    ("ref", "found"),
    [
        ("#/$defs/A", {"const": "a"}),
        ("#/$defs/a~1b", {"const": "slash"}),
        ("#/$defs/a~0b", {"const": "tilde"}),
        ("#/$defs/a~01", {"const": "tilde one"}),
        ("#/$defs/Missing", None),
        ("#/definitions/A", None),
        ("other.json#/$defs/A", None),
        ("#/$defs/A/properties/x", None),
    ],
)
def test_local_def(ref: str, found: Any) -> None:
    defs = {"A": {"const": "a"}, "a/b": {"const": "slash"}, "a~b": {"const": "tilde"}, "a~1": {"const": "tilde one"}}
    assert _ctx({"$defs": defs}).local_def(ref) == found


def test_local_def_under_definitions() -> None:
    ctx = _ctx({"definitions": {"A": {"const": "a"}}})
    assert ctx.local_def("#/definitions/A") == {"const": "a"}
    assert ctx.local_def("#/$defs/A") is None


# -- lifted nodes ------------------------------------------------------------------------


def _node(key: str) -> ir.Def:
    return ir.ObjectDef(key, ir.Origin("schema.json", "/x", ()), None, ())


def test_lift_registers_the_node_once_per_place() -> None:
    ctx = _ctx({"$defs": {"A": {}}})
    node = _node("A.x")
    assert ctx.lift(node, "/$defs/A/properties/x") == ir.Ref("A.x")
    assert ctx.lift(node, "/$defs/A/properties/x") == ir.Ref("A.x")  # the same place, reached again
    assert ctx.lifted == {"A.x": node}
    assert ctx.lifted_at == {"A.x": "/$defs/A/properties/x"}


def test_lift_refuses_the_name_of_a_def() -> None:
    ctx = _ctx({"$defs": {"A": {}, "A.x": {}}})
    with pytest.raises(AcpgenError) as exc:
        ctx.lift(_node("A.x"), "/$defs/A/properties/x")
    assert [(d.code, d.pointer, d.message) for d in exc.value.diagnostics] == [
        ("ACPG301", "/$defs/A/properties/x", "inline schema would be named 'A.x', which is already a def (/$defs/A.x)")
    ]
    assert ctx.lifted == {}


def test_lift_refuses_one_name_at_two_places() -> None:
    ctx = _ctx({"$defs": {"A": {}}})
    ctx.lift(_node("A.x"), "/$defs/A/properties/x")
    with pytest.raises(AcpgenError) as exc:
        ctx.lift(_node("A.x"), "/$defs/A/properties/y")
    assert [(d.code, d.pointer, d.message) for d in exc.value.diagnostics] == [
        ("ACPG301", "/$defs/A/properties/y", "inline schema key 'A.x' is also used at /$defs/A/properties/x")
    ]
    assert ctx.lifted_at == {"A.x": "/$defs/A/properties/x"}


# -- malformed keywords ------------------------------------------------------------------


P = "/$defs/T"


@pytest.mark.parametrize(
    ("schema", "problems"),
    [
        ({"required": "a"}, [("ACPG202", P + "/required", "required must be a list of strings")]),
        ({"required": ["a", 1]}, [("ACPG202", P + "/required", "required must be a list of strings")]),
        ({"properties": []}, [("ACPG202", P + "/properties", "properties must be an object")]),
        ({"enum": "a"}, [("ACPG202", P + "/enum", "enum must be a list")]),
        ({"enum": []}, [("ACPG202", P + "/enum", "enum must list at least one value")]),
        ({"oneOf": {}}, [("ACPG202", P + "/oneOf", "oneOf must be a list of schemas")]),
        ({"anyOf": []}, [("ACPG202", P + "/anyOf", "anyOf must list at least one schema")]),
        ({"allOf": []}, [("ACPG202", P + "/allOf", "allOf must list at least one schema")]),
        ({"prefixItems": "x"}, [("ACPG202", P + "/prefixItems", "prefixItems must be a list of schemas")]),
        ({"allOf": [{}, 3, "s"]}, [
            ("ACPG202", P + "/allOf/1", "expected a schema object, found int"),
            ("ACPG202", P + "/allOf/2", "expected a schema object, found str"),
        ]),
        ({"prefixItems": [None]}, [("ACPG202", P + "/prefixItems/0", "expected a schema object, found NoneType")]),
        ({"minimum": "1"}, [("ACPG202", P + "/minimum", "minimum must be a number")]),
        ({"maximum": True}, [("ACPG202", P + "/maximum", "maximum must be a number")]),
        ({"exclusiveMinimum": None}, [("ACPG202", P + "/exclusiveMinimum", "exclusiveMinimum must be a number")]),
        ({"exclusiveMaximum": [1]}, [("ACPG202", P + "/exclusiveMaximum", "exclusiveMaximum must be a number")]),
        ({"multipleOf": False}, [("ACPG202", P + "/multipleOf", "multipleOf must be a number")]),
        ({"minLength": -1}, [("ACPG202", P + "/minLength", "minLength must be a non-negative integer")]),
        ({"maxLength": 1.5}, [("ACPG202", P + "/maxLength", "maxLength must be a non-negative integer")]),
        ({"minItems": True}, [("ACPG202", P + "/minItems", "minItems must be a non-negative integer")]),
        ({"maxItems": "2"}, [("ACPG202", P + "/maxItems", "maxItems must be a non-negative integer")]),
        ({"type": "text"}, [("ACPG202", P + "/type", "unknown type 'text'")]),
        ({"type": ["string", 1, "nul"]}, [
            ("ACPG202", P + "/type", "unknown type 1"),
            ("ACPG202", P + "/type", "unknown type 'nul'"),
        ]),
        ({"format": 1}, [("ACPG202", P + "/format", "format must be a string")]),
        ({"contentEncoding": None}, [("ACPG202", P + "/contentEncoding", "contentEncoding must be a string")]),
        ({"description": ["d"]}, [("ACPG202", P + "/description", "description must be a string")]),
        ({"title": 2}, [("ACPG202", P + "/title", "title must be a string")]),
        ({"pattern": 1}, [("ACPG202", P + "/pattern", "pattern must be a string")]),
    ],
)
def test_a_malformed_keyword_is_one_problem_at_its_pointer(schema: dict[str, Any], problems: list[tuple[str, str, str]]) -> None:
    assert _problems(schema) == problems


def test_an_invalid_pattern_names_the_error() -> None:
    ((code, pointer, message),) = _problems({"pattern": "a("})
    assert (code, pointer) == ("ACPG202", P + "/pattern")
    assert message.startswith("pattern is not a valid regular expression: missing ), unterminated subpattern")


def test_several_problems_of_one_schema_are_all_reported() -> None:
    assert [p[1] for p in _problems({"enum": [], "minimum": "a", "title": 1, "type": "x"})] == [
        P + "/enum", P + "/minimum", P + "/type", P + "/title"
    ]


@pytest.mark.parametrize(
    "schema",
    [
        {
            "type": ["string", "integer", "number", "boolean", "null", "array", "object"],
            "required": ["a"], "properties": {}, "enum": ["a"], "oneOf": [{}, True], "anyOf": [False],
            "allOf": [{}], "prefixItems": [], "minimum": 1, "maximum": 2.5, "exclusiveMinimum": 0,
            "exclusiveMaximum": 3, "multipleOf": 0.5, "minLength": 0, "maxLength": 2, "minItems": 0,
            "maxItems": 1, "format": "uri", "contentEncoding": "base64", "description": "d",
            "title": "t", "pattern": "^a+$",
        },
        {"required": []},
        {"type": "null"},
    ],
)
def test_well_formed_keywords_are_no_problem(schema: dict[str, Any]) -> None:
    assert _problems(schema) == []


def test_each_node_is_checked_once() -> None:
    ctx = _ctx({"$defs": {}})
    check_schema(ctx, {"enum": []}, "/a")
    check_schema(ctx, {"enum": []}, "/a")
    check_schema(ctx, {"title": 1}, "/b")
    check_schema(ctx, [1], "/c")
    check_schema(ctx, True, "/d")
    assert [d.pointer for d in ctx.problems.items] == ["/a/enum", "/b/title"]
    assert ctx.checked == {"/a", "/b"}
