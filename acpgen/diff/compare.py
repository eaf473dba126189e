"""Compare one schema file of two releases (same tree and stability) into changes.

``compare(pair)`` walks methods, then defs (members, variants, enum values), then the
stability marks, and asks ``acpgen.diff.rules`` for each change's rule. Who a change
breaks comes from ``direction``; equivalent spellings were made equal by ``types``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from acpgen import ir
from acpgen.diff import direction as dirn
from acpgen.diff.model import Change, make
from acpgen.diff.renames import def_renames, fingerprint, method_renames
from acpgen.diff.rules import BY_ID, Level
from acpgen.diff.types import Canoniser, classify, relate, spell
from acpgen.normalise.stability import items


@dataclass(frozen=True)
class Pair:
    """One file of two releases, with the other-stability file of the same tree, if any
    (a stable file's item that was unstable before moved, it was not added)."""

    file: str
    old: ir.Protocol
    new: ir.Protocol
    old_unstable: ir.Protocol | None = None
    new_unstable: ir.Protocol | None = None


def _unstable_items(p: ir.Protocol | None) -> set[str]:
    """Every item of the other-stability file: ``Def``, ``Def.field``, ``method:name``, and
    ``Def|vid`` for variants (by tag, else title) and enum values."""
    if p is None:
        return set()
    out = {name for name, _ in items(p) if "|" not in name}
    for d in p.defs:
        if isinstance(d, ir.TaggedUnionDef):
            out.update(f"{d.key}|{_vid(v)}" for v in d.variants)
        elif isinstance(d, ir.EnumDef):
            out.update(f"{d.key}|{v.value}" for v in d.values)
        elif isinstance(d, ir.UnionDef):
            out.update(f"{d.key}|{m.title}" for m in d.members if m.title)
    return out


@dataclass
class Walk:
    pair: Pair
    out: list[Change] = field(default_factory=list)

    def __post_init__(self) -> None:
        p = self.pair
        self.od, self.nd = p.old.def_map(), p.new.def_map()
        self.method_rename = method_renames(p.old, p.new)
        self.rename = def_renames(p.old, p.new, self.method_rename, self._linked())
        self.back = {v: k for k, v in self.rename.items()}
        self.co = Canoniser(self.od, self.rename)
        self.cn = Canoniser(self.nd, {})
        self.co_refs = Canoniser(self.od, self.rename, expand=False)
        self.cn_refs = Canoniser(self.nd, {}, expand=False)
        self.sent_old, self.sent_new = dirn.senders(p.old), dirn.senders(p.new)
        self.caps_old, self.caps_new = dirn.capabilities(p.old), dirn.capabilities(p.new)
        self.new_caps = {c for c in self.caps_new if c not in self.caps_old}
        # items of the other-stability file: where a stable item came from or went to
        self.was_unstable = _unstable_items(p.old_unstable) if p.new.stability == "stable" else set()
        self.now_unstable = _unstable_items(p.new_unstable) if p.new.stability == "stable" else set()
        self.routers = _routers(p.old) | _routers(p.new)

    def _linked(self) -> dict[str, str]:
        """The params and result defs of one method (same name, or renamed) under two
        names, the old one gone and the new one new: one def, renamed."""
        p = self.pair
        new = {(m.name, m.side): m for m in p.new.methods}
        out: dict[str, str] = {}
        for m in p.old.methods:
            n = new.get((self.method_rename.get(m.name, m.name), m.side))
            if n is None:
                continue
            for a, b in ((m.params, n.params), (m.result, n.result)):
                if a and b and a != b and a not in self.nd and b not in self.od:
                    out[a] = b
        return out

    # ------------------------------------------------------------------ helpers

    def emit(self, rule: str, subject: str, message: str, sides: Iterable[str] = (), **kw: object) -> None:
        self.out.append(make(self.pair.file, rule, subject, message, frozenset(sides), **kw))  # type: ignore[arg-type]

    def sides(self, new_key: str | None, old_key: str | None = None) -> frozenset[str]:
        """The sides that send a def (in either release)."""
        found: frozenset[str] = frozenset()
        if new_key in self.sent_new:
            found |= self.sent_new[new_key]  # type: ignore[index]
        if old_key in self.sent_old:
            found |= self.sent_old[old_key]  # type: ignore[index]
        return found or dirn.BOTH

    def breaks(self, rule: str, senders: frozenset[str]) -> frozenset[str]:
        hits = BY_ID[rule].hits
        if hits == "senders":
            return senders
        if hits == "receivers":
            return frozenset(s for x in senders for s in dirn.other(x))
        if hits == "both":
            return dirn.BOTH
        return frozenset()

    def gate_note(self, name: str, description: str | None, by_name: bool = False) -> str | None:
        gates = dirn.gates_of(name, description, self.caps_new, by_name) & self.new_caps
        if not gates:
            return None
        paths = ", ".join(f"`{self.caps_new[g].path}`" for g in sorted(gates))
        return f"gated by the new capability {paths}"

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
                    self.method_pair(m, n, name, sides_checked=True)
            elif f"method:{name}" in self.now_unstable:
                self.emit(
                    "moved-to-unstable", name, f"method {name} left the stable schema (still in the unstable one)",
                    dirn.callers(m),
                )
            else:
                self.emit("method-removed", name, f"method {name} was removed", dirn.callers(m))
        for (name, side), n in sorted(new.items()):
            if (name, side) in old or name in renamed_to or name in old_names:
                continue
            if f"method:{name}" in self.was_unstable:
                self.emit("moved-to-stable", name, f"method {name} is now stable")
                continue
            gates = dirn.gates_of(name, n.description, self.caps_new, True)
            note = self.gate_note(name, n.description, True)
            if n.kind == "request" and not gates:
                self.emit(
                    "request-added-without-gate",
                    name,
                    f"new request {name} ({n.side or '?'} side), no capability gates it",
                    dirn.implementers(n),
                )
            else:
                gate = note or (
                    f"gated by `{self.caps_new[sorted(gates)[0]].path}`" if gates else None
                )
                self.emit("method-added", name, f"new {n.kind} {name} ({n.side or '?'} side)", note=gate)

    def method_pair(self, o: ir.Method, n: ir.Method, subject: str, sides_checked: bool = False) -> None:
        if o.kind != n.kind:
            self.emit("method-kind-changed", subject, f"{subject} is now a {n.kind}", dirn.BOTH, old=o.kind, new=n.kind)
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
            elif key in self.now_unstable:
                self.emit(
                    "moved-to-unstable", key, f"{key} left the stable schema (still in the unstable one)",
                    self.breaks("optional-field-removed", self.sides(None, key)),
                )
            else:
                self.emit("def-removed", key, f"{key} was removed")
        for key in sorted(self.nd):
            if key in self.routers or key in self.od or key in self.back:
                continue
            d = self.nd[key]
            if key in self.was_unstable:
                self.emit("moved-to-stable", key, f"{key} is now stable")
            else:
                self.emit("def-added", key, f"new def {key}", note=self.gate_note(key, d.description))

    def def_pair(self, o: ir.Def, n: ir.Def, key: str) -> None:
        sent = self.sides(key, o.key)
        if type(o) is not type(n):
            self.emit(
                "def-kind-changed", key, f"{key} is now a {_shape(n)}", dirn.BOTH, old=_shape(o), new=_shape(n)
            )
            return
        if isinstance(o, ir.AliasDef):
            assert isinstance(n, ir.AliasDef)
            self.type_change(self.co.canon(o.type), self.cn.canon(n.type), key, sent, None)
        elif isinstance(o, ir.ObjectDef):
            assert isinstance(n, ir.ObjectDef)
            self.fields(o.fields, n.fields, key, sent, None)
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

    def extra(self, o: ir.ObjectDef, n: ir.ObjectDef, key: str, sent: frozenset[str]) -> None:
        closed_o, closed_n = o.extra == "forbid", n.extra == "forbid"
        if closed_o == closed_n:
            return
        rule = "object-closed" if closed_n else "object-opened"
        self.emit(rule, key, f"{key} {'rejects' if closed_n else 'accepts'} undeclared members", self.breaks(rule, sent))

    def branches(
        self, o: tuple[ir.Mixin, ...], n: tuple[ir.Mixin, ...], key: str, sent: frozenset[str], variant: str | None
    ) -> None:
        """A sibling union's branches, by label: one more branch lets more values through."""
        lo, ln = {m.label for m in o}, {m.label for m in n}
        if lo == ln:
            return
        rel = "wider" if lo < ln else "narrower" if ln < lo else "changed"
        rule = {"wider": "type-widened", "narrower": "type-narrowed"}.get(rel, "type-changed")
        self.emit(
            rule, key, f"the alternatives {key} must match changed", self.breaks(rule, sent), variant=variant,
            old=", ".join(sorted(lo)) or "none", new=", ".join(sorted(ln)) or "none",
        )

    # ------------------------------------------------------------------ members

    def fields(
        self,
        of: tuple[ir.Field, ...],
        nf: tuple[ir.Field, ...],
        owner: str,
        sent: frozenset[str],
        variant: str | None,
    ) -> None:
        o = {f.wire_name: f for f in of}
        n = {f.wire_name: f for f in nf}
        gone = [k for k in o if k not in n]
        fresh = [k for k in n if k not in o]
        renamed: dict[str, str] = {}
        for g in gone:
            same = [f for f in fresh if self._same_field(o[g], n[f])]
            back = [x for x in gone if len(same) == 1 and self._same_field(o[x], n[same[0]])]
            if len(same) == 1 and back == [g]:
                renamed[g] = same[0]
        where = f" ({variant})" if variant else ""
        for name in sorted(gone):
            f = o[name]
            subject = f"{owner}.{name}"
            if name in renamed:
                new_name = renamed[name]
                self.emit(
                    "field-renamed", f"{owner}.{name} -> {owner}.{new_name}",
                    f"member {name} of {owner}{where} is now {new_name}", dirn.BOTH, variant=variant,
                    old=name, new=new_name,
                )
                continue
            if variant is None and f"{owner}.{name}" in self.now_unstable:
                self.emit(
                    "moved-to-unstable", subject, f"{subject} left the stable schema (still in the unstable one)",
                    self.breaks("optional-field-removed", sent),
                )
                continue
            if owner.endswith("Capabilities") and self.gate_removed(owner, name, sent):
                continue
            rule = "required-field-removed" if f.required else "optional-field-removed"
            self.emit(rule, subject, f"member {name} of {owner}{where} was removed", self.breaks(rule, sent), variant=variant)
        for name in sorted(fresh):
            if name in renamed.values():
                continue
            f = n[name]
            subject = f"{owner}.{name}"
            if variant is None and subject in self.was_unstable:
                self.emit("moved-to-stable", subject, f"{subject} is now stable")
                continue
            rule = "required-field-added" if f.required else "optional-field-added"
            note = self.gate_note(subject, f.description)
            level: Level | None = "info" if note else None
            if f.required and f.has_default and not note:
                note, level = "the new member has a default", "warning"
            self.emit(
                rule, subject, f"new {'required' if f.required else 'optional'} member {name} of {owner}{where}",
                self.breaks(rule, sent), variant=variant, note=note, level=level,
            )
        for name in sorted(set(o) & set(n)):
            self.field_pair(o[name], n[name], f"{owner}.{name}", sent, variant)

    def _same_field(self, a: ir.Field, b: ir.Field) -> bool:
        return a.required == b.required and self.co.canon(a.type) == self.cn.canon(b.type)

    def field_pair(self, o: ir.Field, n: ir.Field, subject: str, sent: frozenset[str], variant: str | None) -> None:
        if o.required != n.required:
            rule = "field-now-required" if n.required else "field-now-optional"
            self.emit(
                rule, subject, f"{subject} is now {'required' if n.required else 'optional'}", self.breaks(rule, sent),
                variant=variant,
            )
        if self.co_refs.canon(o.type) != self.cn_refs.canon(n.type):  # else: the alias's change, said once
            self.type_change(self.co.canon(o.type), self.cn.canon(n.type), subject, sent, variant, o, n)
        if o.has_default != n.has_default or (o.has_default and o.default != n.default):
            self.emit(
                "field-default-changed", subject, f"the default of {subject} changed", self.breaks("field-default-changed", sent),
                variant=variant, old=_json(o.default) if o.has_default else "none",
                new=_json(n.default) if n.has_default else "none",
            )
        marks_o, marks_n = _marks(o), _marks(n)
        if marks_o - marks_n:
            self.emit(
                "leniency-removed", subject, f"{subject} is read strictly again", self.breaks("leniency-removed", sent),
                variant=variant, old=", ".join(sorted(marks_o)), new=", ".join(sorted(marks_n)) or "none",
            )
        if marks_n - marks_o:
            self.emit(
                "leniency-added", subject, f"{subject} is read leniently", variant=variant,
                old=", ".join(sorted(marks_o)) or "none", new=", ".join(sorted(marks_n)),
            )

    def type_change(
        self,
        old: tuple,
        new: tuple,
        subject: str,
        sent: frozenset[str],
        variant: str | None,
        of: ir.Field | None = None,
        nf: ir.Field | None = None,
    ) -> None:
        rel = relate(old, new)
        if rel == "same":
            return
        rule = classify(old, new, rel)
        note: str | None = None
        level: Level | None = None
        # the side whose reader is lenient loses no message, only the value
        reader = nf if BY_ID[rule].hits == "senders" else of if BY_ID[rule].hits == "receivers" else None
        if reader is not None and _marks(reader):
            note = f"read leniently ({', '.join(sorted(_marks(reader)))}): a bad value is dropped, not the message"
            level = "warning"
        self.emit(
            rule, subject, f"the type of {subject} changed: {spell(old)} -> {spell(new)}", self.breaks(rule, sent),
            variant=variant, old=spell(old), new=spell(new), note=note, level=level,
        )

    def gate_removed(self, owner: str, name: str, sent: frozenset[str]) -> bool:
        """A capability member is gone: if what it gated is still there, say the feature is
        now mandatory for the side that advertised it."""
        gated: list[str] = []
        for m in self.pair.old.methods:
            if name in dirn.gates_of(m.name, m.description, {name: dirn.Capability(owner, name)}, True):
                if any(x.name == self.method_rename.get(m.name, m.name) for x in self.pair.new.methods):
                    gated.append(self.method_rename.get(m.name, m.name))
        for d in self.pair.old.defs:
            if name in dirn.mentions(d.description) and self.rename.get(d.key, d.key) in self.nd:
                gated.append(self.rename.get(d.key, d.key))
        if not gated:
            return False
        self.emit(
            "capability-gate-removed", f"{owner}.{name}",
            f"capability {owner}.{name} is gone but {', '.join(sorted(set(gated)))} stay: now mandatory",
            sent, old=name, new="mandatory",
        )
        return True

    # ------------------------------------------------------------------ unions and enums

    def enum(self, o: ir.EnumDef, n: ir.EnumDef, key: str, sent: frozenset[str]) -> None:
        if o.base != n.base:
            self.emit("type-changed", key, f"{key} values are now {n.base}s", dirn.BOTH, old=o.base, new=n.base)
            return
        if o.open != n.open:
            rule = "enum-opened" if n.open else "enum-closed"
            self.emit(rule, key, f"{key} is now {'open' if n.open else 'closed'}", self.breaks(rule, sent))
        ov = {v.value for v in o.values}
        nv = {v.value: v for v in n.values}
        for v in sorted(ov - set(nv), key=str):
            if f"{key}|{v}" in self.now_unstable:
                self.emit(
                    "moved-to-unstable", key, f"{key} value {v!r} left the stable schema",
                    self.breaks("enum-value-removed", sent), variant=str(v),
                )
                continue
            rule = "enum-value-removed-open" if n.open else "enum-value-removed"
            self.emit(rule, key, f"{key} lost the value {v!r}", self.breaks(rule, sent), variant=str(v))
        for value, ev in sorted(((k, x) for k, x in nv.items() if k not in ov), key=lambda kv: str(kv[0])):
            if f"{key}|{value}" in self.was_unstable:
                self.emit("moved-to-stable", key, f"{key} value {value!r} is now stable", variant=str(value))
                continue
            rule = "enum-value-added-open" if o.open else "enum-value-added-closed"
            note = self.gate_note(f"{key}|{value}", ev.description)
            self.emit(
                rule, key, f"{key} has a new value {value!r}", self.breaks(rule, sent), variant=str(value), note=note,
                level="info" if note else None,
            )

    def union(self, o: ir.UnionDef, n: ir.UnionDef, key: str, sent: frozenset[str]) -> None:
        om = {self.co.canon(m.type): m for m in o.members}
        nm = {self.cn.canon(m.type): m for m in n.members}
        for c in sorted(set(om) - set(nm), key=spell):
            label = om[c].title or spell(c)
            if om[c].title and f"{key}|{label}" in self.now_unstable:
                self.emit(
                    "moved-to-unstable", key, f"member {label} of {key} left the stable schema",
                    self.breaks("variant-removed", sent), variant=label,
                )
                continue
            self.emit("variant-removed", key, f"{key} lost the member {label}", self.breaks("variant-removed", sent), variant=label)
        for c in sorted(set(nm) - set(om), key=spell):
            label = nm[c].title or spell(c)
            if nm[c].title and f"{key}|{label}" in self.was_unstable:
                self.emit("moved-to-stable", key, f"member {label} of {key} is now stable", variant=label)
                continue
            note = self.gate_note(f"{key}|{label}", nm[c].description)
            self.emit(
                "variant-added-closed", key, f"{key} has a new member {label}", self.breaks("variant-added-closed", sent),
                variant=label, note=note, level="info" if note else None,
            )

    def tagged(self, o: ir.TaggedUnionDef, n: ir.TaggedUnionDef, key: str, sent: frozenset[str]) -> None:
        if o.tag != n.tag:
            self.emit("tag-changed", key, f"{key} is now tagged by {n.tag!r}", dirn.BOTH, old=o.tag, new=n.tag)
            return
        if o.open != n.open:
            rule = "union-opened" if n.open else "union-closed"
            self.emit(rule, key, f"{key} is now {'open' if n.open else 'closed'}", self.breaks(rule, sent))
        self.fields(o.shared_fields, n.shared_fields, key, sent, None)
        ov = {_vid(v): v for v in o.variants}
        nv = {_vid(v): v for v in n.variants}
        gone = [k for k in ov if k not in nv]
        fresh = [k for k in nv if k not in ov]
        renamed: dict[str, str] = {}
        for g in gone:
            same = [f for f in fresh if ov[g].kind == nv[f].kind == "tagged" and self._same_variant(ov[g], nv[f])]
            if len(same) == 1 and [x for x in gone if self._same_variant(ov[x], nv[same[0]])] == [g]:
                renamed[g] = same[0]
        if o.open != n.open:  # the fallback itself is the opening (or closing) reported above
            gone = [g for g in gone if ov[g].kind != "fallback"]
            fresh = [f for f in fresh if nv[f].kind != "fallback"]
        for vid in sorted(gone):
            if vid in renamed:
                self.emit(
                    "variant-renamed", key, f"variant {vid} of {key} is now {renamed[vid]}", dirn.BOTH,
                    variant=f"{vid} -> {renamed[vid]}", old=vid, new=renamed[vid],
                )
                continue
            if f"{key}|{vid}" in self.now_unstable:
                self.emit(
                    "moved-to-unstable", key, f"variant {vid} of {key} left the stable schema",
                    self.breaks("variant-removed", sent), variant=vid,
                )
                continue
            rule = "variant-removed-open" if n.open else "variant-removed"
            self.emit(rule, key, f"{key} lost the variant {vid}", self.breaks(rule, sent), variant=vid)
        for vid in sorted(fresh):
            if vid in renamed.values():
                continue
            v = nv[vid]
            if f"{key}|{vid}" in self.was_unstable:
                self.emit("moved-to-stable", key, f"variant {vid} of {key} is now stable", variant=vid)
                continue
            rule = "variant-added-open" if o.open else "variant-added-closed"
            base = self.nd.get(v.base) if v.base else None
            note = self.gate_note(vid, v.description, by_name=True) or (
                self.gate_note(vid, base.description) if base else None
            )
            self.emit(
                rule, key, f"{key} has a new variant {vid}", self.breaks(rule, sent), variant=vid, note=note,
                level="info" if note else None,
            )
        for vid in sorted(set(ov) & set(nv)):
            a, b = ov[vid], nv[vid]
            base_o = self.rename.get(a.base, a.base) if a.base else None
            if base_o == b.base:
                self.fields(a.fields, b.fields, key, sent, vid)
            else:
                fa, fb = _effective(a, self.od), _effective(b, self.nd)
                if fa is None or fb is None:
                    self.emit(
                        "type-changed", key, f"variant {vid} of {key} now carries {b.base or 'no def'}", dirn.BOTH,
                        variant=vid, old=a.base, new=b.base,
                    )
                else:  # inline members and a base def of the same members are one shape
                    self.fields(fa, fb, key, sent, vid)
            self.branches(a.mixins, b.mixins, key, sent, vid)

    def _same_variant(self, a: ir.Variant, b: ir.Variant) -> bool:
        fa, fb = _effective(a, self.od), _effective(b, self.nd)
        if fa is None or fb is None:
            return (self.rename.get(a.base, a.base) if a.base else None) == b.base and not a.fields and not b.fields
        nb = {f.wire_name: f for f in fb}
        return len(fa) == len(fb) and all(f.wire_name in nb and self._same_field(f, nb[f.wire_name]) for f in fa)

    # ------------------------------------------------------------------ stability marks

    def stability(self) -> None:
        """In an unstable file: items present on both sides whose unstable mark changed."""
        if self.pair.new.stability != "unstable":
            return
        was, now = set(self.pair.old.unstable), set(self.pair.new.unstable)
        old_items = {name for name, _ in _items(self.pair.old)}
        new_items = {name for name, _ in _items(self.pair.new)}
        for item in sorted(was - now):
            if item in new_items and not _covered(item, now):
                self.emit("moved-to-stable", _subject(item), f"{_subject(item)} is now stable", variant=_variant(item))
        for item in sorted(now - was):
            if item in old_items and not _covered(item, was):
                self.emit(
                    "moved-to-unstable", _subject(item), f"{_subject(item)} is now unstable", dirn.BOTH, variant=_variant(item)
                )


def _items(p: ir.Protocol) -> Iterable[tuple[str, str | None]]:
    return items(p)


def _covered(item: str, marks: set[str]) -> bool:
    """An item inside a def marked unstable is unstable with it."""
    return re.split(r"[.|]", item, maxsplit=1)[0] in marks and not item.startswith("method:")


def _subject(item: str) -> str:
    if item.startswith("method:"):
        return item.removeprefix("method:")
    owner, _, rest = item.partition("|")
    if not rest:
        return owner
    _, _, member = rest.partition(".")
    return f"{owner}.{member}" if member else owner


def _variant(item: str) -> str | None:
    _, _, rest = item.partition("|")
    if not rest:
        return None
    return rest.partition(".")[0].rpartition("#")[2]


def _effective(v: ir.Variant, defs: Mapping[str, ir.Def]) -> tuple[ir.Field, ...] | None:
    """A variant's members with its base object's, or None when its base is not an object."""
    if v.base is None:
        return v.fields
    base = defs.get(v.base)
    if not isinstance(base, ir.ObjectDef):
        return None
    own = {f.wire_name for f in v.fields}
    return tuple(f for f in base.fields if f.wire_name not in own) + v.fields


def _vid(v: ir.Variant) -> str:
    return str(v.tag_value) if v.kind == "tagged" else (v.title or v.kind)


def _marks(f: ir.Field) -> frozenset[str]:
    out = set()
    if f.default_on_error:
        out.add("x-deserialize-default-on-error")
    if f.skip_invalid_items:
        out.add("x-deserialize-skip-invalid-items")
    if f.default_on_null:
        out.add("x-deserialize-default-on-null")
    return frozenset(out)


def _shape(d: ir.Def) -> str:
    return {
        ir.ObjectDef: "object",
        ir.TaggedUnionDef: "tagged union",
        ir.UnionDef: "union",
        ir.EnumDef: "enum",
        ir.AliasDef: "alias",
    }[type(d)]


def _json(value: object) -> str:
    import json

    return json.dumps(value, sort_keys=True)


_ENVELOPE = re.compile(r"^(Agent|Client)(Request|Response|Notification|Outgoing\w*)$")


def _routers(p: ir.Protocol) -> set[str]:
    """The JSON-RPC envelope unions (``AgentRequest``...): the method table covers them."""
    linked = {k for m in p.methods for k in (m.params, m.result) if k}
    out: set[str] = set()
    for d in p.defs:
        if _ENVELOPE.match(d.key.split(".", 1)[0]):  # and the objects lifted out of them
            out.add(d.key)
        elif isinstance(d, ir.ObjectDef) and d.by_method:
            out.add(d.key)
        elif (
            isinstance(d, ir.UnionDef)
            and any(isinstance(m.type, ir.Ref) for m in d.members)
            and all((isinstance(m.type, ir.Ref) and m.type.key in linked) or isinstance(m.type, ir.NullT) for m in d.members)
        ):
            out.add(d.key)
        elif isinstance(d, ir.TaggedUnionDef) and d.docs_ignore and all(
            v.base in linked for v in d.variants if v.kind == "tagged"
        ):
            out.add(d.key)
    return out


def compare(pair: Pair) -> list[Change]:
    w = Walk(pair)
    w.methods()
    w.defs()
    w.stability()
    return sorted(w.out, key=Change.sort_key)


__all__ = ["Pair", "compare"]
