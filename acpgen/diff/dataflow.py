"""Data-flow gates, read from the schema alone: a request whose required params hold an
identifier (a named alias of a string or integer: ``ModelId``, ``SessionModeId``) that its
caller receives only inside an optional part of what the other side sends.

Every place an identifier reaches the caller is a *path* from a message it receives (the
result of a method it calls, the params of a method or notification it is sent) through
members and union variants. A path is *gated* by its optional points: an optional member
(the sender may leave it out) or a variant of a union (the sender chooses another). The
identifier gates the request when every path that brings it is gated, and the caller has
no other source: it sends the identifier nowhere else (a result it returns, a notification,
an optional member of its params: its own data), and it receives it at all.

Whether the gate came or went with the request is the walk's business (``Walk.methods``);
this module only reads one release.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from acpgen import ir
from acpgen.diff import direction as dirn

#: how many paths one identifier may have before the search gives up (and gates nothing)
_LIMIT = 400


@dataclass(frozen=True)
class Point:
    """An optional part of a message: a member (``Owner.wire``, of ``variant`` when it is a
    variant's own member), or a variant of a union (``Owner`` and its tag or title)."""

    owner: str
    wire: str | None = None
    variant: str | None = None
    #: the def the member holds, by the first name it refers to (``SessionModelState``)
    through: str | None = None

    @property
    def label(self) -> str:
        if self.wire is None:
            return f"{self.owner} variant {self.variant}"
        return f"{self.owner}.{self.wire}"


@dataclass(frozen=True)
class Need:
    """A request's required identifier and the optional parts that alone bring it."""

    member: str  # the params member path: ``SetSessionModelRequest.modelId``
    type: str  # the identifier: ``ModelId``
    #: per path that brings the identifier to the caller, its optional points (outermost first)
    paths: tuple[tuple[Point, ...], ...]


def vid(v: ir.Variant) -> str:
    """A variant by its tag, else its title (as the diff labels it)."""
    return str(v.tag_value) if v.kind == "tagged" else (v.title or v.kind)


def identifiers(defs: dict[str, ir.Def]) -> set[str]:
    """The named aliases of a string or an integer."""
    return {
        k
        for k, d in defs.items()
        if isinstance(d, ir.AliasDef) and isinstance(d.type, ir.Prim) and d.type.kind in ("string", "integer")
    }


def required_ids(params: str | None, defs: dict[str, ir.Def]) -> list[tuple[str, str]]:
    """(member path, identifier) held by the required members of a params def, through
    required members of the defs they hold (never an array, a null or a variant: the
    caller could send none)."""
    ids = identifiers(defs)
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    stack = [params] if params else []
    while stack:
        key = stack.pop()
        if key in seen:
            continue
        seen.add(key)
        d = defs.get(key)
        fields: tuple[ir.Field, ...] = ()
        if isinstance(d, ir.ObjectDef):
            fields = d.fields
        elif isinstance(d, ir.TaggedUnionDef):
            fields = d.shared_fields
        for f in fields:
            if not f.required or not isinstance(f.type, ir.Ref):
                continue
            if f.type.key in ids:
                out.append((f"{key}.{f.wire_name}", f.type.key))
            else:
                stack.append(f.type.key)
    return sorted(out)


def _received(protocol: ir.Protocol, side: str, skip: ir.Method) -> list[str]:
    """The defs of the messages ``side`` receives, but for the result of ``skip`` (the
    request itself: its caller has to call it first)."""
    out = []
    for m in protocol.methods:
        if m.result and m.name != skip.name and side in dirn.callers(m):
            out.append(m.result)
        if m.params and side in dirn.implementers(m) and side not in dirn.callers(m):
            out.append(m.params)
    return sorted(set(out))


def _sent(protocol: ir.Protocol, side: str) -> list[tuple[str, bool]]:
    """The defs of the messages ``side`` sends, each with whether it is a request's params
    (where an identifier held by required members is consumed, not the caller's own)."""
    out = []
    for m in protocol.methods:
        if m.params and side in dirn.callers(m):
            out.append((m.params, m.kind == "request"))
        if m.result and side in dirn.implementers(m) and side not in dirn.callers(m):
            out.append((m.result, False))
    return sorted(set(out))


class _Paths:
    """The paths from a def to an identifier, each as its optional points."""

    def __init__(self, defs: dict[str, ir.Def], target: str) -> None:
        self.defs, self.target = defs, target
        self.count = 0
        reach: dict[str, bool] = {}
        for key in defs:
            self._reaches(key, reach, set())
        self.reach = reach

    def _reaches(self, key: str, memo: dict[str, bool], on: set[str]) -> bool:
        if key == self.target:
            return True
        if key in memo:
            return memo[key]
        if key in on or key not in self.defs:
            return False
        on.add(key)
        found = any(self._reaches(k, memo, on) for k in dirn.def_refs(self.defs[key]))
        on.discard(key)
        memo[key] = found
        return found

    def from_def(self, key: str, on: tuple[str, ...] = ()) -> Iterator[tuple[Point, ...]]:
        if key == self.target:
            self.count += 1
            yield ()
            return
        if key in on or not self.reach.get(key):
            return
        on = on + (key,)
        d = self.defs[key]
        if isinstance(d, ir.ObjectDef):
            yield from self._fields(key, None, d.fields, on)
            for m in d.mixins:
                yield from self._fields(key, m.title, m.fields, on)
                if m.base:
                    yield from self.from_def(m.base, on)
        elif isinstance(d, ir.TaggedUnionDef):
            yield from self._fields(key, None, d.shared_fields, on)
            for v in d.variants:
                here = Point(key, variant=vid(v))
                for rest in self._variant(key, vid(v), v, on):
                    yield (here,) + rest
        elif isinstance(d, ir.UnionDef):
            for i, member in enumerate(d.members):
                here = Point(key, variant=member.title or str(i))
                for rest in self.from_type(member.type, on):
                    yield (here,) + rest
        elif isinstance(d, ir.AliasDef):
            yield from self.from_type(d.type, on)

    def _variant(self, key: str, vid: str, v: ir.Variant, on: tuple[str, ...]) -> Iterator[tuple[Point, ...]]:
        yield from self._fields(key, vid, v.fields, on)
        for m in v.mixins:
            yield from self._fields(key, vid, m.fields, on)
        if v.base:
            yield from self.from_def(v.base, on)

    def _fields(
        self, key: str, variant: str | None, fields: tuple[ir.Field, ...], on: tuple[str, ...]
    ) -> Iterator[tuple[Point, ...]]:
        for f in fields:
            through = next(iter(dirn.type_refs(f.type)), None)
            here = () if f.required else (Point(key, f.wire_name, variant, through),)
            for rest in self.from_type(f.type, on):
                yield here + rest

    def from_type(self, t: ir.TypeExpr, on: tuple[str, ...]) -> Iterator[tuple[Point, ...]]:
        for key in dict.fromkeys(dirn.type_refs(t)):
            if self.count > _LIMIT:
                return
            yield from self.from_def(key, on)


def needs(protocol: ir.Protocol, method: ir.Method) -> list[Need]:
    """The identifiers a request's caller can only have from optional parts of what the
    other side sends, each with the paths that bring it (empty: no data-flow gate)."""
    if method.kind != "request" or method.side not in dirn.BOTH:
        return []
    defs = protocol.def_map()
    (caller,) = dirn.callers(method)
    out = []
    for member, ident in required_ids(method.params, defs):
        walk = _Paths(defs, ident)
        paths: list[tuple[Point, ...]] = []
        free = False
        for root in _received(protocol, caller, method):
            for path in walk.from_def(root):
                if not path or walk.count > _LIMIT:
                    free = True
                    break
                paths.append(path)
            if free:
                break
        if free or not paths or _own(protocol, caller, walk):
            continue
        out.append(Need(member, ident, tuple(sorted(set(paths), key=lambda p: [x.label for x in p]))))
    return out


def _own(protocol: ir.Protocol, caller: str, walk: _Paths) -> bool:
    """The caller sends the identifier where it is its own data: in a result it returns,
    a notification, or an optional member of a request's params."""
    for root, consumed in _sent(protocol, caller):
        for path in walk.from_def(root):
            if walk.count > _LIMIT or not consumed or any(p.wire is not None for p in path):
                return True
    return False


def present(point: Point, defs: dict[str, ir.Def], names: dict[str, str]) -> bool:
    """The optional point is in a release (``defs``; ``names`` maps the point's def names
    to that release's)."""
    d = defs.get(names.get(point.owner, point.owner))
    if isinstance(d, ir.UnionDef):
        return point.wire is None and any((m.title or str(i)) == point.variant for i, m in enumerate(d.members))
    if isinstance(d, ir.TaggedUnionDef):
        fields: tuple[ir.Field, ...] = d.shared_fields
        if point.variant is not None:
            found = [v for v in d.variants if vid(v) == point.variant]
            if not found:
                return False
            if point.wire is None:
                return True
            fields = found[0].fields + tuple(f for m in found[0].mixins for f in m.fields)
            base = defs.get(found[0].base or "")
            if isinstance(base, ir.ObjectDef):
                fields += base.fields
        return any(f.wire_name == point.wire for f in fields)
    if isinstance(d, ir.ObjectDef) and point.wire is not None:
        return any(f.wire_name == point.wire for f in d.fields + tuple(f for m in d.mixins for f in m.fields))
    return False


def descriptions(point: Point, defs: dict[str, ir.Def]) -> list[str | None]:
    """An optional member's description and that of the def it holds."""
    d = defs.get(point.owner)
    fields: tuple[ir.Field, ...] = ()
    if isinstance(d, ir.ObjectDef):
        fields = d.fields + tuple(f for m in d.mixins for f in m.fields)
    elif isinstance(d, ir.TaggedUnionDef):
        fields = d.shared_fields + tuple(f for v in d.variants for f in v.fields)
    out: list[str | None] = [f.description for f in fields if f.wire_name == point.wire][:1]
    held = defs.get(point.through or "")
    if held is not None:
        out.append(held.description)
    return out
