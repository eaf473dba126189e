"""The elements of a schema file that carry history marks, by key, read from its IR.

Keys: ``Def`` (a def), ``Def.member`` (a member of an object or the shared member of a
union), ``Def|tag`` (a variant of a tagged union, by tag value), ``Def|value`` (an enum
value), ``method:name`` (a method). The reference pages look marks up by the same keys.
"""

from __future__ import annotations

from acpgen import ir


def def_key(name: str) -> str:
    return name


def member_key(owner: str, wire_name: str) -> str:
    return f"{owner}.{wire_name}"


def variant_key(owner: str, tag: object) -> str:
    return f"{owner}|{tag}"


def method_key(name: str) -> str:
    return f"method:{name}"


def elements(protocol: ir.Protocol) -> frozenset[str]:
    """Every element key of one schema file."""
    out: set[str] = set()
    for d in protocol.defs:
        out.add(def_key(d.key))
        if isinstance(d, ir.ObjectDef):
            out.update(member_key(d.key, f.wire_name) for f in d.fields)
        elif isinstance(d, ir.TaggedUnionDef):
            out.update(member_key(d.key, f.wire_name) for f in d.shared_fields)
            out.update(variant_key(d.key, v.tag_value) for v in d.variants if v.kind == "tagged")
        elif isinstance(d, ir.EnumDef):
            out.update(variant_key(d.key, v.value) for v in d.values)
    out.update(method_key(m.name) for m in protocol.methods)
    return frozenset(out)
