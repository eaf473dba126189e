"""IR -> the view of one schema reference page (shared by the MDX and Markdown styles).

The page follows upstream's structure (docs-format-and-overlays.md, A2-A8): Agent,
Client and Protocol Level sections with one block per method and the method's
types under it, then every other type alphabetically. What it shows is decided
from the IR, with upstream's defects fixed (A10):

* open enums and open unions say they are open, with the ``_`` extension rule (D1);
* item types of arrays and value types of maps are kept, integer formats are kept
  on nullable fields, any-JSON is ``any`` (D2);
* a one-variant union is shown as one object with every field (no collapse that
  hides the shared fields, D3);
* unstable items carry a badge (D5); method prose comes from the schema (D8);
* sibling unions are labelled choices, never merged into a property list
  (:mod:`acpgen.render.docalts`);
* with a release history, every element carries its marks (:mod:`acpgen.history.marks`).

Type texts are sequences of :class:`Seg` (text, optional anchor) so that each style
spells links its own way; descriptions stay raw Markdown and each style escapes them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Mapping

from acpgen import ir
from acpgen.history.elements import member_key, method_key, variant_key
from acpgen.history.marks import Mark
from acpgen.render.docalts import Alternatives, DocGroup, branch_text, rule_note
from acpgen.render.docoverlays import DocOverlay, proposed_changes, rfds_of
from acpgen.render.doctypes import Seg, TypeText, Types, anchor_of, constraints_of, innermost, plain

SECTION_INTROS = {
    "Agent": (
        "Defines the interface that all ACP-compliant agents must implement.\n\n"
        "Agents are programs that use generative AI to autonomously modify code. They handle\n"
        "requests from clients and execute tasks using language models and tools."
    ),
    "Client": (
        "Defines the interface that ACP-compliant clients must implement.\n\n"
        "Clients are typically code editors (IDEs, text editors) that provide the interface\n"
        "between users and AI agents. They manage the environment, handle user interactions,\n"
        "and control access to resources."
    ),
    "Protocol Level": (
        "Defines the interface that ACP-compliant agents and clients must both implement.\n\n"
        "Notifications whose methods start with '$/' are messages which are protocol\n"
        "implementation dependent and might not be implementable in all clients or\n"
        "agents. If an agent or client receives notifications starting with '$/' it is\n"
        "free to ignore the notification."
    ),
}
SECTION_SIDES = {"Agent": ("agent", "both"), "Client": ("client", "both"), "Protocol Level": ("protocol",)}
EXTENSION_RULE = (
    "Values beginning with `_` are reserved for implementation-specific extensions; "
    "unknown values that do not begin with `_` are reserved for future ACP versions."
)


@dataclass(frozen=True)
class DocField:
    name: str
    type: TypeText
    required: bool
    description: str
    constraints: tuple[tuple[str, str], ...] = ()
    values: tuple[str, ...] = ()
    unstable: bool = False
    #: slugs of the RFD overlays that added or changed it
    rfds: tuple[str, ...] = ()
    #: history marks (since, stable since, changed in), when a history is read
    marks: tuple[Mark, ...] = ()

    @property
    def post(self) -> tuple[str, ...]:
        return ("unstable",) * self.unstable + tuple(f"RFD: {r}" for r in self.rfds)


@dataclass(frozen=True)
class DocVariant:
    label: str
    attr: TypeText
    description: str
    fields: tuple[DocField, ...] = ()
    unstable: bool = False
    #: the open fallback of an open enum or union
    open: bool = False
    #: the type whose fields the variant carries, linked from the variant
    payload: str | None = None
    rfds: tuple[str, ...] = ()
    #: its sibling unions, each a labelled choice (never merged into ``fields``)
    groups: tuple[DocGroup, ...] = ()
    marks: tuple[Mark, ...] = ()

    @property
    def post(self) -> tuple[str, ...]:
        return ("open",) * self.open + ("unstable",) * self.unstable + tuple(f"RFD: {r}" for r in self.rfds)


@dataclass(frozen=True)
class DocType:
    name: str
    anchor: str
    kind: str  # Object | Union | Enumeration | simple | "" (any JSON)
    description: str
    simple: str = ""
    fields: tuple[DocField, ...] = ()
    shared: tuple[DocField, ...] = ()
    variants: tuple[DocVariant, ...] = ()
    values: tuple[str, ...] = ()
    constraints: tuple[tuple[str, str], ...] = ()
    unstable: bool = False
    #: a note on the whole type: an open union or enumeration, or a ``oneOf`` whose
    #: members can overlap (a value must match exactly one of them)
    note: str = ""
    #: set when a one-variant union is shown as one object
    variant_note: str = ""
    rfds: tuple[str, ...] = ()
    #: the sibling unions of an object, each a labelled choice (never merged into ``fields``)
    groups: tuple[DocGroup, ...] = ()
    marks: tuple[Mark, ...] = ()
    #: the marks of each of ``values`` (an enumeration shown as a table)
    value_marks: tuple[tuple[Mark, ...], ...] = ()

    @property
    def values_marked(self) -> bool:
        return any(self.value_marks)


@dataclass(frozen=True)
class DocMethod:
    name: str
    anchor: str | None
    description: str
    types: tuple[DocType, ...]
    unstable: bool = False
    rfds: tuple[str, ...] = ()
    marks: tuple[Mark, ...] = ()


@dataclass(frozen=True)
class DocSection:
    title: str
    intro: str
    methods: tuple[DocMethod, ...]


@dataclass(frozen=True)
class DocPage:
    title: str
    description: str
    header: str
    label: str
    draft: bool
    sections: tuple[DocSection, ...]
    types: tuple[DocType, ...]
    #: one block per RFD overlay applied ("Proposed changes")
    overlays: tuple[DocOverlay, ...] = ()

    @property
    def full_title(self) -> str:
        """The title that tells the pages of one site apart (``Schema v1``, ``Schema v2
        (unstable)``): the Markdown pages' heading, so their navigation entries differ.
        The MDX pages keep upstream's ``Schema`` (its site groups them by tree already)."""
        tree = self.label.split("-")[0]
        return f"{self.title} {tree}" + (" (unstable)" if self.draft else "")


def clean_description(text: str | None) -> str:
    """Rustdoc intra-doc links around code are unwrapped: [`X`] -> `X`."""
    return (text or "").replace("[`", "`").replace("`]", "`").strip()


# --------------------------------------------------------------------------- the page


class _Builder:
    def __init__(self, protocol: ir.Protocol, marks: Mapping[str, tuple[Mark, ...]] | None = None) -> None:
        self.p = protocol
        self.marks: Mapping[str, tuple[Mark, ...]] = marks or {}
        self.defs = protocol.def_map()
        self.types = Types(protocol)
        self.unstable = frozenset(protocol.unstable)
        self.alts = Alternatives(self.defs, self.types, self.fields, clean_description)

    # ---- fields

    def field(self, owner: str, f: ir.Field) -> DocField:
        description = clean_description(f.description)
        inner = innermost(f.type)
        values: tuple[str, ...] = ()
        if isinstance(inner, ir.Lit):
            if len(inner.values) == 1 and not description:
                description = f"The discriminator value. Must be `{json.dumps(inner.values[0])}`."
            elif len(inner.values) > 1:
                values = tuple(json.dumps(v) for v in inner.values)
        return DocField(
            f.wire_name,
            self.types.text(f.type),
            f.required,
            description,
            constraints_of(f.type, (f.has_default, f.default)),
            values,
            f"{owner}.{f.wire_name}" in self.unstable,
            rfds_of(f.origin),
            self.marks.get(member_key(owner, f.wire_name), ()),
        )

    def fields(self, owner: str, fields: tuple[ir.Field, ...]) -> tuple[DocField, ...]:
        return tuple(self.field(owner, f) for f in sorted(fields, key=lambda f: f.wire_name.encode()))

    def object_fields(self, key: str | None) -> tuple[ir.Field, ...]:
        """The members of an object def (or of a one-variant union), its sibling unions'
        left out: they are :meth:`object_mixins`, shown as choices."""
        d = self.defs.get(key or "")
        if isinstance(d, ir.ObjectDef):
            return d.fields
        if isinstance(d, ir.TaggedUnionDef) and len(d.variants) == 1:
            return d.shared_fields + self.variant_fields(d, d.variants[0])
        return ()

    def object_mixins(self, key: str | None) -> tuple[ir.Mixin, ...]:
        d = self.defs.get(key or "")
        if isinstance(d, ir.ObjectDef):
            return d.mixins
        if isinstance(d, ir.TaggedUnionDef) and len(d.variants) == 1:
            return self.variant_mixins(d.variants[0])
        return ()

    def variant_mixins(self, v: ir.Variant) -> tuple[ir.Mixin, ...]:
        return v.mixins + self.object_mixins(v.base)

    def tag_field(self, union: ir.TaggedUnionDef, v: ir.Variant) -> ir.Field:
        if v.kind == "fallback":
            text = f"Any other `{union.tag}` value. {EXTENSION_RULE}"
            return ir.Field(union.tag, ir.Prim("string"), True, v.origin, text)
        return ir.Field(union.tag, ir.Lit((v.tag_value,)), v.kind == "tagged", v.origin)

    def variant_fields(self, union: ir.TaggedUnionDef, v: ir.Variant) -> tuple[ir.Field, ...]:
        own = v.fields + self.object_fields(v.base)
        if v.kind == "default":
            return own
        names = {f.wire_name for f in own}
        return own if union.tag in names else (self.tag_field(union, v),) + own

    # ---- defs

    def doc_type(self, d: ir.Def) -> DocType:
        t = self._doc_type(d)
        t = replace(t, rfds=rfds_of(d.origin)) if d.origin.overlays else t
        marks = self.marks.get(d.key, ())
        if t.values and self.marks:
            t = replace(t, value_marks=tuple(self.marks.get(variant_key(d.key, json.loads(v)), ()) for v in t.values))
        return replace(t, marks=marks) if marks else t

    def _doc_type(self, d: ir.Def) -> DocType:
        name, anchor = d.key, anchor_of(d.key)
        description = clean_description(d.description)
        unstable = name in self.unstable
        if isinstance(d, ir.ObjectDef):
            if d.mixins and all(len(branches) == 1 for _, branches in ir.mixin_groups(d.mixins)):
                # only one-branch unions (an object's own `not`): an object, with the rule said
                note = self.alternatives_note(d.mixins)
                return DocType(name, anchor, "Object", _para(description, note), fields=self.fields(name, d.fields), unstable=unstable)
            groups = self.alts.groups(name, d.mixins)
            if len(groups) == 1:  # one choice: its branches are the variants (upstream's form)
                variants = tuple(
                    DocVariant(b.label, (Seg("object"),), _para(b.description, "\n\n".join(b.rules)), b.fields, payload=b.payload, groups=b.groups)
                    for b in groups[0].branches
                )
                description = _para(description, self.alternatives_note(d.mixins))
                return DocType(name, anchor, "Union", description, shared=self.fields(name, d.fields), variants=variants, unstable=unstable)
            if groups:
                description = _para(description, rule_note(self.types, d.mixins))
                return DocType(name, anchor, "Object", description, fields=self.fields(name, d.fields), unstable=unstable, groups=groups)
            return DocType(name, anchor, "Object", description, fields=self.fields(name, d.fields), unstable=unstable)
        if isinstance(d, ir.TaggedUnionDef):
            return self.tagged(d, description, unstable)
        if isinstance(d, ir.EnumDef):
            return self.enum(d, description, unstable)
        if isinstance(d, ir.UnionDef) and len(d.members) == 1 and isinstance(d.members[0].type, ir.Ref):
            only = d.members[0]
            assert isinstance(only.type, ir.Ref)
            fields = self.fields(name, self.object_fields(only.type.key))
            mixins = self.object_mixins(only.type.key)
            note = _para(clean_description(only.description), rule_note(self.types, mixins))
            groups = self.alts.groups(name, mixins)
            return DocType(name, anchor, "Object", description, fields=fields, unstable=unstable, variant_note=note.strip(), groups=groups)
        if isinstance(d, ir.UnionDef):
            variants = tuple(self.member(name, m) for m in d.members)
            return DocType(name, anchor, "Union", description, variants=variants, unstable=unstable, note=exactly_one_note(d))
        return self.alias(d, description, unstable)

    def tagged(self, d: ir.TaggedUnionDef, description: str, unstable: bool) -> DocType:
        name, anchor = d.key, anchor_of(d.key)
        if len(d.variants) == 1:
            v = d.variants[0]
            fields = self.fields(name, d.shared_fields + self.variant_fields(d, v))
            mixins = self.variant_mixins(v)
            note = _para(clean_description(v.description), rule_note(self.types, mixins)).strip()
            groups = self.alts.groups(name, mixins)
            return DocType(name, anchor, "Object", description, fields=fields, unstable=unstable, variant_note=note, groups=groups)
        variants: list[DocVariant] = []
        for v in d.variants:
            label = str(v.tag_value) if v.kind == "tagged" else (v.title or v.base or "Object") if v.kind == "default" else (v.title or "other")
            mixins = self.variant_mixins(v)
            text = _para(clean_description(v.description), rule_note(self.types, mixins)).strip()
            if v.kind == "fallback":
                text = _para(text, f"Any `{d.tag}` value not listed above is kept with its payload. {EXTENSION_RULE}")
            variants.append(
                DocVariant(
                    label,
                    (Seg("object"),),
                    text,
                    self.fields(f"{name}|{v.key}", self.variant_fields(d, v)),
                    f"{name}|{v.key}" in self.unstable,
                    v.kind == "fallback",
                    v.base,
                    rfds_of(v.origin),
                    self.alts.groups(f"{name}|{v.key}", mixins),
                    self.marks.get(variant_key(name, v.tag_value), ()) if v.kind == "tagged" else (),
                )
            )
        note = ""
        if d.open:
            note = f"**Open union:** a message may carry a `{d.tag}` not listed here; it is kept, not rejected. {EXTENSION_RULE}"
        return DocType(
            name, anchor, "Union", description, shared=self.fields(name, d.shared_fields), variants=tuple(variants), unstable=unstable, note=note
        )

    def alternatives_note(self, mixins: tuple[ir.Mixin, ...]) -> str:
        """One sentence per sibling union: how many of its branches must hold, and each
        branch by its label with what it asks for."""
        out = []
        for keyword, branches in ir.mixin_groups(mixins):
            if len(branches) == 1:  # an object's own `not`, read as a rule
                out.append(f"Must also hold: {branch_text(self.types, branches[0])}.")
                continue
            how = "exactly one" if keyword == "oneOf" else "at least one"
            out.append(f"Must also match {how} of (`{keyword}`): " + "; ".join(branch_text(self.types, b) for b in branches) + ".")
        return "\n\n".join(out)

    def enum(self, d: ir.EnumDef, description: str, unstable: bool) -> DocType:
        name, anchor = d.key, anchor_of(d.key)
        note = f"**Open enumeration:** values not listed here are accepted and kept. {EXTENSION_RULE}" if d.open else ""
        if d.encoding == "enum" and not any(v.description for v in d.values):
            values = tuple(json.dumps(v.value) for v in d.values)
            return DocType(name, anchor, "Enumeration", description, values=values, unstable=unstable, note=note)
        attr = (Seg(d.format or d.base),)
        variants = [
            DocVariant(
                str(v.value),
                attr,
                clean_description(v.description),
                unstable=f"{name}|{v.value}" in self.unstable,
                marks=self.marks.get(variant_key(name, v.value), ()),
            )
            for v in d.values
        ]
        if d.open:
            text = _para(clean_description(d.fallback_description), f"Any other {d.base} value is accepted and kept.")
            variants.append(DocVariant(d.fallback_title or d.base, attr, text, open=True, rfds=rfds_of(d.origin)))
        return DocType(name, anchor, "Union", description, variants=tuple(variants), unstable=unstable, note=note)

    def member(self, owner: str, m: ir.UnionMember) -> DocVariant:
        t = m.type
        description = clean_description(m.description)
        if isinstance(t, ir.Ref):
            fields = self.fields(t.key, self.object_fields(t.key))
            groups = self.alts.groups(t.key, self.object_mixins(t.key))
            target = self.defs.get(t.key)
            if isinstance(target, ir.ObjectDef) and target.lifted_from:
                text = description or clean_description(target.description)
                text = _para(text, rule_note(self.types, target.mixins))
                return DocVariant(m.title or "Object", (Seg("object"),), text, fields, groups=groups)
            return DocVariant(m.title or t.key, (), description, fields, payload=t.key, groups=groups)
        if isinstance(t, ir.NullT):
            label = "null"
        elif isinstance(t, ir.Lit):
            label = " | ".join(json.dumps(v) if not isinstance(v, str) else v for v in t.values)
        else:
            label = m.title or json_kind(t)
        attr = (Seg(t.constraints.format),) if isinstance(t, ir.Prim) and t.constraints.format else self.types.text(t)
        return DocVariant(label, attr, description)

    def alias(self, d: ir.AliasDef, description: str, unstable: bool) -> DocType:
        name, anchor = d.key, anchor_of(d.key)
        t = d.type
        if isinstance(t, ir.AnyT):
            return DocType(name, anchor, "", description, simple="any", unstable=unstable)
        if isinstance(t, ir.Prim):
            simple = t.kind + (f" ({t.constraints.format})" if t.constraints.format and t.kind != "boolean" else "")
            constraints = tuple(c for c in constraints_of(t) if c[0] != "Format")
            return DocType(name, anchor, "simple", description, simple=simple, constraints=constraints, unstable=unstable)
        if isinstance(t, (ir.AnyOf, ir.Nullable)):
            members = t.members if isinstance(t, ir.AnyOf) else (t.inner, ir.NullT())
            variants = tuple(self.member(name, ir.UnionMember(m, d.origin)) for m in members)
            return DocType(name, anchor, "Union", description, variants=variants, unstable=unstable)
        return DocType(name, anchor, "simple", description, simple=plain(self.types.text(t)), constraints=constraints_of(t), unstable=unstable)

    # ---- methods and page

    def sections(self) -> tuple[tuple[DocSection, ...], set[str]]:
        placed: set[str] = set()
        by_name: dict[str, set[str]] = {}
        for m in self.p.methods:
            for title, sides in SECTION_SIDES.items():
                if m.side in sides:
                    by_name.setdefault(m.name, set()).add(title)
        out: list[DocSection] = []
        prefixes = {"Agent": "agent-", "Client": "client-", "Protocol Level": "protocol-"}
        for title, sides in SECTION_SIDES.items():
            methods = sorted((m for m in self.p.methods if m.side in sides), key=lambda m: m.name.encode())
            blocks: list[DocMethod] = []
            for m in methods:
                linked = m.types if m.linked_by == "x-method" else (m.params, m.result)
                keys = sorted({k for k in linked if k and k in self.defs and not self.defs[k].docs_ignore})
                params = self.defs.get(m.params or "")
                if not keys or (params is not None and params.docs_ignore):
                    continue  # an x-docs-ignore request hides its method
                placed.update(keys)
                anchor = None
                if "/" in m.name:
                    anchor = m.name.lower().replace("/", "-")
                    if len(by_name.get(m.name, ())) > 1:
                        anchor = prefixes[title] + anchor
                blocks.append(
                    DocMethod(
                        m.name,
                        anchor,
                        clean_description(m.description),
                        tuple(self.doc_type(self.defs[k]) for k in keys),
                        f"method:{m.name}" in self.unstable,
                        rfds_of(m.origin),
                        self.marks.get(method_key(m.name), ()),
                    )
                )
            if blocks or title != "Protocol Level":
                out.append(DocSection(title, SECTION_INTROS[title], tuple(blocks)))
        return tuple(out), placed

    def shown(self, d: ir.Def) -> bool:
        """Lifted inline objects have no section of their own: they are shown inline."""
        return not d.docs_ignore and not getattr(d, "lifted_from", None)


def json_kind(t: ir.TypeExpr) -> str:
    """The JSON Schema ``type`` name of an expression (upstream's label for untitled members)."""
    if isinstance(t, ir.Prim):
        return t.kind
    if isinstance(t, (ir.Array, ir.Tuple)):
        return "array"
    if isinstance(t, ir.NullT):
        return "null"
    return "object"


def exactly_one_note(d: ir.UnionDef) -> str:
    """What a reader must know of a ``oneOf`` whose members can accept the same value: a
    value two of them accept is rejected. Said only there: for an ``anyOf``, and for a
    ``oneOf`` whose members cannot overlap (``exclusive == "disjoint"``), "one of the
    members" is all there is to it."""
    if d.exclusive != "checked":
        return ""
    return (
        "**Exactly one:** a value must match exactly one of these members (`oneOf`); "
        "a value that two of them accept is rejected."
    )


def _para(text: str, extra: str) -> str:
    return f"{text}\n\n{extra}" if text and extra else text or extra


def build_doc_page(protocol: ir.Protocol, header: str, marks: Mapping[str, tuple[Mark, ...]] | None = None) -> DocPage:
    """``marks``: the history marks by element key (:mod:`acpgen.history.marks`); none
    without a history, and the page is then what it always was."""
    b = _Builder(protocol, marks)
    sections, placed = b.sections()
    rest = tuple(b.doc_type(d) for d in sorted(protocol.defs, key=lambda d: d.key.encode()) if b.shown(d) and d.key not in placed)
    anchors = {t.name: t.anchor for t in rest}
    for section in sections:
        for m in section.methods:
            anchors.update({t.name: t.anchor for t in m.types})
            if m.anchor:
                anchors.setdefault(m.name, m.anchor)
    return DocPage(
        title="Schema",
        description="Schema definitions for the Agent Client Protocol",
        header=header,
        label=protocol.label,
        draft=protocol.stability == "unstable",
        sections=sections,
        types=rest,
        overlays=proposed_changes(protocol, anchors),
    )
