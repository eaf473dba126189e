"""The branches of the unions beside an object's members (acpgen/normalise/defs.py):
what each branch holds, the keywords read, the nested unions, and the name each branch
gets (``branch_label``), with the problems of branches that cannot be built or named.
The rest of defs.py is tested in test_defs.py."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from acpgen import ir
from acpgen.errors import AcpgenError
from acpgen.normalise.context import Context
from acpgen.normalise.defs import branch_label, build_mixins, label_branches

from .test_defs import BASE, P, STRING, _at, _build, _ctx, _field


# -- branches beside the members -----------------------------------------------------------


def _mixins(schema: dict[str, Any], skip: str | None = None, **defs: Any) -> tuple[tuple[ir.Mixin, ...], Context]:
    ctx = _ctx({"T": schema, **defs})
    return build_mixins(ctx, "T", schema, P, skip), ctx


def _mixin_failure(schema: dict[str, Any], **defs: Any) -> list[tuple[str, str, str]]:
    with pytest.raises(AcpgenError) as exc:
        _mixins(schema, **defs)
    return [(d.code, d.pointer, d.message) for d in exc.value.diagnostics]


def test_a_branch_in_full() -> None:
    branch = {
        "title": "X",
        "description": "the x",
        "type": "object",
        "allOf": [{"$ref": "#/$defs/Base"}],
        "properties": {"k": {"type": "string"}},
        "required": ["k", 1],
        "additionalProperties": {},
        "unevaluatedProperties": True,
        "x-acpgen-overlay": "o",
    }
    (m,), ctx = _mixins({"oneOf": [branch]}, Base=BASE)
    at = P + "/oneOf/0"
    assert m == ir.Mixin(
        title="X",
        description="the x",
        base="Base",
        fields=(_field("k", STRING, True, at=at),),
        origin=_at(at, "o"),
        label="X",
        group=P + "/oneOf",
        keyword="oneOf",
        required=("k",),
    )
    assert {(P, "oneOf"), (at, "type"), (at, "allOf"), (at, "properties"), (at, "required")} <= ctx.consumed
    assert {(at, "additionalProperties"), (at, "unevaluatedProperties")} <= ctx.consumed


def test_a_closed_branch_leaves_its_keyword_unread() -> None:
    branch = {"title": "X", "additionalProperties": False, "unevaluatedProperties": {"type": "string"}}
    _, ctx = _mixins({"anyOf": [branch]})
    at = P + "/anyOf/0"
    assert (at, "additionalProperties") not in ctx.consumed
    assert (at, "unevaluatedProperties") not in ctx.consumed


def test_branches_of_both_unions_nested_ones_and_the_skipped_one() -> None:
    schema = {
        "oneOf": [{"title": "A"}, {"title": "B"}],
        "anyOf": [{"required": ["x", "y"], "oneOf": [{"required": ["z"]}, {"title": "W"}]}],
        "allOf": [],
    }
    mixins, ctx = _mixins(schema)
    assert [(m.label, m.keyword, m.group) for m in mixins] == [
        ("A", "oneOf", P + "/oneOf"),
        ("B", "oneOf", P + "/oneOf"),
        ("x, y", "anyOf", P + "/anyOf"),
    ]
    nested = mixins[2].mixins
    assert [(m.label, m.group, m.origin.pointer) for m in nested] == [
        ("z", P + "/anyOf/0/oneOf", P + "/anyOf/0/oneOf/0"),
        ("W", P + "/anyOf/0/oneOf", P + "/anyOf/0/oneOf/1"),
    ]
    assert [m.label for m in _mixins(schema, skip="oneOf")[0]] == ["x, y"]
    assert [m.label for m in _mixins(schema, skip="anyOf")[0]] == ["A", "B"]
    assert _mixins({"oneOf": {"title": "A"}})[0] == ()


def test_an_inline_object_in_a_branch_is_named_after_the_branch() -> None:
    inner = {"type": "object", "properties": {"b": {"type": "string"}}}
    schema = {"oneOf": [{"title": "X", "properties": {"a": inner}}, {"required": ["c"], "properties": {"d": inner}}]}
    mixins, ctx = _mixins(schema)
    assert [m.fields[0].type for m in mixins] == [ir.Ref("T.X.a"), ir.Ref("T.1.d")]
    nested = {"oneOf": [{"title": "X", "anyOf": [{"title": "Y", "properties": {"a": inner}}]}]}
    assert _mixins(nested)[0][0].mixins[0].fields[0].type == ir.Ref("T.X.Y.a")
    nested = {"oneOf": [{"required": ["a"], "anyOf": [{"required": ["b"], "properties": {"a": inner}}]}]}
    assert _mixins(nested)[0][0].mixins[0].fields[0].type == ir.Ref("T.0.0.a")


def test_an_inline_object_in_a_branch_of_an_object_is_named_after_the_object() -> None:
    inner = {"type": "object", "properties": {"b": {"type": "string"}}}
    built, ctx = _build({"properties": {}, "anyOf": [{"title": "X", "properties": {"a": inner}}]})
    assert isinstance(built, ir.ObjectDef) and built.mixins[0].fields[0].type == ir.Ref("T.X.a")
    assert list(ctx.lifted) == ["T.X.a"]


def test_a_branch_that_is_no_object_is_refused() -> None:
    assert _mixin_failure({"anyOf": [{"title": "A"}, True]}) == [
        ("ACPG202", P + "/anyOf/1", "expected a schema object")
    ]


def test_a_malformed_keyword_of_a_branch_is_a_problem() -> None:
    (m,), ctx = _mixins({"anyOf": [{"title": "A", "required": "a"}]})
    assert [(d.code, d.pointer) for d in ctx.problems.items] == [("ACPG202", P + "/anyOf/0/required")]
    assert m.required == ()


def test_a_branch_that_forbids_values_or_members() -> None:
    schema = {
        "anyOf": [
            {"title": "A", "properties": {"k": {"const": "x"}}, "required": ["k"], "not": {"properties": {"k": {"const": "y"}}, "required": ["k"]}},
            {"title": "B", "not": {"required": ["m"]}},
        ]
    }
    a, b = _mixins(schema)[0]
    assert (a.excludes, a.absent) == ((("k", ("y",)),), ())
    assert (b.excludes, b.absent) == ((), ("m",))


def test_a_branch_whose_not_leaves_one_value_is_refused() -> None:
    only = {"required": ["k"], "properties": {"k": {"not": {"const": "v"}}}}
    assert _mixin_failure({"anyOf": [{"title": "A", "not": only}]}) == [
        ("ACPG207", P + "/anyOf/0/not", "this form of `not` is not supported on a union branch")
    ]


def test_an_object_holds_its_branches_and_its_forbidding_branch() -> None:
    schema = {"properties": {"a": {"type": "string"}}, "anyOf": [{"title": "X"}], "not": {"required": ["a"]}}
    built = _build(schema)[0]
    assert isinstance(built, ir.ObjectDef)
    assert [m.label for m in built.mixins][0] == "X"
    assert len(built.mixins) == 2 and built.mixins[1].absent == ("a",)


# -- the names of branches -----------------------------------------------------------------


def _branch(title: str | None = None, base: str | None = None, required: tuple[str, ...] = (), *fields: ir.Field) -> ir.Mixin:
    return ir.Mixin(title, None, base, tuple(fields), _at(), required=required)


def _lit(name: str, *values: Any, required: bool = True) -> ir.Field:
    return _field(name, ir.Lit(values), required)


def test_branch_label() -> None:
    assert branch_label(_branch("X", "Base", ("a",), _lit("k", "v"))) == "X"
    assert branch_label(_branch("", "Base", ("k",), _lit("k", "v"))) == "v"
    assert branch_label(_branch(None, None, ("k",), _lit("k", 7))) == "7"
    assert branch_label(_branch(None, "Base", ("k",), _lit("k", True))) == "Base"
    assert branch_label(_branch(None, "Base", (), _lit("k", "v", required=False))) == "Base"
    assert branch_label(_branch(None, "Base", (), _lit("k", "v", "w"))) == "Base"
    assert branch_label(_branch(None, None, ("a", "b"), _lit("a", "v"), _lit("b", "w"))) == "a, b"
    assert branch_label(_branch(None, None, ("k",), _field("k", STRING, True))) == "k"
    assert branch_label(_branch(None, None, ("k",), _lit("k", None))) == "k"
    assert branch_label(_branch(None, None, ("k",), _lit("k", 1.5))) == "k"
    assert branch_label(_branch()) is None


def test_label_branches_labels_each() -> None:
    ctx = _ctx({})
    labelled = label_branches(ctx, [_branch("X"), _branch(None, "Base")])
    assert [m.label for m in labelled] == ["X", "Base"]


def test_a_branch_without_a_name_is_refused() -> None:
    with pytest.raises(AcpgenError) as exc:
        label_branches(_ctx({}), [_branch("X"), replace(_branch(), origin=_at("/$defs/T/anyOf/1"))])
    assert [(d.code, d.pointer, d.message) for d in exc.value.diagnostics] == [
        (
            "ACPG207",
            "/$defs/T/anyOf/1",
            "a branch of a union beside an object's members needs a title, a $ref, a "
            "required constant or required members to be named",
        )
    ]


def test_two_branches_of_one_name_are_refused() -> None:
    assert _mixin_failure({"anyOf": [{"title": "X"}, {"required": ["y"]}, {"title": "X"}]}) == [
        (
            "ACPG207",
            P + "/anyOf/2",
            f"two branches of this union are both named 'X' (here and at {P}/anyOf/0); give one a title",
        )
    ]
    # two unions may each have a branch of one name
    assert [m.label for m in _mixins({"anyOf": [{"title": "X"}], "oneOf": [{"title": "X"}]})[0]] == ["X", "X"]
