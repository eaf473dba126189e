"""Sibling unions of an object (``ir.Mixin`` branches), as the three Python styles need
them: the members a class declares for them, and the runtime table that checks them.

A class declares each member once: its own members keep their own type (a branch only
narrows it), a member only branches declare is optional and has the union of the types
they give it. Which branch holds is decided at run time by ``_Group``/``_Branch``
(acpgen/runtime/_alternatives.py), from the table written here.
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping, NamedTuple, Union

from acpgen import ir
from acpgen.layout import INDENT, LINE_LENGTH
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


# --------------------------------------------------------------------------- the table
# A small expression tree, so that the table can be printed as black lays it out (the
# module layout leaves long statements it does not know to black, which costs a call
# each): an atom, a call ``(name, ((keyword or "", node), ...))`` or a tuple ``(items,)``.

Node = Union[str, "Call", "Tup"]


class Call(NamedTuple):
    name: str
    args: tuple[tuple[str, Node], ...]


class Tup(NamedTuple):
    items: tuple[Node, ...]


def flat(node: Node) -> str:
    if isinstance(node, str):
        return node
    if isinstance(node, Call):
        return node.name + "(" + ", ".join((k + "=" if k else "") + flat(v) for k, v in node.args) + ")"
    return py_tuple(flat(i) for i in node.items)


def black_lines(node: Node, indent: str = "", prefix: str = "", suffix: str = "") -> list[str]:
    """``prefix + node + suffix`` as black writes it: on one line if it fits; else a
    call's arguments (or a one-item tuple's item) on one indented line if they fit there;
    else one element per line with a trailing comma, each laid out the same way."""
    one = indent + prefix + flat(node) + suffix
    if len(one) <= LINE_LENGTH or isinstance(node, str):
        return [one]
    inner = indent + INDENT
    if isinstance(node, Call):
        opener, parts = node.name + "(", [(k + "=" if k else "", v) for k, v in node.args]
    else:
        opener, parts = "(", [("", v) for v in node.items]
    # a call's arguments may share one line; a tuple of several items is one per line
    body = ", ".join(k + flat(v) for k, v in parts) + ("," if isinstance(node, Tup) else "")
    if (isinstance(node, Call) or len(parts) == 1) and len(inner + body) <= LINE_LENGTH:
        return [indent + prefix + opener, inner + body, indent + ")" + suffix]
    lines = [indent + prefix + opener]
    for k, v in parts:
        lines += black_lines(v, inner, k, ",")
    return lines + [indent + ")" + suffix]


def alternatives_table(
    mixins: tuple[ir.Mixin, ...], member: Callable[[ir.TypeExpr], str], base: Callable[[str], str]
) -> Tup | None:
    """The ``_Group`` table of ``mixins``, or ``None`` without any; ``member`` spells the
    check of a member's type, ``base`` the check of a def."""
    if not mixins:
        return None
    return Tup(
        tuple(
            Call("_Group", (("", py_literal(keyword)), ("", Tup(tuple(_branch(b, member, base) for b in branches)))))
            for keyword, branches in ir.mixin_groups(mixins)
        )
    )


def alternatives_source(
    mixins: tuple[ir.Mixin, ...], member: Callable[[ir.TypeExpr], str], base: Callable[[str], str]
) -> str | None:
    """The table as a one-line Python expression (for the module layout to place)."""
    table = alternatives_table(mixins, member, base)
    return flat(table) if table is not None else None


def _branch(m: ir.Mixin, member: Callable[[ir.TypeExpr], str], base: Callable[[str], str]) -> Call:
    args: list[tuple[str, Node]] = [("", py_literal(m.label))]
    required = m.required or tuple(f.wire_name for f in m.fields if f.required)
    if required:
        args.append(("required", Tup(tuple(py_literal(r) for r in required))))
    if m.fields:
        args.append(("members", Tup(tuple(Tup((py_literal(f.wire_name), member(f.type))) for f in m.fields))))
    if m.base:
        args.append(("base", base(m.base)))
    if m.excludes:
        excludes = (Tup((py_literal(k), Tup(tuple(py_literal(x) for x in v)))) for k, v in m.excludes)
        args.append(("excludes", Tup(tuple(excludes))))
    if m.absent:
        args.append(("absent", Tup(tuple(py_literal(a) for a in m.absent))))
    nested = alternatives_table(m.mixins, member, base)
    if nested is not None:
        args.append(("groups", nested))
    return Call("_Branch", tuple(args))
