"""Classify one schema node that needs a name: object, enum, union or alias."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal, NamedTuple

from acpgen import ir
from acpgen.normalise.context import ANNOTATIONS, Context, check_schema
from acpgen.normalise.nots import UNION_KEYWORDS, excluded_values, forbidden_members, forbidding_branch
from acpgen.normalise.types import is_any, is_null, single_ref, type_expr
from acpgen.errors import AcpgenError
from acpgen.source import pointer_join


def _text(schema: dict[str, Any], key: str) -> str | None:
    value = schema.get(key)
    return value if isinstance(value, str) else None


class UnionNode(NamedTuple):
    """A ``oneOf``/``anyOf`` node being classified, with its members' original indices."""

    key: str
    schema: dict[str, Any]
    kw: str
    members: list[tuple[int, Any]]
    pointer: str


def union_keyword(schema: dict[str, Any]) -> str | None:
    for key in UNION_KEYWORDS:
        if isinstance(schema.get(key), list):
            return key
    return None


def build_def(
    ctx: Context,
    key: str,
    schema: Any,
    pointer: str,
    lifted_from: str | None = None,
    drop_null: bool = False,
) -> ir.Def:
    origin = ctx.origin(pointer, schema)
    if schema is True or is_any(schema):
        described = schema if isinstance(schema, dict) else {}
        return ir.AliasDef(
            key,
            origin,
            ir.AnyT(),
            _text(described, "description"),
            _text(described, "title"),
            described.get("x-docs-ignore") is True,
        )
    if not isinstance(schema, dict):
        raise ctx.error("ACPG201", f"expected a schema object, found {type(schema).__name__}", pointer)
    check_schema(ctx, schema, pointer)
    description = _text(schema, "description")
    title = _text(schema, "title")
    docs_ignore = schema.get("x-docs-ignore") is True
    has_props = "properties" in schema or "required" in schema

    kw = union_keyword(schema)
    if kw is not None:
        ctx.use(pointer, schema, "type")
        members = [
            (i, m) for i, m in enumerate(schema[kw]) if not (drop_null and is_null(m))
        ]
        both = all(isinstance(schema.get(k), list) for k in UNION_KEYWORDS)
        if not has_props and not both:
            enum = try_enum(ctx, UnionNode(key, schema, kw, members, pointer))
            if enum is not None:
                return enum
        from acpgen.normalise.unions import build_untagged, try_tagged

        node = UnionNode(key, schema, kw, members, pointer)
        tagged = try_tagged(ctx, node)
        if tagged is not None:
            return tagged
        if has_props:
            return build_object(ctx, key, schema, pointer, lifted_from)
        if both:
            raise ctx.error(
                "ACPG207",
                "a `oneOf` beside an `anyOf` is supported on objects (with `properties`) and tagged unions only",
                pointer,
            )
        return build_untagged(ctx, node)

    if isinstance(schema.get("enum"), list) and not has_props:
        values = [v for v in schema["enum"] if v is not None]
        if values and all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in values):
            ctx.use(pointer, schema, "enum", "type")
            base: Literal["string", "integer"] = (
                "integer" if all(isinstance(v, int) for v in values) else "string"
            )
            if len(values) == len(schema["enum"]) and (base == "integer" or all(isinstance(v, str) for v in values)):
                return ir.EnumDef(
                    key,
                    origin,
                    base,
                    tuple(ir.EnumValue(v) for v in values),
                    description=description,
                    title=title,
                    docs_ignore=docs_ignore,
                    encoding="enum",
                )

    if has_props:
        return build_object(ctx, key, schema, pointer, lifted_from)

    return ir.AliasDef(
        key,
        origin,
        type_expr(ctx, schema, pointer, key + ".inner"),
        description,
        title,
        docs_ignore,
    )


# --------------------------------------------------------------------------- enums


def try_enum(ctx: Context, node: UnionNode) -> ir.EnumDef | None:
    key, schema, kw, members, pointer = node
    values: list[ir.EnumValue] = []
    fallback: dict[str, Any] | None = None
    kinds: set[str] = set()
    formats: set[Any] = set()
    for _, m in members:
        if not isinstance(m, dict):
            return None
        fmt = m.get("format")
        formats.add(fmt if isinstance(fmt, str) else None)
        if set(m) - ANNOTATIONS - {"type", "const", "enum", "format", "minimum", "maximum"}:
            return None
        t = m.get("type")
        if "const" in m:
            v = m["const"]
            if isinstance(v, bool) or not isinstance(v, (str, int)):
                return None
            kinds.add("integer" if isinstance(v, int) else "string")
            values.append(ir.EnumValue(v, _text(m, "description"), _text(m, "title")))
        elif isinstance(m.get("enum"), list):
            for v in m["enum"]:
                if isinstance(v, bool) or not isinstance(v, (str, int)):
                    return None
                kinds.add("integer" if isinstance(v, int) else "string")
                values.append(ir.EnumValue(v))
        elif t in ("string", "integer") and fallback is None:
            fallback = m
            kinds.add(t)
        else:
            return None
    if not values or len(kinds) != 1:
        return None
    base = kinds.pop()
    ctx.use(pointer, schema, kw, "type")
    for i, m in members:
        ctx.use(pointer_join(pointer, kw, i), m, "const", "enum", "type", "format")
    seen: set[Any] = set()
    for v in values:
        if v.value in seen:
            raise ctx.error("ACPG206", f"enum value {v.value!r} appears twice", pointer + "/" + kw)
        seen.add(v.value)
    return ir.EnumDef(
        key,
        ctx.origin(pointer, schema),
        base,  # type: ignore[arg-type]
        tuple(values),
        open=fallback is not None,
        fallback_title=_text(fallback, "title") if fallback else None,
        fallback_description=_text(fallback, "description") if fallback else None,
        description=_text(schema, "description"),
        title=_text(schema, "title"),
        docs_ignore=schema.get("x-docs-ignore") is True,
        encoding=kw,
        format=formats.pop() if len(formats) == 1 and isinstance(next(iter(formats)), str) else None,
    )


# --------------------------------------------------------------------------- objects


def build_fields(
    ctx: Context, owner: str, schema: dict[str, Any], pointer: str, skip: frozenset[str] = frozenset()
) -> tuple[ir.Field, ...]:
    props = schema.get("properties", {})
    ctx.use(pointer, schema, "properties", "required")
    if not isinstance(props, dict):
        return ()
    required = schema.get("required", [])
    # malformed entries are ACPG202 (check_schema); the well-formed ones still count
    required_set = {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
    out: list[ir.Field] = []
    for name, prop in props.items():
        if name in skip:
            continue
        at = pointer_join(pointer, "properties", name)
        try:
            t = type_expr(ctx, prop, at, f"{owner}.{name}")
        except AcpgenError as exc:
            ctx.problems.extend(exc)
            continue
        annotated = prop if isinstance(prop, dict) else {}
        ctx.use(at, annotated, *LENIENCY)
        out.append(
            ir.Field(
                wire_name=name,
                type=t,
                required=name in required_set,
                origin=ctx.origin(at, annotated),
                description=_text(annotated, "description"),
                has_default="default" in annotated,
                default=annotated.get("default"),
                default_on_error=annotated.get("x-deserialize-default-on-error") is True,
                skip_invalid_items=annotated.get("x-deserialize-skip-invalid-items") is True,
                default_on_null=annotated.get("x-deserialize-default-on-null") is True,
            )
        )
    return tuple(out)


def base_def(ctx: Context, schema: dict[str, Any], pointer: str, what: str = "an object") -> str | None:
    """The def a schema extends through ``allOf:[{$ref}]`` / ``$ref`` siblings."""
    ref, at = single_ref(schema)
    if ref is None:
        return None
    ctx.use(pointer, schema, "$ref", "allOf")
    target = ctx.resolve(ref, pointer + at)
    if target.def_name is None:
        raise ctx.error("ACPG207", f"{what} may only extend a $defs entry", pointer + at)
    return target.def_name


LENIENCY = ("x-deserialize-default-on-error", "x-deserialize-skip-invalid-items", "x-deserialize-default-on-null")


def build_mixins(
    ctx: Context, owner: str, schema: dict[str, Any], pointer: str, skip: str | None = None
) -> tuple[ir.Mixin, ...]:
    """The branches of every ``oneOf``/``anyOf`` beside the members of ``schema`` (all of
    them: an object may carry both, and both must hold), nested unions included;
    ``skip`` is the keyword already read as a tagged union."""
    mixins: list[ir.Mixin] = []
    for kw in UNION_KEYWORDS:
        branches = schema.get(kw)
        if kw == skip or not isinstance(branches, list):
            continue
        group = pointer_join(pointer, kw)
        ctx.use(pointer, schema, kw)
        built: list[ir.Mixin] = []
        for i, m in enumerate(branches):
            at = pointer_join(group, i)
            if not isinstance(m, dict):
                raise ctx.error("ACPG202", "expected a schema object", at)
            check_schema(ctx, m, at)
            ctx.use(at, m, "type")
            for extra in ("additionalProperties", "unevaluatedProperties"):
                if is_any(m.get(extra, True)):  # an open branch; a closed one is refused
                    ctx.use(at, m, extra)
            base = base_def(ctx, m, at)
            title = _text(m, "title")
            fields = build_fields(ctx, f"{owner}.{title or i}", m, at)
            excludes, absent = excluded_values(ctx, m, at), forbidden_members(ctx, m, at)
            if "not" in m and not (excludes or absent):
                raise ctx.error("ACPG207", "this form of `not` is not supported on a union branch", at + "/not")
            built.append(
                ir.Mixin(
                    title=title,
                    description=_text(m, "description"),
                    base=base,
                    fields=fields,
                    origin=ctx.origin(at, m),
                    group=group,
                    keyword=kw,  # type: ignore[arg-type]
                    excludes=excludes,
                    absent=absent,
                    required=tuple(r for r in m.get("required", ()) if isinstance(r, str))
                    if isinstance(m.get("required"), list)
                    else (),
                    mixins=build_mixins(ctx, f"{owner}.{title or i}", m, at),
                )
            )
        mixins += label_branches(ctx, built)
    return tuple(mixins)


def branch_label(m: ir.Mixin) -> str | None:
    """A branch's name, from the schema: its ``title``; else the value of the one required
    member it fixes to a constant (``end_turn``); else the def it extends; else the
    members it requires (``id, method``)."""
    if m.title:
        return m.title
    consts = [f.type.values[0] for f in m.fields if f.required and isinstance(f.type, ir.Lit) and len(f.type.values) == 1]
    if len(consts) == 1 and isinstance(consts[0], (str, int)) and not isinstance(consts[0], bool):
        return str(consts[0])
    if m.base:
        return m.base
    return ", ".join(m.required) if m.required else None


def label_branches(ctx: Context, branches: list[ir.Mixin]) -> list[ir.Mixin]:
    """Each branch with its label; two branches of one union with the same label (or one
    without any) are an error naming both."""
    out: list[ir.Mixin] = []
    seen: dict[str, ir.Mixin] = {}
    for m in branches:
        label = branch_label(m)
        if label is None:
            raise ctx.error(
                "ACPG207",
                "a branch of a union beside an object's members needs a title, a $ref, a "
                "required constant or required members to be named",
                m.origin.pointer,
            )
        if label in seen:
            raise ctx.error(
                "ACPG207",
                f"two branches of this union are both named {label!r} (here and at "
                f"{seen[label].origin.pointer}); give one a title",
                m.origin.pointer,
            )
        seen[label] = m
        out.append(replace(m, label=label))
    return out


def extra_members(ctx: Context, schema: dict[str, Any], pointer: str, owner: str) -> Any:
    if "additionalProperties" in schema and "unevaluatedProperties" in schema:
        raise ctx.error("ACPG207", "additionalProperties beside unevaluatedProperties is not supported", pointer)
    ctx.use(pointer, schema, "additionalProperties", "unevaluatedProperties")
    extra = schema.get("additionalProperties", schema.get("unevaluatedProperties", True))
    if extra is True or (isinstance(extra, dict) and is_any(extra)):
        return "allow"
    if extra is False:
        return "forbid"
    at = "/additionalProperties" if "additionalProperties" in schema else "/unevaluatedProperties"
    return type_expr(ctx, extra, pointer + at, owner + ".value")


def build_object(
    ctx: Context, key: str, schema: dict[str, Any], pointer: str, lifted_from: str | None
) -> ir.ObjectDef:
    base = base_def(ctx, schema, pointer)
    ctx.use(pointer, schema, "type")
    fields = build_fields(ctx, key, schema, pointer)
    if base is not None:
        # the extended def's fields come first; the object's own fields override them
        base_schema = ctx.defs.get(base)
        if isinstance(base_schema, dict):
            own = {f.wire_name for f in fields}
            inherited = tuple(
                f
                for f in build_fields(ctx, base, base_schema, ctx.def_pointer(base))
                if f.wire_name not in own
            )
            fields = inherited + fields
    return ir.ObjectDef(
        key=key,
        origin=ctx.origin(pointer, schema),
        fields=fields,
        description=_text(schema, "description"),
        title=_text(schema, "title"),
        extra=extra_members(ctx, schema, pointer, key),
        mixins=build_mixins(ctx, key, schema, pointer) + forbidding_branch(ctx, schema, pointer),
        docs_ignore=schema.get("x-docs-ignore") is True,
        lifted_from=lifted_from,
    )
