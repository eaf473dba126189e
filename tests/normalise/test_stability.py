"""Which items of a schema are unstable (acpgen/normalise/stability.py): a description
that starts with ``**UNSTABLE**``, or, in an unstable file, an item the stable file of
the same tree does not have. An item inside an unstable def is unstable through it: only
the def is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acpgen import api, ir
from acpgen.normalise.stability import items, mark_unstable

ORIGIN = ir.Origin("schema.json", "/$defs/X")
MARK = "**UNSTABLE** not settled yet"


def field(name: str, description: str | None = None) -> ir.Field:
    return ir.Field(name, ir.Prim("string"), True, ORIGIN, description=description)


def mixin(*fields: ir.Field) -> ir.Mixin:
    return ir.Mixin(None, None, None, fields, ORIGIN)


def protocol(*defs: ir.Def, methods: tuple[ir.Method, ...] = (), unstable: bool = False) -> ir.Protocol:
    return ir.Protocol("schema.json", "0" * 64, "v1", "unstable" if unstable else "stable", defs, methods)


def method(name: str, description: str | None = None) -> ir.Method:
    return ir.Method(name, "agent", "request", ORIGIN, description=description)


OBJECT = ir.ObjectDef("Obj", ORIGIN, (field("a", "the a"),), description="an object", mixins=(mixin(field("m")),))
UNION = ir.TaggedUnionDef(
    "Union",
    ORIGIN,
    "type",
    (
        ir.Variant("Union#one", "tagged", ORIGIN, "one", fields=(field("x", "the x"),), description="first"),
        ir.Variant("Union#two", "tagged", ORIGIN, "two"),
    ),
    shared_fields=(field("type"),),
)
ENUM = ir.EnumDef("Mode", ORIGIN, "string", (ir.EnumValue("fast", "quick"), ir.EnumValue("slow")))
ALIAS = ir.AliasDef("Id", ORIGIN, ir.Prim("string"), description="an id")


def test_every_item_is_named_with_its_description() -> None:
    assert list(items(protocol(OBJECT, UNION, ENUM, ALIAS, methods=(method("session/new", "makes one"),)))) == [
        ("Obj", "an object"),
        ("Obj.a", "the a"),
        ("Obj.m", None),
        ("Union", None),
        ("Union|Union#one", "first"),
        ("Union|Union#one.x", "the x"),
        ("Union|Union#two", None),
        ("Union.type", None),
        ("Mode", None),
        ("Mode|fast", "quick"),
        ("Mode|slow", None),
        ("Id", "an id"),
        ("method:session/new", "makes one"),
    ]


@pytest.mark.parametrize(
    ("description", "unstable"),
    [(MARK, True), ("  \n" + MARK, True), ("**UNSTABLE**", True), ("Not **UNSTABLE**", False),
     ("**unstable** lower case", False), ("", False), (None, False)],
)
def test_a_description_marks_an_item(description: str | None, unstable: bool) -> None:
    d = ir.AliasDef("Id", ORIGIN, ir.Prim("string"), description=description)
    assert mark_unstable(protocol(d), None).unstable == (("Id",) if unstable else ())


def test_marked_items_of_each_kind_are_named_in_order() -> None:
    obj = ir.ObjectDef("Obj", ORIGIN, (field("b", MARK), field("a", MARK), field("c")))
    union = ir.TaggedUnionDef(
        "Union",
        ORIGIN,
        "type",
        (
            ir.Variant("Union#one", "tagged", ORIGIN, "one", fields=(field("x", MARK),)),
            ir.Variant("Union#two", "tagged", ORIGIN, "two", description=MARK),
        ),
    )
    enum = ir.EnumDef("Mode", ORIGIN, "string", (ir.EnumValue("fast", MARK), ir.EnumValue("slow")))
    marked = mark_unstable(protocol(obj, union, enum, methods=(method("b/x", MARK), method("a/x"))), None)
    assert marked.unstable == (
        "Mode|fast",
        "Obj.a",
        "Obj.b",
        "Union|Union#one.x",
        "Union|Union#two",
        "method:b/x",
    )


def test_an_item_of_an_unstable_def_is_unstable_through_it() -> None:
    obj = ir.ObjectDef("Obj", ORIGIN, (field("a", MARK),), description=MARK)
    union = ir.TaggedUnionDef(
        "Union",
        ORIGIN,
        "type",
        (ir.Variant("Union#one", "tagged", ORIGIN, "one", fields=(field("x", MARK),), description=MARK),),
        description=MARK,
    )
    # a method is named on its own even when a def of the same name is unstable
    methods = (method("Obj", MARK),)
    assert mark_unstable(protocol(obj, union, methods=methods), None).unstable == ("Obj", "Union", "method:Obj")


def test_a_method_is_never_inside_another() -> None:
    # JSON-RPC method names may hold a dot: "x.y" is no member of "x"
    methods = (method("x", MARK), method("x.y", MARK), method("x|z", MARK))
    assert mark_unstable(protocol(methods=methods), None).unstable == ("method:x", "method:x.y", "method:x|z")


def test_an_item_of_an_unstable_variant_is_named_with_it() -> None:
    # only a def carries its items: a field of a marked variant is named too
    union = ir.TaggedUnionDef(
        "Union",
        ORIGIN,
        "type",
        (ir.Variant("Union#one", "tagged", ORIGIN, "one", fields=(field("x", MARK),), description=MARK),),
    )
    assert mark_unstable(protocol(union), None).unstable == ("Union|Union#one", "Union|Union#one.x")


def test_in_an_unstable_file_what_the_stable_file_lacks_is_unstable() -> None:
    stable = protocol(ir.ObjectDef("Obj", ORIGIN, (field("a"),)), ENUM, methods=(method("session/new"),))
    unstable = protocol(
        ir.ObjectDef("Obj", ORIGIN, (field("a"), field("b"))),
        ir.EnumDef("Mode", ORIGIN, "string", (ir.EnumValue("fast", "quick"), ir.EnumValue("slow"), ir.EnumValue("new"))),
        ALIAS,
        ir.ObjectDef("New", ORIGIN, (field("n"),)),
        methods=(method("session/new"), method("session/fork")),
        unstable=True,
    )
    assert mark_unstable(unstable, stable).unstable == ("Id", "Mode|new", "New", "Obj.b", "method:session/fork")
    # without its stable file, only the marked items
    assert mark_unstable(unstable, None).unstable == ()


def test_a_stable_file_is_never_compared() -> None:
    smaller = protocol(ir.ObjectDef("Obj", ORIGIN, (field("a"),)))
    larger = protocol(ir.ObjectDef("Obj", ORIGIN, (field("a"), field("b", MARK), field("c"))), ALIAS)
    assert mark_unstable(larger, smaller).unstable == ("Obj.b",)


def test_the_rest_of_the_protocol_is_kept() -> None:
    p = protocol(ALIAS, methods=(method("session/new"),), unstable=True)
    assert mark_unstable(p, p) == p


def test_the_build_marks_an_unstable_file_against_its_stable_one(tmp_path: Path) -> None:
    tree = tmp_path / "v1"
    tree.mkdir()
    stable = {"$defs": {"Id": {"type": "string"}, "Obj": {"type": "object", "properties": {"a": {"type": "string"}}}}}
    unstable = json.loads(json.dumps(stable))
    unstable["$defs"]["Obj"]["properties"]["b"] = {"type": "string"}
    unstable["$defs"]["Later"] = {"type": "string", "description": MARK}
    stable["$defs"]["Soon"] = {"type": "integer", "description": MARK}
    (tree / "schema.json").write_text(json.dumps(stable))
    (tree / "schema.unstable.json").write_text(json.dumps(unstable))
    built = {p.stability: p.unstable for p in api.build_protocols(tmp_path)}
    assert built == {"stable": ("Soon",), "unstable": ("Later", "Obj.b")}
