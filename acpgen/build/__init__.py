"""RawDocument -> ir.Protocol: one function per construct, all errors collected."""

from __future__ import annotations

import sys

from acpgen import ir
from acpgen.build.context import Context
from acpgen.build.defs import build_def
from acpgen.build.methods import build_methods
from acpgen.errors import AcpgenError
from acpgen.load import RawDocument

#: enough for any real schema; deeper inputs get ACPG208 instead of a crash
_RECURSION_LIMIT = 6000


def build_protocol(raw: RawDocument) -> ir.Protocol:
    ctx = Context(raw)
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, _RECURSION_LIMIT))
    defs: list[ir.Def] = []
    try:
        for name in sorted(ctx.defs):
            pointer = ctx.def_pointer(name)
            try:
                defs.append(build_def(ctx, name, ctx.defs[name], pointer))
            except AcpgenError as exc:
                ctx.problems.extend(exc)
            except RecursionError:
                ctx.problems.items.append(
                    ctx.source.diagnostic("ACPG208", "schema nesting is too deep", pointer)
                )
        methods = build_methods(ctx)
    finally:
        sys.setrecursionlimit(old_limit)
    ctx.problems.raise_if_any()
    defs.extend(ctx.lifted.values())
    meta = raw.meta
    title = raw.data.get("title")
    return ir.Protocol(
        source=raw.source.path,
        source_sha256=raw.source.sha256,
        tree=raw.tree,
        stability=raw.stability,
        defs=tuple(sorted(defs, key=lambda d: d.key)),
        methods=methods,
        meta_source=meta.source.path if meta.source else None,
        meta_sha256=meta.source.sha256 if meta.source else None,
        protocol_version=meta.version,
        title=title if isinstance(title, str) else None,
    )
