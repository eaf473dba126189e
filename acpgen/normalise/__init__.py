"""RawDocument -> ir.Protocol: one function per construct, all errors collected."""

from __future__ import annotations

from acpgen import ir
from acpgen.normalise.context import Context
from acpgen.normalise.cycles import unbroken_cycles
from acpgen.normalise.defs import build_def
from acpgen.normalise.frames import mark_envelopes
from acpgen.normalise.keywords import unconsumed
from acpgen.normalise.methods import build_methods
from acpgen.normalise.sessions import mark_sessions
from acpgen.depth import deep_stack
from acpgen.errors import AcpgenError
from acpgen.load import RawDocument


def build_protocol(raw: RawDocument, unimplemented: str = "error") -> ir.Protocol:
    """The IR of one schema file. A validating keyword the builder did not read is an
    error (ACPG209), or, with ``unimplemented="warn"``, listed in ``Protocol.unenforced``."""
    ctx = Context(raw)
    defs: list[ir.Def] = []
    with deep_stack():
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
        ctx.problems.items.extend(unbroken_cycles(defs, ctx.source.diagnostic))
    ctx.problems.raise_if_any()
    # every keyword that constrains validity was read into the IR, or the build says so
    dropped = unconsumed(raw.data, ctx.container, ctx.consumed)
    if unimplemented != "warn":
        for pointer, keyword in dropped:
            ctx.problems.items.append(ctx.source.diagnostic("ACPG209", unimplemented_message(keyword), pointer))
        ctx.problems.raise_if_any()
    defs.extend(ctx.lifted.values())
    defs = mark_envelopes(defs, methods)
    methods = mark_sessions(methods, defs)
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
        # without a meta file (the schema files the npm SDK ships), the vN folder says it
        protocol_version=meta.version if meta.version is not None else raw.located_version,
        title=title if isinstance(title, str) else None,
        unenforced=tuple(dropped) if unimplemented == "warn" else (),
        batches=declares_batches(raw.data),
    )


def declares_batches(root: object) -> bool:
    """Whether the schema's root accepts JSON-RPC batches: one of its ``anyOf``/``oneOf``
    members is of ``type: array`` (upstream's ``AgentBatchCall``... in the v2 drafts)."""
    if not isinstance(root, dict):
        return False
    for keyword in ("anyOf", "oneOf"):
        members = root.get(keyword)
        if isinstance(members, list) and any(
            isinstance(m, dict) and (m.get("type") == "array" or (isinstance(m.get("type"), list) and "array" in m["type"]))
            for m in members
        ):
            return True
    return False


def unimplemented_message(keyword: str) -> str:
    return f"`{keyword}` is not implemented here: the bindings would not enforce it"
