"""Comparing members: of objects, of variants, and the type of each (``Members``)."""

from __future__ import annotations

import json
from typing import Mapping

from acpgen import ir
from acpgen.diff import direction as dirn
from acpgen.diff.base import Base, unique_pairs
from acpgen.diff.rules import BY_ID, Level
from acpgen.diff.types import Canon, classify, relate, spell


class Members(Base):
    def extra(self, o: ir.ObjectDef, n: ir.ObjectDef, key: str, sent: frozenset[str]) -> None:
        """Undeclared members: allowed (any value), forbidden, or of one type."""
        closed_o, closed_n = o.extra == "forbid", n.extra == "forbid"
        if closed_o != closed_n:
            rule = "object-closed" if closed_n else "object-opened"
            self.emit(rule, key, f"{key} {'rejects' if closed_n else 'accepts'} undeclared members", self.breaks(rule, sent))
            return
        if closed_o:
            return
        a = ("any",) if o.extra == "allow" else self.co.canon(o.extra)  # type: ignore[arg-type]
        b = ("any",) if n.extra == "allow" else self.cn.canon(n.extra)  # type: ignore[arg-type]
        self.type_change(a, b, f"{key}.*", sent, None)

    def branches(
        self, o: tuple[ir.Mixin, ...], n: tuple[ir.Mixin, ...], key: str, sent: frozenset[str], variant: str | None
    ) -> None:
        """A sibling union's branches, by label: one more ``anyOf`` branch lets more values
        through (a ``oneOf`` branch may also make a value match two: changed); a branch on
        both sides is compared member by member, and by what else it requires."""
        mo, mn = {m.label: m for m in o}, {m.label: m for m in n}
        lo, ln = set(mo), set(mn)
        if variant is None and (
            (lo and not ln and self.guard_became_tag(key, o, self.nd))
            or (ln and not lo and self.guard_became_tag(key, n, self.od, self.back.get(key, key)))
        ):
            return
        if lo != ln:
            exclusive = any(m.keyword == "oneOf" for m in o + n)
            if not lo or not ln:  # a union to match appeared (fewer values) or went (more)
                rel = "narrower" if not lo else "wider"
            else:
                rel = "changed" if exclusive else "wider" if lo < ln else "narrower" if ln < lo else "changed"
            rule = {"wider": "type-widened", "narrower": "type-narrowed"}.get(rel, "type-changed")
            self.emit(
                rule, key, f"the alternatives {key} must match changed", self.breaks(rule, sent), variant=variant,
                old=", ".join(sorted(lo)) or "none", new=", ".join(sorted(ln)) or "none",
            )
        for label in sorted(lo & ln):
            a, b = mo[label], mn[label]
            where = f"{variant}: {label}" if variant else label
            self.fields(a.fields, b.fields, key, sent, where)
            shape_a = (a.keyword, self.rename.get(a.base, a.base) if a.base else None, a.excludes, a.absent, a.required)
            shape_b = (b.keyword, b.base, b.excludes, b.absent, b.required)
            if shape_a != shape_b:
                self.emit(
                    "type-changed", key, f"branch {label} of {key} requires something else", dirn.BOTH, variant=where,
                )
            self.branches(a.mixins, b.mixins, key, sent, where)

    def guard_became_tag(
        self, key: str, gone: tuple[ir.Mixin, ...], defs: Mapping[str, ir.Def], name: str | None = None
    ) -> bool:
        """A def's ``not`` guards on a member (``type`` absent or ``agent``) gone because
        the def is now (in ``defs``) only the payload of the tagged variant that requires
        that value: a narrowing, said once on the union (its variant now requires the
        tag), not a widening of the def. And the mirror: guards that appear on a def that
        was only such a payload (``defs`` the old release's, ``name`` the def's name there)."""
        key = name or key
        allowed: dict[str, set[object]] = {}
        for m in gone:
            if m.base or m.mixins or m.required or m.excludes or m.absent or not m.fields:
                return False
            for f in m.fields:
                if f.required or not isinstance(f.type, ir.Lit):
                    return False
                allowed.setdefault(f.wire_name, set()).update(f.type.values)
        tagged = [
            (d, v) for d in defs.values() if isinstance(d, ir.TaggedUnionDef) for v in d.variants if v.base == key
        ]
        if not tagged or any(v.kind != "tagged" or v.tag_value not in allowed.get(d.tag, set()) for d, v in tagged):
            return False
        for d in defs.values():  # and nothing else holds the def: taken alone it is wider
            if isinstance(d, ir.TaggedUnionDef):
                held = [f for f in d.shared_fields] + [f for v in d.variants for f in v.fields]
                if any(key in dirn.type_refs(f.type) for f in held):
                    return False
            elif d.key != key and key in dirn.def_refs(d):
                return False
        return True

    def fields(
        self,
        of: tuple[ir.Field, ...],
        nf: tuple[ir.Field, ...],
        owner: str,
        sent: frozenset[str],
        variant: str | None,
        extra: tuple[object, object] = ("?", "?"),
    ) -> None:
        """``extra``: the object's undeclared members in each release (``allow``,
        ``forbid``, a type), when the members are an object's own."""
        o = {f.wire_name: f for f in of}
        n = {f.wire_name: f for f in nf}
        gone = [k for k in o if k not in n]
        fresh = [k for k in n if k not in o]
        renamed = unique_pairs(gone, fresh, lambda a, b: self._same_field(o[a], n[b]))
        where = f" ({variant})" if variant else ""
        for name in sorted(gone):
            f = o[name]
            subject = f"{owner}.{name}"
            if name in renamed:
                new_name = renamed[name]
                sides, note, lowered = dirn.BOTH, None, None
                if extra == ("allow", "allow") and not f.required and not n[new_name].required:
                    # both payloads stay valid in both releases: what is lost is what removing it loses
                    sides, lowered = self.breaks("optional-field-removed", sent), BY_ID["optional-field-removed"].level
                    note = (
                        "an optional member of an object open to undeclared members: payloads of both releases "
                        "stay valid in both; receivers lose what it said, as when it is removed"
                    )
                self.emit(
                    "field-renamed", f"{owner}.{name} -> {owner}.{new_name}",
                    f"member {name} of {owner}{where} is now {new_name}", sides, variant=variant,
                    old=name, new=new_name, note=note, level=lowered,
                )
                continue
            if variant is None and self.left_stable(subject, subject, subject, self.breaks("optional-field-removed", sent)):
                continue
            if owner.endswith("Capabilities") and self.gate_removed(owner, name, sent):
                continue
            rule = "required-field-removed" if f.required else "optional-field-removed"
            hit, note = self.breaks(rule, sent), None
            if extra[1] == "forbid":  # the object now rejects the member old senders send
                hit = (hit if f.required else frozenset()) | sent
                note = f"{owner} rejects undeclared members: old senders that send {name} are rejected"
            self.emit(
                rule, subject, f"member {name} of {owner}{where} was removed", hit, variant=variant, note=note
            )
        for name in sorted(fresh):
            if name in renamed.values():
                continue
            f = n[name]
            subject = f"{owner}.{name}"
            rule = "required-field-added" if f.required else "optional-field-added"
            note = self.gate_note(subject, f.description)
            level: Level | None = "info" if note else None
            if f.required and f.has_default and not note:
                note, level = "the new member has a default", "warning"
            if variant is None and self.became_stable(
                subject, subject, subject, as_rule=rule, breaks=self.breaks(rule, sent), note=note, level=level
            ):
                continue
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
        old: Canon,
        new: Canon,
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
            if name in dirn.gates_of(m.name, m.description, {name: (dirn.Capability(owner, name),)}, True):
                if any(x.name == self.method_rename.get(m.name, m.name) for x in self.pair.new.methods):
                    gated.append(self.method_rename.get(m.name, m.name))
        for d in self.pair.old.defs:
            if any(dirn.mentioned(p, [name]) for p in dirn.mentions(d.description)) and self.rename.get(d.key, d.key) in self.nd:
                gated.append(self.rename.get(d.key, d.key))
        if not gated:
            return False
        self.emit(
            "capability-gate-removed", f"{owner}.{name}",
            f"capability {owner}.{name} is gone but {', '.join(sorted(set(gated)))}"
            f" {'stays' if len(set(gated)) == 1 else 'stay'}: now mandatory",
            sent, old=name, new="mandatory",
        )
        return True


def _marks(f: ir.Field) -> frozenset[str]:
    out = set()
    if f.default_on_error:
        out.add("x-deserialize-default-on-error")
    if f.skip_invalid_items:
        out.add("x-deserialize-skip-invalid-items")
    if f.default_on_null:
        out.add("x-deserialize-default-on-null")
    return frozenset(out)


def _json(value: object) -> str:
    return json.dumps(value, sort_keys=True)
