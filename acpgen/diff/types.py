"""Normalised types and how a new one relates to an old one.

Before two releases are compared, every type expression becomes a canonical value in
which equivalent spellings are equal: a ``$ref`` to a plain alias is the aliased type,
a one-member union is its member, ``T | null`` and ``anyOf [T, null]`` are one set,
``enum`` and ``oneOf`` of consts are one set of values, and annotations (titles,
descriptions, ``discriminator``, ``x-docs-*``) are gone. References to other defs stay
references, named in the *new* release's terms (a renamed def is the same def).

:func:`relate` then says what the new type does to the set of values: ``same``,
``wider`` (accepts more), ``narrower`` (accepts fewer) or ``changed`` (both, or cannot
tell: a false "breaks both" is better than a missed break).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import Any, Literal, Mapping

from acpgen import ir

#: nested tuples: ("prim", kind, constraints), ("ref", key), ("union", frozenset), ...
Canon = tuple[Any, ...]
Relation = Literal["same", "wider", "narrower", "changed"]

LOWER = ("minimum", "exclusive_minimum", "min_length", "min_items")
UPPER = ("maximum", "exclusive_maximum", "max_length", "max_items")
EXACT = ("pattern", "format", "content_encoding", "multiple_of")
NULL: Canon = ("null",)


#: spellings of one constraint: OpenAPI's ``format: byte`` is 2020-12's ``contentEncoding: base64``
_SAME = {("format", "byte"): ("content_encoding", "base64")}


def _constraints(c: ir.Constraints) -> tuple[tuple[str, object], ...]:
    found = (_SAME.get((f.name, getattr(c, f.name)), (f.name, getattr(c, f.name))) for f in fields(c))
    return tuple(sorted((k, v) for k, v in found if v is not None))


def _lit(value: object) -> str:
    return json.dumps(value, sort_keys=True)


@dataclass
class Canoniser:
    """Canonical types of one release; ``rename`` maps its def keys to the new release's."""

    defs: Mapping[str, ir.Def]
    rename: Mapping[str, str]
    #: False: a reference to an alias stays a reference (the alias's own changes are
    #: reported on the alias, not again on every member that uses it)
    expand: bool = True

    def key(self, key: str) -> str:
        return self.rename.get(key, key)

    def canon(self, t: ir.TypeExpr, seen: frozenset[str] = frozenset()) -> Canon:
        if isinstance(t, ir.Prim):
            return ("prim", t.kind, _constraints(t.constraints))
        if isinstance(t, ir.AnyT):
            return ("any",)
        if isinstance(t, ir.NullT):
            return NULL
        if isinstance(t, ir.Lit):
            return _union([("lit", _lit(v)) if v is not None else NULL for v in t.values])
        if isinstance(t, ir.Array):
            return ("array", self.canon(t.items, seen), _constraints(t.constraints))
        if isinstance(t, ir.Map):
            return ("map", self.canon(t.values, seen))
        if isinstance(t, ir.Tuple):
            return ("tuple", tuple(self.canon(i, seen) for i in t.items))
        if isinstance(t, ir.Nullable):
            return _union([self.canon(t.inner, seen), NULL])
        if isinstance(t, ir.AnyOf):
            return _union([self.canon(m, seen) for m in t.members])
        assert isinstance(t, ir.Ref)
        d = self.defs.get(t.key)
        if t.key not in seen and self.expand:
            if isinstance(d, ir.AliasDef):
                return self.canon(d.type, seen | {t.key})
            if isinstance(d, ir.UnionDef) and len(d.members) == 1:
                return self.canon(d.members[0].type, seen | {t.key})
            if isinstance(d, ir.EnumDef):
                # an enum is its values; an open one is any value of its base type
                if d.open:
                    return ("prim", d.base, (("format", d.format),) if d.format else ())
                return _union([("lit", _lit(v.value)) for v in d.values])
        return ("ref", self.key(t.key))


def _union(members: list[Canon]) -> Canon:
    flat: set[Canon] = set()
    for m in members:
        flat.update(m[1] if m[0] == "union" else (m,))
    if len(flat) == 1:
        return next(iter(flat))
    return ("union", frozenset(flat))


def members(c: Canon) -> frozenset[Canon]:
    return c[1] if c[0] == "union" else frozenset((c,))


def combine(*relations: Relation) -> Relation:
    found = {r for r in relations if r != "same"}
    if not found:
        return "same"
    if len(found) == 1:
        return found.pop()
    return "changed"


def constraint_changes(old: Canon, new: Canon) -> list[tuple[str, object, object, Relation]]:
    """Each constraint that differs: ``(name, old, new, relation)``."""
    o: dict[str, Any] = dict(old)
    n: dict[str, Any] = dict(new)
    out: list[tuple[str, object, object, Relation]] = []
    for name in sorted(set(o) | set(n)):
        a, b = o.get(name), n.get(name)
        if a == b:
            continue
        rel: Relation
        if a is None:
            rel = "narrower"
        elif b is None:
            rel = "wider"
        elif name in LOWER:
            rel = "narrower" if b > a else "wider"
        elif name in UPPER:
            rel = "wider" if b > a else "narrower"
        else:
            rel = "changed"
        out.append((name, a, b, rel))
    return out


def relate(old: Canon, new: Canon) -> Relation:
    if old == new:
        return "same"
    if new == ("any",):
        return "wider"
    if old == ("any",):
        return "narrower"
    om, nm = members(old), members(new)
    if len(om) > 1 or len(nm) > 1:
        old_kept = all(any(relate(a, b) in ("same", "wider") for b in nm) for a in om)
        new_known = all(any(relate(a, b) in ("same", "narrower") for a in om) for b in nm)
        if old_kept and new_known:
            return "same"
        return "wider" if old_kept else "narrower" if new_known else "changed"
    if old[0] == "prim" and new[0] == "prim":
        if old[1] == new[1]:
            return combine(*(r for *_, r in constraint_changes(old[2], new[2])))
        if (old[1], new[1]) == ("integer", "number") and not new[2]:
            return "wider"
        if (old[1], new[1]) == ("number", "integer") and not old[2]:
            return "narrower"
        return "changed"
    if old[0] == "lit" and new[0] == "prim":
        return "wider" if _lit_kind(old[1]) in _kinds(new) and not new[2] else "changed"
    if old[0] == "prim" and new[0] == "lit":
        return "narrower" if _lit_kind(new[1]) in _kinds(old) and not old[2] else "changed"
    if old[0] == new[0] == "array":
        return combine(relate(old[1], new[1]), *(r for *_, r in constraint_changes(old[2], new[2])))
    if old[0] == new[0] == "map":
        return relate(old[1], new[1])
    if old[0] == new[0] == "tuple" and len(old[1]) == len(new[1]):
        return combine(*(relate(a, b) for a, b in zip(old[1], new[1])))
    return "changed"


def _kinds(prim: Canon) -> set[str]:
    return {"integer", "number"} if prim[1] == "number" else {prim[1]}


def _lit_kind(text: str) -> str:
    value = json.loads(text)
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string" if isinstance(value, str) else "other"


def spell(c: Canon) -> str:
    """A short, stable text for a canonical type (messages and ``old``/``new`` values)."""
    kind = c[0]
    if kind == "prim":
        extra = ", ".join(f"{k}={v}" for k, v in c[2])
        return f"{c[1]}({extra})" if extra else c[1]
    if kind == "any":
        return "any"
    if kind == "null":
        return "null"
    if kind in ("lit", "ref"):
        return str(c[1])
    if kind == "array":
        extra = ", ".join(f"{k}={v}" for k, v in c[2])
        return f"array<{spell(c[1])}>" + (f"({extra})" if extra else "")
    if kind == "map":
        return f"map<{spell(c[1])}>"
    if kind == "tuple":
        return "[" + ", ".join(spell(i) for i in c[1]) + "]"
    parts = sorted(spell(m) for m in c[1] if m != NULL)
    if NULL in c[1]:
        parts.append("null")
    return " | ".join(parts)


def classify(old: Canon, new: Canon, relation: Relation) -> str:
    """The rule of a type change: nullability alone, constraints alone, or the type."""
    if members(old) - {NULL} == members(new) - {NULL} and (NULL in members(old)) != (NULL in members(new)):
        return "became-nullable" if NULL in members(new) else "became-non-nullable"
    inner_old, inner_new = _strip_null(old), _strip_null(new)
    same_shape = (
        inner_old[0] == inner_new[0] == "prim" and inner_old[1] == inner_new[1]
    ) or (inner_old[0] == inner_new[0] == "array" and inner_old[1] == inner_new[1])
    if same_shape and relation != "changed":
        return "constraint-loosened" if relation == "wider" else "constraint-tightened"
    return {"wider": "type-widened", "narrower": "type-narrowed"}.get(relation, "type-changed")


def _strip_null(c: Canon) -> Canon:
    rest = members(c) - {NULL}
    return _union(list(rest)) if rest else c
