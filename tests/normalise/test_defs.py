"""The def one named schema node becomes (acpgen/normalise/defs.py): an alias, an enum (the
``enum`` keyword or a union of constants), an object with its members, the def it extends
and its unknown members; each built from a small schema held in memory, with the keywords
the build read and the problems it found. The branches of an object's unions are tested
in test_defs_branches.py."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acpgen import ir
from acpgen.errors import AcpgenError
from acpgen.load import Meta, RawDocument
from acpgen.normalise.context import Context
from acpgen.normalise.defs import UnionNode, base_def, build_def, build_fields, extra_members, try_enum, union_keyword
from acpgen.source import SourceFile

P = "/$defs/T"
STRING = ir.Prim("string")
INTEGER = ir.Prim("integer")


def _ctx(defs: dict[str, Any]) -> Context:
    data = {"$defs": defs}
    source = SourceFile("schema.json", json.dumps(data), "0" * 64)
    return Context(RawDocument(source, data, Meta(None, 1, ()), "v1", "stable"))


def _build(schema: Any, drop_null: bool = False, lifted_from: str | None = None, **defs: Any) -> tuple[ir.Def, Context]:
    """Def ``T`` of ``schema`` (beside ``defs``), and the context of its build."""
    ctx = _ctx({"T": schema, **defs})
    return build_def(ctx, "T", schema, P, lifted_from=lifted_from, drop_null=drop_null), ctx


def _failure(schema: Any, **defs: Any) -> list[tuple[str, str, str]]:
    with pytest.raises(AcpgenError) as exc:
        _build(schema, **defs)
    return [(d.code, d.pointer, d.message) for d in exc.value.diagnostics]


def _at(pointer: str = P, *overlays: str) -> ir.Origin:
    return ir.Origin("schema.json", pointer, overlays)


def _field(name: str, t: ir.TypeExpr, required: bool = False, at: str = P, **kw: Any) -> ir.Field:
    return ir.Field(name, t, required, _at(f"{at}/properties/{name}"), **kw)


# -- aliases -------------------------------------------------------------------------------


def test_true_is_an_alias_of_anything() -> None:
    assert _build(True)[0] == ir.AliasDef("T", _at(), ir.AnyT(), None, None, False)


def test_an_annotated_empty_schema_is_an_alias_of_anything_with_its_prose() -> None:
    schema = {"description": "d", "title": "t", "x-docs-ignore": True, "x-acpgen-overlay": "rfd"}
    assert _build(schema)[0] == ir.AliasDef("T", _at(P, "rfd"), ir.AnyT(), "d", "t", True)
    # only a literal `true` hides it from the docs; prose that is no string is no prose
    schema = {"description": 1, "title": ["t"], "x-docs-ignore": "yes"}
    built, ctx = _build(schema)
    assert built == ir.AliasDef("T", _at(), ir.AnyT(), None, None, False)
    # a schema of annotations only accepts anything: its annotations are not checked
    assert ctx.problems.items == []


@pytest.mark.parametrize(("schema", "found"), [(False, "bool"), (3, "int"), ("x", "str"), (None, "NoneType")])
def test_a_def_that_is_no_schema_object_is_refused(schema: Any, found: str) -> None:
    assert _failure(schema) == [("ACPG201", P, f"expected a schema object, found {found}")]


def test_any_other_node_is_an_alias_of_its_type() -> None:
    schema = {"type": "string", "description": "d", "title": "t", "x-docs-ignore": True}
    built, ctx = _build(schema)
    assert built == ir.AliasDef("T", _at(), STRING, "d", "t", True)
    assert ctx.consumed == {(P, "type")}


def test_an_inline_object_inside_an_alias_is_named_after_the_alias() -> None:
    items = {"type": "object", "properties": {"a": {"type": "string"}}}
    built, ctx = _build({"type": "array", "items": items})
    assert isinstance(built, ir.AliasDef) and isinstance(built.type, ir.Array)
    assert built.type.items == ir.Ref("T.inner.item")
    assert list(ctx.lifted) == ["T.inner.item"]


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "minLength": "2"},
        {"enum": ["a", "b"], "minLength": "2"},
        {"oneOf": [{"const": "a"}, {"const": "b"}], "minLength": "2"},
    ],
    ids=["alias", "enum", "union-of-constants"],
)
def test_a_malformed_keyword_of_a_def_is_a_problem(schema: dict[str, Any]) -> None:
    _, ctx = _build(schema)
    assert [(d.code, d.pointer) for d in ctx.problems.items] == [("ACPG202", P + "/minLength")]


# -- the enum keyword ----------------------------------------------------------------------


def test_an_enum_of_strings_is_an_enum_def() -> None:
    schema = {
        "type": "string",
        "enum": ["a", "b"],
        "description": "d",
        "title": "t",
        "x-docs-ignore": True,
        "x-acpgen-overlay": "o",
    }
    built, ctx = _build(schema)
    values = (ir.EnumValue("a"), ir.EnumValue("b"))
    assert built == ir.EnumDef(
        "T", _at(P, "o"), "string", values, description="d", title="t", docs_ignore=True, encoding="enum"
    )
    assert ctx.consumed == {(P, "enum"), (P, "type")}


def test_an_enum_of_integers_is_an_integer_enum() -> None:
    built, ctx = _build({"enum": [1, 2]})
    assert built == ir.EnumDef("T", _at(), "integer", (ir.EnumValue(1), ir.EnumValue(2)))
    assert ctx.consumed == {(P, "enum")}


@pytest.mark.parametrize(
    ("values", "t"),
    [
        (["a", 1], ir.Lit(("a", 1))),  # strings and integers mixed
        (["a", None], ir.Nullable(ir.Lit(("a",)))),  # null among them
        ([1, None], ir.Nullable(ir.Lit((1,)))),
        ([True, False], ir.Lit((True, False))),  # no string or integer
        (["a", 1.5], ir.Lit(("a", 1.5))),
    ],
    ids=["mixed", "null", "integer-null", "booleans", "float"],
)
def test_an_enum_that_is_no_plain_enum_is_an_alias_of_literals(values: list[Any], t: ir.TypeExpr) -> None:
    built = _build({"enum": values, "title": "t"})[0]
    assert built == ir.AliasDef("T", _at(), t, None, "t", False)


def test_an_empty_enum_is_an_alias() -> None:
    assert isinstance(_build({"enum": []})[0], ir.AliasDef)


def test_an_enum_beside_members_is_an_object() -> None:
    built = _build({"enum": ["a"], "required": ["x"]})[0]
    assert isinstance(built, ir.ObjectDef)
    built = _build({"enum": ["a"], "properties": {}})[0]
    assert isinstance(built, ir.ObjectDef)


# -- unions of constants -------------------------------------------------------------------


def test_a_union_of_constants_is_an_enum_with_their_prose() -> None:
    schema = {
        "type": "string",
        "description": "d",
        "title": "t",
        "x-docs-ignore": True,
        "x-acpgen-overlay": "o",
        "anyOf": [
            {"const": "a", "type": "string", "description": "A", "title": "TA"},
            {"enum": ["b", "c"], "description": "ignored"},
        ],
    }
    built, ctx = _build(schema)
    values = (ir.EnumValue("a", "A", "TA"), ir.EnumValue("b"), ir.EnumValue("c"))
    assert built == ir.EnumDef(
        "T", _at(P, "o"), "string", values, description="d", title="t", docs_ignore=True, encoding="anyOf"
    )
    assert ctx.consumed == {
        (P, "type"),
        (P, "anyOf"),
        (P + "/anyOf/0", "const"),
        (P + "/anyOf/0", "type"),
        (P + "/anyOf/1", "enum"),
    }


def test_an_open_enum_has_a_fallback_member_of_its_kind() -> None:
    fallback = {"type": "integer", "format": "int32", "title": "Other", "description": "any other code"}
    schema = {"oneOf": [{"const": -1, "format": "int32"}, {"const": 2, "format": "int32"}, fallback]}
    built, ctx = _build(schema)
    assert built == ir.EnumDef(
        "T",
        _at(),
        "integer",
        (ir.EnumValue(-1), ir.EnumValue(2)),
        open=True,
        fallback_title="Other",
        fallback_description="any other code",
        encoding="oneOf",
        format="int32",
    )
    assert (P + "/oneOf/2", "format") in ctx.consumed and (P + "/oneOf/2", "type") in ctx.consumed
    assert (P + "/oneOf/1", "format") in ctx.consumed


def test_a_member_listing_integers_makes_an_integer_enum() -> None:
    built = _build({"oneOf": [{"enum": [1, 2]}, {"const": 3}]})[0]
    assert built == ir.EnumDef(
        "T", _at(), "integer", (ir.EnumValue(1), ir.EnumValue(2), ir.EnumValue(3)), encoding="oneOf"
    )


def test_a_fallback_without_prose_has_none() -> None:
    built = _build({"oneOf": [{"const": "a"}, {"type": "string"}], "x-docs-ignore": 1})[0]
    assert isinstance(built, ir.EnumDef)
    assert (built.open, built.fallback_title, built.fallback_description) == (True, None, None)
    assert (built.title, built.description, built.docs_ignore) == (None, None, False)


@pytest.mark.parametrize(
    "formats",
    [("int32", "int64"), ("int32", None), (None, None), (7, 7)],
    ids=["two", "one-missing", "none", "no-string"],
)
def test_an_enum_has_a_format_only_when_every_member_shares_one(formats: tuple[Any, Any]) -> None:
    members = [{"const": i} if f is None else {"const": i, "format": f} for i, f in enumerate(formats)]
    built = _build({"oneOf": members})[0]
    assert isinstance(built, ir.EnumDef) and built.format is None


def test_the_members_may_carry_bounds_and_a_null_member_is_dropped_when_asked() -> None:
    schema = {"anyOf": [{"const": 1, "minimum": 0, "maximum": 9}, {"type": "null"}]}
    built = _build(schema, drop_null=True)[0]
    assert built == ir.EnumDef("T", _at(), "integer", (ir.EnumValue(1),), encoding="anyOf")
    # without drop_null the null member is a member: no enum
    assert isinstance(_build(schema)[0], ir.UnionDef)


@pytest.mark.parametrize(
    "members",
    [
        [{"const": "a"}, True],  # a member that is no object
        [{"const": "a"}, {"const": "b", "pattern": "b"}],  # a keyword an enum member has not
        [{"const": "a"}, {"const": True}],
        [{"const": "a"}, {"const": 1.5}],
        [{"const": "a"}, {"const": None}],
        [{"const": "a"}, {"enum": ["b", False]}],
        [{"const": "a"}, {"enum": ["b", 1.5]}],
        [{"const": "a"}, {"const": 1}],  # two kinds
        [{"const": "a"}, {"enum": [1]}],
        [{"const": 1}, {"type": "string"}],
        [{"const": "a"}, {"type": "string"}, {"type": "string"}],  # two fallbacks
        [{"const": "a"}, {"type": "number"}],
        [{"type": "string"}],  # no value
        [{"const": "a"}, {"title": "anything"}],
    ],
)
def test_a_union_that_is_no_enum_is_built_otherwise(members: list[Any]) -> None:
    assert not isinstance(_build({"oneOf": members})[0], ir.EnumDef)


def test_try_enum_says_none_for_the_unions_that_are_no_enum() -> None:
    for members in ([{"const": "a"}, {"type": "string", "minLength": 1}], [{"const": "a"}, {"const": 1}]):
        ctx = _ctx({"T": {"oneOf": members}})
        node = UnionNode("T", {"oneOf": members}, "oneOf", list(enumerate(members)), P)
        assert try_enum(ctx, node) is None
        assert ctx.consumed == set()


@pytest.mark.parametrize("second", [{"const": "a"}, {"enum": ["b", "a"]}])
def test_a_value_twice_is_refused(second: dict[str, Any]) -> None:
    assert _failure({"oneOf": [{"const": "a"}, second]}) == [
        ("ACPG206", P + "/oneOf", "enum value 'a' appears twice")
    ]


def test_a_union_of_constants_beside_members_is_no_enum() -> None:
    schema = {"required": ["a"], "oneOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]}
    assert isinstance(_build(schema)[0], ir.ObjectDef)


# -- which keyword holds the union ---------------------------------------------------------


def test_union_keyword() -> None:
    assert union_keyword({"oneOf": [], "anyOf": []}) == "oneOf"
    assert union_keyword({"oneOf": {}, "anyOf": []}) == "anyOf"
    assert union_keyword({"oneOf": None}) is None
    assert union_keyword({}) is None


def test_a_union_reads_the_type_beside_it() -> None:
    members = [{"type": "string"}, {"type": "integer"}]
    built, ctx = _build({"type": ["string", "integer"], "oneOf": members})
    assert isinstance(built, ir.UnionDef)
    assert (P, "type") in ctx.consumed


def test_a_one_of_beside_an_any_of_needs_members_or_a_tag() -> None:
    schema = {"oneOf": [{"const": "a", "title": "A"}], "anyOf": [{"const": "b", "title": "B"}]}
    assert _failure(schema) == [
        (
            "ACPG207",
            P,
            "a `oneOf` beside an `anyOf` is supported on objects (with `properties`) and tagged unions only",
        )
    ]
    built = _build({**schema, "properties": {}})[0]
    assert isinstance(built, ir.ObjectDef)
    assert [(m.keyword, m.label) for m in built.mixins] == [("oneOf", "A"), ("anyOf", "B")]


def test_a_tagged_union_is_tagged() -> None:
    members = [
        {"type": "object", "properties": {"k": {"const": "a"}}, "required": ["k"]},
        {"type": "object", "properties": {"k": {"const": "b"}}, "required": ["k"]},
    ]
    assert isinstance(_build({"oneOf": members})[0], ir.TaggedUnionDef)
    assert isinstance(_build({"oneOf": members, "anyOf": [{"required": ["k"]}]})[0], ir.TaggedUnionDef)


def test_a_union_beside_members_is_an_object_with_branches() -> None:
    schema = {"required": ["a"], "anyOf": [{"title": "X"}, {"title": "Y"}]}
    built = _build(schema, lifted_from="Owner")[0]
    assert isinstance(built, ir.ObjectDef)
    assert [m.label for m in built.mixins] == ["X", "Y"]
    assert built.lifted_from == "Owner"


# -- members -------------------------------------------------------------------------------


def test_the_members_of_an_object() -> None:
    schema = {
        "type": "object",
        "required": ["a", 3],
        "properties": {
            "a": {"type": "string", "description": "the a", "x-acpgen-overlay": "o1"},
            "b": {
                "type": "integer",
                "default": 0,
                "x-deserialize-default-on-error": True,
                "x-deserialize-skip-invalid-items": True,
                "x-deserialize-default-on-null": True,
            },
            "c": {"type": "integer", "default": None, "x-deserialize-default-on-error": 1},
            "d": True,
        },
    }
    built, ctx = _build(schema)
    assert built == ir.ObjectDef(
        "T",
        _at(),
        (
            ir.Field("a", STRING, True, _at(P + "/properties/a", "o1"), description="the a"),
            _field(
                "b", INTEGER, has_default=True, default=0, default_on_error=True, skip_invalid_items=True,
                default_on_null=True,
            ),
            _field("c", INTEGER, has_default=True, default=None),
            _field("d", ir.AnyT()),
        ),
    )
    b = P + "/properties/b"
    assert {(P, "properties"), (P, "required"), (P, "type")} <= ctx.consumed
    assert {(b, "x-deserialize-default-on-error"), (b, "x-deserialize-skip-invalid-items")} <= ctx.consumed
    assert (b, "x-deserialize-default-on-null") in ctx.consumed
    assert (P + "/properties/c", "x-deserialize-default-on-error") in ctx.consumed


def test_an_inline_object_member_is_named_after_its_owner() -> None:
    member = {"type": "object", "properties": {"b": {"type": "string"}}}
    built, ctx = _build({"properties": {"a": member}})
    assert isinstance(built, ir.ObjectDef) and built.fields == (_field("a", ir.Ref("T.a")),)
    assert list(ctx.lifted) == ["T.a"]


def test_build_fields_skips_the_named_members_and_reads_nothing_else() -> None:
    schema = {"properties": {"tag": {"const": "x"}, "a": {"type": "string"}}, "required": "a"}
    ctx = _ctx({"T": schema})
    assert build_fields(ctx, "T", schema, P, skip=frozenset({"tag"})) == (_field("a", STRING),)
    assert build_fields(ctx, "T", {}, P) == ()


def test_members_that_are_no_object_are_none() -> None:
    ctx = _ctx({})
    assert build_fields(ctx, "T", {"properties": [{"type": "string"}], "required": []}, P) == ()
    assert ctx.consumed == {(P, "properties"), (P, "required")}


def test_a_member_whose_type_fails_is_a_problem_and_the_others_are_built() -> None:
    schema = {"properties": {"a": {"$ref": "#/$defs/Nowhere"}, "b": {"type": "string"}}}
    ctx = _ctx({"T": schema})
    assert build_fields(ctx, "T", schema, P) == (_field("b", STRING),)
    assert [d.pointer for d in ctx.problems.items] == [P + "/properties/a/$ref"]


# -- the def an object extends -------------------------------------------------------------


BASE = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["a"]}


@pytest.mark.parametrize(
    ("schema", "at"),
    [({"$ref": "#/$defs/Base"}, "$ref"), ({"allOf": [{"$ref": "#/$defs/Base"}]}, "allOf")],
)
def test_base_def_names_the_def_an_object_extends(schema: dict[str, Any], at: str) -> None:
    ctx = _ctx({"Base": BASE, "T": schema})
    assert base_def(ctx, schema, P) == "Base"
    assert (P, at) in ctx.consumed
    assert base_def(ctx, {"type": "object"}, P) is None


def test_an_object_extends_only_a_def() -> None:
    schema = {"$ref": "#/$defs/Base/properties/a"}
    ctx = _ctx({"Base": BASE, "T": schema})
    with pytest.raises(AcpgenError) as exc:
        base_def(ctx, schema, P, "a variant")
    assert [(d.code, d.pointer, d.message) for d in exc.value.diagnostics] == [
        ("ACPG207", P + "/$ref", "a variant may only extend a $defs entry")
    ]
    assert _failure({"allOf": [{"$ref": "#/$defs/Base/properties/a"}], "required": ["x"]}, Base=BASE) == [
        ("ACPG207", P + "/allOf/0/$ref", "an object may only extend a $defs entry")
    ]


def test_an_object_inherits_the_members_of_the_def_it_extends_first() -> None:
    schema = {"allOf": [{"$ref": "#/$defs/Base"}], "properties": {"b": {"type": "integer"}, "c": {}}}
    built = _build(schema, Base=BASE)[0]
    assert isinstance(built, ir.ObjectDef)
    base_at = "/$defs/Base"
    assert built.fields == (
        _field("a", STRING, True, at=base_at),
        _field("b", INTEGER),
        _field("c", ir.AnyT()),
    )


def test_an_inherited_inline_object_keeps_the_name_it_has_in_the_def_extended() -> None:
    base = {"properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}}}}
    built, ctx = _build({"$ref": "#/$defs/Base", "properties": {}}, Base=base)
    assert isinstance(built, ir.ObjectDef)
    assert built.fields == (_field("a", ir.Ref("Base.a"), at="/$defs/Base"),)
    assert list(ctx.lifted) == ["Base.a"]


def test_an_object_extending_a_def_that_is_no_object_inherits_nothing() -> None:
    built = _build({"$ref": "#/$defs/Base", "properties": {"c": {}}}, Base=True)[0]
    assert isinstance(built, ir.ObjectDef) and built.fields == (_field("c", ir.AnyT()),)


# -- the object itself ---------------------------------------------------------------------


def test_an_object_with_its_prose() -> None:
    schema = {
        "type": "object",
        "properties": {},
        "description": "d",
        "title": "t",
        "x-docs-ignore": True,
        "x-acpgen-overlay": ["o1", "o2"],
    }
    built = _build(schema, lifted_from="Owner")[0]
    assert built == ir.ObjectDef(
        "T", _at(P, "o1", "o2"), (), "d", "t", "allow", (), True, "Owner"
    )
    assert _build({"properties": {}, "x-docs-ignore": 1})[0] == ir.ObjectDef("T", _at(), ())


@pytest.mark.parametrize(
    ("extra", "found"),
    [
        ({"additionalProperties": True}, "allow"),
        ({"additionalProperties": {"description": "anything"}}, "allow"),
        ({"additionalProperties": {}}, "allow"),
        ({}, "allow"),
        ({"unevaluatedProperties": True}, "allow"),
        ({"additionalProperties": False}, "forbid"),
        ({"unevaluatedProperties": False}, "forbid"),
        ({"additionalProperties": {"type": "string"}}, STRING),
        ({"unevaluatedProperties": {"type": "integer"}}, INTEGER),
    ],
)
def test_the_unknown_members_of_an_object(extra: dict[str, Any], found: Any) -> None:
    schema = {"properties": {}, **extra}
    built, ctx = _build(schema)
    assert isinstance(built, ir.ObjectDef) and built.extra == found
    assert {(P, k) for k in extra} <= ctx.consumed


def test_an_inline_object_of_the_unknown_members_is_named_after_its_owner() -> None:
    value = {"type": "object", "properties": {"b": {"type": "string"}}}
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        ctx = _ctx({})
        assert extra_members(ctx, {keyword: value}, P, "T") == ir.Ref("T.value")
        assert ctx.lifted_at == {"T.value": f"{P}/{keyword}"}


def test_an_object_with_both_kinds_of_unknown_members_is_refused() -> None:
    schema = {"properties": {}, "additionalProperties": False, "unevaluatedProperties": False}
    assert _failure(schema) == [
        ("ACPG207", P, "additionalProperties beside unevaluatedProperties is not supported")
    ]
