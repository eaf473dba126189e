"""The intermediate model: what the schema means, never how Python spells it.

Frozen dataclasses only. Every named node carries its :class:`Origin` (source
file and JSON pointer, and the RFD overlay that changed it, if any). Renderers
see nothing but these values and the name table built by ``acpgen.naming``.

Over ~500 lines on purpose: one vocabulary, read as ``ir.<Name>`` by every stage; split, it would only scatter that one namespace.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass
from typing import Any, Literal, Mapping, Union

JsonValue = Any

# --------------------------------------------------------------------------- origin


@dataclass(frozen=True, slots=True)
class Origin:
    file: str
    pointer: str
    #: ids of the RFD overlays that added or changed this node (``x-acpgen-overlay``)
    overlays: tuple[str, ...] = ()


# --------------------------------------------------------------------------- types


@dataclass(frozen=True, slots=True)
class Constraints:
    minimum: int | float | None = None
    maximum: int | float | None = None
    exclusive_minimum: int | float | None = None
    exclusive_maximum: int | float | None = None
    multiple_of: int | float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    format: str | None = None
    content_encoding: str | None = None
    min_items: int | None = None
    max_items: int | None = None

    def is_empty(self) -> bool:
        return all(getattr(self, f.name) is None for f in fields(self))


NO_CONSTRAINTS = Constraints()

PrimKind = Literal["string", "integer", "number", "boolean"]


@dataclass(frozen=True, slots=True)
class Prim:
    """A JSON primitive: string, integer, number or boolean, with its constraints."""

    kind: PrimKind
    constraints: Constraints = NO_CONSTRAINTS


@dataclass(frozen=True, slots=True)
class AnyT:
    """Any JSON value."""


@dataclass(frozen=True, slots=True)
class NullT:
    """Exactly ``null``."""


@dataclass(frozen=True, slots=True)
class Lit:
    """One of a fixed set of JSON scalars (``const`` or an inline ``enum``)."""

    values: tuple[JsonValue, ...]


@dataclass(frozen=True, slots=True)
class Ref:
    """A named node of the IR (a ``$defs`` entry or a node lifted out of one)."""

    key: str


@dataclass(frozen=True, slots=True)
class Array:
    items: TypeExpr
    constraints: Constraints = NO_CONSTRAINTS


@dataclass(frozen=True, slots=True)
class Map:
    """A JSON object used as a string-keyed map."""

    values: TypeExpr


@dataclass(frozen=True, slots=True)
class Tuple:
    items: tuple[TypeExpr, ...]


@dataclass(frozen=True, slots=True)
class Nullable:
    inner: TypeExpr


@dataclass(frozen=True, slots=True)
class AnyOf:
    """An inline untagged union of type expressions (no class of its own)."""

    members: tuple[TypeExpr, ...]


TypeExpr = Union[Prim, AnyT, NullT, Lit, Ref, Array, Map, Tuple, Nullable, AnyOf]


# --------------------------------------------------------------------------- defs


@dataclass(frozen=True, slots=True)
class Field:
    wire_name: str
    type: TypeExpr
    required: bool
    origin: Origin
    description: str | None = None
    has_default: bool = False
    default: JsonValue = None
    default_on_error: bool = False
    skip_invalid_items: bool = False
    #: ``x-deserialize-default-on-null``: ``null`` reads as the member's lenient value
    default_on_null: bool = False

    @property
    def nullable(self) -> bool:
        return isinstance(self.type, Nullable)


EMPTY_VALUES: dict[str, JsonValue] = {"string": "", "integer": 0, "number": 0, "boolean": False}


def lenient_value(f: Field, defs: Mapping[str, "Def"]) -> tuple[bool, JsonValue]:
    """What a reader honouring ``x-deserialize-*`` puts in place of a member's invalid
    (or, with ``default-on-null``, null) value: ``(False, None)`` for "leave it absent"
    (an optional member without a default that cannot be null), else ``(True, value)``:
    the schema's ``default``, else ``null`` where allowed, else, for a required member,
    the empty value of its type (serde's ``Default``: ``[]``, ``{}``, ``""``, ``0``,
    ``false``). A required member whose type has no empty value gets ``(False, None)``
    too, and stays strict."""
    if f.has_default:
        return True, f.default
    if admits_null(f.type, defs):
        return True, None
    if not f.required:
        return False, None
    t = f.type
    seen: set[str] = set()
    while isinstance(t, Ref) and t.key not in seen and isinstance(defs.get(t.key), AliasDef):
        seen.add(t.key)
        t = defs[t.key].type  # type: ignore[union-attr]
    if isinstance(t, Array):
        return (True, []) if not t.constraints.min_items else (False, None)
    if isinstance(t, Map):
        return True, {}
    if isinstance(t, Prim) and t.constraints.is_empty():
        return True, EMPTY_VALUES[t.kind]
    return False, None


def admits_null(t: TypeExpr, defs: Mapping[str, "Def"], seen: frozenset[str] = frozenset()) -> bool:
    """Whether ``null`` is a value of ``t``, looking through aliases and untagged unions
    (``RequestId`` = null | integer | string)."""
    if isinstance(t, (Nullable, NullT, AnyT)):
        return True
    if isinstance(t, Lit):
        return None in t.values
    if isinstance(t, AnyOf):
        return any(admits_null(m, defs, seen) for m in t.members)
    if isinstance(t, Ref) and t.key not in seen:
        d = defs.get(t.key)
        if isinstance(d, AliasDef):
            return admits_null(d.type, defs, seen | {t.key})
        if isinstance(d, UnionDef):
            return any(admits_null(m.type, defs, seen | {t.key}) for m in d.members)
    return False


@dataclass(frozen=True, slots=True)
class Mixin:
    """One branch of an ``anyOf``/``oneOf`` that sits beside an object's own members (serde
    ``flatten`` of an untagged enum). The object's value must satisfy its members *and*,
    for every such union (``group``), one branch (``anyOf``: at least one; ``oneOf``:
    exactly one). A branch holds when its required members are present, each of its
    members present has the branch's type, the value is an instance of ``base``, no
    member has one of its ``excludes`` values (a ``not`` over consts), its ``absent``
    members are absent and its own nested unions hold."""

    title: str | None
    description: str | None
    base: str | None
    fields: tuple[Field, ...]
    origin: Origin
    #: the branch's name in messages and on pages, read from the schema (see ``branch_label``)
    label: str = ""
    #: the JSON pointer of the union this branch belongs to; ``keyword`` is its kind
    group: str = ""
    keyword: Literal["anyOf", "oneOf"] = "anyOf"
    #: member wire name -> the values it must not have (``not`` over required consts)
    excludes: tuple[tuple[str, tuple[JsonValue, ...]], ...] = ()
    #: members that must be absent (``not: {required: [m]}``)
    absent: tuple[str, ...] = ()
    #: every member the branch requires, its own ``fields`` or the object's
    required: tuple[str, ...] = ()
    #: the branch's own sibling unions
    mixins: tuple["Mixin", ...] = ()


def mixin_groups(mixins: tuple[Mixin, ...]) -> tuple[tuple[str, tuple[Mixin, ...]], ...]:
    """The branches of ``mixins`` by union, in order: ``(keyword, branches)`` per union."""
    groups: dict[str, list[Mixin]] = {}
    for m in mixins:
        groups.setdefault(m.group, []).append(m)
    return tuple((ms[0].keyword, tuple(ms)) for ms in groups.values())


@dataclass(frozen=True, slots=True)
class ObjectDef:
    key: str
    origin: Origin
    fields: tuple[Field, ...]
    description: str | None = None
    title: str | None = None
    #: "allow": unknown members are legal and kept; "forbid": they are rejected;
    #: a TypeExpr: unknown members must match it.
    extra: Literal["allow", "forbid"] | TypeExpr = "allow"
    #: one of these shapes must also hold (at least one when ``mixins`` is not empty)
    mixins: tuple[Mixin, ...] = ()
    docs_ignore: bool = False
    #: set when the object was lifted out of another node rather than a $defs entry
    lifted_from: str | None = None
    #: a JSON-RPC envelope ("request" or "notification"): ``params``, when present and not
    #: null, is the params of the method of that kind named by ``method``
    by_method: Literal["request", "notification"] | None = None


VariantKind = Literal["tagged", "default", "fallback"]


@dataclass(frozen=True, slots=True)
class Variant:
    key: str
    kind: VariantKind
    origin: Origin
    tag_value: str | int | None = None
    #: the object def whose fields this variant carries (``allOf: [{$ref}]``)
    base: str | None = None
    #: fields of the variant itself, not counting the tag and the base's fields
    fields: tuple[Field, ...] = ()
    mixins: tuple[Mixin, ...] = ()
    description: str | None = None
    title: str | None = None
    docs_ignore: bool = False
    #: the default or fallback variant's ``not``: tag values it rules out. Without one,
    #: the variant also holds for a value with a known tag that its own variant rejects
    #: (JSON Schema's ``anyOf``: the default branch does not constrain the tag)
    excludes: tuple[tuple[str, tuple[JsonValue, ...]], ...] = ()


@dataclass(frozen=True, slots=True)
class TaggedUnionDef:
    key: str
    origin: Origin
    tag: str
    variants: tuple[Variant, ...]
    shared_fields: tuple[Field, ...] = ()
    description: str | None = None
    title: str | None = None
    docs_ignore: bool = False
    #: the schema carried an OpenAPI ``discriminator`` object
    discriminator_keyword: bool = False

    @property
    def open(self) -> bool:
        return any(v.kind == "fallback" for v in self.variants)

    @property
    def default_variant(self) -> Variant | None:
        return next((v for v in self.variants if v.kind == "default"), None)

    @property
    def fallback(self) -> Variant | None:
        return next((v for v in self.variants if v.kind == "fallback"), None)

    @property
    def tagged(self) -> tuple[Variant, ...]:
        return tuple(v for v in self.variants if v.kind == "tagged")

    @property
    def catch_all(self) -> Variant | None:
        """The untagged default (else the open fallback) variant when its schema rules out
        none of the known tags: a value with a known tag that its own variant rejects is
        then still valid as this one. (One that rules out some but not all of them is
        taken as ruling out all: stricter than the schema, never looser.)"""
        known = {v.tag_value for v in self.tagged}
        for v in (self.default_variant, self.fallback):
            if v is None:
                continue
            # a value that is no string or number (an array ``const``) is never a tag
            ruled_out = {
                x for member, values in v.excludes if member == self.tag for x in values if isinstance(x, (str, int, float))
            }
            if not known & ruled_out and not (v.kind == "fallback" and v.excludes):
                return v
        return None


@dataclass(frozen=True, slots=True)
class UnionMember:
    type: TypeExpr
    origin: Origin
    title: str | None = None
    description: str | None = None


#: how an untagged ``oneOf`` holds to "exactly one member": ``"disjoint"`` when no value
#: can match two members (proved from the schema at generation time), ``"checked"``
#: when one may, so the bindings count the members a value matches
Exclusive = Literal["disjoint", "checked"]


@dataclass(frozen=True, slots=True)
class UnionDef:
    """An untagged union: a value is whichever member's shape it has."""

    key: str
    origin: Origin
    members: tuple[UnionMember, ...]
    description: str | None = None
    title: str | None = None
    docs_ignore: bool = False
    #: ``None`` for an ``anyOf`` (at least one member); for a ``oneOf`` (exactly one),
    #: whether its members are ``"disjoint"`` (the union as it is) or can overlap and the
    #: bindings check that a value matches only one (``"checked"``);
    #: see ``acpgen/normalise/exclusive.py``
    exclusive: Exclusive | None = None


@dataclass(frozen=True, slots=True)
class EnumValue:
    value: str | int
    description: str | None = None
    title: str | None = None


@dataclass(frozen=True, slots=True)
class EnumDef:
    key: str
    origin: Origin
    base: Literal["string", "integer"]
    values: tuple[EnumValue, ...]
    #: open enums accept (and keep) values outside ``values``
    open: bool = False
    fallback_title: str | None = None
    fallback_description: str | None = None
    description: str | None = None
    title: str | None = None
    docs_ignore: bool = False
    #: "enum" keyword, "oneOf"/"anyOf" of consts: kept for docs parity
    encoding: str = "enum"
    #: the members' ``format`` (``int32`` for JSON-RPC error codes), when they share one
    format: str | None = None


@dataclass(frozen=True, slots=True)
class AliasDef:
    key: str
    origin: Origin
    type: TypeExpr
    description: str | None = None
    title: str | None = None
    docs_ignore: bool = False


Def = Union[ObjectDef, TaggedUnionDef, UnionDef, EnumDef, AliasDef]

Side = Literal["agent", "client", "protocol", "both", ""]


@dataclass(frozen=True, slots=True)
class Method:
    """A JSON-RPC method. ``side`` is the side that implements (receives) it."""

    name: str
    side: Side
    kind: Literal["request", "notification"]
    origin: Origin
    params: str | None = None
    result: str | None = None
    meta_key: str | None = None
    #: where the link between method and types came from: x-method, meta+name, root
    linked_by: str = "x-method"
    #: the method's prose: the description of its member in the x-docs-ignore routers
    description: str | None = None
    #: every def linked to this method and side (a method can be both a request and a
    #: notification: ``mcp/message``), sorted by name
    types: tuple[str, ...] = ()
    #: the params member that names the session the method is about (``sessionId``): the
    #: runtime orders such messages per session
    session: str | None = None


@dataclass(frozen=True, slots=True)
class OverlayChange:
    """One row of an overlay's status table: an operation on one target."""

    op: str
    target: str
    status: str  # applied | already-present | conflict | not-applicable
    detail: str = ""


@dataclass(frozen=True, slots=True)
class OverlayApplied:
    id: str
    title: str
    rfd: str
    status: str  # the RFD's own status (accepted, draft, ...)
    verdict: str  # applies-cleanly | partially-merged | obsolete | conflict | not-applicable
    link: str | None = None
    merged_upstream: str | None = None
    changes: tuple[OverlayChange, ...] = ()


@dataclass(frozen=True, slots=True)
class Protocol:
    source: str
    source_sha256: str
    tree: str
    stability: Literal["stable", "unstable"]
    defs: tuple[Def, ...]
    methods: tuple[Method, ...]
    meta_source: str | None = None
    meta_sha256: str | None = None
    protocol_version: int | None = None
    title: str | None = None
    #: items that are unstable: ``Def``, ``Def.field``, ``Def|variant``, ``method:name``
    #: (an ``**UNSTABLE**`` description, or absent from the stable file of the same tree)
    unstable: tuple[str, ...] = ()
    #: the RFD overlays applied before the IR was built, in order
    overlays: tuple["OverlayApplied", ...] = ()
    #: (pointer, keyword) of validating keywords acpgen does not implement, built anyway
    #: because the user accepted the loss (``[keywords] unimplemented = "warn"``)
    unenforced: tuple[tuple[str, str], ...] = ()
    #: the root declares JSON-RPC 2.0 batches (a member that is an array of messages, as
    #: upstream's newer v2 drafts do): a connection then answers a batch with an array
    batches: bool = False

    def def_map(self) -> dict[str, Def]:
        return {d.key: d for d in self.defs}

    @property
    def label(self) -> str:
        return self.tree if self.stability == "stable" else f"{self.tree}-unstable"


@dataclass(frozen=True, slots=True)
class NestedVariant:
    """One inner variant of a variant whose payload is itself a tagged union (upstream v2
    ``SessionUpdate`` ``state_update``: ``allOf: [{$ref: StateUpdate}]``, a union tagged by
    ``state``). A value of the outer variant is exactly one of these: both tags, the
    outer variant's own members and the inner variant's payload."""

    key: str
    union: TaggedUnionDef
    variant: Variant
    inner: TaggedUnionDef
    inner_variant: Variant


def nested_variants(union: TaggedUnionDef, variant: Variant, defs: Mapping[str, Def]) -> tuple[NestedVariant, ...]:
    """The products of ``variant`` when its base is a tagged union, else ``()``; each keyed
    ``<variant key>#<inner variant's key suffix>``."""
    inner = defs.get(variant.base) if variant.base else None
    if not isinstance(inner, TaggedUnionDef):
        return ()
    return tuple(
        NestedVariant(f"{variant.key}#{iv.key.rpartition('#')[2]}", union, variant, inner, iv) for iv in inner.variants
    )


def all_nested_variants(protocol: "Protocol") -> tuple[NestedVariant, ...]:
    defs = protocol.def_map()
    return tuple(
        n
        for d in protocol.defs
        if isinstance(d, TaggedUnionDef)
        for v in d.variants
        for n in nested_variants(d, v, defs)
    )


# --------------------------------------------------------------------------- JSON dump


def to_jsonable(value: Any) -> Any:
    """A plain-JSON view of any IR value; each dataclass gains a ``node`` field."""
    if is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {"node": type(value).__name__}
        for f in fields(value):
            out[f.name] = to_jsonable(getattr(value, f.name))
        if isinstance(value, Field):
            out["nullable"] = value.nullable
        if isinstance(value, TaggedUnionDef):
            out["open"] = value.open
        return out
    if isinstance(value, tuple):
        return [to_jsonable(v) for v in value]
    return value
