"""``$ref`` cycles that no object, list or map breaks (acpgen/normalise/cycles.py): a
cycle of aliases, nullable wrappers and untagged-union members is refused (ACPG205),
once, at its alphabetically first def; recursion through an object field, a list item
or a map value is fine."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from acpgen import api, ir
from acpgen.errors import AcpgenError, Diagnostic
from acpgen.normalise.cycles import unbroken_cycles


def origin(key: str) -> ir.Origin:
    return ir.Origin("schema.json", f"/$defs/{key}")


def alias(key: str, t: ir.TypeExpr) -> ir.AliasDef:
    return ir.AliasDef(key, origin(key), t)


def union(key: str, *members: ir.TypeExpr) -> ir.UnionDef:
    return ir.UnionDef(key, origin(key), tuple(ir.UnionMember(m, origin(key)) for m in members))


def obj(key: str, t: ir.TypeExpr) -> ir.ObjectDef:
    return ir.ObjectDef(key, origin(key), (ir.Field("x", t, True, origin(key)),))


def ref(key: str) -> ir.Ref:
    return ir.Ref(key)


def diagnostic(code: str, message: str, pointer: str) -> Diagnostic:
    return Diagnostic(code, message, "schema.json", pointer)


def cycles(*defs: ir.Def) -> list[tuple[str, str, str]]:
    return [(d.code, d.message, d.pointer) for d in unbroken_cycles(list(defs), diagnostic)]


def refused(*steps: str) -> tuple[str, str, str]:
    text = " -> ".join(steps)
    return ("ACPG205", f"$ref cycle {text} passes through no object, list or map", f"/$defs/{steps[0]}")


def test_an_alias_of_a_nullable_alias_of_itself_is_refused() -> None:
    # A = B, B = A | null
    assert cycles(alias("A", ref("B")), alias("B", ir.Nullable(ref("A")))) == [refused("A", "B", "A")]


def test_a_def_that_is_itself_is_refused() -> None:
    assert cycles(alias("A", ref("A"))) == [refused("A", "A")]


@pytest.mark.parametrize(
    "t",
    [
        ir.AnyOf((ir.Prim("string"), ref("A"))),
        ir.Nullable(ir.AnyOf((ir.NullT(), ir.Nullable(ref("A"))))),
    ],
    ids=["union-member", "nested"],
)
def test_a_member_of_an_inline_union_is_a_step(t: ir.TypeExpr) -> None:
    assert cycles(alias("A", t)) == [refused("A", "A")]


def test_a_member_of_a_union_def_is_a_step() -> None:
    defs = (union("U", ir.Prim("string"), ir.Nullable(ref("V"))), alias("V", ref("U")))
    assert cycles(*defs) == [refused("U", "V", "U")]


@pytest.mark.parametrize(
    "defs",
    [
        (alias("A", ir.Array(ref("A"))),),
        (alias("A", ir.Map(ir.Nullable(ref("A")))),),
        (alias("A", ir.Tuple((ref("A"),))),),
        (alias("A", ref("O")), obj("O", ref("A"))),
        (union("U", ref("O")), obj("O", ir.Nullable(ref("U")))),
        (alias("A", ref("E")), ir.EnumDef("E", origin("E"), "string", (ir.EnumValue("e"),))),
    ],
    ids=["list", "map", "tuple", "object", "union-object", "enum"],
)
def test_a_container_breaks_the_cycle(defs: tuple[ir.Def, ...]) -> None:
    assert cycles(*defs) == []


def test_a_ref_the_file_does_not_hold_is_no_step() -> None:
    assert cycles(alias("A", ref("Missing")), union("U", ref("Gone"), ref("A"))) == []


def test_a_cycle_is_told_from_its_alphabetically_first_def() -> None:
    # reached from A, which is not on it, the cycle is entered at C
    defs = (alias("A", ref("C")), alias("C", ref("B")), alias("B", ref("D")), alias("D", ref("C")))
    assert cycles(*defs) == [refused("B", "D", "C", "B")]


def test_each_cycle_is_told_once_in_the_order_found() -> None:
    # A -> B -> A and A -> C -> A share A; D -> C -> A -> ... reaches both again
    defs = (
        alias("D", ref("C")),
        alias("C", ref("A")),
        alias("B", ref("A")),
        alias("A", ir.AnyOf((ref("C"), ref("B")))),
    )
    assert cycles(*defs) == [refused("A", "B", "A"), refused("A", "C", "A")]


def test_two_paths_to_one_def_are_no_cycle() -> None:
    # A -> B -> D and A -> C -> D: D is reached twice, on no cycle
    defs = (
        alias("A", ir.AnyOf((ref("B"), ref("C")))),
        alias("B", ref("D")),
        alias("C", ref("D")),
        alias("D", ir.Prim("string")),
    )
    assert cycles(*defs) == []


def test_a_def_reached_many_ways_is_walked_once() -> None:
    # 19 diamonds in a row: 2**19 paths from the first def to the last, each walked
    # again if a def already walked were not kept
    defs: list[ir.Def] = [alias("N19", ir.Prim("string"))]
    for i in range(19):
        defs.append(union(f"N{i:02}", ref(f"L{i:02}"), ref(f"R{i:02}")))
        defs.append(alias(f"L{i:02}", ref(f"N{i + 1:02}")))
        defs.append(alias(f"R{i:02}", ref(f"N{i + 1:02}")))
    start = time.monotonic()
    assert cycles(*defs) == []
    assert time.monotonic() - start < 1


def test_the_build_refuses_such_a_schema(tmp_path: Path) -> None:
    schema = tmp_path / "v1" / "schema.json"
    schema.parent.mkdir()
    defs = {
        "A": {"$ref": "#/$defs/B"},
        "B": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]},
        "Tree": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}},
    }
    schema.write_text(json.dumps({"$defs": defs}))
    with pytest.raises(AcpgenError) as exc:
        api.build_ir(schema)
    assert [(d.code, d.message, d.pointer) for d in exc.value.diagnostics] == [refused("A", "B", "A")]
