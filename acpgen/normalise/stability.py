"""IR pass: which items of an unstable schema are unstable.

Upstream has no machine-readable marker. An item is unstable when its
description starts with the ``**UNSTABLE**`` prefix, or, in a ``*.unstable.json``
file, when the stable file of the same tree does not have it. Items are named
``Def``, ``Def.field``, ``Def|variant`` and ``method:name``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Iterator

from acpgen import ir

PREFIX = "**UNSTABLE**"


def _marked(description: str | None) -> bool:
    return (description or "").lstrip().startswith(PREFIX)


def _owner(item: str) -> str:
    """The def an item belongs to: ``Def.field`` / ``Def|variant.field`` -> ``Def``."""
    return re.split(r"[.|]", item, maxsplit=1)[0]


def items(protocol: ir.Protocol) -> Iterator[tuple[str, str | None]]:
    """Every documentable item of a protocol with its description."""
    for d in protocol.defs:
        yield d.key, d.description
        fields: tuple[ir.Field, ...] = ()
        if isinstance(d, ir.ObjectDef):
            fields = d.fields + tuple(f for m in d.mixins for f in m.fields)
        elif isinstance(d, ir.TaggedUnionDef):
            fields = d.shared_fields
            for v in d.variants:
                yield f"{d.key}|{v.key}", v.description
                for f in v.fields:
                    yield f"{d.key}|{v.key}.{f.wire_name}", f.description
        elif isinstance(d, ir.EnumDef):
            for value in d.values:
                yield f"{d.key}|{value.value}", value.description
        for f in fields:
            yield f"{d.key}.{f.wire_name}", f.description
    for m in protocol.methods:
        yield f"method:{m.name}", m.description


def mark_unstable(protocol: ir.Protocol, stable: ir.Protocol | None) -> ir.Protocol:
    known = {name for name, _ in items(stable)} if stable is not None else None
    found: set[str] = set()
    for name, description in items(protocol):
        if _marked(description):
            found.add(name)
        elif protocol.stability == "unstable" and known is not None and name not in known:
            found.add(name)
    # an item inside an unstable def is unstable by inheritance: mark only the def
    kept = {n for n in found if n.startswith("method:") or _owner(n) == n or _owner(n) not in found}
    return replace(protocol, unstable=tuple(sorted(kept)))
