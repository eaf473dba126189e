"""Operations on unions and enums: add_variant, flatten_union, open_enum, open_union,
assert_closed.

Derived data is computed from the schema the op meets, never stored in the overlay:
the tag property is inferred from the const-valued property the variants share, the
fallback's ``not`` list from the tags present, the open form from the closed one.
"""

from __future__ import annotations

import copy
from typing import Any

from acpgen.overlay.model import Op, Row
from acpgen.overlay.shapes import (
    branch_tag,
    difference,
    fallback_text,
    field_schema,
    is_free_string,
    read_union,
    ref,
    same,
    tag_test,
)
from acpgen.overlay.work import DEFAULT_FALLBACK, Work, op


def _insert_at(branches: list[Any], prop: str) -> int:
    """Before the first untagged branch (a raw fallback or an untagged default)."""
    for i, b in enumerate(branches):
        if branch_tag(b, prop) is None:
            return i
    return len(branches)


@op("add_variant")
def add_variant(w: Work, o: Op) -> list[Row]:
    name, tag = o.args["def"], o.args["tag"]
    target = f"{name}#{tag}"
    d, missing = w.def_or_row(name, target)
    if d is None:
        return missing
    union = read_union(d, o.args.get("tag-property"))
    if union is None or union.prop is None:
        return [w.row(target, "conflict", w.at(name), "not a tagged union (no const-valued property shared by its variants)")]
    prop = union.prop
    branch: dict[str, Any] = {"type": "object", "properties": {prop: {"type": "string", "const": tag}}, "required": [prop]}
    if "payload" in o.args:
        if o.args["payload"] not in w.defs:
            return [w.row(target, "conflict", w.at(o.args["payload"]), "payload def does not exist")]
        branch["allOf"] = [ref(o.args["payload"])]
    else:
        for field, spec in o.args["fields"].items():
            branch["properties"][field] = field_schema(spec)
            if spec.get("required"):
                branch["required"].append(field)
    if "description" in o.args:
        branch["description"] = o.args["description"]
    at = w.at(name, union.keyword)
    existing = next((b for b in union.branches if branch_tag(b, prop) == tag), None)
    if existing is not None:
        if same(existing, branch):
            return [w.row(target, "already-present", at)]
        return [w.row(target, "conflict", at, "tag exists with a different payload: " + difference(branch, existing))]
    union.branches.insert(_insert_at(union.branches, prop), w.mark(branch))
    fallback = union.fallback()
    excluded = fallback.get("not", {}).get("anyOf") if fallback else None
    if fallback is not None and isinstance(excluded, list):
        excluded.append(tag_test(prop, tag))
        w.mark(fallback)
    w.mark(d)
    return [w.row(target, "applied", at)]


def _labels(branches: Any, prop: str) -> str:
    """``boolean, <value_id>``: tags, and titles of untagged variants in angle brackets."""
    out = []
    for b in branches if isinstance(branches, list) else []:
        tag = branch_tag(b, prop)
        required = isinstance(b, dict) and prop in b.get("required", []) and tag is None
        out.append(tag if tag is not None else f"<{b.get('title', '?') if isinstance(b, dict) else '?'}{' (tag required)' if required else ''}>")
    return "[" + ", ".join(out) + "]"


def _build_variants(o: Op) -> list[dict[str, Any]]:
    prop = o.args["tag"]
    out = []
    for v in o.args["variants"]:
        props = {f: field_schema(spec) for f, spec in v["fields"].items()}
        required = [f for f, spec in v["fields"].items() if spec.get("required")]
        branch: dict[str, Any] = {}
        if "default" in v:
            branch["title"] = v["default"]
        else:
            props[prop] = {"type": "string", "const": v["tag"]}
            required = [prop, *required]
        branch.update(type="object", properties=props, required=required)
        if "description" in v:
            branch["description"] = v["description"]
        out.append(branch)
    return out


@op("flatten_union")
def flatten_union(w: Work, o: Op) -> list[Row]:
    name, field = o.args["def"], o.args["field"]
    target = f"{name}.{field}"
    d, missing = w.def_or_row(name, target)
    if d is None:
        return missing
    built = _build_variants(o)
    found = d.get("properties")
    props: dict[str, Any] = found if isinstance(found, dict) else {}
    keyword = "anyOf" if "anyOf" in d else "oneOf" if "oneOf" in d else None
    at = w.at(name)
    if keyword is not None and field not in props:
        if same({keyword: d[keyword]}, {keyword: built}):
            return [w.row(target, "already-present", w.at(name, keyword))]
        expected, found = _labels(built, o.args["tag"]), _labels(d[keyword], o.args["tag"])
        why = f"variants {expected}, found {found}" if expected != found else difference({keyword: built}, {keyword: d[keyword]})
        return [w.row(target, "conflict", w.at(name, keyword), "field gone but the union differs: " + why)]
    if field not in props:
        return [w.row(target, "conflict", w.at(name, "properties"), "field gone and no union in its place")]
    if keyword is not None:
        return [w.row(target, "conflict", w.at(name, keyword), "the def already has a union")]
    expect = o.args["expect"]
    required = d.get("required", [])
    if not same(props[field], field_schema(expect)):
        return [w.row(target, "conflict", w.at(name, "properties", field), "field has another type: " + difference(field_schema(expect), props[field]))]
    if (field in required) != bool(expect.get("required", False)):
        return [w.row(target, "conflict", w.at(name, "properties", field), "field requiredness differs from `expect`")]
    del props[field]
    d["required"] = [r for r in required if r != field]
    d["anyOf"] = [w.mark(b) for b in built]
    w.mark(d)
    return [w.row(target, "applied", at)]


def _enum_parts(d: dict[str, Any]) -> tuple[list[Any], list[Any]] | None:
    """(known branches, known values) of a closed string enum, or None."""
    values = d.get("enum")
    if isinstance(values, list) and values and all(isinstance(v, str) for v in values):
        return [{"type": "string", "enum": list(values)}], list(values)
    for keyword in ("oneOf", "anyOf"):
        branches = d.get(keyword)
        if isinstance(branches, list) and branches and all(isinstance(b, dict) and isinstance(b.get("const"), str) for b in branches):
            return [copy.deepcopy(b) for b in branches], [b["const"] for b in branches]
    return None


@op("open_enum")
def open_enum(w: Work, o: Op) -> list[Row]:
    title = o.args.get("fallback-title", "other")
    rows = []
    for name, noun in o.args["defs"].items():
        d, missing = w.def_or_row(name)
        if d is None:
            rows += missing
            continue
        at = w.at(name)
        any_of = d.get("anyOf")
        if isinstance(any_of, list) and any(is_free_string(b) for b in any_of):
            rows.append(w.row(name, "already-present", w.at(name, "anyOf")))
            continue
        parts = _enum_parts(d)
        if parts is None:
            rows.append(w.row(name, "conflict", at, "not a closed string enum (`enum`, or a oneOf of string consts)"))
            continue
        known, values = parts
        if title in values:
            rows.append(w.row(name, "conflict", at, f"fallback title {title!r} is a known value; set fallback-title"))
            continue
        fallback = {"title": title, "type": "string", "description": fallback_text(w.overlay.fallback_description, noun, DEFAULT_FALLBACK)}
        opened = {k: v for k, v in d.items() if k not in ("enum", "oneOf", "anyOf", "type")}
        opened["anyOf"] = [*known, w.mark(fallback)]
        w.defs[name] = w.mark(opened)
        rows.append(w.row(name, "applied", at))
    return rows


def _payload_name(branch: dict[str, Any]) -> str | None:
    all_of = branch.get("allOf")
    node = all_of[0] if isinstance(all_of, list) and len(all_of) == 1 else branch
    r = node.get("$ref") if isinstance(node, dict) else None
    return r.rsplit("/", 1)[-1] if isinstance(r, str) and r.startswith("#/") else None


@op("open_union")
def open_union(w: Work, o: Op) -> list[Row]:
    title, default = o.args.get("fallback-title", "other"), o.args.get("default-variant")
    rows = []
    for name, noun in o.args["defs"].items():
        d, missing = w.def_or_row(name)
        if d is None:
            rows += missing
            continue
        union = read_union(d, o.args.get("tag-property"))
        if union is None and "oneOf" not in d and "anyOf" not in d and d.get("type") == "object":
            rows.append(w.row(name, "not-applicable", w.at(name), "a plain object here: no variants to open"))
            continue
        if union is None or union.prop is None:
            rows.append(w.row(name, "conflict", w.at(name), "not a tagged union (no const-valued property shared by its variants)"))
            continue
        prop, at = union.prop, w.at(name, union.keyword)
        default_branch = union.titled(default) if default else None
        if default and default_branch is None:
            rows.append(w.row(name, "conflict", at, f"no untagged variant titled {default!r}"))
            continue
        excluded = ([default] if default else []) + union.tags
        fallback = union.fallback()
        if fallback is not None:
            tests = fallback.get("not", {}).get("anyOf", [])
            have = {branch_tag(t, prop) for t in tests} if isinstance(tests, list) else set()
            if have == set(excluded):
                rows.append(w.row(name, "already-present", at))
            else:
                stale = f"missing {sorted(set(excluded) - have)}, extra {sorted(have - set(excluded))}"  # type: ignore[type-var]
                rows.append(w.row(name, "conflict", at, f"a fallback exists but its `not` list is stale: {stale}"))
            continue
        text = fallback_text(w.overlay.fallback_description, noun, DEFAULT_FALLBACK)
        tag_text = fallback_text(w.overlay.fallback_description, f"{noun} {prop}", DEFAULT_FALLBACK)
        new: dict[str, Any] = {"title": title, "type": "object", "additionalProperties": True, "properties": {}, "required": [prop]}
        if default_branch is not None:
            payload = _payload_name(default_branch)
            pd = w.defs.get(payload) if payload else None
            if not isinstance(pd, dict):
                rows.append(w.row(name, "conflict", at, f"default variant {default!r} has no payload def"))
                continue
            new["properties"].update(copy.deepcopy(pd.get("properties", {})))
            new["required"] += [r for r in pd.get("required", []) if r != prop]
            pd["not"] = {"type": "object", "required": [prop], "properties": {prop: {"not": {"const": default}}}}
            w.mark(pd)
        new["properties"][prop] = {"type": "string", "description": tag_text}
        new["not"] = {"anyOf": [tag_test(prop, t) for t in excluded]}
        new["description"] = text
        branches = list(union.branches)
        branches.insert(branches.index(default_branch) if default_branch is not None else len(branches), w.mark(new))
        d.pop(union.keyword)
        d.pop("discriminator", None)  # tools cannot combine anyOf with it (upstream #1612)
        d["anyOf"] = branches
        w.mark(d)
        rows.append(w.row(name, "applied", w.at(name, "anyOf")))
    return rows


@op("assert_closed")
def assert_closed(w: Work, o: Op) -> list[Row]:
    rows = []
    for name in o.args["defs"]:
        d, missing = w.def_or_row(name)
        if d is None:
            rows += missing
            continue
        union = read_union(d)
        fallback = union.fallback() if union else None
        free = [b for b in d.get("anyOf", []) if is_free_string(b)] if isinstance(d.get("anyOf"), list) else []
        if fallback is not None or free:
            label = (fallback or free[0]).get("title", "a fallback")
            rows.append(w.row(name, "conflict", w.at(name), f"upstream opened it (fallback variant {label!r})"))
        else:
            rows.append(w.row(name, "already-present", w.at(name), "closed"))
    return rows
