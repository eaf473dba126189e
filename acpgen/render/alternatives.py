"""Sibling unions of an object (``ir.Mixin`` branches), as the three Python styles need
them: the members a class declares for them, and the runtime table that checks them.

A class declares each member once: its own members keep their own type (a branch only
narrows it), a member only branches declare is optional and has the union of the types
they give it. Which branch holds is decided at run time by ``_Group``/``_Branch``
(templates/python/_alternatives.py.jinja), from the table written here.
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping

from acpgen import ir
from acpgen.render.pytypes import py_literal, py_tuple


def branch_members(defs: Mapping[str, ir.Def], m: ir.Mixin) -> list[ir.Field]:
    """Every member a branch speaks of: its base's, its own, its nested branches'."""
    base = defs.get(m.base) if m.base else None
    out = list(base.fields) if isinstance(base, ir.ObjectDef) else []
    if isinstance(base, ir.ObjectDef):
        out += [f for inner in base.mixins for f in branch_members(defs, inner)]
    out += m.fields
    out += [f for inner in m.mixins for f in branch_members(defs, inner)]
    return out


def merged_members(defs: Mapping[str, ir.Def], own: Iterable[str], mixins: tuple[ir.Mixin, ...]) -> list[ir.Field]:
    """The members a class declares for its branches, each once, none of ``own``
    (the wire names it declares itself); every one optional. A member that branches
    type differently has the union of their types."""
    declared = set(own)
    found: dict[str, list[ir.Field]] = {}
    for m in mixins:
        for f in branch_members(defs, m):
            if f.wire_name not in declared:
                found.setdefault(f.wire_name, []).append(f)
    out: list[ir.Field] = []
    for fs in found.values():
        types = list(dict.fromkeys(f.type for f in fs))
        merged = types[0] if len(types) == 1 else ir.AnyOf(tuple(types))
        first = fs[0]
        # the schema's leniency holds where every branch declares the member alike
        alike = len(set((f.type, f.default_on_error, f.skip_invalid_items, f.default_on_null) for f in fs)) == 1
        out.append(
            ir.Field(
                first.wire_name,
                merged,
                False,
                first.origin,
                first.description,
                default_on_error=alike and first.default_on_error,
                skip_invalid_items=alike and first.skip_invalid_items,
                default_on_null=alike and first.default_on_null,
            )
        )
    return out


def alternatives_source(
    mixins: tuple[ir.Mixin, ...], member: Callable[[ir.TypeExpr], str], base: Callable[[str], str]
) -> str | None:
    """The ``_Group`` table of ``mixins`` as a Python expression, or ``None`` without any;
    ``member`` spells the check of a member's type, ``base`` the check of a def."""
    if not mixins:
        return None
    return py_tuple(
        f"_Group({py_literal(keyword)}, {py_tuple(_branch(b, member, base) for b in branches)})"
        for keyword, branches in ir.mixin_groups(mixins)
    )


def _branch(m: ir.Mixin, member: Callable[[ir.TypeExpr], str], base: Callable[[str], str]) -> str:
    args = [py_literal(m.label)]
    required = tuple(f.wire_name for f in m.fields if f.required)
    if required:
        args.append(f"required={py_literal(required)}")
    if m.fields:
        args.append("members=" + py_tuple(f"({py_literal(f.wire_name)}, {member(f.type)})" for f in m.fields))
    if m.base:
        args.append(f"base={base(m.base)}")
    if m.excludes:
        args.append(f"excludes={py_literal(m.excludes)}")
    if m.absent:
        args.append(f"absent={py_literal(m.absent)}")
    nested = alternatives_source(m.mixins, member, base)
    if nested:
        args.append(f"groups={nested}")
    return f"_Branch({', '.join(args)})"
