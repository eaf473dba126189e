"""Comparing unions and enums: variants, members, values, openness (``Variants``)."""

from __future__ import annotations

import json
from typing import Mapping

from acpgen import ir
from acpgen.diff import direction as dirn
from acpgen.diff.base import _vid, unique_pairs
from acpgen.diff.members import Members
from acpgen.diff.types import relate, spell


def _keyword(d: ir.UnionDef) -> str:
    return "anyOf" if d.exclusive is None else "oneOf"


class Variants(Members):
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
            if self.left_stable(f"{key}|{v}", key, f"{key} value {v!r}", self.breaks("enum-value-removed", sent), str(v)):
                continue
            rule = "enum-value-removed-open" if n.open else "enum-value-removed"
            self.emit(rule, key, f"{key} lost the value {v!r}", self.breaks(rule, sent), variant=str(v))
        for value, ev in sorted(((k, x) for k, x in nv.items() if k not in ov), key=lambda kv: str(kv[0])):
            rule = "enum-value-added-open" if o.open else "enum-value-added-closed"
            note = self.gate_note(f"{key}|{value}", ev.description)
            if self.became_stable(
                f"{key}|{value}", key, f"{key} value {value!r}", str(value), as_rule=rule,
                breaks=self.breaks(rule, sent), note=note, level="info" if note else None,
            ):
                continue
            self.emit(
                rule, key, f"{key} has a new value {value!r}", self.breaks(rule, sent), variant=str(value), note=note,
                level="info" if note else None,
            )

    def union(self, o: ir.UnionDef, n: ir.UnionDef, key: str, sent: frozenset[str]) -> None:
        om = {self.co.canon(m.type): m for m in o.members}
        nm = {self.cn.canon(m.type): m for m in n.members}
        if set(om) == set(nm) and (o.exclusive == "checked") != (n.exclusive == "checked"):
            # the same members, now held to "exactly one" or no longer: only a value that
            # two members accept changes sides (with other members, their records say it)
            rule = "type-narrowed" if n.exclusive == "checked" else "type-widened"
            what = (
                "now rejects a value that two of its members accept (`oneOf`)"
                if rule == "type-narrowed"
                else "now accepts a value that two of its members accept (`anyOf`)"
            )
            self.emit(rule, key, f"{key} {what}", self.breaks(rule, sent), old=_keyword(o), new=_keyword(n))
        for c in sorted(set(om) - set(nm), key=spell):
            label = om[c].title or spell(c)
            gone = self.breaks("variant-removed", sent)
            if om[c].title and self.left_stable(f"{key}|{label}", key, f"member {label} of {key}", gone, label):
                continue
            self.emit("variant-removed", key, f"{key} lost the member {label}", self.breaks("variant-removed", sent), variant=label)
        for c in sorted(set(nm) - set(om), key=spell):
            label = nm[c].title or spell(c)
            note = self.gate_note(f"{key}|{label}", nm[c].description)
            if nm[c].title and self.became_stable(
                f"{key}|{label}", key, f"member {label} of {key}", label, as_rule="variant-added-closed",
                breaks=self.breaks("variant-added-closed", sent), note=note, level="info" if note else None,
            ):
                continue
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
        renamed = unique_pairs(
            gone, fresh, lambda a, b: ov[a].kind == nv[b].kind == "tagged" and self._same_variant(ov[a], nv[b])
        )
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
            if self.left_stable(f"{key}|{vid}", key, f"variant {vid} of {key}", self.breaks("variant-removed", sent), vid):
                continue
            rule = "variant-removed-open" if n.open else "variant-removed"
            base = self.od.get(ov[vid].base or "")
            note = self.gone_gate(vid, ov[vid].description) or (
                self.gone_gate(vid, base.description) if base is not None else None
            )
            if note:
                self.emit(rule, key, f"{key} lost the variant {vid}", self.breaks(rule, sent), variant=vid, note=note,
                          level="info")
                continue
            if not n.open and n.default_variant is not None and self.default_accepts(ov[vid], n):
                rule = "variant-removed-open"
                note = (
                    f"the untagged default member {_vid(n.default_variant)} still accepts its payload: "
                    "meaning lost, payload still valid"
                )
            self.emit(rule, key, f"{key} lost the variant {vid}", self.breaks(rule, sent), variant=vid, note=note)
        for vid in sorted(fresh):
            if vid in renamed.values():
                continue
            v = nv[vid]
            rule = "variant-added-open" if o.open else "variant-added-closed"
            base = self.nd.get(v.base) if v.base else None
            note = self.gate_note(vid, v.description, by_name=True) or (
                self.gate_note(vid, base.description) if base else None
            )
            if not note and not o.open and o.default_variant is not None and self.default_accepts(v, o, False):
                rule = "variant-added-open"  # old receivers read it as their untagged default
                note = (
                    f"the old untagged default member {_vid(o.default_variant)} accepts its payload: "
                    "old receivers read it as that"
                )
            if self.became_stable(
                f"{key}|{vid}", key, f"variant {vid} of {key}", vid, as_rule=rule, breaks=self.breaks(rule, sent),
                note=note, level="info" if note else None,
            ):
                continue
            self.emit(
                rule, key, f"{key} has a new variant {vid}", self.breaks(rule, sent), variant=vid, note=note,
                level="info" if note else None,
            )
        for vid in sorted(set(ov) & set(nv)):
            a, b = ov[vid], nv[vid]
            if {a.kind, b.kind} == {"default", "tagged"}:  # an untagged member gained (or lost) a tag
                rule = "field-now-required" if b.kind == "tagged" else "field-now-optional"
                self.emit(
                    rule, f"{key}.{o.tag}", f"variant {vid} of {key} {'now' if b.kind == 'tagged' else 'no longer'} "
                    f"requires {o.tag!r}", self.breaks(rule, sent), variant=vid,
                )
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

    def default_accepts(self, v: ir.Variant, u: ir.TaggedUnionDef, v_is_old: bool = True) -> bool:
        """Whether the untagged default member of union ``u`` accepts every payload of
        variant ``v`` of the other release (``v`` old and ``u`` new, or the reverse): its
        tag not ruled out, every member the default requires there with a type that takes
        ``v``'s, the rest allowed as undeclared members. When unsure (sibling unions, other
        guards, a closed base), no."""
        v_defs, u_defs = (self.od, self.nd) if v_is_old else (self.nd, self.od)
        v_canon, u_canon = (self.co, self.cn) if v_is_old else (self.cn, self.co)
        d = u.default_variant
        if d is None or d.mixins or v.mixins or v.tag_value is None:
            return False
        if any(member != u.tag or v.tag_value in values for member, values in d.excludes):
            return False
        base = u_defs.get(d.base) if d.base else None
        if isinstance(base, ir.ObjectDef) and (base.extra != "allow" or base.mixins):
            return False
        fv, fd = _effective(v, v_defs), _effective(d, u_defs)
        if fv is None or fd is None:
            return False
        have = {f.wire_name: f for f in fv}
        for f in fd:
            if f.wire_name == u.tag:
                if relate(("lit", json.dumps(v.tag_value)), u_canon.canon(f.type)) not in ("same", "wider"):
                    return False
                continue
            g = have.get(f.wire_name)
            if g is None:
                if f.required:
                    return False
                continue
            if (f.required and not g.required) or relate(v_canon.canon(g.type), u_canon.canon(f.type)) not in (
                "same", "wider"
            ):
                return False
        return True


def _effective(v: ir.Variant, defs: Mapping[str, ir.Def]) -> tuple[ir.Field, ...] | None:
    """A variant's members with its base object's, or None when its base is not an object."""
    if v.base is None:
        return v.fields
    base = defs.get(v.base)
    if not isinstance(base, ir.ObjectDef):
        return None
    own = {f.wire_name for f in v.fields}
    return tuple(f for f in base.fields if f.wire_name not in own) + v.fields
