"""ACPG205: ``$ref`` cycles that no object, list or map breaks.

``A = B``, ``B = A | null`` describes no finite type a binding can declare: every
step of the cycle is an alias, a nullable wrapper or an untagged-union member. A
cycle through an object field, a list item or a map value is ordinary recursion
(``ContentBlock`` inside ``ContentBlock``) and is fine.
"""

from __future__ import annotations

from typing import Callable, Iterator

from acpgen import ir
from acpgen.errors import Diagnostic


def _direct_refs(t: ir.TypeExpr) -> Iterator[str]:
    """Refs a value of ``t`` *is*, not refs it *contains* inside a container."""
    if isinstance(t, ir.Ref):
        yield t.key
    elif isinstance(t, ir.Nullable):
        yield from _direct_refs(t.inner)
    elif isinstance(t, ir.AnyOf):
        for member in t.members:
            yield from _direct_refs(member)


def _edges(d: ir.Def) -> list[str]:
    if isinstance(d, ir.AliasDef):
        return sorted(set(_direct_refs(d.type)))
    if isinstance(d, ir.UnionDef):
        return sorted({k for m in d.members for k in _direct_refs(m.type)})
    return []


def unbroken_cycles(
    defs: list[ir.Def], diagnostic: Callable[[str, str, str], Diagnostic]
) -> list[Diagnostic]:
    """One diagnostic per cycle, at its alphabetically first def."""
    by_key = {d.key: d for d in defs}
    graph = {d.key: [k for k in _edges(d) if k in by_key] for d in defs}
    found: dict[tuple[str, ...], None] = {}
    done: set[str] = set()

    def visit(key: str, path: list[str]) -> None:
        if key in path:
            cycle = path[path.index(key):]
            start = cycle.index(min(cycle))
            found[tuple(cycle[start:] + cycle[:start])] = None
            return
        if key in done:
            return
        path.append(key)
        for nxt in graph[key]:
            visit(nxt, path)
        path.pop()
        done.add(key)

    for key in sorted(graph):
        visit(key, [])
    out = []
    for cycle in found:
        steps = " -> ".join((*cycle, cycle[0]))
        message = f"$ref cycle {steps} passes through no object, list or map"
        out.append(diagnostic("ACPG205", message, by_key[cycle[0]].origin.pointer))
    return out
