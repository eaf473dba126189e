"""Structural diff of two parsed pages.

``diff_pages(ours, theirs)`` lists every record of ``theirs`` (the reference)
that ``ours`` lacks or shows differently: types, their kind, fields (type text,
required flag, default), variants and their fields, enum values, methods.
Records that only ``ours`` has are reported as ``extra``. ``text=True`` also
compares descriptions after normalising whitespace and bullets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from acpgen.pages.model import Page, PageField, PageType, PageVariant


@dataclass(frozen=True, order=True)
class Difference:
    where: str  # "Type", "Type.field", "Type|variant", "Type|variant.field", "method m"
    what: str  # missing, extra, kind, type, required, default, value, description, ...
    ours: str = ""
    theirs: str = ""

    def render(self) -> str:
        return f"{self.where}: {self.what} (ours {self.ours!r}, theirs {self.theirs!r})"


def normalise(text: str) -> str:
    text = re.sub(r"^\s*[-*]\s+", "- ", text, flags=re.M)
    return " ".join(text.split())


def _fields(where: str, ours: tuple[PageField, ...], theirs: tuple[PageField, ...], text: bool) -> list[Difference]:
    out: list[Difference] = []
    mine = {f.name: f for f in ours}
    for ref in theirs:
        got = mine.pop(ref.name, None)
        at = f"{where}.{ref.name}"
        if got is None:
            out.append(Difference(at, "missing", "", ref.type))
            continue
        if got.type != ref.type:
            out.append(Difference(at, "type", got.type, ref.type))
        if got.required != ref.required:
            out.append(Difference(at, "required", str(got.required), str(ref.required)))
        if got.default != ref.default:
            out.append(Difference(at, "default", str(got.default), str(ref.default)))
        if dict(got.constraints) != dict(ref.constraints):
            out.append(Difference(at, "constraints", str(dict(got.constraints)), str(dict(ref.constraints))))
        if text and normalise(got.description) != normalise(ref.description):
            out.append(Difference(at, "description", got.description, ref.description))
    out.extend(Difference(f"{where}.{name}", "extra", f.type, "") for name, f in mine.items())
    return out


def _type(ours: PageType, theirs: PageType, text: bool) -> list[Difference]:
    out: list[Difference] = []
    name = theirs.name
    if ours.kind != theirs.kind:
        out.append(Difference(name, "kind", ours.kind, theirs.kind))
    if ours.simple != theirs.simple:
        out.append(Difference(name, "simple-type", ours.simple, theirs.simple))
    if dict(ours.constraints) != dict(theirs.constraints):
        out.append(Difference(name, "constraints", str(dict(ours.constraints)), str(dict(theirs.constraints))))
    if text and normalise(ours.description) != normalise(theirs.description):
        out.append(Difference(name, "description", ours.description, theirs.description))
    out += _fields(name, ours.fields, theirs.fields, text)
    out += _fields(name + "(shared)", ours.shared, theirs.shared, text)
    for value in theirs.values:
        if value not in ours.values:
            out.append(Difference(name, "value-missing", "", value))
    out.extend(Difference(name, "value-extra", v, "") for v in ours.values if v not in theirs.values)
    mine = {key: v for key, v in _numbered(ours.variants)}
    for key, ref in _numbered(theirs.variants):
        got = mine.pop(key, None)
        at = f"{name}|{key}"
        if got is None:
            out.append(Difference(at, "missing", "", ref.label))
            continue
        if ref.attr is not None and got.attr != ref.attr:
            out.append(Difference(at, "variant-type", str(got.attr), ref.attr))
        if text and normalise(got.description) != normalise(ref.description):
            out.append(Difference(at, "description", got.description, ref.description))
        out += _fields(at, got.fields, ref.fields, text)
    out.extend(Difference(f"{name}|{key}", "extra", v.label, "") for key, v in mine.items())
    return out


def _numbered(variants: tuple[PageVariant, ...]) -> list[tuple[str, PageVariant]]:
    """Variants keyed by label; a label that repeats (two untitled ``array`` members)
    gets ``#2``, ``#3``... on its later occurrences."""
    seen: dict[str, int] = {}
    out = []
    for v in variants:
        seen[v.label] = seen.get(v.label, 0) + 1
        out.append((v.label if seen[v.label] == 1 else f"{v.label}#{seen[v.label]}", v))
    return out


def diff_pages(ours: Page, theirs: Page, *, text: bool = False) -> list[Difference]:
    out: list[Difference] = []
    mine_methods = {(m.section, m.name): m for m in ours.methods}
    for method in theirs.methods:
        got = mine_methods.pop((method.section, method.name), None)
        where = f"method {method.section}:{method.name}"
        if got is None:
            out.append(Difference(where, "missing"))
            continue
        if got.types != method.types:
            out.append(Difference(where, "types", ", ".join(got.types), ", ".join(method.types)))
        if text and normalise(got.description) != normalise(method.description):
            out.append(Difference(where, "description", got.description, method.description))
    out.extend(Difference(f"method {s}:{n}", "extra") for s, n in mine_methods)
    mine_types: dict[tuple[str, str], PageType] = {(t.section, t.name): t for t in ours.types}
    for ref in theirs.types:
        key = (ref.section, ref.name)
        found = mine_types.pop(key, None)
        if found is None:
            out.append(Difference(ref.name, "missing", "", ref.kind))
            continue
        out += _type(found, ref, text)
    out.extend(Difference(name, "extra", t.kind, "") for (_, name), t in mine_types.items())
    return sorted(out)
