"""Renames: a def or method whose content stayed and whose name changed is one change.

Content is compared by a fingerprint of the def without its name, its annotations and
its origin, with references to other defs named in the new release's terms. Matching
goes to a fixed point (a def that refers to a renamed def is itself renamed with it).
A pair is a rename only when it is the one pair with that content; defs that carry a
method's params or result only pair when their methods pair; defs with next to no
content (an object with at most ``_meta``) also need a word of their names in common.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping

from acpgen import ir

_DROP = {
    "origin",
    "description",
    "title",
    "docs_ignore",
    "key",
    "lifted_from",
    "fallback_title",
    "fallback_description",
    "label",
    "group",
    "discriminator_keyword",
    "encoding",
    "overlays",
}
_SUFFIXES = {"request", "response", "notification", "capabilities", "params", "result", "update", "content"}


def _strip(value: Any, rename: Mapping[str, str]) -> Any:
    if isinstance(value, dict):
        out = {k: _strip(v, rename) for k, v in value.items() if k not in _DROP}
        if value.get("node") == "Ref":
            out["key"] = rename.get(value["key"], value["key"])
        if value.get("node") in ("Variant", "Mixin", "ObjectDef") and value.get("base"):
            out["base"] = rename.get(value["base"], value["base"])
        return out
    if isinstance(value, list):
        return [_strip(v, rename) for v in value]
    return value


def fingerprint(d: ir.Def, rename: Mapping[str, str]) -> str:
    return json.dumps(_strip(ir.to_jsonable(d), rename), sort_keys=True)


def trivial(d: ir.Def) -> bool:
    if isinstance(d, ir.ObjectDef):
        return not d.mixins and all(f.wire_name == "_meta" for f in d.fields)
    return False


def words(name: str) -> set[str]:
    parts = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", name.replace("/", " ").replace("_", " "))
    return {p.lower() for p in parts if len(p) > 2} - _SUFFIXES


def _methods_of(protocol: ir.Protocol) -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for m in protocol.methods:
        for key in (m.params, m.result):
            if key:
                out.setdefault(key, set()).add(m.name)
    return {k: frozenset(v) for k, v in out.items()}


def _pair(
    removed: list[str], added: list[str], old: Mapping[str, ir.Def], new: Mapping[str, ir.Def], rename: dict[str, str],
    allowed: Any,
) -> bool:
    """Add every unique content match to ``rename``; True when one was added."""
    by_print: dict[str, tuple[list[str], list[str]]] = {}
    for key in removed:
        by_print.setdefault(fingerprint(old[key], rename), ([], []))[0].append(key)
    for key in added:
        by_print.setdefault(fingerprint(new[key], rename), ([], []))[1].append(key)
    grew = False
    for olds, news in by_print.values():
        if not olds or not news:
            continue
        pairs = [(o, n) for o in olds for n in news if allowed(o, n)]
        if trivial(old[olds[0]]):
            pairs = [(o, n) for o, n in pairs if words(o) & words(n)]
        if len({o for o, _ in pairs}) == len(pairs) == len({n for _, n in pairs}):
            for o, n in pairs:
                rename[o] = n
                grew = True
    return grew


def def_renames(
    old: ir.Protocol, new: ir.Protocol, method_renames: Mapping[str, str], seed: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Old def key -> new def key, for every def renamed with its content unchanged, plus
    ``seed``: the params and result defs of one method under two names (their content may
    differ: it is compared as one def's)."""
    od, nd = old.def_map(), new.def_map()
    om, nm = _methods_of(old), _methods_of(new)
    rename: dict[str, str] = dict(seed or {})

    def allowed(o: str, n: str) -> bool:
        mapped = frozenset(method_renames.get(m, m) for m in om.get(o, frozenset()))
        return mapped == nm.get(n, frozenset())

    while True:
        removed = sorted(k for k in od if k not in nd and k not in rename)
        taken = set(rename.values())
        added = sorted(k for k in nd if k not in od and k not in taken)
        grew = _pair(removed, added, od, nd, rename, allowed)
        for o, n in slot_pairs(od, nd, rename).items():
            rename[o] = n
            grew = True
        if not grew:
            return rename


def slot_ref(t: ir.TypeExpr) -> str | None:
    """The def a slot holds: ``X``, ``X | null``, ``array<X>``, a one-def ``anyOf``."""
    if isinstance(t, ir.Ref):
        return t.key
    if isinstance(t, ir.Nullable):
        return slot_ref(t.inner)
    if isinstance(t, ir.Array):
        return slot_ref(t.items)
    if isinstance(t, ir.Map):
        return slot_ref(t.values)
    if isinstance(t, ir.AnyOf):
        keys = [slot_ref(m) for m in t.members if not isinstance(m, ir.NullT)]
        return keys[0] if len(keys) == 1 else None
    return None


def _slots(o: ir.Def, n: ir.Def) -> list[tuple[str | None, str | None]]:
    """Pairs of defs held by the same slot of one def in two releases."""
    out: list[tuple[str | None, str | None]] = []

    def by_name(a: tuple[ir.Field, ...], b: tuple[ir.Field, ...]) -> None:
        nb = {f.wire_name: f for f in b}
        out.extend((slot_ref(f.type), slot_ref(nb[f.wire_name].type)) for f in a if f.wire_name in nb)

    if isinstance(o, ir.ObjectDef) and isinstance(n, ir.ObjectDef):
        by_name(o.fields, n.fields)
    elif isinstance(o, ir.TaggedUnionDef) and isinstance(n, ir.TaggedUnionDef):
        by_name(o.shared_fields, n.shared_fields)
        nv = {(v.kind, v.tag_value): v for v in n.variants}
        for v in o.variants:
            w = nv.get((v.kind, v.tag_value))
            if w is not None:
                out.append((v.base, w.base))
                by_name(v.fields, w.fields)
    elif isinstance(o, ir.UnionDef) and isinstance(n, ir.UnionDef):
        a = [m for m in o.members if not isinstance(m.type, ir.NullT)]
        b = [m for m in n.members if not isinstance(m.type, ir.NullT)]
        if len(a) == len(b) == 1:
            out.append((slot_ref(a[0].type), slot_ref(b[0].type)))
        else:
            titled = {m.title: m for m in b if m.title}
            out.extend((slot_ref(m.type), slot_ref(titled[m.title].type)) for m in a if m.title in titled)
    elif isinstance(o, ir.AliasDef) and isinstance(n, ir.AliasDef):
        out.append((slot_ref(o.type), slot_ref(n.type)))
    return out


def slot_pairs(od: Mapping[str, ir.Def], nd: Mapping[str, ir.Def], rename: Mapping[str, str]) -> dict[str, str]:
    """A def gone and a def new held by the same slot of a def both releases have (an
    inline object lifted under one name becoming a ``$defs`` entry of another): one def,
    renamed, whose content is then compared. Only one-to-one pairs count."""
    found: dict[str, set[str]] = {}
    taken = set(rename.values())
    for key in sorted(od):
        other = nd.get(rename.get(key, key))
        if other is None:
            continue
        for a, b in _slots(od[key], other):
            if a and b and a not in nd and b not in od and a not in rename and b not in taken and a in od and b in nd:
                if type(od[a]) is type(nd[b]):
                    found.setdefault(a, set()).add(b)
    claims: dict[str, int] = {}
    for targets in found.values():
        for t in targets:
            claims[t] = claims.get(t, 0) + 1
    return {a: next(iter(bs)) for a, bs in sorted(found.items()) if len(bs) == 1 and claims[next(iter(bs))] == 1}


def method_renames(old: ir.Protocol, new: ir.Protocol) -> dict[str, str]:
    """Old wire name -> new, for a method that is gone whose params and result (content or
    a renamed def) are those of exactly one new method of the same kind and side."""
    od, nd = old.def_map(), new.def_map()
    names_old = {m.name for m in old.methods}
    names_new = {m.name for m in new.methods}
    gone = [m for m in old.methods if m.name not in names_new]
    fresh = [m for m in new.methods if m.name not in names_old]
    base = def_renames(old, new, {})

    def same(a: str | None, b: str | None) -> bool:
        if a is None or b is None:
            return a == b
        if base.get(a) == b:
            return True
        return a in od and b in nd and fingerprint(od[a], base) == fingerprint(nd[b], base)

    def carries(a: ir.Method, b: ir.Method) -> bool:
        """Same kind and side, same params and result."""
        return a.kind == b.kind and a.side == b.side and same(a.params, b.params) and same(a.result, b.result)

    out: dict[str, str] = {}
    for m in gone:
        candidates = [n for n in fresh if carries(m, n)]
        if len(candidates) > 1:
            candidates = [n for n in candidates if _closeness(m.name, n.name)]
        if len(candidates) == 1 and sum(1 for x in gone if carries(x, candidates[0])) == 1:
            out[m.name] = candidates[0].name
    # then by name: a gone method and a new one of the same kind and side whose names are
    # close (``logout`` -> ``auth/logout``, ``authenticate`` -> ``auth/login``), closest first
    scored = [
        (_closeness(m.name, n.name), m.name, n.name)
        for m in gone
        for n in fresh
        if m.name not in out and n.name not in out.values() and n.kind == m.kind and n.side == m.side
    ]
    scored = [s for s in scored if s[0] > 0]
    while scored:
        top = max(s[0] for s in scored)
        level = [s for s in scored if s[0] == top]
        olds = [o for _, o, _ in level]
        news = [n for _, _, n in level]
        unique = [(o, n) for _, o, n in level if olds.count(o) == 1 and news.count(n) == 1]
        for o, n in unique:
            out[o] = n
        if unique:
            taken_o = {o for o, _ in unique}
            taken_n = {n for _, n in unique}
            scored = [s for s in scored if s[1] not in taken_o and s[2] not in taken_n]
        else:  # the closest pairs are ambiguous: the methods involved are not renames
            blocked_o, blocked_n = set(olds), set(news)
            scored = [s for s in scored if s[1] not in blocked_o and s[2] not in blocked_n]
    return out


def _closeness(a: str, b: str) -> int:
    """3: same last name segment (``logout``, ``auth/logout``); 2: a word in common;
    1: one word a prefix of another (``authenticate``, ``auth/login``); 0: unrelated."""
    la, lb = a.rsplit("/", 1)[-1], b.rsplit("/", 1)[-1]
    if la == lb:
        return 3
    wa, wb = words(a) | {la}, words(b) | {lb}
    if wa & wb:
        return 2
    if any(len(min(x, y, key=len)) >= 4 and (x.startswith(y) or y.startswith(x)) for x in wa for y in wb):
        return 1
    return 0
