"""Def renames (acpgen/diff/renames.py) on small protocols built by hand: what the fixture
pairs of tests/fixtures/diff/cases.yaml cannot reach, because the diff pairs a method's
params def in one release with its params def in the other (``Base._linked``) before it
looks for renames by content."""

from __future__ import annotations

from acpgen import ir
from acpgen.diff.renames import def_renames

AT = ir.Origin("schema.json", "#")


def _protocol(defs: list[ir.Def], methods: list[ir.Method]) -> ir.Protocol:
    return ir.Protocol("schema.json", "", "v1", "stable", tuple(defs), tuple(methods))


def _params(key: str) -> ir.ObjectDef:
    return ir.ObjectDef(key, AT, (ir.Field("path", ir.Prim("string"), True, AT),))


def _note(name: str, params: str) -> ir.Method:
    return ir.Method(name, "agent", "notification", AT, params)


OLD = _protocol([_params("WatchParams")], [_note("fs/watch", "WatchParams")])
NEW = _protocol([_params("ObserveParams")], [_note("fs/observe", "ObserveParams")])


def test_a_method_s_params_def_pairs_through_the_method_s_rename() -> None:
    # the same content, carried by a method the caller says is renamed: one def, renamed
    assert def_renames(OLD, NEW, {"fs/watch": "fs/observe"}) == {"WatchParams": "ObserveParams"}


def test_a_method_s_params_def_pairs_only_with_the_method() -> None:
    # the same content, but the methods that carry the two defs are not one method
    assert def_renames(OLD, NEW, {}) == {}
    assert def_renames(OLD, NEW, {"fs/watch": "fs/unwatch"}) == {}


def test_a_params_def_pairs_with_the_params_of_the_same_method() -> None:
    # a method kept under its name: its params def, renamed with its content unchanged
    new = _protocol([_params("ObserveParams")], [_note("fs/watch", "ObserveParams")])
    assert def_renames(OLD, new, {}) == {"WatchParams": "ObserveParams"}
