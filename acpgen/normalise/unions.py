"""Union recognition: tagged by a const property (in every encoding), or untagged.

A tag is inferred from the variants' ``const`` properties, never read from the
OpenAPI ``discriminator`` keyword alone (v2 has none). Members without the tag
are the untagged *default* variant (serde untagged fallback); a member with a
``not`` that rejects the known tags, or with a plain string tag, is the *open
fallback* that keeps unknown variants.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from acpgen import ir
from acpgen.normalise.context import Context
from acpgen.normalise.defs import UnionNode, _text, base_def, build_fields, build_mixins, union_keyword
from acpgen.normalise.exclusive import exclusivity
from acpgen.normalise.nots import excluded_values, tag_exclusions
from acpgen.normalise.types import is_any, single_ref, type_expr
from acpgen.source import pointer_join


@dataclass
class _Member:
    index: int
    schema: dict[str, Any]
    consts: dict[str, str | int]
    props: dict[str, Any]


def _tag_value(prop: Any) -> str | int | None:
    if not isinstance(prop, dict):
        return None
    if "const" in prop:
        value = prop["const"]
    elif isinstance(prop.get("enum"), list) and len(prop["enum"]) == 1:
        value = prop["enum"][0]
    else:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    return value


def _object_like(m: Any) -> bool:
    if not isinstance(m, dict):
        return False
    if "properties" in m or single_ref(m)[0] is not None:
        return True
    t = m.get("type")
    return t == "object"


def _member(index: int, m: dict[str, Any]) -> _Member:
    raw_props = m.get("properties")
    props: dict[str, Any] = raw_props if isinstance(raw_props, dict) else {}
    raw_required = m.get("required")
    required: list[Any] = raw_required if isinstance(raw_required, list) else []
    consts = {}
    for name, prop in props.items():
        value = _tag_value(prop)
        if value is not None and name in required:
            consts[name] = value
    return _Member(index, m, consts, props)


def _is_fallback(m: _Member, tag: str) -> bool:
    if "not" in m.schema:
        return True
    prop = m.props.get(tag)
    return isinstance(prop, dict) and prop.get("type") == "string" and "const" not in prop and "enum" not in prop


def _classify(members: list[_Member], tag: str) -> tuple[list[_Member], list[_Member], list[_Member]] | None:
    tagged, defaults, fallbacks = [], [], []
    for m in members:
        if tag in m.consts:
            tagged.append(m)
        elif _is_fallback(m, tag):
            fallbacks.append(m)
        elif tag not in m.props:
            defaults.append(m)
        else:
            return None
    if not tagged or len(defaults) > 1 or len(fallbacks) > 1:
        return None
    return tagged, defaults, fallbacks


def try_tagged(ctx: Context, node: UnionNode) -> ir.TaggedUnionDef | None:
    key, schema, kw, indexed, pointer = node
    if not indexed or not all(_object_like(m) for _, m in indexed):
        return None
    members = [_member(i, m) for i, m in indexed]
    disc = schema.get("discriminator")
    named = disc.get("propertyName") if isinstance(disc, dict) else None
    candidates = sorted({name for m in members for name in m.consts})
    if isinstance(named, str):
        candidates = [named] if named in candidates else []
    best: tuple[tuple[int, int, str], str, Any] | None = None
    for tag in candidates:
        split = _classify(members, tag)
        if split is None:
            continue
        values = [m.consts[tag] for m in split[0]]
        if len(set(values)) != len(values):
            if isinstance(named, str):
                dup = next(v for v in values if values.count(v) > 1)
                raise ctx.error(
                    "ACPG206",
                    f"tag {tag!r} has the value {dup!r} in more than one variant",
                    pointer + "/" + kw,
                )
            continue
        score = (len(split[0]), len(split[2]), tag)
        if best is None or score[:2] > best[0][:2]:
            best = (score, tag, split)
    if best is None:
        return None
    _, tag, (tagged, defaults, fallbacks) = best
    # the other union beside this one (``oneOf`` by tag and ``anyOf`` of scopes) must hold
    # too: every variant carries its branches
    ctx.use(pointer, schema, kw)
    sibling = build_mixins(ctx, key, schema, pointer, skip=kw)
    variants: list[ir.Variant] = []
    for m in members:
        kind = "tagged" if m in tagged else "default" if m in defaults else "fallback"
        v = _variant(ctx, key, tag, kind, m, pointer_join(pointer, kw, m.index))
        variants.append(replace(v, mixins=v.mixins + sibling) if sibling else v)
    shared = build_fields(ctx, key, schema, pointer)
    return ir.TaggedUnionDef(
        key=key,
        origin=ctx.origin(pointer, schema),
        tag=tag,
        variants=tuple(variants),
        shared_fields=shared,
        description=_text(schema, "description"),
        title=_text(schema, "title"),
        docs_ignore=schema.get("x-docs-ignore") is True,
        discriminator_keyword=isinstance(named, str),
    )


def key_part(value: object) -> str:
    """A tag value as it stands in its variant's key (``Union#value``): ``#`` separates
    the union from the variant there (and a variant from a nested one), so a ``#`` in the
    value is written ``%23`` (and ``%`` as ``%25``: two tags never share a key)."""
    return str(value).replace("%", "%25").replace("#", "%23")


def _variant(ctx: Context, union: str, tag: str, kind: str, m: _Member, pointer: str) -> ir.Variant:
    value = m.consts.get(tag)
    vkey = f"{union}#{key_part(value)}" if kind == "tagged" else f"{union}#{kind}"
    # the tag member is read here, not as a field: its constant (or, in the fallback, its
    # string type)
    ctx.use(pointer, m.schema, "type")
    for extra in ("additionalProperties", "unevaluatedProperties"):
        if is_any(m.schema.get(extra, True)):  # open, as every variant is; a closed one is refused
            ctx.use(pointer, m.schema, extra)
    excludes = excluded_values(ctx, m.schema, pointer) if kind != "tagged" else ()
    if kind == "fallback":
        excludes += tag_exclusions(ctx, m.props.get(tag), tag, pointer_join(pointer, "properties", tag))
    if kind != "tagged" and "not" in m.schema and not excludes:
        raise ctx.error("ACPG207", "a default or fallback variant's `not` may only rule out tag values", pointer + "/not")
    tag_at = pointer_join(pointer, "properties", tag)
    ctx.use(tag_at, m.props.get(tag), "const", "enum", "type")
    base = base_def(ctx, m.schema, pointer, "a variant")
    if base is None and isinstance(m.schema.get("allOf"), list):
        raise ctx.error("ACPG207", "allOf with more than one schema is not supported here", pointer + "/allOf")
    return ir.Variant(
        key=vkey,
        kind=kind,  # type: ignore[arg-type]
        origin=ctx.origin(pointer, m.schema),
        tag_value=value,
        base=base,
        fields=build_fields(ctx, vkey, m.schema, pointer, skip=frozenset({tag})),
        mixins=build_mixins(ctx, vkey, m.schema, pointer) if union_keyword(m.schema) else (),
        description=_text(m.schema, "description"),
        title=_text(m.schema, "title"),
        docs_ignore=m.schema.get("x-docs-ignore") is True,
        excludes=excludes,
    )


def build_untagged(ctx: Context, node: UnionNode) -> ir.UnionDef:
    key, schema, kw, indexed, pointer = node
    ctx.use(pointer, schema, kw)
    members: list[ir.UnionMember] = []
    labels = member_labels([m for _, m in indexed])
    for (i, m), label in zip(indexed, labels):
        at = pointer_join(pointer, kw, i)
        described = m if isinstance(m, dict) else {}
        title = _text(described, "title")
        hint = f"{key}.{title or label or i}"
        t = type_expr(ctx, m, at, hint)
        # an inline object is named here (two members named alike: ACPG301 at lifting)
        if isinstance(t, ir.Ref) and t.key == hint:
            if not (title or label):
                raise ctx.error(
                    "ACPG207",
                    "an inline object in an untagged union needs a title, a $ref, a required "
                    "constant or required members of its own to be named",
                    at,
                )
        members.append(ir.UnionMember(t, ctx.origin(at, described), title, _text(described, "description")))
    return ir.UnionDef(
        key=key,
        origin=ctx.origin(pointer, schema),
        members=tuple(members),
        description=_text(schema, "description"),
        title=_text(schema, "title"),
        docs_ignore=schema.get("x-docs-ignore") is True,
        exclusive=exclusivity([m for _, m in indexed], ctx.local_def) if kw == "oneOf" else None,
    )


def member_labels(members: list[Any]) -> list[str]:
    """A name for each untitled member, from the schema: the required members no other
    member requires; else the constants it requires (``kind: "message"`` ->
    ``message``); else the required members no other member *without constants*
    requires (members told apart by their constants do not crowd the others out); else
    every member it requires. ``""`` when it requires nothing."""
    required: list[list[str]] = []
    consts: list[list[str]] = []
    for m in members:
        req = m.get("required") if isinstance(m, dict) else None
        names = [r for r in req if isinstance(r, str)] if isinstance(req, list) else []
        required.append(names)
        props = m.get("properties") if isinstance(m, dict) else None
        props = props if isinstance(props, dict) else {}
        consts.append([str(v) for r in names if (v := _tag_value(props.get(r))) is not None])
    out = []
    for i, own in enumerate(required):
        others = {r for j, rs in enumerate(required) if j != i for r in rs}
        plain = {r for j, rs in enumerate(required) if j != i and not consts[j] for r in rs}
        unique = [r for r in own if r not in others]
        among_plain = [r for r in own if r not in plain]
        out.append("_".join(unique or consts[i] or among_plain or own))
    return out
