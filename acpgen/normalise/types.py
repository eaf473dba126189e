"""Schema node -> type expression. Inline objects and unions are lifted into defs."""

from __future__ import annotations

from typing import Any

from acpgen import ir
from acpgen.normalise.context import ANNOTATIONS, SCALAR_TYPES, Context, check_schema
from acpgen.normalise.exclusive import exclusivity

#: the keywords read into ``ir.Constraints``
CONSTRAINTS = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
)
STRUCTURAL = frozenset({"properties", "required", "oneOf", "anyOf", "additionalProperties"})


def single_ref(schema: dict[str, Any]) -> tuple[str | None, str]:
    """The reference of ``{"$ref": X, ...}`` or ``{"allOf": [{"$ref": X}], ...}``.

    Returns ``(ref, pointer suffix of the $ref)``; ``(None, "")`` when there is none.
    """
    if "$ref" in schema:
        return schema["$ref"], "/$ref"
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
        inner = all_of[0]
        if "$ref" in inner and set(inner) <= {"$ref"} | ANNOTATIONS:
            return inner["$ref"], "/allOf/0/$ref"
    return None, ""


def is_any(schema: Any) -> bool:
    if schema is True:
        return True
    return isinstance(schema, dict) and set(schema) <= ANNOTATIONS


def is_null(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("type") == "null" and "const" not in schema


def constraints(schema: dict[str, Any]) -> ir.Constraints:
    def num(key: str) -> int | float | None:
        value = schema.get(key)
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    def whole(key: str) -> int | None:
        value = schema.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return ir.Constraints(
        minimum=num("minimum"),
        maximum=num("maximum"),
        exclusive_minimum=num("exclusiveMinimum"),
        exclusive_maximum=num("exclusiveMaximum"),
        multiple_of=num("multipleOf"),
        min_length=whole("minLength"),
        max_length=whole("maxLength"),
        pattern=schema.get("pattern") if isinstance(schema.get("pattern"), str) else None,
        format=schema.get("format") if isinstance(schema.get("format"), str) else None,
        content_encoding=schema.get("contentEncoding")
        if isinstance(schema.get("contentEncoding"), str)
        else None,
        min_items=whole("minItems"),
        max_items=whole("maxItems"),
    )


def ref_type(ctx: Context, ref: Any, pointer: str) -> ir.TypeExpr:
    target = ctx.resolve(ref, pointer)
    if target.def_name is not None:
        return ir.Ref(target.def_name)
    # a pointer into the middle of a document: treat the target as inline
    return type_expr(ctx, target.schema, target.pointer, "Ref" + target.pointer.replace("/", "."))


def type_expr(ctx: Context, schema: Any, pointer: str, hint: str) -> ir.TypeExpr:
    """The type of the values a schema node accepts.

    ``hint`` is the IR key an inline object or union at this place is lifted to.
    """
    if schema is True or is_any(schema):
        return ir.AnyT()
    if schema is False:
        raise ctx.error("ACPG207", "the schema `false` accepts nothing", pointer)
    if not isinstance(schema, dict):
        raise ctx.error("ACPG202", f"expected a schema object, found {type(schema).__name__}", pointer)
    check_schema(ctx, schema, pointer)

    ref, ref_at = single_ref(schema)
    if ref is not None and not (STRUCTURAL & set(schema)):
        ctx.use(pointer, schema, "$ref", "allOf", "type")
        inner = ref_type(ctx, ref, pointer + ref_at)
        types = schema.get("type")
        if isinstance(types, list) and "null" in types:
            return ir.Nullable(inner)
        return inner

    for key in ("anyOf", "oneOf"):
        members = schema.get(key)
        if isinstance(members, list) and not ({"properties", "required"} & set(schema)):
            return _union_type(ctx, schema, key, members, pointer, hint)

    if "const" in schema:
        _scalar_values(ctx, [schema["const"]], pointer + "/const")
        ctx.use(pointer, schema, "const", "type")
        return ir.Lit((schema["const"],))
    if isinstance(schema.get("enum"), list):
        _scalar_values(ctx, schema["enum"], pointer + "/enum")
        ctx.use(pointer, schema, "enum", "type")
        values = tuple(schema["enum"])
        non_null = tuple(v for v in values if v is not None)
        lit: ir.TypeExpr = ir.Lit(non_null)
        types = schema.get("type")
        if len(non_null) < len(values) or (isinstance(types, list) and "null" in types):
            return ir.Nullable(lit)
        return lit

    types = schema.get("type")
    ctx.use(pointer, schema, "type")
    if isinstance(types, list):
        kinds = [t for t in types if t != "null"]
        nullable = len(kinds) < len(types)
        if not kinds:
            return ir.NullT()
        if len(kinds) == 1:
            inner = _typed(ctx, schema, kinds[0], pointer, hint)
        else:
            inner = ir.AnyOf(tuple(_typed(ctx, schema, k, pointer, hint) for k in kinds))
        return ir.Nullable(inner) if nullable else inner
    if isinstance(types, str):
        return _typed(ctx, schema, types, pointer, hint)
    if "properties" in schema or "additionalProperties" in schema or ref is not None:
        return _typed(ctx, schema, "object", pointer, hint)
    if "items" in schema or "prefixItems" in schema:
        return _typed(ctx, schema, "array", pointer, hint)
    raise ctx.error("ACPG207", "cannot tell what type this schema describes", pointer)


def _scalar_values(ctx: Context, values: list[Any], pointer: str) -> None:
    """``const``/``enum`` values are JSON scalars; an array or object value is refused
    (it has no ``Literal`` spelling)."""
    if any(isinstance(v, (list, dict)) for v in values):
        raise ctx.error("ACPG207", "a constant that is an array or an object is not supported", pointer)


def _typed(ctx: Context, schema: dict[str, Any], kind: str, pointer: str, hint: str) -> ir.TypeExpr:
    if kind in SCALAR_TYPES:
        ctx.use(pointer, schema, *CONSTRAINTS)
        return ir.Prim(kind, constraints(schema))  # type: ignore[arg-type]
    if kind == "null":
        return ir.NullT()
    if kind == "array":
        prefix = schema.get("prefixItems")
        if isinstance(prefix, list):
            if "items" in schema:
                raise ctx.error("ACPG207", "prefixItems with items is not supported", pointer + "/items")
            ctx.use(pointer, schema, "prefixItems")
            return ir.Tuple(
                tuple(
                    type_expr(ctx, item, f"{pointer}/prefixItems/{i}", f"{hint}.{i}")
                    for i, item in enumerate(prefix)
                )
            )
        items = schema.get("items", True)
        ctx.use(pointer, schema, "items", *CONSTRAINTS)
        item_type = type_expr(ctx, items, pointer + "/items", hint + ".item")
        return ir.Array(item_type, constraints(schema))
    if kind == "object":
        if "properties" in schema or single_ref(schema)[0] is not None or "oneOf" in schema or "anyOf" in schema:
            from acpgen.normalise.defs import build_def

            return ctx.lift(build_def(ctx, hint, schema, pointer, lifted_from=hint), pointer)
        extra = schema.get("additionalProperties", True)
        if extra is False:
            raise ctx.error("ACPG207", "an object that accepts no members", pointer)
        ctx.use(pointer, schema, "additionalProperties")
        return ir.Map(type_expr(ctx, extra, pointer + "/additionalProperties", hint + ".value"))
    raise ctx.error("ACPG202", f"unknown type {kind!r}", pointer + "/type")


def _union_type(
    ctx: Context, schema: dict[str, Any], key: str, members: list[Any], pointer: str, hint: str
) -> ir.TypeExpr:
    non_null = [(i, m) for i, m in enumerate(members) if not is_null(m)]
    nullable = len(non_null) < len(members)
    ctx.use(pointer, schema, key, "type")
    for i, m in enumerate(members):
        if is_null(m):
            ctx.use(f"{pointer}/{key}/{i}", m, "type")
    if len(non_null) == 1:
        i, member = non_null[0]
        inner = type_expr(ctx, member, f"{pointer}/{key}/{i}", hint)
        return ir.Nullable(inner) if nullable else inner
    if not non_null:
        return ir.NullT()
    simple = all(_is_simple(m) for _, m in non_null)
    if simple and key == "oneOf" and exclusivity([m for _, m in non_null], ctx.local_def) == "checked":
        # members that can overlap: a union def of its own, whose binding checks that a
        # value matches only one of them (``ir.UnionDef.exclusive``)
        simple = False
    if simple:
        types = tuple(type_expr(ctx, m, f"{pointer}/{key}/{i}", hint) for i, m in non_null)
        if all(isinstance(t, ir.Lit) for t in types):
            merged = ir.Lit(tuple(v for t in types for v in t.values))  # type: ignore[union-attr]
            return ir.Nullable(merged) if nullable else merged
        inner_u: ir.TypeExpr = ir.AnyOf(types)
        return ir.Nullable(inner_u) if nullable else inner_u
    from acpgen.normalise.defs import build_def

    lifted = ctx.lift(build_def(ctx, hint, schema, pointer, lifted_from=hint, drop_null=True), pointer)
    return ir.Nullable(lifted) if nullable else lifted


def _is_simple(member: Any) -> bool:
    """A union member that needs no class of its own: a ref, scalar, array or const."""
    if not isinstance(member, dict):
        return member is True
    if single_ref(member)[0] is not None and not (STRUCTURAL & set(member)):
        return True
    if "properties" in member or "oneOf" in member or "anyOf" in member or "not" in member:
        return False
    t = member.get("type")
    if t == "object" or (isinstance(t, list) and "object" in t):
        return "additionalProperties" in member and "properties" not in member
    return True

