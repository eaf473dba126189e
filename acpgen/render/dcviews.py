"""View model for the dataclasses style: stdlib only at runtime, ``load``/``dump`` per module.

Each class gets a spec (``_Obj``), each alias a spec too; the templates print them as
Python expressions, and the runtime (acpgen/runtime/_runtime_dataclasses.py)
interprets them. Semantics follow the Pydantic style member for member.
"""

from __future__ import annotations

from dataclasses import dataclass

from acpgen import ir
from acpgen.naming import Names
from acpgen.render.pytypes import (
    INT_FORMAT_BOUNDS,
    TypeWriter,
    bounded_open_enum,
    null_aliases,
    null_default,
    py_literal,
    py_tuple,
    refs_of,
    unset_on_error,
)
from acpgen.render.alternatives import alternatives_source, merged_members
from acpgen.render.pyviews import (
    AliasView,
    member_label,
    ordered_aliases,
    ordered_classes,
    variant_is_base,
)
from acpgen.render.rpcviews import RpcView, rpc_view


@dataclass(frozen=True)
class DCFieldView:
    attr: str
    annotation: str
    value: str  # "" for a required member
    doc: str | None


@dataclass(frozen=True)
class DCClassView:
    name: str
    base: str
    doc: str | None
    fields: tuple[DCFieldView, ...]
    spec: str


@dataclass(frozen=True)
class DCModuleView:
    header: str
    doc: str
    classes: tuple[DCClassView, ...]
    aliases: tuple[AliasView, ...]
    alias_specs: tuple[tuple[str, str], ...]
    rpc: RpcView
    exports: tuple[str, ...]
    protocol_version: int | None


def spec_expr(t: ir.TypeExpr, names: Names, skip_invalid: bool = False) -> str:
    """The runtime spec constructor for a type expression."""
    if isinstance(t, ir.Nullable):
        return f"_Nullable({spec_expr(t.inner, names, skip_invalid)})"
    if isinstance(t, ir.Prim):
        c = t.constraints
        checks: list[str] = []
        lo, hi = c.minimum, c.maximum
        if t.kind == "integer" and c.format in INT_FORMAT_BOUNDS:
            f_lo, f_hi = INT_FORMAT_BOUNDS[c.format]
            lo = f_lo if lo is None else max(lo, f_lo)
            hi = f_hi if hi is None else min(hi, f_hi)
        for key, value in (
            ("ge", lo),
            ("le", hi),
            ("gt", c.exclusive_minimum),
            ("lt", c.exclusive_maximum),
            ("multiple_of", c.multiple_of),
            ("min_length", c.min_length),
            ("max_length", c.max_length),
            ("pattern", c.pattern),
        ):
            if value is not None:
                checks.append(f"{key}={py_literal(value)}")
        base = {"string": "_STR", "integer": "_INT", "number": "_FLOAT", "boolean": "_BOOL"}[t.kind]
        if not checks:
            return base
        types, label = {"string": ("(str,)", "string"), "integer": ("(int,)", "integer"), "number": ("(int, float)", "number"), "boolean": ("(bool,)", "boolean")}[t.kind]
        return f"_Scalar({types}, {py_literal(label)}, {', '.join(checks)})"
    if isinstance(t, ir.AnyT):
        return "_ANY"
    if isinstance(t, ir.NullT):
        return "_NULL"
    if isinstance(t, ir.Lit):
        return "_Lit(" + py_tuple(py_literal(v) for v in t.values) + ")"
    if isinstance(t, ir.Ref):
        return f"_Ref({py_literal(names.type(t.key))})"
    if isinstance(t, ir.Array):
        args = [spec_expr(t.items, names)]
        if skip_invalid:
            args.append("skip_invalid=True")
        if t.constraints.min_items is not None:
            args.append(f"min_items={t.constraints.min_items}")
        if t.constraints.max_items is not None:
            args.append(f"max_items={t.constraints.max_items}")
        return f"_List({', '.join(args)})"
    if isinstance(t, ir.Map):
        return f"_Map({spec_expr(t.values, names)})"
    if isinstance(t, ir.Tuple):
        return "_Tuple(" + py_tuple(spec_expr(i, names) for i in t.items) + ")"
    if isinstance(t, ir.AnyOf):
        return "_AnyOf(" + py_tuple(spec_expr(m, names) for m in t.members) + ")"
    raise TypeError(f"unknown type expression {t!r}")


class _Builder:
    def __init__(self, protocol: ir.Protocol, names: Names) -> None:
        self.p = protocol
        self.names = names
        self.defs = protocol.def_map()
        self.types = TypeWriter(names.type, constrain=lambda base, cons: base, whole_numbers=False, nulls=null_aliases(protocol))
        self.classes: dict[str, DCClassView] = {}
        self.bases: dict[str, str] = {}
        self.aliases: dict[str, tuple[AliasView, set[str]]] = {}
        self.alias_specs: dict[str, str] = {}
        #: full member list (wire -> (field, optional)) per class, inherited members included
        self.members: dict[str, dict[str, tuple[ir.Field, bool]]] = {}
        self.unions_done: set[str] = set()
        #: the tag members' specs per class, inherited like the members
        self.tag_specs: dict[str, list[str]] = {}

    # -- members ----------------------------------------------------------------------
    def default(self, f: ir.Field) -> tuple[str, str] | None:
        """("default" | "factory", expression) when the member may be absent."""
        if f.has_default:
            return self.spell_value(f, f.default)
        if not f.required:
            return "default", "None"
        return None

    def spell_value(self, f: ir.Field, value: ir.JsonValue) -> tuple[str, str]:
        """("default" | "factory", expression) that puts ``value`` in member ``f``: an
        object through ``load``, a fresh list or dict each time."""
        if isinstance(value, dict) and isinstance(f.type, ir.Ref):
            return "factory", f"lambda: load({self.names.type(f.type.key)}, {py_literal(value)})"
        if isinstance(value, (list, dict)):
            empty = "list" if isinstance(value, list) else "dict"
            return "factory", empty if not value else f"lambda: {py_literal(value)}"
        return "default", py_literal(value)

    def field_view(self, owner: str, f: ir.Field, optional: bool) -> DCFieldView:
        attr = self.names.attr(owner, f.wire_name)
        ann = self.types.expr(f.type)
        d = self.default(f) if not optional else ("default", "None")
        if d is not None and d[1] == "None" and not ann.endswith("| None") and ann not in ("Any", "None"):
            ann += " | None"
        if d is None:
            value = ""
        elif d[0] == "default":
            value = d[1]
        else:
            value = f"field(default_factory={d[1]})"
        return DCFieldView(attr, ann, value, f.description)

    def field_spec(self, owner: str, f: ir.Field, optional: bool) -> str:
        attr = self.names.attr(owner, f.wire_name)
        args = [py_literal(attr), py_literal(f.wire_name), spec_expr(f.type, self.names, f.skip_invalid_items)]
        if f.required and not optional:
            args.append("required=True")
        d = self.default(f) if not optional else ("default", "None")
        # a required lenient member: a bad (or null) value becomes the lenient value
        marked = f.required and (f.default_on_error or f.default_on_null)
        has_lenient, value = ir.lenient_value(f, self.defs) if marked else (False, None)
        if d is None and has_lenient and value is not None:
            d = self.spell_value(f, value)
        if d is not None and d[0] == "default" and d[1] != "None":
            args.append(f"default={d[1]}")
        elif d is not None and d[0] == "factory":
            args.append(f"factory={d[1]}")
        lenient = f.default_on_error and (not f.required or optional or has_lenient)
        if lenient:
            args.append("lenient=True")
            if unset_on_error(f, self.defs, optional):
                args.append("unset_on_error=True")
        on_null = null_default(f, self.defs, optional)
        if on_null is not None:
            args.append(f"on_null={py_literal('default' if on_null[0] else 'absent')}")
        return f"_F({', '.join(args)})"

    def alternatives(self, mixins: tuple[ir.Mixin, ...]) -> str | None:
        return alternatives_source(mixins, lambda t: spec_expr(t, self.names), lambda key: spec_expr(ir.Ref(key), self.names))

    def add_class(
        self,
        key: str,
        base: str | None,
        doc: str | None,
        own: list[tuple[ir.Field, bool]],
        alternatives: str | None,
        extra: object,
        tag: tuple[str, str | int | None] | None = None,
        name: str | None = None,
        by_method: str | None = None,
    ) -> str:
        name = name or self.names.type(key)
        inherited = dict(self.members.get(base, {})) if base else {}
        members = dict(inherited)
        views: list[DCFieldView] = []
        for f, optional in own:
            members[f.wire_name] = (f, optional)
            views.append(self.field_view(key, f, optional))
        specs = [self.field_spec(key, f, optional) for f, optional in members.values()]
        tag_specs = list(self.tag_specs.get(base, [])) if base else []
        if tag is not None:
            wire, value = tag
            attr = self.names.attr(key, wire)
            if value is None:  # open fallback: any string tag, kept as received
                views.append(DCFieldView(attr, "str", "", None))
                tag_specs.append(f"_F({py_literal(attr)}, {py_literal(wire)}, _STR, required=True)")
            else:
                views.append(DCFieldView(attr, f"Literal[{py_literal(value)}]", py_literal(value), None))
                tag_specs.append(f"_F({py_literal(attr)}, {py_literal(wire)}, _Lit(({py_literal(value)},)), required=True)")
        self.members[key] = members
        self.tag_specs[key] = tag_specs
        extra_spec = py_literal(extra) if isinstance(extra, str) else spec_expr(extra, self.names)  # type: ignore[arg-type]
        routed = f", by_method=({py_literal(by_method)}, _REGISTRY)" if by_method else ""
        groups = f", groups={alternatives}" if alternatives else ""
        spec = f"_Obj({name}, {py_tuple(specs + tag_specs)}, extra={extra_spec}{groups}{routed})"
        self.classes[name] = DCClassView(name, self.names.type(base) if base else "AcpObject", doc, tuple(views), spec)
        if base:
            self.bases[name] = self.names.type(base)
        return name

    # -- defs -------------------------------------------------------------------------
    def add_object(self, d: ir.ObjectDef) -> None:
        own = [(f, False) for f in d.fields]
        own += [(f, True) for f in merged_members(self.defs, (f.wire_name for f in d.fields), d.mixins)]
        self.add_class(d.key, None, d.description, own, self.alternatives(d.mixins), d.extra, by_method=d.by_method)

    def add_tagged(self, d: ir.TaggedUnionDef) -> None:
        if d.key in self.unions_done:
            return
        self.unions_done.add(d.key)
        members: list[tuple[ir.Variant, str]] = []
        deps: set[str] = set()
        for v in d.variants:
            if variant_is_base(d, v):
                members.append((v, self.names.type(v.base)))  # type: ignore[arg-type]
                continue
            products = ir.nested_variants(d, v, self.defs)
            if products:
                name = self.add_nested(products)
                deps.add(name)
            else:
                base = v.base if v.base and isinstance(self.defs.get(v.base), ir.ObjectDef) else None
                name = self.add_variant(d, v, self.names.type(v.key), base, v.description)
            members.append((v, name))
        self.add_union(self.names.type(d.key), d, members, d.description, deps)

    def add_union(self, name: str, d: ir.TaggedUnionDef, members: list[tuple[ir.Variant, str]], doc: str | None, deps: set[str]) -> None:
        """The alias and the ``_Tagged`` spec of union ``d`` over its members' classes."""
        choices = [f"{py_literal(v.tag_value)}: {py_literal(n)}" for v, n in members if v.kind == "tagged"]
        default = next((n for v, n in members if v.kind == "default"), None)
        fallback = next((n for v, n in members if v.kind == "fallback"), None)
        self.aliases[name] = (AliasView(name, " | ".join(dict.fromkeys(n for _, n in members)), doc), deps)
        catch = next((n for v, n in members if v is d.catch_all), None) if d.catch_all is not None else None
        self.alias_specs[name] = (
            f"_Tagged({py_literal(d.tag)}, {{{', '.join(choices)}}}, "
            f"default={py_literal(default)}, fallback={py_literal(fallback)}"
            + (f", catch={py_literal(catch)})" if catch else ")")
        )

    def add_variant(
        self,
        d: ir.TaggedUnionDef,
        v: ir.Variant,
        name: str,
        base: str | None,
        doc: str | None,
        key: str | None = None,
        inner_mixins: tuple[ir.Mixin, ...] = (),
    ) -> str:
        """The class of variant ``v`` of ``d`` (on ``base``'s members when it has one);
        ``key`` is a nested variant's own key, when the class is one."""
        own = [(f, False) for f in d.shared_fields + v.fields]
        base_def = self.defs.get(base) if base else None
        declared = [f.wire_name for f, _ in own] + [d.tag] + list(self.members.get(base, {}) if base else ())
        own += [(f, True) for f in merged_members(self.defs, declared, v.mixins)]
        # the spec is the class's own: the base's sibling unions are checked here too
        inherited = base_def.mixins if isinstance(base_def, ir.ObjectDef) else ()
        alternatives = self.alternatives(inherited + inner_mixins + v.mixins)
        extra = base_def.extra if isinstance(base_def, ir.ObjectDef) else "allow"
        tag = None if v.kind == "default" else (d.tag, v.tag_value if v.kind == "tagged" else None)
        doc = doc or (f"The ``{v.tag_value}`` variant of :data:`{self.names.type(d.key)}`." if v.kind == "tagged" else None)
        return self.add_class(key or v.key, base, doc, own, alternatives, extra, tag, name)

    def add_nested(self, products: tuple[ir.NestedVariant, ...]) -> str:
        """A variant whose payload is a tagged union: one class per inner variant (that
        variant's class plus the outer tag and members), and the variant's name for their
        union, dispatched on the inner tag."""
        inner = products[0].inner
        if inner.key not in self.unions_done:  # its variant classes are the products' bases
            self.add_tagged(inner)
        members: list[tuple[ir.Variant, str]] = []
        for n in products:
            iv = n.inner_variant
            base = iv.base if variant_is_base(inner, iv) else iv.key
            doc = iv.description or n.variant.description
            # the product's spec is its own: the inner variant's sibling unions (and its
            # payload's) are checked here too
            payload = self.defs.get(iv.base) if iv.base else None
            inner_mixins = (payload.mixins if isinstance(payload, ir.ObjectDef) else ()) + iv.mixins
            name = self.add_variant(n.union, n.variant, self.names.type(n.key), base, doc, key=n.key, inner_mixins=inner_mixins)
            members.append((iv, name))
        alias = self.names.type(products[0].variant.key)
        self.add_union(alias, inner, members, products[0].variant.description, set())
        return alias

    def add_alias(self, key: str, expr: str, spec: str, doc: str | None, deps: set[str]) -> None:
        name = self.names.type(key)
        self.aliases[name] = (AliasView(name, expr, doc), {self.names.type(k) for k in deps if k in self.names.types})
        self.alias_specs[name] = spec

    def add(self, d: ir.Def) -> None:
        if isinstance(d, ir.ObjectDef):
            self.add_object(d)
        elif isinstance(d, ir.TaggedUnionDef):
            self.add_tagged(d)
        elif isinstance(d, ir.EnumDef) and bounded_open_enum(d) is not None:
            bounded = bounded_open_enum(d)
            assert bounded is not None
            self.add_alias(d.key, self.types.expr(bounded), spec_expr(bounded, self.names), d.description, set())
        elif isinstance(d, ir.EnumDef):
            values = tuple(v.value for v in d.values)
            lit = "Literal[" + ", ".join(py_literal(v) for v in values) + "]"
            open_type = ("int" if d.base == "integer" else "str") if d.open else None
            spec = "_Lit(" + py_tuple(py_literal(v) for v in values) + f", open={open_type})"
            self.add_alias(d.key, lit + (f" | {open_type}" if open_type else ""), spec, d.description, set())
        elif isinstance(d, ir.UnionDef):
            parts = list(dict.fromkeys(self.types.expr(m.type) for m in d.members))
            expr = "Any" if "Any" in parts else " | ".join(parts)
            specs = py_tuple(spec_expr(m.type, self.names) for m in d.members)
            if d.exclusive == "checked":
                # members that can overlap: a value valid as several is rejected
                labels = py_tuple(py_literal(member_label(m, self.types.expr)) for m in d.members)
                spec = f"_OneOf({specs}, {labels})"
            else:
                spec = f"_AnyOf({specs})"
            deps = set().union(*(refs_of(m.type) for m in d.members)) if d.members else set()
            self.add_alias(d.key, expr, spec, d.description, deps)
        else:
            # Annotated with the def's name: a distinct runtime object, so load() knows
            # which def (and which constraints) is meant even when two aliases are `str`
            expr = f"Annotated[{self.types.expr(d.type)}, {py_literal(self.names.type(d.key))}]"
            self.add_alias(d.key, expr, spec_expr(d.type, self.names), d.description, refs_of(d.type))

    def ordered(self) -> tuple[DCClassView, ...]:
        # a variant's payload base must come first; members are registered base-first too
        return ordered_classes(self.classes, self.bases)


def build_dataclass_view(protocol: ir.Protocol, names: Names, header: str) -> DCModuleView:
    b = _Builder(protocol, names)
    # payload objects first, so a variant can inherit the members of its base
    for d in sorted(protocol.defs, key=lambda d: not isinstance(d, ir.ObjectDef)):
        b.add(d)
    exports = tuple(sorted({*b.classes, *b.aliases, "AcpObject", "ValidationError", "dump", "load"}))
    doc = f"ACP {protocol.tree} {protocol.stability} bindings (dataclasses, standard library only)."
    return DCModuleView(
        header,
        doc,
        b.ordered(),
        ordered_aliases(b.aliases),
        tuple(sorted(b.alias_specs.items())),
        rpc_view(protocol, names),
        exports,
        protocol.protocol_version,
    )
