"""Who sends what, and which capabilities gate what: read from the method tables.

The params of a method are sent by its caller and its result by its implementer (the
side ``ir.Method.side`` names); a notification's params by the side that is not its
receiver. A def is sent by every side that sends a def that reaches it; a def that no
method reaches is taken as sent by both sides (when unsure, assume the worst).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Mapping

from acpgen import ir

BOTH = frozenset({"agent", "client"})


def other(side: str) -> frozenset[str]:
    return frozenset({"client"}) if side == "agent" else frozenset({"agent"}) if side == "client" else BOTH


def callers(method: ir.Method) -> frozenset[str]:
    return other(method.side)


def implementers(method: ir.Method) -> frozenset[str]:
    return frozenset({method.side}) if method.side in BOTH else BOTH


def type_refs(t: ir.TypeExpr) -> Iterator[str]:
    if isinstance(t, ir.Ref):
        yield t.key
    elif isinstance(t, (ir.Array,)):
        yield from type_refs(t.items)
    elif isinstance(t, ir.Map):
        yield from type_refs(t.values)
    elif isinstance(t, ir.Nullable):
        yield from type_refs(t.inner)
    elif isinstance(t, (ir.AnyOf, ir.Tuple)):
        for m in t.members if isinstance(t, ir.AnyOf) else t.items:
            yield from type_refs(m)


def _field_refs(fs: Iterable[ir.Field]) -> Iterator[str]:
    for f in fs:
        yield from type_refs(f.type)


def _mixin_refs(mixins: Iterable[ir.Mixin]) -> Iterator[str]:
    for m in mixins:
        if m.base:
            yield m.base
        yield from _field_refs(m.fields)
        yield from _mixin_refs(m.mixins)


def def_refs(d: ir.Def) -> Iterator[str]:
    if isinstance(d, ir.ObjectDef):
        yield from _field_refs(d.fields)
        yield from _mixin_refs(d.mixins)
        if not isinstance(d.extra, str):
            yield from type_refs(d.extra)
    elif isinstance(d, ir.TaggedUnionDef):
        yield from _field_refs(d.shared_fields)
        for v in d.variants:
            if v.base:
                yield v.base
            yield from _field_refs(v.fields)
            yield from _mixin_refs(v.mixins)
    elif isinstance(d, ir.UnionDef):
        for m in d.members:
            yield from type_refs(m.type)
    elif isinstance(d, ir.AliasDef):
        yield from type_refs(d.type)


def senders(protocol: ir.Protocol) -> dict[str, frozenset[str]]:
    """Def key -> the sides that send it."""
    defs = protocol.def_map()
    out: dict[str, set[str]] = {}
    roots: list[tuple[str, frozenset[str]]] = []
    for m in protocol.methods:
        if m.params:
            roots.append((m.params, callers(m)))
        if m.result:
            roots.append((m.result, implementers(m)))
    for root, sides in roots:
        stack = [root]
        while stack:
            key = stack.pop()
            have = out.setdefault(key, set())
            if sides <= have:
                continue
            have |= sides
            d = defs.get(key)
            if d is not None:
                stack.extend(def_refs(d))
    return {key: frozenset(out.get(key) or BOTH) for key in defs}


# --------------------------------------------------------------------------- capabilities

#: a capability named in prose: `a.b.c` followed within two words by "capability"
_MENTION = re.compile(r"`([A-Za-z_][\w.]*)`(?:\s+[A-Za-z]+){0,2}\s+capabilit", re.I)
_TICKS = re.compile(r"`([^`\s]+)`")


@dataclass(frozen=True)
class Capability:
    owner: str  # the *Capabilities def
    wire_name: str
    #: the member's description and that of the def it holds: what it says it gates
    description: str | None = field(default=None, compare=False, hash=False)

    @property
    def path(self) -> str:
        return f"{self.owner}.{self.wire_name}"


Caps = Mapping[str, tuple[Capability, ...]]


def norm(word: str) -> str:
    """One spelling of a name: ``load_session``, ``loadSession`` -> ``loadsession``."""
    return word.replace("_", "").replace("-", "").lower()


def capabilities(protocol: ir.Protocol) -> dict[str, tuple[Capability, ...]]:
    """Wire name -> every capability of that name (``cancel`` of ``TerminalCapabilities``
    and of ``ToolCallCapabilities``), over the members of ``*Capabilities`` defs."""
    defs = protocol.def_map()
    out: dict[str, list[Capability]] = {}
    for d in sorted(protocol.defs, key=lambda d: d.key):
        if isinstance(d, ir.ObjectDef) and d.key.endswith("Capabilities"):
            for f in d.fields:
                if f.wire_name != "_meta":
                    held = [defs[k].description for k in type_refs(f.type) if k in defs]
                    text = "\n".join(t for t in [f.description, *held] if t) or None
                    out.setdefault(f.wire_name, []).append(Capability(d.key, f.wire_name, text))
    return {k: tuple(v) for k, v in out.items()}


def closest(candidates: tuple[Capability, ...] | list[Capability], name: str) -> Capability:
    """Of capabilities with one name, the one whose def shares most words with the gated
    item's name (``tool_call/cancel`` -> ``ToolCallCapabilities.cancel``); ties: the first."""
    return max(candidates, key=lambda c: shared_words(c, name))


def shared_words(capability: Capability, name: str) -> int:
    """How many words a capability's def has in common with an item's name."""
    owner = {w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", capability.owner)} - {"capabilities"}
    return len(owner & method_words(name))


def mentions(description: str | None) -> list[tuple[str, ...]]:
    """The capabilities a description says gate it, as paths (``supports the
    `session.fork` capability`` -> ``("session", "fork")``; ``mcp_capabilities.sse``)."""
    return [tuple(m.group(1).split(".")) for m in _MENTION.finditer(description or "")]


def mentioned(path: tuple[str, ...], names: Iterable[str]) -> str | None:
    """Of ``names`` (capability wire names), the one a mentioned path means: its deepest
    segment that is one, in any spelling (`fs.read` with no ``read`` capability: ``fs``)."""
    by_norm: dict[str, str] = {}
    for n in sorted(names):
        by_norm.setdefault(norm(n), n)
    for segment in reversed(path):
        if norm(segment) in by_norm:
            return by_norm[norm(segment)]
    return None


def names_item(capability: Capability, name: str) -> bool:
    """The capability's own description names the item in backticks: its method
    (``session/list``), its tag or value (``plan_update``), or its def or member path."""
    return names_in(capability.description, name)


def names_in(text: str | None, name: str) -> bool:
    """A text names an item in backticks (any spelling; ``Def|value`` by its value too)."""
    wanted = {norm(name)}
    if "|" in name:
        wanted.add(norm(name.split("|", 1)[1]))
    return any(norm(t) in wanted for t in _TICKS.findall(text or ""))


def method_words(name: str) -> set[str]:
    """``session/set_config_option`` -> {session, set, config, option, setconfigoption...}."""
    words: set[str] = set()
    for part in re.split(r"[/$]", name):
        if not part:
            continue
        words.add(part.replace("_", "").lower())
        words.update(w.lower() for w in part.split("_") if w)
    return words


def gates_of(name: str, description: str | None, caps: Caps, by_name: bool) -> set[str]:
    """The capabilities of ``caps`` (by wire name) that gate an item: named in its
    description (any spelling, dotted paths by their deepest capability), for a method
    or a variant equal to one of its name's words (``session/list`` and ``list``,
    ``compaction_update`` and ``compaction``), or whose own description names the item."""
    found = {c for c in (mentioned(p, caps) for p in mentions(description)) if c is not None}
    if by_name:
        words = method_words(name)
        found |= {c for c in caps if norm(c) in words}
    found |= {wire for wire, cs in caps.items() if any(names_item(c, name) for c in cs)}
    return found
