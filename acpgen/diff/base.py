"""The state of one comparison (``Base``): both releases' defs, renames, who sends what,
capabilities and stability, and the helpers every part of the walk uses to emit a change."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable

from acpgen import ir
from acpgen.diff import dataflow
from acpgen.diff import direction as dirn
from acpgen.diff.model import Change, make
from acpgen.diff.renames import def_renames, method_renames
from acpgen.diff.rules import BY_ID, Level, rank
from acpgen.diff.types import Canoniser
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
class Base:
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
        old_paths = {c.path for cs in self.caps_old.values() for c in cs}
        #: the paths (``Owner.member``) of the capabilities the new release adds
        self.new_caps = {c.path for cs in self.caps_new.values() for c in cs if c.path not in old_paths}
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
        if "sent_by" not in kw:
            kw["sent_by"] = self.sent_by(subject)
        self.out.append(make(self.pair.file, rule, subject, message, frozenset(sides), **kw))  # type: ignore[arg-type]

    def sent_by(self, subject: str) -> frozenset[str] | None:
        """The sides that send what a subject names: a def (or a member of one), or a
        method's params (its callers)."""
        head = subject.split(" -> ")[-1]
        owner = head.split(".", 1)[0]
        old = self.back.get(owner, owner)
        if owner in self.nd or old in self.od:
            return self.sides(owner if owner in self.nd else None, old if old in self.od else None)
        for m in self.pair.new.methods + self.pair.old.methods:
            if m.name == head:
                return dirn.callers(m)
        return None

    def sides(self, new_key: str | None, old_key: str | None = None) -> frozenset[str]:
        """The sides that send a def (in either release)."""
        found: frozenset[str] = frozenset()
        if new_key in self.sent_new:
            found |= self.sent_new[new_key]
        if old_key in self.sent_old:
            found |= self.sent_old[old_key]
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

    def left_stable(self, item: str, subject: str, what: str, breaks: frozenset[str], variant: str | None = None) -> bool:
        """An item gone from a stable file that the new unstable file still has moved there."""
        if item not in self.now_unstable:
            return False
        message = f"{what} left the stable schema (still in the unstable one)"
        self.emit("moved-to-unstable", subject, message, breaks, variant=variant)
        return True

    def became_stable(
        self, item: str, subject: str, what: str, variant: str | None = None, *, as_rule: str = "def-added",
        breaks: frozenset[str] = frozenset(), note: str | None = None, level: Level | None = None,
    ) -> bool:
        """An item new in a stable file that the old unstable file had moved from there.
        Stabilising keeps its kind, but takes the level that adding the item to the stable
        file would get (``as_rule``, lowered by the same gate): implementations of the old
        stable file never saw it."""
        if item not in self.was_unstable:
            return False
        r = BY_ID[as_rule]
        final = r.level if level is None or rank(level) < rank(r.level) else level
        if final == "info":
            self.emit("moved-to-stable", subject, f"{what} is now stable", variant=variant, note=note)
        else:
            because = f"as adding it to the stable file: {as_rule}" + (f"; {note}" if note else "")
            self.emit(
                "moved-to-stable-breaking", subject, f"{what} is now stable", breaks, variant=variant, note=because,
                level=final,
            )
        return True

    def gates(
        self, name: str, description: str | None, by_name: bool, only_new: bool, caps: dirn.Caps | None = None
    ) -> list[dirn.Capability]:
        """The capabilities that gate an item (only the ones this release adds, or any; of
        the new release, or of ``caps``)."""
        caps = self.caps_new if caps is None else caps
        out = []
        for wire in sorted(dirn.gates_of(name, description, caps, by_name)):
            candidates = [c for c in caps[wire] if not only_new or c.path in self.new_caps]
            described = [c for c in candidates if dirn.names_item(c, name)]
            if candidates:
                out.append(dirn.closest(described or candidates, name))
        # a gate that names the item, or whose def shares a word with it (TerminalCapabilities
        # for terminal/cancel), outranks one that only shares the member's name
        # (ClientAuthCapabilities.terminal)
        related = [c for c in out if dirn.names_item(c, name) or dirn.shared_words(c, name)]
        return related or out

    def entry_points(self, method: ir.Method, protocol: ir.Protocol) -> list[str]:
        """The optional response members that act as a request's gate: a member of a
        result the request's implementer sends whose description (or its def's) names the
        method in backticks, or that the method's description names (``PingResponse.choices``
        for ``ping/choose``). The caller only calls it when the implementer sent one."""
        defs = protocol.def_map()
        out: set[str] = set()
        for r in protocol.methods:
            d = defs.get(r.result or "")
            if r.side != method.side or r.name == method.name or not isinstance(d, ir.ObjectDef):
                continue
            for f in d.fields:
                if f.required:
                    continue
                path = f"{d.key}.{f.wire_name}"
                held = [defs[k].description for k in dirn.type_refs(f.type) if k in defs]
                texts = [f.description, *held]
                if any(dirn.names_in(t, method.name) for t in texts) or dirn.names_in(method.description, path):
                    out.add(path)
        return sorted(out)

    def gone_gate(self, name: str, description: str | None, method: ir.Method | None = None) -> str | None:
        """Why an item removed with its gate breaks nobody: its capability (of the old
        release) or its only entry point (an optional response member) is gone too, so
        no peer of either release is offered it."""
        new_paths = {c.path for cs in self.caps_new.values() for c in cs}
        gone = [c.path for c in self.gates(name, description, True, False, self.caps_old) if c.path not in new_paths]
        if gone:
            return f"its gate `{gone[0]}` went with it: no peer advertises it"
        if method is not None:
            entries = self.entry_points(method, self.pair.old)
            if entries and not any(self._member_stays(e) for e in entries):
                return f"its only entry point `{entries[0]}` went with it: no peer is offered it"
            return self.data_gate(method, added=False)
        return None

    def data_gate(self, method: ir.Method, added: bool) -> str | None:
        """The note of a request gated by the data it needs (``acpgen.diff.dataflow``),
        when that gate came with it (``added``: absent from the old release, or behind a
        capability it adds) or went with it (absent from the new release, or behind a
        capability it lost); else None."""
        here, there = (self.pair.new, self.od) if added else (self.pair.old, self.nd)
        names = self.back if added else self.rename
        caps = self.caps_new if added else self.caps_old
        kept = {c.path for cs in (self.caps_old if added else self.caps_new).values() for c in cs}
        defs = here.def_map()
        for need in dataflow.needs(here, method):
            gates: list[tuple[dataflow.Point, str | None]] = []
            for path in need.paths:
                found = None
                for point in path:
                    guard = self._guard(point, defs, caps)
                    if not dataflow.present(point, there, names) or (guard is not None and guard not in kept):
                        found = (point, guard)
                        break
                if found is None:
                    break
                gates.append(found)
            else:
                what = _gate_text(sorted(set(gates), key=lambda g: g[0].label))
                wire = need.member.rpartition(".")[2]
                source = f"the caller gets the `{need.type}` its `{wire}` needs only there"
                if added:
                    return f"gated by {what}, new with it: {source}"
                return f"its gate, {what}, went with it: {source}; no peer is offered it"
        return None

    def _guard(self, point: dataflow.Point, defs: dict[str, ir.Def], caps: dirn.Caps) -> str | None:
        """The capability that guards an optional member: named by its description (or its
        def's), or naming it in its own."""
        if point.wire is None:
            return None
        text = "\n".join(t for t in dataflow.descriptions(point, defs) if t) or None
        gates = self.gates(f"{point.owner}.{point.wire}", text, False, False, caps)
        return gates[0].path if gates else None

    def _member_stays(self, path: str) -> bool:
        owner, _, member = path.partition(".")
        d = self.nd.get(self.rename.get(owner, owner))
        return isinstance(d, ir.ObjectDef) and any(f.wire_name == member for f in d.fields)

    def gate_note(self, name: str, description: str | None, by_name: bool = False) -> str | None:
        gates = self.gates(name, description, by_name, only_new=True)
        if not gates:
            return None
        kind = "capability " if len(gates) == 1 else "capabilities "
        return "gated by the new " + kind + ", ".join(f"`{c.path}`" for c in gates)



def _gate_text(gates: list[tuple[dataflow.Point, str | None]]) -> str:
    """``the optional member `NewSessionResponse.models` (through `SessionModelState`)``."""
    parts = []
    for point, guard in gates:
        text = f"`{point.owner}` variant `{point.variant}`" if point.wire is None else f"`{point.label}`"
        if point.through is not None:
            text += f" (through `{point.through}`)"
        if guard is not None:
            text += f" behind the capability `{guard}`"
        parts.append(text)
    kind = "member" if all(p.wire is not None for p, _ in gates) else "part"
    return f"the optional {kind}{'s' if len(parts) > 1 else ''} " + ", ".join(parts)


def unique_pairs(gone: list[str], fresh: list[str], same: Callable[[str, str], bool]) -> dict[str, str]:
    """Renames among a def's members or variants: a gone one and a new one that are the
    same, each the other's only match."""
    out: dict[str, str] = {}
    for g in gone:
        matches = [f for f in fresh if same(g, f)]
        if len(matches) == 1 and [x for x in gone if same(x, matches[0])] == [g]:
            out[g] = matches[0]
    return out


def _vid(v: ir.Variant) -> str:
    return str(v.tag_value) if v.kind == "tagged" else (v.title or v.kind)


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
