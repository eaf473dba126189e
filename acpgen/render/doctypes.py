"""Type texts and constraints of the documentation pages, from IR type expressions.

A type text is a sequence of :class:`Seg` (text, optional anchor) so that each style
spells links its own way (JSX ``<a>`` in MDX, ``[`X`](#x)`` in Markdown).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from acpgen import ir


def anchor_of(name: str) -> str:
    """The slug every Markdown renderer gives a heading that is just ``name``."""
    return re.sub(r"[^a-z0-9_\-$]", "", name.lower())


@dataclass(frozen=True)
class Seg:
    text: str
    anchor: str | None = None


TypeText = tuple[Seg, ...]


# --------------------------------------------------------------------------- type texts


class Types:
    def __init__(self, protocol: ir.Protocol) -> None:
        self.defs = protocol.def_map()

    def ref(self, key: str) -> TypeText:
        d = self.defs.get(key)
        if isinstance(d, ir.ObjectDef) and d.lifted_from:
            return (Seg("object"),)  # an inline object: its fields are shown where it is used
        return (Seg(key, anchor_of(key)),)

    def text(self, t: ir.TypeExpr) -> TypeText:
        return tuple(_merge(list(self._text(t))))

    def _text(self, t: ir.TypeExpr) -> TypeText:
        if isinstance(t, ir.Ref):
            return self.ref(t.key)
        if isinstance(t, ir.Prim):
            return (Seg(self.prim(t)),)
        if isinstance(t, ir.AnyT):
            return (Seg("any"),)
        if isinstance(t, ir.NullT):
            return (Seg("null"),)
        if isinstance(t, ir.Lit):
            kinds = {type(v).__name__ for v in t.values}
            if len(t.values) == 1 or kinds == {"str"}:
                return (Seg("string" if kinds == {"str"} else "integer" if kinds == {"int"} else "enum"),)
            return (Seg("enum"),)
        if isinstance(t, ir.Array):
            return self._wrap(t.items) + (Seg("[]"),)
        if isinstance(t, ir.Map):
            if isinstance(t.values, ir.AnyT):
                return (Seg("object"),)
            return (Seg("map<string, "),) + self.text(t.values) + (Seg(">"),)
        if isinstance(t, ir.Tuple):
            return (Seg("["),) + _join([self.text(i) for i in t.items], ", ") + (Seg("]"),)
        if isinstance(t, ir.Nullable):
            return self.text(t.inner) + (Seg(" | null"),)
        return _join([self.text(m) for m in t.members], " | ")

    def _wrap(self, t: ir.TypeExpr) -> TypeText:
        inner = self.text(t)
        if isinstance(t, (ir.Nullable, ir.AnyOf)):
            return (Seg("("),) + inner + (Seg(")"),)
        return inner

    @staticmethod
    def prim(t: ir.Prim) -> str:
        fmt = t.constraints.format
        if t.kind == "integer" and fmt:
            return fmt
        return t.kind


def _join(parts: list[TypeText], sep: str) -> TypeText:
    out: list[Seg] = []
    for i, part in enumerate(parts):
        if i:
            out.append(Seg(sep))
        out.extend(part)
    return tuple(_merge(out))


def _merge(segs: list[Seg]) -> list[Seg]:
    out: list[Seg] = []
    for s in segs:
        if out and out[-1].anchor is None and s.anchor is None:
            out[-1] = Seg(out[-1].text + s.text)
        else:
            out.append(s)
    return out


def plain(text: TypeText) -> str:
    return "".join(s.text for s in text)


# --------------------------------------------------------------------------- constraints


def innermost(t: ir.TypeExpr) -> ir.TypeExpr:
    while isinstance(t, ir.Nullable):
        t = t.inner
    return t


def constraints_of(t: ir.TypeExpr, default: tuple[bool, object] = (False, None)) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    if default[0]:
        out.append(("Default", json.dumps(default[1], separators=(",", ":"), ensure_ascii=False)))
    inner = innermost(t)
    c = inner.constraints if isinstance(inner, (ir.Prim, ir.Array)) else ir.NO_CONSTRAINTS
    for key, value in (
        ("Minimum", c.minimum),
        ("Exclusive minimum", c.exclusive_minimum),
        ("Maximum", c.maximum),
        ("Exclusive maximum", c.exclusive_maximum),
        ("Multiple of", c.multiple_of),
        ("Min length", c.min_length),
        ("Max length", c.max_length),
        ("Min items", c.min_items),
        ("Max items", c.max_items),
    ):
        if value is not None:
            out.append((key, json.dumps(value)))
    if c.pattern is not None:
        out.append(("Pattern", json.dumps(c.pattern)))
    if isinstance(inner, ir.Prim) and inner.kind == "string":
        if c.format:
            out.append(("Format", c.format))
        if c.content_encoding:
            out.append(("Content encoding", c.content_encoding))
    return tuple(out)
