"""Frozen view models for the Pydantic module: every decision made, templates only print
(the JSON-RPC part, the same in every style, is ``rpcviews.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable, ClassVar, Iterable, TypeVar

from acpgen import ir
from acpgen.naming import Names
from acpgen.render.alternatives import alternatives_table, black_lines, merged_members
from acpgen.render.pyorder import dependency_order, eager_order, names_in
from acpgen.render.rpcviews import RpcView, rpc_view
from acpgen.render.pytypes import TypeWriter, bounded_open_enum, null_aliases, null_default, py_literal, refs_of, unset_on_error


@dataclass(frozen=True)
class FieldView:
    attr: str
    annotation: str
    #: right-hand side of the assignment, or "" for a required field without Field()
    value: str
    #: its default is built on first read (``_lazy``): the class is an ``AcpLazyModel``
    lazy: bool = False


@dataclass(frozen=True)
class ClassView:
    name: str
    bases: str
    doc: str | None
    fields: tuple[FieldView, ...]
    config: str | None = None
    extra_type: str | None = None
    #: the statement that sets the ``_Group`` table of the object's sibling unions
    #: (render/alternatives.py)
    alternatives: str | None = None
    #: a variant's tag attribute: filled by the class itself and always sent
    tags: tuple[str, ...] = ()
    #: a JSON-RPC envelope: ``params`` typed by ``method`` ("request" / "notification")
    by_method: str | None = None
    kind: ClassVar[str] = "class"


@dataclass(frozen=True)
class AliasView:
    name: str
    expr: str
    doc: str | None
    kind: ClassVar[str] = "alias"


@dataclass(frozen=True)
class ModuleView:
    header: str
    doc: str
    classes: tuple[ClassView, ...]
    aliases: tuple[AliasView, ...]
    rpc: "RpcView"
    exports: tuple[str, ...]
    protocol_version: int | None

    @property
    def defs(self) -> tuple[ClassView | AliasView, ...]:
        """The classes and aliases in the order they are written: each after what its
        annotations use (acpgen/render/pyorder.py), or, when they use each other in a
        cycle, the classes then the aliases, with lazy annotations."""
        return self._eager or (*self.classes, *self.aliases)

    @property
    def lazy_annotations(self) -> bool:
        return self._eager is None

    @cached_property
    def _eager(self) -> tuple[ClassView | AliasView, ...] | None:
        uses: dict[str, set[str]] = {a.name: names_in(a.expr) for a in self.aliases}
        for c in self.classes:
            uses[c.name] = names_in(c.bases, c.extra_type, *(x for f in c.fields for x in (f.annotation, f.value)))
        return eager_order((*self.classes, *self.aliases), uses)


class AliasBuilder:
    """What the Pydantic and TypedDict builders share: one dispatch over the def kinds,
    and module-level aliases with the aliases their runtime value uses."""

    names: Names
    types: TypeWriter
    #: spells the right-hand side of module-level aliases
    alias_types: TypeWriter
    aliases: dict[str, tuple[AliasView, set[str]]]

    def add_object(self, d: ir.ObjectDef) -> None:
        raise NotImplementedError

    def add_tagged(self, d: ir.TaggedUnionDef) -> None:
        raise NotImplementedError

    def add_alias(self, key: str, expr: str, doc: str | None, deps: set[str]) -> None:
        name = self.names.type(key)
        self.aliases[name] = (AliasView(name, expr, doc), {self.names.type(k) for k in deps if k in self.names.types})

    def add(self, d: ir.Def) -> None:
        if isinstance(d, ir.ObjectDef):
            self.add_object(d)
        elif isinstance(d, ir.TaggedUnionDef):
            self.add_tagged(d)
        elif isinstance(d, ir.EnumDef):
            bounded = bounded_open_enum(d)
            expr = self.alias_types.expr(bounded) if bounded is not None else enum_expr(d)
            self.add_alias(d.key, expr, d.description, set())
        elif isinstance(d, ir.UnionDef):
            expr, deps = union_expr(self.alias_types, d)
            self.add_alias(d.key, expr, d.description, deps)
        else:
            self.add_alias(d.key, self.alias_types.expr(d.type), d.description, refs_of(d.type))


class _Builder(AliasBuilder):
    def __init__(self, protocol: ir.Protocol, names: Names) -> None:
        self.p = protocol
        self.names = names
        self.defs = protocol.def_map()
        nulls = null_aliases(protocol)
        self.types = TypeWriter(self.member_name, nulls=nulls, by_value="_BY_VALUE")
        # an alias validated on its own (TypeAdapter(ProtocolVersion)) has no model's
        # strict config around it: its scalars carry strict=True themselves
        self.alias_types = TypeWriter(self.member_name, strict=True, nulls=nulls, by_value="_BY_VALUE")
        self.classes: dict[str, ClassView] = {}
        self.bases: dict[str, str] = {}
        self.aliases: dict[str, tuple[AliasView, set[str]]] = {}

    def member_name(self, key: str) -> str:
        return self.names.type(key)

    # -- fields -----------------------------------------------------------------------
    def default_of(self, f: ir.Field) -> tuple[str, str] | None:
        """("default"|"default_factory", expression) for an optional field (a required
        member stays required, ``default`` or not: JSON Schema's ``required`` wins)."""
        if f.has_default and not f.required:
            return self.spell_value(f, f.default)
        if not f.required:
            return "default", "None"
        return None

    def spell_value(self, f: ir.Field, value: ir.JsonValue) -> tuple[str, str]:
        """("default"|"default_factory", expression) that puts ``value`` in member ``f``:
        an object as its model, a fresh list or dict each time. A factory runs for every
        message that leaves the member out: it calls the model's validator itself (not
        ``model_validate``, whose Python wrapper costs a third as much again) and a union's
        cached adapter (not a new ``TypeAdapter`` per message)."""
        target = self.defs.get(f.type.key) if isinstance(f.type, ir.Ref) else None
        if isinstance(value, dict) and isinstance(target, ir.ObjectDef):
            model = self.names.type(target.key)
            return "default_factory", f"lambda: {model}.__pydantic_validator__.validate_python({py_literal(value)})"
        if isinstance(value, dict) and isinstance(f.type, ir.Ref):
            return "default_factory", f"lambda: _strict({self.names.type(f.type.key)}).validate_python({py_literal(value)})"
        if isinstance(value, (list, dict)):
            return "default_factory", (("list" if isinstance(value, list) else "dict") if not value else f"lambda: {py_literal(value)}")
        return "default", py_literal(value)

    def marker_args(self, f: ir.Field, value: ir.JsonValue) -> str:
        """The arguments of a leniency marker that puts ``value`` in member ``f``."""
        kind, expr = self.spell_value(f, value)
        return expr if kind == "default" else f"factory={expr}"

    def field(self, owner: str, f: ir.Field, force_optional: bool = False) -> FieldView:
        attr = self.names.attr(owner, f.wire_name)
        ann = self.types.expr(f.type, skip_invalid=f.skip_invalid_items)
        optional = force_optional or not f.required
        needs_none = optional and not f.has_default and not ir.admits_null(f.type, self.defs)
        if needs_none:
            ann = f"Annotated[{ann} | None, _NON_NULL]"
        default = self.default_of(f) if not force_optional else ("default", "None")
        if default is None and f.required and f.default_on_error:
            # required: absent is an error; a bad value becomes the lenient value
            has, value = ir.lenient_value(f, self.defs)
            if has:
                ann = f"Annotated[{ann}, _OnErrorDefault({self.marker_args(f, value)}, required=True)]"
        on_null = null_default(f, self.defs, force_optional)
        lazy = False
        if f.default_on_error and default is not None:
            kind, expr = default
            if unset_on_error(f, self.defs, force_optional):
                # a member that cannot be null: a bad value leaves it absent (pydantic-core
                # drops it; AcpBaseModel reads it as absent)
                marker = "_OnErrorDefault(omit=True)"
            elif kind == "default":
                marker = f"_OnErrorDefault({expr})"
            elif expr.startswith("lambda") and on_null is None:
                # an object: absent, the member is left absent by pydantic-core and its
                # default built on first read, not for every message (_lazy); a bad value
                # becomes the default, sent
                marker = f"_OnErrorDefault(factory={expr}, lazy=True)"
                default, lazy = ("default", f"_lazy({expr})"), True
            else:
                marker = f"_OnErrorDefault(factory={expr})"
            ann = f"Annotated[{ann}, {marker}]"
        ann = SHARED_ANNOTATIONS.get(ann, ann)
        if on_null is not None:
            # null reads as the lenient value; an optional member without one is left absent
            has, value = on_null
            ann = f"Annotated[{ann}, _OnNull({self.marker_args(f, value) if has else 'omit=True'})]"
        args: list[str] = []
        if default is not None:
            args.append(f"{default[0]}={default[1]}")
            if lazy:
                args.append("validate_default=True")
        if attr != f.wire_name:
            args.append(wire_alias(f.wire_name))
        if f.description:
            args.append(f"description={py_literal(f.description)}")
        if not args:
            return FieldView(attr, ann, "")
        if args == ["default=None"]:
            return FieldView(attr, ann, "None")
        return FieldView(attr, ann, "Field(" + ", ".join(args) + ")", lazy)

    def tag_field(self, owner: str, tag: str, value: str | int | None) -> FieldView:
        """A variant's tag member; a tagged variant fills its own (``TextContentBlock(text=...)``)."""
        attr = self.names.attr(owner, tag)
        if value is None:
            return FieldView(attr, "str", f"Field({wire_alias(tag)})" if attr != tag else "")
        ann = f"Literal[{py_literal(value)}]"
        if attr == tag:
            return FieldView(attr, ann, py_literal(value))
        return FieldView(attr, ann, f"Field(default={py_literal(value)}, {wire_alias(tag)})")

    def mixin_fields(self, owner: str, own: Iterable[str], mixins: tuple[ir.Mixin, ...]) -> list[FieldView]:
        """The members the branches of ``mixins`` add to a class declaring ``own``."""
        return [self.field(owner, f, force_optional=True) for f in merged_members(self.defs, own, mixins)]

    def alternatives(self, mixins: tuple[ir.Mixin, ...], name: str) -> str | None:
        """``Name.__acp_alternatives__ = (...)`` as black lays it out, or ``None``."""
        table = alternatives_table(mixins, self.types.expr, self.names.type)
        return "\n".join(black_lines(table, prefix=f"{name}.__acp_alternatives__ = ")) if table else None

    def object_config(self, extra: object) -> tuple[str | None, str | None]:
        if extra == "allow":
            return None, None
        if extra == "forbid":
            return 'model_config = ConfigDict(extra="forbid")', None
        return None, self.types.expr(extra)  # type: ignore[arg-type]

    # -- defs -------------------------------------------------------------------------
    def add_object(self, d: ir.ObjectDef) -> None:
        fields = [self.field(d.key, f) for f in d.fields]
        mixed = self.mixin_fields(d.key, (f.wire_name for f in d.fields), d.mixins)
        config, extra_type = self.object_config(d.extra)
        name = self.names.type(d.key)
        self.classes[name] = ClassView(
            name, with_lazy("AcpBaseModel", fields + mixed), d.description, tuple(fields + mixed), config, extra_type, self.alternatives(d.mixins, name), (), d.by_method
        )

    def add_tagged(self, d: ir.TaggedUnionDef) -> None:
        members: list[str] = []
        nested_aliases: set[str] = set()
        for v in d.variants:
            if variant_is_base(d, v):
                members.append(self.names.type(v.base))  # type: ignore[arg-type]
                continue
            products = ir.nested_variants(d, v, self.defs)
            if products:
                members.append(self.add_nested(products))
                nested_aliases.add(members[-1])
                continue
            name = self.names.type(v.key)
            base = self.names.type(v.base) if v.base and isinstance(self.defs.get(v.base), ir.ObjectDef) else "AcpBaseModel"
            self.add_variant_class(d, v, name, base, v.description)
            members.append(name)
        name = self.names.type(d.key)
        expr = self.union_of(d, members, routed=bool(nested_aliases))
        self.aliases[name] = (AliasView(name, expr, d.description), nested_aliases)

    def add_variant_class(self, d: ir.TaggedUnionDef, v: ir.Variant, name: str, base: str, doc: str | None) -> None:
        """A class for variant ``v`` of ``d``: shared and own members, mixins, its tag."""
        fields = [self.field(v.key, f) for f in d.shared_fields]
        fields += [self.field(v.key, f) for f in v.fields]
        # members the base class declares are not declared again (its sibling unions are
        # checked by its own table, which the class inherits)
        base_def = self.defs.get(v.base) if v.base else None
        own = [f.wire_name for f in (*d.shared_fields, *v.fields)] + [d.tag]
        if isinstance(base_def, ir.ObjectDef) and base != "AcpBaseModel":
            own += [f.wire_name for f in base_def.fields]
            own += [f.wire_name for f in merged_members(self.defs, (), base_def.mixins)]
        mixed = self.mixin_fields(v.key, own, v.mixins)
        tags: tuple[str, ...] = ()
        if v.kind != "default":
            fields.append(self.tag_field(v.key, d.tag, v.tag_value))
            tags = (fields[-1].attr,) if v.kind == "tagged" else ()
        doc = doc or (f"The ``{v.tag_value}`` variant of :data:`{self.names.type(d.key)}`." if v.kind == "tagged" else None)
        alternatives = self.alternatives(v.mixins, name)
        self.classes[name] = ClassView(name, with_lazy(base, fields + mixed), doc, tuple(fields + mixed), None, None, alternatives, tags)
        if base != "AcpBaseModel":
            self.bases[name] = base

    def add_nested(self, products: tuple[ir.NestedVariant, ...]) -> str:
        """A variant whose payload is a tagged union: one class per inner variant (that
        variant's class plus the outer tag and members), and the variant's name for their
        union, dispatched on the inner tag."""
        inner = products[0].inner
        members = []
        for n in products:
            iv = n.inner_variant
            base = self.names.type(iv.base if variant_is_base(inner, iv) else iv.key)  # type: ignore[arg-type]
            name = self.names.type(n.key)
            self.add_variant_class(n.union, n.variant, name, base, iv.description or n.variant.description)
            members.append(name)
        alias = self.names.type(products[0].variant.key)
        expr = self.union_of(inner, members, routed=True)
        self.aliases[alias] = (AliasView(alias, expr, products[0].variant.description), set())
        return alias

    def union_of(self, d: ir.TaggedUnionDef, members: list[str], routed: bool) -> str:
        """The annotation of tagged union ``d`` over its member types (one per variant):
        pydantic's own discriminator when every variant is tagged by a literal, else a
        route that also knows the untagged default and the open fallback (and that a
        nested union can sit under)."""
        if all(v.kind == "tagged" for v in d.variants) and not routed:
            if len(members) == 1:
                # no discriminator: the tag must still be on the wire (the class fills it
                # only when a message is built in Python)
                return f"Annotated[{members[0]}, _HasTag({py_literal(d.tag)})]"
            tag_attr = self.names.attr(d.variants[0].key, d.tag)
            wire = f"_WireTag({py_literal(d.tag)})"
            return f"Annotated[{' | '.join(members)}, Field(discriminator={py_literal(tag_attr)}), {wire}, _BY_VALUE]"
        attr = next(self.names.attr(v.key, d.tag) for v in d.variants if v.kind != "default")
        tagged = []
        for v, member in zip(d.variants, members):
            tagged.append(f"Annotated[{member}, Tag({py_literal(route_tag(v))})]")
        known = ", ".join(py_literal(v.tag_value) for v in d.tagged)
        router = (
            f"_route({py_literal(d.tag)}, {py_literal(attr)}, frozenset({{{known}}}), "
            f"default={d.default_variant is not None}, fallback={d.open})"
        )
        markers = [f"Discriminator({router})"]
        catch = d.catch_all
        if catch is not None:
            markers.append(f"_OrVariant({members[d.variants.index(catch)]})")
        if wire_routed(d):
            markers.append(f"_WireTag({py_literal(d.tag)}, frozenset({{{known}}}))")
        return f"Annotated[Union[{', '.join(tagged)}], {', '.join(markers)}, _BY_VALUE]"

    # -- ordering ---------------------------------------------------------------------
    def ordered_classes(self) -> tuple[ClassView, ...]:
        return ordered_classes(self.classes, self.bases)

    def ordered_aliases(self) -> tuple[AliasView, ...]:
        return ordered_aliases(self.aliases)


_C = TypeVar("_C")


def ordered_classes(classes: dict[str, _C], bases: dict[str, str]) -> tuple[_C, ...]:
    """Sorted by name, each base class before its subclasses."""
    uses = {name: (bases[name],) for name in classes if name in bases}
    return tuple(classes[n] for n in dependency_order(sorted(classes), uses, cycles="skip") or ())


def ordered_aliases(aliases: dict[str, tuple[AliasView, set[str]]]) -> tuple[AliasView, ...]:
    """Sorted by name, each alias after the aliases its runtime value uses: those given,
    and every alias its expression names (``AuthMethod = TerminalAuthMethod |
    SessionConfigId`` where ``SessionConfigId`` is an alias too; found by ``make fuzz``).
    A cycle between aliases is left to lazy annotations."""
    uses = {name: given | names_in(view.expr) for name, (view, given) in aliases.items()}
    return tuple(aliases[n][0] for n in dependency_order(sorted(aliases), uses, cycles="skip") or ())


def wire_alias(wire: str) -> str:
    """The wire name of a member whose attribute differs. Not ``alias=``: type checkers
    would then take the wire name as the constructor's keyword; with the validation and
    serialization aliases they take the attribute (``PromptResponse(stop_reason=...)``)
    while the wire keeps its own name both ways."""
    text = py_literal(wire)
    return f"validation_alias={text}, serialization_alias={text}"


def wire_routed(d: ir.TaggedUnionDef) -> bool:
    """Whether pydantic-core alone routes JSON values of a routed union as ``_route``
    does (``_WireTag``): no open fallback, and a default variant, if any, that rules out
    none of the known tags, so that it stands behind each of them too (``_OrVariant``).
    A default that rules some out is not checked by its class: only ``_route`` keeps a
    value with a known tag from it."""
    return not d.open and d.default_variant in (None, d.catch_all)


def route_tag(v: ir.Variant) -> str:
    """The dispatch key of a variant: its tag value, or ``<default>`` / ``<fallback>``."""
    return str(v.tag_value) if v.kind == "tagged" else f"<{v.kind}>"


def variant_is_base(union: ir.TaggedUnionDef, v: ir.Variant) -> bool:
    """A union member that needs no class of its own: it is its (untagged) base class."""
    return v.kind == "default" and v.base is not None and not v.fields and not v.mixins and not union.shared_fields


def enum_expr(d: ir.EnumDef) -> str:
    """``Literal[...]``, widened by ``| str`` (or ``| int``) when the enum is open."""
    lit = "Literal[" + ", ".join(py_literal(v.value) for v in d.values) + "]"
    return lit + (" | " + ("int" if d.base == "integer" else "str") if d.open else "")


#: annotations the Pydantic runtime spells once (``_runtime.py``), by their spelling here
SHARED_ANNOTATIONS = {
    "Annotated[dict[str, Any] | None, _OnErrorDefault(None)]": "_LenientObject",
    "Annotated[str | None, _OnErrorDefault(None)]": "_LenientStr",
}


def with_lazy(base: str, fields: list[FieldView]) -> str:
    """The bases of a class with ``fields``: ``AcpLazyModel`` too when a member's default
    is built on first read (``_lazy``), so that dumps build it first."""
    if not any(f.lazy for f in fields):
        return base
    return "AcpLazyModel" if base == "AcpBaseModel" else f"{base}, AcpLazyModel"


def union_expr(types: TypeWriter, d: ir.UnionDef) -> tuple[str, set[str]]:
    """An untagged union's members joined by ``|`` (``Any`` absorbs all), and its refs; a
    ``oneOf`` whose members can overlap (``exclusive == "checked"``) is wrapped in
    ``Annotated[..., _OneOf((label, member), ...)]``, which rejects a value valid as
    more than one member."""
    parts = list(dict.fromkeys(types.expr(m.type) for m in d.members))
    deps = set().union(*(refs_of(m.type) for m in d.members)) if d.members else set()
    expr = "Any" if "Any" in parts else " | ".join(parts)
    markers = []
    if d.exclusive == "checked":
        members = ", ".join(f"({py_literal(label)}, {t})" for label, t in member_labels(types, d))
        markers.append(f"_OneOf({members})")
    by_value = types.by_value_marker(parts, [m.type for m in d.members]) if "Any" not in parts else None
    if by_value:
        markers.append(by_value)
    if markers:
        expr = f"Annotated[{expr}, {', '.join(markers)}]"
    return expr, deps


def member_labels(types: TypeWriter, d: ir.UnionDef) -> list[tuple[str, str]]:
    """``(label, type expression)`` per member of untagged union ``d``."""
    return [(member_label(m, types.expr), types.expr(m.type)) for m in d.members]


def member_label(m: ir.UnionMember, spell: Callable[[ir.TypeExpr], str]) -> str:
    """A union member's name in messages: its title, else the JSON type of a scalar
    (``integer``), else its type as the binding spells it."""
    if m.title:
        return m.title
    t = m.type.inner if isinstance(m.type, ir.Nullable) else m.type
    if isinstance(t, ir.Prim):
        return t.kind
    return spell(m.type)


def build_module_view(protocol: ir.Protocol, names: Names, header: str) -> ModuleView:
    b = _Builder(protocol, names)
    for d in protocol.defs:
        b.add(d)
    exports = sorted({*b.classes, *b.aliases})
    doc = f"ACP {protocol.tree} {protocol.stability} bindings (Pydantic v2)."
    return ModuleView(header, doc, b.ordered_classes(), b.ordered_aliases(), rpc_view(protocol, names), tuple(exports), protocol.protocol_version)
