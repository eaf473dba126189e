"""The forms of ``not`` that ACP writes, read into the IR (anything else is refused):

* constants of one member ruled out (an open union's fallback: ``not: {anyOf: [{required:
  [tag], properties: {tag: {const: ...}}}, ...]}``) -> ``excludes``;
* a member forbidden (``not: {required: [m]}``, upstream ``UnstructuredCommandInput``)
  -> ``absent``;
* every value of a member ruled out but one (``not: {required: [m], properties: {m:
  {not: {const: v}}}}``, upstream v2 ``AuthMethodAgent``) -> a branch fixing it.
"""

from __future__ import annotations

from typing import Any

from acpgen import ir
from acpgen.normalise.context import ANNOTATIONS, Context
from acpgen.source import pointer_join

UNION_KEYWORDS = ("oneOf", "anyOf")


def excluded_values(ctx: Context, schema: dict[str, Any], pointer: str) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    """The values a ``not`` rules out, when it is what ACP writes: objects requiring one
    member to be one of some constants (alone or as an ``anyOf``/``oneOf`` of such).
    A ``not`` that forbids a member is :func:`forbidden_members`'; any other is refused:
    acpgen would not enforce it."""
    if "not" not in schema or forbidden_members(ctx, schema, pointer) or _only_value(ctx, schema, pointer):
        return ()
    ctx.use(pointer, schema, "not")
    node = schema["not"]
    at = pointer + "/not"
    parts = node.get("anyOf", node.get("oneOf")) if isinstance(node, dict) and set(node) & set(UNION_KEYWORDS) else [node]
    found: dict[str, list[Any]] = {}
    for part in parts if isinstance(parts, list) else [None]:
        member = _required_consts(part)
        if member is None:
            raise ctx.error(
                "ACPG207",
                "only a `not` that rules out constant values of one required member, or "
                "that forbids one member, is supported",
                at,
            )
        found.setdefault(member[0], []).extend(member[1])
    if len(found) != 1:
        raise ctx.error("ACPG207", "a `not` may rule out values of one member only", at)
    return tuple((k, tuple(v)) for k, v in found.items())


def forbidden_members(ctx: Context, schema: dict[str, Any], pointer: str) -> tuple[str, ...]:
    """``not: {required: [m]}`` (upstream ``UnstructuredCommandInput``): member ``m`` must
    be absent. ``()`` for any other ``not``."""
    node = schema.get("not")
    if not isinstance(node, dict) or set(node) - ANNOTATIONS - {"type", "required"}:
        return ()
    return _one_required(ctx, schema, node, pointer)


def _one_required(ctx: Context, schema: dict[str, Any], node: dict[str, Any], pointer: str) -> tuple[str, ...]:
    required = node.get("required")
    if node.get("type", "object") != "object" or not isinstance(required, list) or len(required) != 1:
        return ()
    if not isinstance(required[0], str):
        return ()
    ctx.use(pointer, schema, "not")
    return (required[0],)


def forbidding_branch(ctx: Context, schema: dict[str, Any], pointer: str) -> tuple[ir.Mixin, ...]:
    """An object's own ``not``, as a one-branch union: one that forbids a member (the
    branch holds when it is absent), one that forbids every value of a member but one
    (upstream v2 ``AuthMethodAgent``: ``type``, if present, is ``"agent"``), or one that
    rules out constant values of a member (an open union's fallback, lifted)."""
    at = pointer_join(pointer, "not")
    only = _only_value(ctx, schema, pointer)
    if only is not None:
        member, value, origin = only
        field = ir.Field(member, ir.Lit((value,)), False, ctx.origin(origin))
        label = f"{member} absent or {value}"
        return (ir.Mixin(None, None, None, (field,), ctx.origin(at, schema["not"]), label, at, "anyOf"),)
    absent = forbidden_members(ctx, schema, pointer)
    excludes = () if absent or "not" not in schema else excluded_values(ctx, schema, pointer)
    if not (absent or excludes):
        return ()
    if absent:
        label = f"without {absent[0]}"
    else:
        member, values = excludes[0]
        label = f"{member} not {', '.join(map(str, values))}"
    return (
        ir.Mixin(
            title=None,
            description=None,
            base=None,
            fields=(),
            origin=ctx.origin(at, schema["not"]),
            label=label,
            group=at,
            keyword="anyOf",
            excludes=excludes,
            absent=absent,
        ),
    )


def _only_value(ctx: Context, schema: dict[str, Any], pointer: str) -> tuple[str, Any, str] | None:
    """``not: {required: [m], properties: {m: {not: {const: v}}}}``: (m, v, the const's
    pointer), else ``None``."""
    node = schema.get("not")
    if not isinstance(node, dict) or set(node) - ANNOTATIONS - {"type", "required", "properties"}:
        return None
    props = node.get("properties")
    if not isinstance(props, dict) or len(props) != 1 or node.get("required") != list(props):
        return None
    ((member, prop),) = props.items()
    inner = prop.get("not") if isinstance(prop, dict) and set(prop) - ANNOTATIONS == {"not"} else None
    if not isinstance(inner, dict) or set(inner) - ANNOTATIONS - {"type"} != {"const"}:
        return None
    ctx.use(pointer, schema, "not")
    return member, inner["const"], pointer_join(pointer, "not", "properties", member, "not", "const")


def _required_consts(part: Any) -> tuple[str, list[Any]] | None:
    if not isinstance(part, dict) or set(part) - ANNOTATIONS - {"type", "properties", "required"}:
        return None
    props, required = part.get("properties"), part.get("required")
    if not isinstance(props, dict) or len(props) != 1 or required != list(props):
        return None
    (name, prop), = props.items()
    if not isinstance(prop, dict) or set(prop) - ANNOTATIONS - {"type", "const", "enum"}:
        return None
    if "const" in prop:
        return name, [prop["const"]]
    if isinstance(prop.get("enum"), list):
        return name, list(prop["enum"])
    return None


def tag_exclusions(ctx: Context, prop: Any, tag: str, pointer: str) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    """A fallback's tag member that rules out the known values itself (``{"type":
    "string", "not": {"enum": [...]}}``): ``((tag, values),)``; ``()`` without a ``not``."""
    if not isinstance(prop, dict) or not isinstance(prop.get("not"), dict):
        return ()
    ruled = prop["not"]
    values = [ruled["const"]] if "const" in ruled else ruled.get("enum")
    if set(ruled) - ANNOTATIONS - {"const", "enum", "type"} or not isinstance(values, list):
        raise ctx.error("ACPG207", "a fallback's tag may only rule out constant values", pointer + "/not")
    ctx.use(pointer, prop, "not")
    return ((tag, tuple(values)),)
