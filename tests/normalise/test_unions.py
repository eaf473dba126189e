"""Union recognition (acpgen/normalise/unions.py): which member is a union's tag. A tag is a
member every tagged variant *requires* with one constant value, written ``const`` or as a
one-value ``enum``; an optional constant, or an enum of several values, tells no variant
apart (a value without it, or with another of its values, is still valid JSON Schema)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from acpgen import api, ir
from acpgen.errors import AcpgenError
from acpgen.load import Meta, RawDocument
from acpgen.normalise import build_protocol
from acpgen.normalise.unions import _tag_value, key_part, member_labels
from acpgen.source import SourceFile

from ..conftest import generate, import_file, parse_as


def _obj(tag: dict[str, Any], own: str, required_tag: bool = True) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"kind": tag, own: {"type": "string"}},
        "required": (["kind"] if required_tag else []) + [own],
    }


def _union(tmp_path: Path, members: list[dict[str, Any]]) -> tuple[Path, ir.Def]:
    schema = tmp_path / "v1" / "schema.json"
    schema.parent.mkdir(exist_ok=True)
    schema.write_text(json.dumps({"$defs": {"U": {"oneOf": members}}}))
    (built,) = api.build_ir(schema)
    return schema, built.protocol.def_map()["U"]


@pytest.mark.parametrize(
    "tags",
    [
        [{"const": "a"}, {"const": "b"}],
        [{"type": "string", "enum": ["a"]}, {"type": "string", "enum": ["b"]}],
        [{"const": "a"}, {"type": "string", "enum": ["b"]}],
    ],
    ids=["const", "one-value-enum", "both"],
)
def test_a_required_constant_is_the_tag(tmp_path: Path, tags: list[dict[str, Any]]) -> None:
    _, union = _union(tmp_path, [_obj(tags[0], "x"), _obj(tags[1], "y")])
    assert isinstance(union, ir.TaggedUnionDef) and union.tag == "kind"
    assert [(v.kind, v.tag_value) for v in union.variants] == [("tagged", "a"), ("tagged", "b")]


@pytest.mark.parametrize(
    ("members", "valid"),
    [
        # `kind` optional in both: {"x": ...} is valid without it
        ([_obj({"const": "a"}, "x", False), _obj({"const": "b"}, "y", False)], {"x": "1"}),
        ([_obj({"type": "string", "enum": ["a"]}, "x", False), _obj({"type": "string", "enum": ["b"]}, "y", False)], {"y": "1"}),
        # an enum of several values fixes no variant: {"kind": "c", "y": ...} is the second
        ([_obj({"type": "string", "enum": ["a", "c"]}, "x"), _obj({"type": "string", "enum": ["b", "c"]}, "y")], {"kind": "c", "y": "1"}),
    ],
    ids=["optional-const", "optional-one-value-enum", "several-values"],
)
def test_a_member_that_fixes_no_variant_is_no_tag(tmp_path: Path, members: list[dict[str, Any]], valid: dict[str, Any]) -> None:
    schema, union = _union(tmp_path, members)
    assert not isinstance(union, ir.TaggedUnionDef), union
    assert isinstance(union, ir.UnionDef)
    out = generate(schema, tmp_path / "out", ("pydantic", "dataclasses"), formatted=False)
    for style in ("pydantic", "dataclasses"):
        module = import_file(out / f"acp_{style}" / "v1.py")
        assert parse_as(style, module, "U", valid) == (True, valid), style


@pytest.mark.parametrize("tags", [("text", "a#b"), ("#x", "y"), ("a#b", "a%23b")])
def test_a_tag_holding_a_hash_builds_and_imports(tags: tuple[str, ...], tmp_path: Path) -> None:
    """``#`` separates a union from its variant in a variant's key: a tag value holding one
    (found by ``make fuzz``: a ``const`` replaced by a ``$ref`` string, then an internal
    error in naming) is escaped there, and no two tags share a key."""
    def member(tag: str) -> dict[str, object]:
        return {"type": "object", "properties": {"type": {"type": "string", "const": tag}, "chunk": {"type": "string"}}, "required": ["type", "chunk"]}

    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"$defs": {"Chunk": {"oneOf": [member(t) for t in tags]}}}))
    keys = [v.key for v in next(d for d in api.build_ir(schema)[0].protocol.defs if d.key == "Chunk").variants]  # type: ignore[union-attr]
    assert len(set(keys)) == len(tags) and all(k.count("#") == 1 for k in keys)
    out = generate(schema, tmp_path / "out", ("pydantic", "dataclasses", "typeddict"))
    for style in ("pydantic", "dataclasses", "typeddict"):
        module = import_file(out / f"acp_{style}" / "v1.py")
        assert module.Chunk is not None
    value = TypeAdapter(import_file(out / "acp_pydantic" / "v1.py").Chunk).validate_json(json.dumps({"type": tags[-1], "chunk": "c"}))
    assert value.type_ == tags[-1]


def _def(tmp_path: Path, keyword: str, members: list[Any]) -> ir.Def:
    schema = tmp_path / "v1" / "schema.json"
    schema.parent.mkdir(exist_ok=True)
    schema.write_text(json.dumps({"$defs": {"U": {keyword: members}}}))
    (built,) = api.build_ir(schema)
    return built.protocol.def_map()["U"]


OVERLAPPING = [{"type": "string", "title": "short"}, {"type": "string", "title": "long"}]
DISJOINT = [{"type": "string", "title": "text"}, {"type": "boolean", "title": "flag"}]


@pytest.mark.parametrize(
    ("keyword", "members", "exclusive"),
    [
        ("oneOf", OVERLAPPING, "checked"),  # "a" is valid for both: the bindings count
        ("oneOf", DISJOINT, "disjoint"),
        ("anyOf", OVERLAPPING, None),  # anyOf holds with any number of members matching
        ("anyOf", DISJOINT, None),
    ],
    ids=["oneOf-overlapping", "oneOf-disjoint", "anyOf-overlapping", "anyOf-disjoint"],
)
def test_only_a_oneOf_is_exclusive(tmp_path: Path, keyword: str, members: list[Any], exclusive: str | None) -> None:
    union = _def(tmp_path, keyword, members)
    assert isinstance(union, ir.UnionDef) and union.exclusive == exclusive


# -- the build, on schemas held in memory ------------------------------------------------


def _protocol(defs: dict[str, Any]) -> dict[str, ir.Def]:
    data = {"$defs": defs}
    source = SourceFile("schema.json", json.dumps(data), "0" * 64)
    return build_protocol(RawDocument(source, data, Meta(None, 1, ()), "v1", "stable")).def_map()


def _built(members: list[Any], keyword: str = "oneOf", **more: Any) -> ir.Def:
    return _protocol({"U": {keyword: members, **more}, "Base": {"type": "object", "properties": {"b": {"type": "string"}}}})["U"]


def _failure(members: list[Any], **more: Any) -> tuple[str, str, str]:
    with pytest.raises(AcpgenError) as exc:
        _built(members, **more)
    (d,) = exc.value.diagnostics
    return d.code, d.pointer, d.message


def _tagged(members: list[Any], **more: Any) -> ir.TaggedUnionDef:
    union = _built(members, **more)
    assert isinstance(union, ir.TaggedUnionDef), union
    return union


def _v(kind: Any, own: str = "x", tag: str = "kind", **more: Any) -> dict[str, Any]:
    """A variant: ``kind`` is its tag's schema (a string for a ``const``), ``None`` without one."""
    props: dict[str, Any] = {own: {"type": "string"}}
    required = [own]
    if kind is not None:
        props[tag] = {"const": kind} if isinstance(kind, (str, int)) else kind
        required.append(tag)
    return {"type": "object", "properties": props, "required": required, **more}


@pytest.mark.parametrize(
    ("prop", "value"),
    [
        ({"const": "a"}, "a"),
        ({"const": 3}, 3),
        ({"enum": ["a"]}, "a"),
        ({"enum": [0]}, 0),
        ({"const": "a", "enum": ["b"]}, "a"),
        ({"const": True}, None),
        ({"const": 1.5}, None),
        ({"const": None}, None),
        ({"enum": ["a", "b"]}, None),
        ({"enum": []}, None),
        ({"enum": "a"}, None),
        ({"type": "string"}, None),
        ("a", None),
    ],
)
def test_a_tag_value_is_one_string_or_integer_constant(prop: Any, value: Any) -> None:
    assert _tag_value(prop) == value


def test_the_variants_of_a_tagged_union() -> None:
    union = _tagged(
        [
            {**_v("a", description="The a.", title="A"), "x-docs-ignore": True},
            _v(7, "y"),
            _v({"type": "string"}, "z"),
            _v(None, "w"),
        ],
        description="U.",
        title="The U",
    )
    assert (union.tag, union.description, union.title, union.docs_ignore, union.discriminator_keyword) == (
        "kind", "U.", "The U", False, False
    )
    assert union.origin == ir.Origin("schema.json", "/$defs/U")
    assert [(v.key, v.kind, v.tag_value) for v in union.variants] == [
        ("U#a", "tagged", "a"),
        ("U#7", "tagged", 7),
        ("U#fallback", "fallback", None),
        ("U#default", "default", None),
    ]
    a = union.variants[0]
    assert (a.description, a.title, a.docs_ignore, a.base, a.mixins, a.excludes) == ("The a.", "A", True, None, (), ())
    assert a.origin == ir.Origin("schema.json", "/$defs/U/oneOf/0")
    assert [f.wire_name for v in union.variants for f in v.fields] == ["x", "y", "z", "w"]  # the tag is no field
    assert [(v.description, v.title, v.docs_ignore) for v in union.variants[1:]] == [(None, None, False)] * 3


def test_a_tagged_union_marked_for_the_docs() -> None:
    assert _tagged([_v("a"), _v("b")], **{"x-docs-ignore": True}).docs_ignore is True
    assert _tagged([_v("a"), _v("b")], **{"x-docs-ignore": "yes"}).docs_ignore is False


def test_a_variant_may_be_a_reference_or_hold_one() -> None:
    union = _tagged([{**_v("a"), "allOf": [{"$ref": "#/$defs/Base"}]}, {"$ref": "#/$defs/Base"}, _v("c")])
    assert [(v.kind, v.base) for v in union.variants] == [("tagged", "Base"), ("default", "Base"), ("tagged", None)]


def test_a_union_with_a_member_that_is_no_object_is_untagged() -> None:
    assert isinstance(_built([_v("a"), {"type": "string"}]), ir.UnionDef)
    assert isinstance(_built([_v("a"), {"type": "object"}]), ir.TaggedUnionDef)
    assert isinstance(_built([_v("a"), True]), ir.UnionDef)


def test_members_that_are_all_defaults_make_no_tagged_union() -> None:
    assert isinstance(_built([_v(None), _v(None, "y")]), ir.UnionDef)


@pytest.mark.parametrize(
    "members",
    [
        [_v("a"), _v(None, "y"), _v(None, "z")],  # two defaults
        [_v("a"), _v({"type": "string"}, "y"), _v({"type": "string"}, "z")],  # two fallbacks
        [_v("a"), _v({"type": "integer"}, "y")],  # the tag, neither constant nor string
        [_v("a"), _v({"type": "string", "enum": ["b", "c"]}, "y")],
        [_v("a"), _v({"type": "string", "const": "b"}, "y", required=["y"])],  # an optional tag
        [_v("a"), _v("a", "y")],  # a value twice
    ],
)
def test_members_that_no_tag_tells_apart_make_no_tagged_union(members: list[Any]) -> None:
    assert isinstance(_built(members), ir.UnionDef)


def test_a_member_with_a_not_is_the_fallback() -> None:
    union = _tagged([_v("a"), _v("b"), {**_v(None, "y"), "not": {"properties": {"kind": {"enum": ["a", "b"]}}, "required": ["kind"]}}])
    fallback = union.variants[2]
    assert (fallback.kind, fallback.key, fallback.excludes) == ("fallback", "U#fallback", (("kind", ("a", "b")),))


def test_a_fallback_tag_may_rule_out_the_known_values() -> None:
    union = _tagged([_v("a"), _v({"type": "string", "not": {"enum": ["a"]}}, "y")])
    assert union.variants[1].excludes == (("kind", ("a",)),)


def test_a_default_not_that_rules_out_no_tag_value_is_refused() -> None:
    not_ = {"not": {"required": ["zz"]}}
    assert _failure([_v("a"), {**_v(None, "y"), **not_}]) == (
        "ACPG207",
        "/$defs/U/oneOf/1/not",
        "a default or fallback variant's `not` may only rule out tag values",
    )


@pytest.mark.parametrize("not_", [{"properties": {"x": {"const": "q"}}, "required": ["x"]}, {"required": ["zz"]}])
def test_a_tagged_variant_with_a_not_is_refused(not_: dict[str, Any]) -> None:
    assert _failure([_v("a"), {**_v("b"), "not": not_}]) == (
        "ACPG209",
        "/$defs/U/oneOf/1",
        "`not` is not implemented here: the bindings would not enforce it",
    )


@pytest.mark.parametrize("keyword", ["additionalProperties", "unevaluatedProperties"])
def test_a_closed_variant_is_refused_and_an_open_one_built(keyword: str) -> None:
    assert _failure([_v("a"), {**_v("b"), keyword: False}])[:2] == ("ACPG209", "/$defs/U/oneOf/1")
    assert _tagged([_v("a"), {**_v("b"), keyword: True}, {**_v("c"), keyword: {}}]).variants[1].kind == "tagged"


def test_a_variant_may_only_extend_a_def() -> None:
    outside = {"allOf": [{"$ref": "#/$defs/Base/properties/b"}]}
    assert _failure([_v("a"), {**_v("b"), **outside}]) == (
        "ACPG207",
        "/$defs/U/oneOf/1/allOf/0/$ref",
        "a variant may only extend a $defs entry",
    )


def test_a_member_whose_required_is_no_list_is_refused() -> None:
    with pytest.raises(AcpgenError) as exc:
        _built([_v("a"), {"type": "object", "properties": {"kind": {"const": "b"}}, "required": None}])
    assert [d.code for d in exc.value.diagnostics] == ["ACPG202", "ACPG207"]


def test_a_variant_extending_two_schemas_is_refused() -> None:
    two = {"allOf": [{"$ref": "#/$defs/Base"}, {"required": ["b"]}]}
    assert _failure([_v("a"), {**_v("b"), **two}]) == (
        "ACPG207",
        "/$defs/U/oneOf/1/allOf",
        "allOf with more than one schema is not supported here",
    )


def test_the_tag_that_tells_most_variants_apart_wins() -> None:
    members = [
        {**_v("a"), "properties": {**_v("a")["properties"], "op": {"const": "x"}}, "required": ["x", "kind", "op"]},
        _v("b"),
        _v("c"),
    ]
    assert _tagged(members).tag == "kind"


def test_then_the_tag_with_a_fallback_then_the_first_by_name() -> None:
    with_fallback = [
        {"type": "object", "properties": {"a": {"const": "1"}, "b": {"const": "1"}}, "required": ["a", "b"]},
        {"type": "object", "properties": {"a": {"const": "2"}, "b": {"const": "2"}}, "required": ["a", "b"]},
        {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"]},
    ]
    union = _tagged(with_fallback)
    assert (union.tag, [v.kind for v in union.variants]) == ("b", ["tagged", "tagged", "fallback"])
    tie = [
        {"type": "object", "properties": {"b": {"const": "1"}, "a": {"const": "1"}}, "required": ["b", "a"]},
        {"type": "object", "properties": {"b": {"const": "2"}, "a": {"const": "2"}}, "required": ["b", "a"]},
    ]
    assert _tagged(tie).tag == "a"


def test_a_tag_that_repeats_a_value_gives_way_to_one_that_does_not() -> None:
    members = [
        {"type": "object", "properties": {"a": {"const": "1"}, "b": {"const": "1"}}, "required": ["a", "b"]},
        {"type": "object", "properties": {"a": {"const": "1"}, "b": {"const": "2"}}, "required": ["a", "b"]},
    ]
    assert _tagged(members).tag == "b"


def test_a_discriminator_names_the_tag() -> None:
    members = [
        {"type": "object", "properties": {"a": {"const": "1"}, "b": {"const": "1"}}, "required": ["a", "b"]},
        {"type": "object", "properties": {"a": {"const": "2"}, "b": {"const": "2"}}, "required": ["a", "b"]},
    ]
    union = _tagged(members, discriminator={"propertyName": "b"})
    assert (union.tag, union.discriminator_keyword) == ("b", True)
    assert isinstance(_built(members, discriminator={"propertyName": "c"}), ir.UnionDef)
    assert _tagged(members, discriminator={"propertyName": 3}).discriminator_keyword is False
    assert _tagged(members, discriminator="b").tag == "a"


def test_a_discriminator_whose_tag_repeats_a_value_is_refused() -> None:
    code, pointer, message = _failure([_v("b"), _v("a"), _v("a", "y")], discriminator={"propertyName": "kind"})
    assert (code, pointer, message) == ("ACPG206", "/$defs/U/oneOf", "tag 'kind' has the value 'a' in more than one variant")


def test_the_members_beside_a_tagged_union_are_shared_and_its_sibling_union_in_every_variant() -> None:
    union = _tagged(
        [_v("a"), _v("b", "y")],
        properties={"id": {"type": "string"}},
        required=["id"],
        anyOf=[{"title": "One", "properties": {"p": {"type": "string"}}, "required": ["p"]}, {"title": "Two", "properties": {"q": {"type": "string"}}, "required": ["q"]}],
    )
    assert [f.wire_name for f in union.shared_fields] == ["id"]
    assert [[m.title for m in v.mixins] for v in union.variants] == [["One", "Two"], ["One", "Two"]]


def test_a_variant_with_a_union_of_its_own_carries_it() -> None:
    inner = {"anyOf": [{"title": "P", "properties": {"p": {"type": "string"}}, "required": ["p"]}, {"title": "Q", "properties": {"q": {"type": "string"}}, "required": ["q"]}]}
    union = _tagged([{**_v("a"), **inner}, _v("b")])
    assert [[m.title for m in v.mixins] for v in union.variants] == [["P", "Q"], []]


@pytest.mark.parametrize(("value", "part"), [("a", "a"), ("a#b", "a%23b"), ("a%23b", "a%2523b"), ("%#", "%25%23"), (3, "3")])
def test_a_tag_value_is_escaped_in_a_key(value: Any, part: str) -> None:
    assert key_part(value) == part


def _req(*names: Any, **consts: Any) -> dict[str, Any]:
    return {"type": "object", "required": list(names), "properties": {k: {"const": v} for k, v in consts.items()}}


@pytest.mark.parametrize(
    ("members", "labels"),
    [
        ([_req("a", "b"), _req("b", "c")], ["a", "c"]),  # the members no other requires
        ([_req("a", "x", "y"), _req("x")], ["a_y", "x"]),  # else every member it requires
        ([_req("kind", kind="m"), _req("kind", kind=2)], ["m", "2"]),  # else its constants
        ([_req("k", "l", k="m", l="n"), _req("k", "l", k="o", l="p")], ["m_n", "o_p"]),
        ([_req("kind", kind=True), _req("kind", kind="b")], ["kind", "b"]),  # no constant: a boolean
        # else the members no other member without constants requires
        ([_req("x", "y"), _req("x", "kind", kind="k1"), _req("y", "kind", kind="k2"), _req("y")], ["x", "k1", "k2", "y"]),
        ([_req("x"), _req("x")], ["x", "x"]),
        ([{"type": "string"}, True, {"required": "x"}, {"required": ["x", 3]}, {"required": []}], ["", "", "", "x", ""]),
        ([{"required": ["k"], "properties": []}, {"required": ["k"], "properties": {"k": {"const": "v"}}}], ["k", "v"]),
    ],
)
def test_an_untitled_member_is_named_from_what_it_requires(members: list[Any], labels: list[str]) -> None:
    assert member_labels(members) == labels


def test_the_members_of_an_untagged_union() -> None:
    union = _built(
        [
            {"type": "string", "title": "Text", "description": "Some text."},
            {"$ref": "#/$defs/Base", "x-acpgen-overlay": "rfd/base"},
            {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
            {"type": "object", "title": "Named", "properties": {"m": {"type": "integer"}}},
            {"type": "integer"},
        ],
        keyword="anyOf",
        description="U.",
        title="The U",
        **{"x-docs-ignore": True},
    )
    assert isinstance(union, ir.UnionDef)
    assert (union.description, union.title, union.docs_ignore, union.exclusive) == ("U.", "The U", True, None)
    assert union.origin == ir.Origin("schema.json", "/$defs/U")
    assert [(m.type, m.title, m.description) for m in union.members] == [
        (ir.Prim("string"), "Text", "Some text."),
        (ir.Ref("Base"), None, None),
        (ir.Ref("U.n"), None, None),
        (ir.Ref("U.Named"), "Named", None),
        (ir.Prim("integer"), None, None),
    ]
    assert [m.origin for m in union.members[:2]] == [
        ir.Origin("schema.json", "/$defs/U/anyOf/0"),
        ir.Origin("schema.json", "/$defs/U/anyOf/1", ("rfd/base",)),
    ]


def test_an_untagged_union_of_plain_values() -> None:
    union = _built([{"type": "string"}, {"type": "null"}, True], keyword="anyOf")
    assert isinstance(union, ir.UnionDef) and not union.docs_ignore and (union.description, union.title) == (None, None)
    assert [m.origin.pointer for m in union.members] == ["/$defs/U/anyOf/0", "/$defs/U/anyOf/1", "/$defs/U/anyOf/2"]


def test_an_inline_object_needs_a_name() -> None:
    assert _failure([{"type": "string"}, {"type": "object", "properties": {"n": {"type": "integer"}}}]) == (
        "ACPG207",
        "/$defs/U/oneOf/1",
        "an inline object in an untagged union needs a title, a $ref, a required constant or required members of its own to be named",
    )


def test_a_member_without_a_title_or_a_label_is_named_by_its_place() -> None:
    union = _built([{"type": "string"}, {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer"}}}}])
    assert isinstance(union, ir.UnionDef)
    assert isinstance(union.members[1].type, ir.Array) and union.members[1].type.items == ir.Ref("U.1.item")


def test_a_member_with_properties_and_no_type_is_an_object() -> None:
    untyped = {k: v for k, v in _v("b").items() if k != "type"}
    assert [v.kind for v in _tagged([_v("a"), untyped]).variants] == ["tagged", "tagged"]


def test_a_tag_that_fails_gives_way_to_the_next_by_name() -> None:
    members = [
        {"type": "object", "properties": {"a": {"const": "1"}, "b": {"const": "x"}}, "required": ["a", "b"]},
        {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"const": "y"}}, "required": ["b"]},
    ]
    assert _tagged(members).tag == "b"


def test_the_origins_carry_their_overlays() -> None:
    mark = {"x-acpgen-overlay": "rfd/u"}
    union = _tagged([{**_v("a"), "x-acpgen-overlay": ["rfd/a", "rfd/b"]}, _v("b")], **mark)
    assert union.origin == ir.Origin("schema.json", "/$defs/U", ("rfd/u",))
    assert [v.origin.overlays for v in union.variants] == [("rfd/a", "rfd/b"), ()]
    untagged = _built([{"type": "string"}, {"type": "integer"}], **mark)
    assert untagged.origin == ir.Origin("schema.json", "/$defs/U", ("rfd/u",))


INLINE = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def test_inline_objects_are_named_after_what_holds_them() -> None:
    own = {"anyOf": [{"title": "P", "properties": {"p": INLINE}, "required": ["p"]}, {"title": "Q", "properties": {"q": {"type": "string"}}, "required": ["q"]}]}
    union = _tagged(
        [{**_v("a"), "properties": {**_v("a")["properties"], "o": INLINE}}, {**_v("b"), **own}],
        properties={"s": INLINE},
        anyOf=[{"title": "One", "properties": {"t": INLINE}, "required": ["t"]}, {"title": "Two", "properties": {"u": {"type": "string"}}, "required": ["u"]}],
    )
    types = {f.wire_name: f.type for f in union.shared_fields}
    types |= {f.wire_name: f.type for v in union.variants for f in v.fields}
    types |= {f.wire_name: f.type for v in union.variants for m in v.mixins for f in m.fields}
    assert {k: t for k, t in types.items() if isinstance(t, ir.Ref)} == {
        "s": ir.Ref("U.s"),
        "o": ir.Ref("U#a.o"),
        "p": ir.Ref("U#b.P.p"),
        "t": ir.Ref("U.One.t"),
    }
