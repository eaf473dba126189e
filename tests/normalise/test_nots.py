"""The forms of ``not`` acpgen reads (acpgen/normalise/nots.py), each only with its
``required``: without it, a ``not`` means something else (``not: {properties: {t: {const:
"a"}}}`` rules out every object *without* ``t``), so it is refused (ACPG207), never read as
the guarded form."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acpgen import api, ir
from acpgen.errors import AcpgenError
from acpgen.load import load_file
from acpgen.normalise.context import Context
from acpgen.normalise.nots import excluded_values, forbidden_members, forbidding_branch, tag_exclusions

from ..conftest import generate, import_file, parse_as

AGENT_ONLY = {"required": ["type"], "properties": {"type": {"not": {"const": "agent"}}}}
NOT_A_OR_B = {"anyOf": [{"required": ["kind"], "properties": {"kind": {"const": "a"}}},
                        {"required": ["kind"], "properties": {"kind": {"const": "b"}}}]}
NOT_A = {"required": ["kind"], "properties": {"kind": {"const": "a"}}}
WITHOUT_HINT = {"required": ["hint"]}


def _without(node: dict[str, Any], key: str) -> dict[str, Any]:
    """``node`` with ``key`` dropped, in its ``anyOf`` members too."""
    out = {k: v for k, v in node.items() if k != key}
    if "anyOf" in out:
        out["anyOf"] = [_without(m, key) for m in out["anyOf"]]
    return out


def _schema(tmp_path: Path, guard: dict[str, Any]) -> Path:
    obj = {
        "type": "object",
        "properties": {"type": {"type": "string"}, "kind": {"type": "string"}, "hint": {"type": "string"}},
        "not": guard,
    }
    path = tmp_path / "v1" / "schema.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"$defs": {"X": obj}}))
    return path


@pytest.mark.parametrize(
    ("guard", "label", "accepted", "rejected"),
    [
        (AGENT_ONLY, "type absent or agent", [{}, {"type": "agent"}], [{"type": "terminal"}]),
        (NOT_A_OR_B, "kind not a, b", [{}, {"kind": "c"}], [{"kind": "a"}, {"kind": "b"}]),
        (NOT_A, "kind not a", [{}, {"kind": "b"}], [{"kind": "a"}]),
        (WITHOUT_HINT, "without hint", [{}, {"kind": "a"}], [{"hint": "h"}]),
    ],
    ids=["only-value", "excluded-values", "excluded-value", "forbidden-member"],
)
def test_each_form_is_read_with_its_required(
    tmp_path: Path, guard: dict[str, Any], label: str, accepted: list[Any], rejected: list[Any]
) -> None:
    schema = _schema(tmp_path, guard)
    (built,) = api.build_ir(schema)
    x = built.protocol.def_map()["X"]
    assert isinstance(x, ir.ObjectDef) and [m.label for m in x.mixins] == [label]
    out = generate(schema, tmp_path / "out", ("pydantic", "dataclasses"), formatted=False)
    for style in ("pydantic", "dataclasses"):
        module = import_file(out / f"acp_{style}" / "v1.py")
        for value in accepted:
            assert parse_as(style, module, "X", value) == (True, value), (style, value)
        for value in rejected:
            assert parse_as(style, module, "X", value)[0] is False, (style, value)


@pytest.mark.parametrize("guard", [AGENT_ONLY, NOT_A_OR_B, NOT_A], ids=["only-value", "excluded-values", "excluded-value"])
def test_a_form_without_its_required_is_refused(tmp_path: Path, guard: dict[str, Any]) -> None:
    # e.g. not: {properties: {type: {not: {const: agent}}}}: `type` must be there and be
    # "agent"; read as the guarded form, {} would be accepted
    schema = _schema(tmp_path, _without(guard, "required"))
    with pytest.raises(AcpgenError) as exc:
        api.build_ir(schema)
    assert [(d.code, d.pointer) for d in exc.value.diagnostics] == [("ACPG207", "/$defs/X/not")]


def test_a_not_ruling_out_an_array_const_is_no_crash(tmp_path: Path) -> None:
    """Found by ``make fuzz``: an untagged default variant whose ``not`` rules out a tag
    ``const`` that is an array (unhashable) made ``TaggedUnionDef.catch_all`` raise
    ``TypeError``. A value that is no string or number can never be a tag: it rules out
    none, and the build goes on (or stops with a catalogued diagnostic)."""
    schema = tmp_path / "schema.json"
    schema.write_text(
        json.dumps(
            {
                "$defs": {
                    "Update": {
                        "anyOf": [
                            {"type": "object", "properties": {"kind": {"type": "string", "const": "a"}}, "required": ["kind"]},
                            {
                                "type": "object",
                                "properties": {"text": {"type": "string"}},
                                "not": {"anyOf": [{"properties": {"kind": {"const": [1, "a"]}}, "required": ["kind"]}]},
                            },
                        ]
                    }
                }
            }
        )
    )
    try:
        out = generate(schema, tmp_path / "out", ("pydantic", "dataclasses", "typeddict"))
    except AcpgenError as exc:  # refused out loud is fine; an internal error is not
        assert exc.diagnostics
        return
    for style in ("pydantic", "dataclasses", "typeddict"):
        import_file(out / f"acp_{style}" / "v1.py")


# --------------------------------------------------------------------------- each function

def _read(tmp_path: Path, x: dict[str, Any]) -> tuple[Context, dict[str, Any]]:
    """A build context over a file whose one def ``X`` is ``x``, and ``X``'s schema."""
    path = tmp_path / "schema.json"
    path.write_text(json.dumps({"$defs": {"X": x}}, indent=1))
    ctx = Context(load_file(path))
    return ctx, ctx.defs["X"]


def _refused(call: Any) -> list[tuple[str, str, str]]:
    with pytest.raises(AcpgenError) as exc:
        call()
    return [(d.code, d.message, d.pointer) for d in exc.value.diagnostics]


def _kind(*values: Any, enum: bool = False) -> dict[str, Any]:
    prop = {"enum": list(values)} if enum else {"const": values[0]}
    return {"required": ["kind"], "properties": {"kind": {"type": "string", **prop}}}


@pytest.mark.parametrize(
    ("guard", "found"),
    [
        (NOT_A, (("kind", ("a",)),)),
        (_kind("a", "b", enum=True), (("kind", ("a", "b")),)),
        (NOT_A_OR_B, (("kind", ("a", "b")),)),
        ({"oneOf": [_kind("a"), _kind("b", "c", enum=True)], "description": "known"}, (("kind", ("a", "b", "c")),)),
    ],
    ids=["const", "enum", "anyOf", "oneOf"],
)
def test_the_values_ruled_out_are_read(tmp_path: Path, guard: dict[str, Any], found: Any) -> None:
    ctx, x = _read(tmp_path, {"type": "object", "not": guard})
    assert excluded_values(ctx, x, "/$defs/X") == found
    assert ctx.consumed == {("/$defs/X", "not")}


ONE_MEMBER_ONLY = "only a `not` that rules out constant values of one required member, or that forbids one member, is supported"


@pytest.mark.parametrize(
    "guard",
    [
        {"anyOf": None},
        {"anyOf": [5]},
        {"anyOf": [None]},
        {"required": ["kind"]} | {"properties": ["kind"]},
        {"anyOf": [{"required": ["kind"]}]},
        {"required": ["kind"], "properties": {"kind": True}},
        {"required": ["kind"], "properties": {"kind": {"pattern": "a"}}},
        {"required": ["kind"], "properties": {"kind": {"type": "string"}}},
        {"required": ["a", "b"]},
        {"type": "string", "required": ["kind"]},
        {"required": ["kind"], "properties": {"kind": {"not": {"const": "a"}}}, "minProperties": 1},
        {"required": ["kind"], "properties": {"kind": {"type": "string", "not": {"const": "a"}}}},
    ],
    ids=["union-null", "number", "null", "listed-properties", "no-properties", "true", "pattern", "no-values",
         "two-forbidden", "forbidden-string", "only-value-and-more", "only-value-typed-member"],
)
def test_any_other_not_is_refused(tmp_path: Path, guard: dict[str, Any]) -> None:
    ctx, x = _read(tmp_path, {"type": "object", "not": guard})
    assert forbidden_members(ctx, x, "/$defs/X") == ()
    assert _refused(lambda: excluded_values(ctx, x, "/$defs/X")) == [("ACPG207", ONE_MEMBER_ONLY, "/$defs/X/not")]


def test_values_of_two_members_are_refused(tmp_path: Path) -> None:
    guard = {"anyOf": [_kind("a"), {"required": ["type"], "properties": {"type": {"const": "b"}}}]}
    ctx, x = _read(tmp_path, {"type": "object", "not": guard})
    assert _refused(lambda: excluded_values(ctx, x, "/$defs/X")) == [
        ("ACPG207", "a `not` may rule out values of one member only", "/$defs/X/not")
    ]


@pytest.mark.parametrize("guard", [WITHOUT_HINT, AGENT_ONLY], ids=["forbidden-member", "only-value"])
def test_the_other_forms_rule_out_no_values(tmp_path: Path, guard: dict[str, Any]) -> None:
    ctx, x = _read(tmp_path, {"type": "object", "not": guard})
    assert excluded_values(ctx, x, "/$defs/X") == ()


@pytest.mark.parametrize(
    ("guard", "forbidden"),
    [(WITHOUT_HINT, ("hint",)), ({"type": "object", "required": ["hint"], "title": "t"}, ("hint",)),
     ({"required": [1]}, ()), ({"required": "hint"}, ()), ({"required": []}, ())],
    ids=["plain", "typed", "not-a-name", "not-a-list", "none"],
)
def test_a_forbidden_member_is_read(tmp_path: Path, guard: dict[str, Any], forbidden: tuple[str, ...]) -> None:
    ctx, x = _read(tmp_path, {"type": "object", "not": guard})
    assert forbidden_members(ctx, x, "/$defs/X") == forbidden
    assert ctx.consumed == ({("/$defs/X", "not")} if forbidden else set())


def test_an_objects_own_not_is_a_branch(tmp_path: Path) -> None:
    # the branch's origin is the `not`, with the overlays that wrote it
    def origin(ctx: Context, pointer: str = "/$defs/X/not") -> ir.Origin:
        return ir.Origin(ctx.source.path, pointer, ("rfd-x",) if pointer.endswith("/not") else ())

    def marked(guard: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "not": guard | {"x-acpgen-overlay": "rfd-x"}}

    ctx, x = _read(tmp_path, marked(WITHOUT_HINT))
    (branch,) = forbidding_branch(ctx, x, "/$defs/X")
    assert branch == ir.Mixin(None, None, None, (), origin(ctx), "without hint", "/$defs/X/not", "anyOf", absent=("hint",))
    ctx, x = _read(tmp_path, marked(NOT_A_OR_B))
    (branch,) = forbidding_branch(ctx, x, "/$defs/X")
    assert branch == ir.Mixin(
        None, None, None, (), origin(ctx), "kind not a, b", "/$defs/X/not", "anyOf", excludes=(("kind", ("a", "b")),)
    )
    ctx, x = _read(tmp_path, marked(AGENT_ONLY))
    (branch,) = forbidding_branch(ctx, x, "/$defs/X")
    field = ir.Field("type", ir.Lit(("agent",)), False, origin(ctx, "/$defs/X/not/properties/type/not/const"))
    assert branch == ir.Mixin(None, None, None, (field,), origin(ctx), "type absent or agent", "/$defs/X/not", "anyOf")
    assert branch.fields[0].required is False
    ctx, x = _read(tmp_path, {"type": "object"})
    assert forbidding_branch(ctx, x, "/$defs/X") == ()


def test_the_value_kept_may_be_typed(tmp_path: Path) -> None:
    guard = {"required": ["type"], "properties": {"type": {"not": {"type": "string", "const": "agent"}}}}
    ctx, x = _read(tmp_path, {"type": "object", "not": guard})
    (branch,) = forbidding_branch(ctx, x, "/$defs/X")
    assert (branch.label, branch.fields[0].type) == ("type absent or agent", ir.Lit(("agent",)))
    assert ctx.consumed == {("/$defs/X", "not")}


@pytest.mark.parametrize(
    ("prop", "values"),
    [
        ({"type": "string", "not": {"const": "a"}}, ("a",)),
        ({"type": "string", "not": {"enum": ["a", "b"], "type": "string", "description": "known"}}, ("a", "b")),
        ({"type": "string"}, None),
        ({"type": "string", "not": True}, None),
        (None, None),
    ],
    ids=["const", "enum", "none", "not-a-schema", "absent"],
)
def test_a_fallback_tag_rules_out_the_known_values(tmp_path: Path, prop: Any, values: Any) -> None:
    ctx, x = _read(tmp_path, {"type": "object", "properties": {"kind": prop}})
    at = "/$defs/X/properties/kind"
    assert tag_exclusions(ctx, prop, "kind", at) == ((("kind", values),) if values else ())
    assert ctx.consumed == ({(at, "not")} if values else set())


@pytest.mark.parametrize(
    "ruled", [{"enum": "ab"}, {"const": "a", "pattern": "x"}, {"enum": ["a"], "minLength": 1}, {}],
    ids=["enum-not-a-list", "const-and-more", "enum-and-more", "empty"],
)
def test_a_fallback_tag_rules_out_only_constants(tmp_path: Path, ruled: dict[str, Any]) -> None:
    prop = {"type": "string", "not": ruled}
    ctx, _ = _read(tmp_path, {"type": "object", "properties": {"kind": prop}})
    at = "/$defs/X/properties/kind"
    assert _refused(lambda: tag_exclusions(ctx, prop, "kind", at)) == [
        ("ACPG207", "a fallback's tag may only rule out constant values", at + "/not")
    ]


def test_a_union_branch_may_forbid_a_member(tmp_path: Path) -> None:
    # upstream UnstructuredCommandInput: a branch holds when `hint` is absent
    x = {
        "type": "object",
        "properties": {"hint": {"type": "string"}, "kind": {"type": "string"}},
        "anyOf": [{"required": ["kind"]}, {"title": "Plain", "not": WITHOUT_HINT}],
    }
    schema = _schema(tmp_path, {})
    schema.write_text(json.dumps({"$defs": {"X": x}}))
    (built,) = api.build_ir(schema)
    obj = built.protocol.def_map()["X"]
    assert isinstance(obj, ir.ObjectDef)
    assert [m.absent for m in obj.mixins] == [(), ("hint",)]


def test_a_union_branch_may_not_fix_a_value(tmp_path: Path) -> None:
    x = {"type": "object", "properties": {"type": {"type": "string"}}, "anyOf": [{"required": ["type"]}, {"not": AGENT_ONLY}]}
    schema = _schema(tmp_path, {})
    schema.write_text(json.dumps({"$defs": {"X": x}}))
    assert _refused(lambda: api.build_ir(schema)) == [
        ("ACPG207", "this form of `not` is not supported on a union branch", "/$defs/X/anyOf/1/not")
    ]
