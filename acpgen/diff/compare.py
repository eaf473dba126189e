"""Compare one schema file of two releases (same tree and stability) into changes.

``compare(pair)`` walks methods, then defs (members, variants, enum values), then the
stability marks, and asks ``acpgen.diff.rules`` for each change's rule. Who a change
breaks comes from ``direction``; equivalent spellings were made equal by ``types``. The
walk is layered: ``Base`` (state, helpers) < ``Members`` < ``Variants`` < ``Walk``.
"""

from __future__ import annotations

import re
from typing import Iterable

from acpgen import ir
from acpgen.diff import direction as dirn
from acpgen.diff.base import Pair, _vid
from acpgen.diff.model import Change
from acpgen.diff.renames import fingerprint
from acpgen.diff.variants import Variants
from acpgen.normalise.stability import items


class Walk(Variants):
    # ------------------------------------------------------------------ methods

    def methods(self) -> None:
        old = {(m.name, m.side): m for m in self.pair.old.methods}
        new = {(m.name, m.side): m for m in self.pair.new.methods}
        old_names = {m.name for m in self.pair.old.methods}
        new_names = {m.name for m in self.pair.new.methods}
        renamed_to = set(self.method_rename.values())
        for (name, side), m in sorted(old.items()):
            if (name, side) in new:
                self.method_pair(m, new[(name, side)], name)
            elif name in self.method_rename:
                n = next(x for x in self.pair.new.methods if x.name == self.method_rename[name])
                self.emit(
                    "method-renamed",
                    f"{name} -> {n.name}",
                    f"method {name} is now called {n.name}",
                    dirn.BOTH,
                    old=name,
                    new=n.name,
                )
                self.method_pair(m, n, n.name)
            elif name in new_names:
                n = next(x for x in self.pair.new.methods if x.name == name)
                if (name, n.side) not in old:
                    self.emit(
                        "method-side-changed", name, f"{name} is now implemented by the {n.side or '?'} side",
                        dirn.BOTH, old=side, new=n.side,
                    )
                    self.method_pair(m, n, name)
            elif not self.left_stable(f"method:{name}", name, f"method {name}", dirn.callers(m)):
                note = self.gone_gate(name, m.description, m)
                self.emit(
                    "method-removed", name, f"method {name} was removed", dirn.callers(m), note=note,
                    level="info" if note else None,
                )
        for (name, side), n in sorted(new.items()):
            if (name, side) in old or name in renamed_to or name in old_names:
                continue
            gates = self.gates(name, n.description, True, only_new=False)
            note = self.gate_note(name, n.description, True)
            ungated = n.kind == "request" and not gates
            entries = self.entry_points(n, self.pair.new) if ungated else []
            if entries:  # an optional response member offers it: the caller calls it only then
                ungated = False
                note = f"gated by the optional response member `{entries[0]}`: called only when it was sent"
            elif ungated and (data := self.data_gate(n, added=True)):  # what it needs comes only with a gate
                ungated, note = False, data
            if self.became_stable(
                f"method:{name}", name, f"method {name}", as_rule="request-added-without-gate" if ungated else "method-added",
                breaks=dirn.implementers(n) if ungated else frozenset(), note=note,
            ):
                continue
            if ungated:
                self.emit(
                    "request-added-without-gate",
                    name,
                    f"new request {name} ({n.side or '?'} side), no capability gates it",
                    dirn.implementers(n),
                )
            else:
                gate = note or (f"gated by `{gates[0].path}`" if gates else None)
                self.emit("method-added", name, f"new {n.kind} {name} ({n.side or '?'} side)", note=gate)

    def method_pair(self, o: ir.Method, n: ir.Method, subject: str) -> None:
        if o.kind != n.kind:
            self.emit("method-kind-changed", subject, f"{subject} is now {_a(n.kind)}", dirn.BOTH, old=o.kind, new=n.kind)
            return
        for role, a, b in (("params", o.params, n.params), ("result", o.result, n.result)):
            if (self.rename.get(a, a) if a else a) == b:
                continue
            if a and b and a in self.od and b in self.nd and fingerprint(self.od[a], self.rename) == fingerprint(
                self.nd[b], self.rename
            ):
                continue
            self.emit(
                f"method-{role}-changed", subject, f"{subject} now has {b or 'no def'} as its {role}", dirn.BOTH,
                old=a, new=b,
            )

    # ------------------------------------------------------------------ defs

    def defs(self) -> None:
        for key in sorted(self.od):
            if key in self.routers:
                continue
            new_key = self.rename.get(key, key)
            d = self.od[key]
            if new_key != key and new_key in self.nd:
                self.emit("def-renamed", f"{key} -> {new_key}", f"{key} is now called {new_key}", old=key, new=new_key)
            if new_key in self.nd:
                self.def_pair(d, self.nd[new_key], new_key)
            elif not self.left_stable(key, key, key, self.breaks("optional-field-removed", self.sides(None, key))):
                self.emit("def-removed", key, f"{key} was removed")
        for key in sorted(self.nd):
            if key in self.routers or key in self.od or key in self.back:
                continue
            d = self.nd[key]
            note = self.gate_note(key, d.description)
            if not self.became_stable(key, key, key, note=note):
                self.emit("def-added", key, f"new def {key}", note=note)

    def def_pair(self, o: ir.Def, n: ir.Def, key: str) -> None:
        sent = self.sides(key, o.key)
        if type(o) is not type(n):
            # compared by what is accepted: a one-member union is its member, an object is
            # the untagged default of a union that holds it
            uo, un = _one_member(o, self.od), _one_member(n, self.nd)
            if isinstance(uo, ir.ObjectDef) and isinstance(un, ir.ObjectDef):
                self.fields(uo.fields, un.fields, key, sent, None, (uo.extra, un.extra))
                self.extra(uo, un, key, sent)
                self.branches(uo.mixins, un.mixins, key, sent, None)
                return
            if isinstance(uo, ir.ObjectDef) and isinstance(un, ir.TaggedUnionDef) and _holds(un, uo):
                self.tagged(_as_default(uo, un), un, key, sent)
                return
            if isinstance(uo, ir.TaggedUnionDef) and isinstance(un, ir.ObjectDef) and _holds(uo, un):
                self.tagged(uo, _as_default(un, uo), key, sent)
                return
            self.emit(
                "def-kind-changed", key, f"{key} is now {_a(_shape(n))}", dirn.BOTH, old=_shape(o), new=_shape(n)
            )
            return
        if isinstance(o, ir.AliasDef):
            assert isinstance(n, ir.AliasDef)
            self.type_change(self.co.canon(o.type), self.cn.canon(n.type), key, sent, None)
        elif isinstance(o, ir.ObjectDef):
            assert isinstance(n, ir.ObjectDef)
            self.fields(o.fields, n.fields, key, sent, None, (o.extra, n.extra))
            self.extra(o, n, key, sent)
            self.branches(o.mixins, n.mixins, key, sent, None)
        elif isinstance(o, ir.EnumDef):
            assert isinstance(n, ir.EnumDef)
            self.enum(o, n, key, sent)
        elif isinstance(o, ir.UnionDef):
            assert isinstance(n, ir.UnionDef)
            self.union(o, n, key, sent)
        else:
            assert isinstance(o, ir.TaggedUnionDef) and isinstance(n, ir.TaggedUnionDef)
            self.tagged(o, n, key, sent)

    # ------------------------------------------------------------------ stability marks

    def stability(self) -> None:
        """In an unstable file: items present on both sides whose unstable mark changed."""
        if self.pair.new.stability != "unstable":
            return
        was, now = set(self.pair.old.unstable), set(self.pair.new.unstable)
        old_items = {name for name, _ in _items(self.pair.old)}
        new_items = {name for name, _ in _items(self.pair.new)}
        for item in sorted(was - now):
            if item in new_items and not _covered(item, now) and not self._inside(item, was - now):
                subject = self._subject(item)
                self.emit("moved-to-stable", subject, f"{subject} is now stable", variant=self._label(item))
        for item in sorted(now - was):
            if item in old_items and not _covered(item, was) and not self._inside(item, now - was):
                subject = self._subject(item)
                self.emit(
                    "moved-to-unstable", subject, f"{subject} is now unstable", dirn.BOTH,
                    variant=self._label(item),
                )

    def _split(self, item: str) -> tuple[str, str, str]:
        """``Def|V.member`` as (``Def``, ``V``, ``member``), ``V`` a variant's key, whole
        (``Shape|Shape#square.v2.side``: the variant of the tag ``square.v2``, its member
        ``side``; the longest key that fits); an enum value is whole, dots and all
        (``Model|gpt-4.1``: the value ``gpt-4.1``, no member)."""
        owner, _, rest = item.partition("|")
        for defs in (self.nd, self.od):
            d = defs.get(owner)
            if isinstance(d, ir.TaggedUnionDef):
                for key in sorted((v.key for v in d.variants), key=len, reverse=True):
                    if rest == key or rest.startswith(key + "."):
                        return owner, key, rest[len(key) + 1 :]
        return owner, rest, ""

    def _subject(self, item: str) -> str:
        if item.startswith("method:"):
            return item.removeprefix("method:")
        owner, _, member = self._split(item)
        return f"{owner}.{member}" if member else owner

    def _inside(self, item: str, moved: set[str]) -> bool:
        """A member of a variant that moved with it (``Def|V.field`` with ``Def|V``)."""
        owner, head, member = self._split(item)
        return "|" in item and bool(member) and f"{owner}|{head}" in moved

    def _label(self, item: str) -> str | None:
        """An item's variant as the stable file labels it: its tag, else its title; an
        enum value whole."""
        owner, key, _ = self._split(item)
        if "|" not in item:
            return None
        for defs in (self.nd, self.od):
            d = defs.get(owner)
            if isinstance(d, ir.TaggedUnionDef):
                for v in d.variants:
                    if v.key == key:
                        return _vid(v)
        return key


def _items(p: ir.Protocol) -> Iterable[tuple[str, str | None]]:
    return items(p)


def _covered(item: str, marks: set[str]) -> bool:
    """An item inside a def marked unstable is unstable with it."""
    return re.split(r"[.|]", item, maxsplit=1)[0] in marks and not item.startswith("method:")








def _one_member(d: ir.Def, defs: dict[str, ir.Def]) -> ir.Def:
    """A union of one member that is a def: that def (it accepts exactly its values)."""
    if isinstance(d, ir.UnionDef) and len(d.members) == 1 and isinstance(d.members[0].type, ir.Ref):
        return defs.get(d.members[0].type.key, d)
    return d


def _holds(u: ir.TaggedUnionDef, obj: ir.ObjectDef) -> bool:
    """A union with an untagged default member can stand for an object open to other
    members (the default then holds the object's members)."""
    return u.default_variant is not None and obj.extra == "allow"


def _as_default(obj: ir.ObjectDef, like: ir.TaggedUnionDef) -> ir.TaggedUnionDef:
    """An object as the union ``like`` with only its untagged default member, holding the
    object's members (those ``like`` shares between its variants stay shared)."""
    default = like.default_variant
    assert default is not None
    shared = {f.wire_name for f in like.shared_fields}
    variant = ir.Variant(
        key=f"{obj.key}#default", kind="default", origin=obj.origin, title=default.title, mixins=obj.mixins,
        fields=tuple(f for f in obj.fields if f.wire_name not in shared),
    )
    return ir.TaggedUnionDef(
        key=obj.key, origin=obj.origin, tag=like.tag, variants=(variant,),
        shared_fields=tuple(f for f in obj.fields if f.wire_name in shared),
    )


def _shape(d: ir.Def) -> str:
    return {
        ir.ObjectDef: "object",
        ir.TaggedUnionDef: "tagged union",
        ir.UnionDef: "union",
        ir.EnumDef: "enum",
        ir.AliasDef: "alias",
    }[type(d)]


def compare(pair: Pair) -> list[Change]:
    w = Walk(pair)
    o, n = pair.old.protocol_version, pair.new.protocol_version
    if o != n and o is not None and n is not None:
        w.emit(
            "protocol-version-changed", pair.file, f"the protocol version is now {n}", dirn.BOTH, old=str(o), new=str(n)
        )
    w.methods()
    w.defs()
    w.stability()
    return sorted(w.out, key=Change.sort_key)


def _a(word: str) -> str:
    """``word`` with its article: "an enum", "an object", "a union", "a request"."""
    return ("an " if word[:1] in ("a", "e", "i", "o") else "a ") + word


__all__ = ["Pair", "compare"]
