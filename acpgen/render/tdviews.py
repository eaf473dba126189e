"""View model for the TypedDict style: keys exactly as on the wire, no runtime dependency.

The markers in ``Annotated`` metadata (constraints, leniency, union routing) carry a
``__get_pydantic_core_schema__`` hook, so ``pydantic.TypeAdapter(mod.X)`` validates with
the same semantics as the Pydantic style, while importing the module needs only
``typing_extensions``.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass, replace

from acpgen import ir
from acpgen.layout import py_str
from acpgen.naming import Names
from acpgen.render.alternatives import Call, alternatives_table, black_lines, merged_members
from acpgen.render.pytypes import TypeWriter, null_aliases, null_default, py_literal, unset_on_error, value_args
from acpgen.render.pyviews import (
    AliasBuilder,
    AliasView,
    ordered_aliases,
    route_tag,
    variant_is_base,
)
from acpgen.render.rpcviews import RpcView, rpc_view


@dataclass(frozen=True)
class KeyView:
    key: str
    annotation: str  # a Python string literal holding the annotation
    required: bool
    comment: str | None


@dataclass(frozen=True)
class TypedDictView:
    name: str
    doc: str | None
    keys: tuple[KeyView, ...]
    functional: bool  # a key is not an identifier: TypedDict("Name", {...})
    #: the statement that hooks the ``_Group`` table of the object's sibling unions
    #: into its validation (render/alternatives.py)
    alternatives: str | None = None


@dataclass(frozen=True)
class TypedDictModuleView:
    header: str
    doc: str
    classes: tuple[TypedDictView, ...]
    aliases: tuple[AliasView, ...]
    rpc: RpcView
    exports: tuple[str, ...]
    protocol_version: int | None
    forbid: tuple[str, ...]  # TypedDicts that reject unknown keys
    #: JSON-RPC envelopes: (TypedDict, kind) whose params are typed by their method
    by_method: tuple[tuple[str, str], ...] = ()


def _first_line(text: str | None) -> str | None:
    if not text:
        return None
    line = text.strip().splitlines()[0].strip()
    return line or None


class _Builder(AliasBuilder):
    def __init__(self, protocol: ir.Protocol, names: Names) -> None:
        self.defs = protocol.def_map()
        self.names = names
        self.types = TypeWriter(
            names.type,
            constrain=lambda base, cons: f"Annotated[{base}, _Constraints({', '.join(cons)})]",
            nulls=null_aliases(protocol),
        )
        # an alias validated on its own (TypeAdapter(ProtocolVersion)) has no TypedDict's
        # strict config around it: its scalars carry strict=True themselves
        self.alias_types = TypeWriter(
            names.type,
            constrain=lambda base, cons: f"Annotated[{base}, _Constraints({', '.join(cons)})]",
            nulls=null_aliases(protocol),
            strict=True,
        )
        self.classes: dict[str, TypedDictView] = {}
        self.aliases: dict[str, tuple[AliasView, set[str]]] = {}
        self.forbid: list[str] = []
        self.by_method: list[tuple[str, str]] = []

    def key(self, f: ir.Field, optional: bool = False) -> KeyView:
        ann = self.types.expr(f.type, skip_invalid=f.skip_invalid_items)
        if f.default_on_error and f.required and not optional:
            # as the Pydantic style: a bad value becomes the lenient value, if it has one
            has, value = ir.lenient_value(f, self.defs)
            if has:
                ann = f"Annotated[{ann}, _OnErrorDefault({value_args(value)}, required=True)]"
        elif f.default_on_error:
            value = f.default if f.has_default else None
            if not isinstance(value, (list, dict)) and unset_on_error(f, self.defs, optional):
                marker = "_OnErrorDefault(omit=True)"
            else:
                marker = f"_OnErrorDefault({value_args(value)})"
            ann = f"Annotated[{ann}, {marker}]"
        on_null = null_default(f, self.defs, optional)
        if on_null is not None:
            has, value = on_null
            ann = f"Annotated[{ann}, _OnNull({value_args(value) if has else 'omit=True'})]"
        return KeyView(f.wire_name, py_str(ann), f.required and not optional, _first_line(f.description))

    def fields_of(self, fields: tuple[ir.Field, ...], optional: bool = False) -> list[KeyView]:
        return [self.key(f, optional) for f in fields]

    def add_class(self, name: str, doc: str | None, keys: list[KeyView], mixins: tuple[ir.Mixin, ...], extra: object) -> None:
        """A TypedDict of ``keys`` (a later declaration of a key wins) and of the members
        only the branches of ``mixins`` declare, with their check table."""
        merged: dict[str, KeyView] = {}
        for k in keys:
            merged[k.key] = k
        for f in merged_members(self.defs, merged, mixins):
            merged[f.wire_name] = self.key(f, optional=True)
        functional = any(not k.isidentifier() or keyword.iskeyword(k) for k in merged)
        table = alternatives_table(mixins, self.types.expr, self.names.type)
        hook = Call("_require_alternatives", (("", table),)) if table else None
        setter = Call("setattr", (("", name), ("", '"__get_pydantic_core_schema__"'), ("", hook))) if hook else None
        alternatives = "\n".join(black_lines(setter)) if setter else None
        self.classes[name] = TypedDictView(name, doc, tuple(merged.values()), functional, alternatives)
        if extra == "forbid":
            self.forbid.append(name)

    def add_object(self, d: ir.ObjectDef) -> None:
        self.add_class(self.names.type(d.key), d.description, self.fields_of(d.fields), d.mixins, d.extra)
        if d.by_method:
            self.by_method.append((self.names.type(d.key), d.by_method))

    def variant_keys(self, d: ir.TaggedUnionDef, v: ir.Variant) -> tuple[list[KeyView], tuple[ir.Mixin, ...], object]:
        """Every key of variant ``v`` of ``d`` (its base's, shared, own, its tag), the
        sibling unions it must satisfy (its base's and its own), and what it does with
        unknown keys."""
        base = self.defs.get(v.base) if v.base else None
        keys: list[KeyView] = []
        mixins: tuple[ir.Mixin, ...] = ()
        extra: object = "allow"
        if isinstance(base, ir.ObjectDef):
            keys += self.fields_of(base.fields)
            mixins = base.mixins
            extra = base.extra
        keys += self.fields_of(d.shared_fields) + self.fields_of(v.fields)
        if v.kind != "default":
            tag_ann = f"Literal[{py_literal(v.tag_value)}]" if v.kind == "tagged" else "str"
            keys.append(KeyView(d.tag, py_str(tag_ann), True, None))
        return keys, mixins + v.mixins, extra

    def add_tagged(self, d: ir.TaggedUnionDef) -> None:
        choices: list[tuple[str, str]] = []
        nested: set[str] = set()
        for v in d.variants:
            if variant_is_base(d, v):
                choices.append(("<default>", self.names.type(v.base)))  # type: ignore[arg-type]
                continue
            products = ir.nested_variants(d, v, self.defs)
            if products:
                choices.append((route_tag(v), self.add_nested(products)))
                nested.add(choices[-1][1])
                continue
            keys, mixins, extra = self.variant_keys(d, v)
            name = self.names.type(v.key)
            doc = v.description or (f"The ``{v.tag_value}`` variant of ``{self.names.type(d.key)}``." if v.kind == "tagged" else None)
            self.add_class(name, doc, keys, mixins, extra)
            choices.append((route_tag(v), name))
        self.add_union(self.names.type(d.key), d, choices, d.description, nested)

    def add_nested(self, products: tuple[ir.NestedVariant, ...]) -> str:
        """A variant whose payload is a tagged union: one TypedDict per inner variant with
        both tags, and the variant's name for their union, dispatched on the inner tag."""
        inner = products[0].inner
        choices: list[tuple[str, str]] = []
        for n in products:
            iv = n.inner_variant
            keys, mixins, extra = self.variant_keys(inner, iv)
            outer, outer_mixins, _ = self.variant_keys(n.union, replace(n.variant, base=None))
            name = self.names.type(n.key)
            self.add_class(name, iv.description or n.variant.description, keys + outer, mixins + outer_mixins, extra)
            choices.append((route_tag(iv), name))
        alias = self.names.type(products[0].variant.key)
        self.add_union(alias, inner, choices, products[0].variant.description, set())
        return alias

    def add_union(self, name: str, d: ir.TaggedUnionDef, choices: list[tuple[str, str]], doc: str | None, deps: set[str]) -> None:
        members = " | ".join(dict.fromkeys(n for _, n in choices))
        table = "{" + ", ".join(f"{py_literal(t)}: {py_literal(n)}" for t, n in choices) + "}"
        catch = f", catch={py_literal(route_tag(d.catch_all))}" if d.catch_all is not None else ""
        route = f"_Route({py_literal(d.tag)}, {table}, default={d.default_variant is not None}, fallback={d.open}{catch})"
        self.aliases[name] = (AliasView(name, f"Annotated[{members}, {route}]", doc), deps)


def build_typeddict_view(protocol: ir.Protocol, names: Names, header: str) -> TypedDictModuleView:
    b = _Builder(protocol, names)
    for d in protocol.defs:
        b.add(d)
    classes = tuple(b.classes[n] for n in sorted(b.classes))
    exports = tuple(sorted({*b.classes, *b.aliases}))
    doc = f"ACP {protocol.tree} {protocol.stability} bindings (TypedDict: keys exactly as on the wire)."
    return TypedDictModuleView(
        header,
        doc,
        classes,
        ordered_aliases(b.aliases),
        rpc_view(protocol, names, by_key=True),
        exports,
        protocol.protocol_version,
        tuple(sorted(b.forbid)),
        tuple(sorted(b.by_method)),
    )
