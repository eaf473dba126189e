"""The build of one schema file into the IR (acpgen/normalise/__init__.py): its defs in
order, lifted ones included, the problems of every def at once, the keywords it does not
implement, the protocol version and title, and whether the root accepts batches."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acpgen import ir
from acpgen import normalise
from acpgen.errors import AcpgenError
from acpgen.load import Meta, RawDocument
from acpgen.normalise import build_protocol, declares_batches, unimplemented_message
from acpgen.source import SourceFile

SHA = "a" * 64
NO_META = Meta(None, None, ())


def _raw(data: dict[str, Any], meta: Meta = NO_META, located: int | None = None) -> RawDocument:
    return RawDocument(SourceFile("v1/schema.json", json.dumps(data), SHA), data, meta, "v1", "unstable", located)


def _failure(data: dict[str, Any], unimplemented: str = "error") -> list[tuple[str, str, str]]:
    with pytest.raises(AcpgenError) as exc:
        build_protocol(_raw(data), unimplemented)
    return [(d.code, d.pointer, d.message) for d in exc.value.diagnostics]


def _at(pointer: str) -> ir.Origin:
    return ir.Origin("v1/schema.json", pointer)


def test_a_protocol_in_full() -> None:
    inline = {"type": "object", "properties": {"b": {"type": "string"}}}
    data = {"title": "ACP", "$defs": {"Z": {"type": "string"}, "A": {"type": "object", "properties": {"a": inline}}}}
    built = build_protocol(_raw(data))
    a = ir.ObjectDef("A", _at("/$defs/A"), (ir.Field("a", ir.Ref("A.a"), False, _at("/$defs/A/properties/a")),))
    lifted = ir.ObjectDef(
        "A.a",
        _at("/$defs/A/properties/a"),
        (ir.Field("b", ir.Prim("string"), False, _at("/$defs/A/properties/a/properties/b")),),
        lifted_from="A.a",
    )
    z = ir.AliasDef("Z", _at("/$defs/Z"), ir.Prim("string"))
    assert built == ir.Protocol(
        source="v1/schema.json",
        source_sha256=SHA,
        tree="v1",
        stability="unstable",
        defs=(a, lifted, z),
        methods=(),
        title="ACP",
    )


def test_the_meta_file_and_the_version() -> None:
    meta = Meta(SourceFile("v1/meta.json", "{}", "b" * 64), 3, ())
    built = build_protocol(_raw({"$defs": {}}, meta, located=2))
    assert (built.meta_source, built.meta_sha256, built.protocol_version) == ("v1/meta.json", "b" * 64, 3)
    # without a meta file, the version the file's place states
    built = build_protocol(_raw({"$defs": {}}, located=2))
    assert (built.meta_source, built.meta_sha256, built.protocol_version) == (None, None, 2)
    assert build_protocol(_raw({"$defs": {}}, Meta(None, 0, ()), located=2)).protocol_version == 0


@pytest.mark.parametrize("title", [3, None, ["t"]])
def test_a_title_that_is_no_string_is_none(title: Any) -> None:
    assert build_protocol(_raw({"title": title, "$defs": {}})).title is None


def test_the_problems_of_every_def_are_reported_together() -> None:
    data = {"$defs": {"A": 3, "B": {"type": "string"}, "C": "x"}}
    assert _failure(data) == [
        ("ACPG201", "/$defs/A", "expected a schema object, found int"),
        ("ACPG201", "/$defs/C", "expected a schema object, found str"),
    ]


def test_a_def_nested_too_deep_is_a_problem_and_the_others_are_built(monkeypatch: pytest.MonkeyPatch) -> None:
    real = normalise.build_def

    def deep(ctx: Any, name: str, schema: Any, pointer: str) -> ir.Def:
        if name in ("A", "C"):
            raise RecursionError
        return real(ctx, name, schema, pointer)

    monkeypatch.setattr(normalise, "build_def", deep)
    data = {"$defs": {"A": {}, "B": 3, "C": {}}}
    assert _failure(data) == [
        ("ACPG208", "/$defs/A", "schema nesting is too deep"),
        ("ACPG201", "/$defs/B", "expected a schema object, found int"),
        ("ACPG208", "/$defs/C", "schema nesting is too deep"),
    ]


def test_a_cycle_through_no_object_is_a_problem_beside_the_others() -> None:
    data = {"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}, "C": 3}}
    assert [code for code, _, _ in _failure(data)] == ["ACPG201", "ACPG205"]


def test_the_methods_are_built_after_the_defs() -> None:
    data = {"$defs": {"A": 3}, "properties": {}}
    with pytest.raises(AcpgenError) as exc:
        build_protocol(_raw(data))
    assert [d.code for d in exc.value.diagnostics] == ["ACPG201"]


# -- keywords the build does not implement -------------------------------------------------

DROPPED = {
    "$defs": {
        "A": {"type": "object", "properties": {"a": {"type": "string", "minLength": 1}}, "minProperties": 1},
        "B": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
    }
}


def test_each_keyword_not_implemented_is_refused_at_its_pointer() -> None:
    assert _failure(DROPPED) == [
        ("ACPG209", "/$defs/A", "`minProperties` is not implemented here: the bindings would not enforce it"),
        ("ACPG209", "/$defs/B", "`uniqueItems` is not implemented here: the bindings would not enforce it"),
    ]
    assert _failure(DROPPED, "anything but warn")[0][0] == "ACPG209"
    assert unimplemented_message("if") == "`if` is not implemented here: the bindings would not enforce it"


def test_a_keyword_not_implemented_is_listed_when_the_user_accepts_the_loss() -> None:
    built = build_protocol(_raw(DROPPED), "warn")
    assert built.unenforced == (("/$defs/A", "minProperties"), ("/$defs/B", "uniqueItems"))
    assert [d.key for d in built.defs] == ["A", "B"]
    assert build_protocol(_raw({"$defs": {"A": {"type": "string"}}}), "warn").unenforced == ()


def test_the_problems_of_the_build_come_before_the_keywords() -> None:
    data = {"$defs": {**DROPPED["$defs"], "C": 3}}
    assert _failure(data) == [("ACPG201", "/$defs/C", "expected a schema object, found int")]
    assert _failure(data, "warn") == [("ACPG201", "/$defs/C", "expected a schema object, found int")]


# -- batches -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "root",
    [
        {"anyOf": [{"type": "object"}, {"type": "array", "items": {}}]},
        {"oneOf": [{"type": ["array"]}]},
        {"oneOf": [{"type": ["null", "array"]}]},
        {"anyOf": [{"type": "object"}], "oneOf": [3, {"type": "array"}]},
        {"anyOf": "x", "oneOf": [{"type": "array"}]},
    ],
)
def test_a_root_with_an_array_member_accepts_batches(root: dict[str, Any]) -> None:
    assert declares_batches(root)
    assert build_protocol(_raw({**root, "$defs": {}})).batches


@pytest.mark.parametrize(
    "root",
    [
        None,
        [{"type": "array"}],
        {},
        {"anyOf": [{"type": "object"}]},
        {"anyOf": {"type": "array"}},
        {"allOf": [{"type": "array"}]},
        {"oneOf": [{"type": True}, {"type": 3}, {"type": {"array": 1}}, {"items": {}}, "array"]},
        {"oneOf": [{"type": "arrays"}, {"type": ["object"]}]},
    ],
)
def test_a_root_without_an_array_member_accepts_no_batches(root: Any) -> None:
    assert not declares_batches(root)
