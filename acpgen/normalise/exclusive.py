"""Whether two members of an untagged ``oneOf`` can accept the same value.

JSON Schema's ``oneOf`` holds when exactly one member matches; the bindings read an
untagged union as the union of its members, which is the same thing only when no value
is valid for two members. :func:`exclusivity` decides it per union, from the schema
text, at generation time: ``"disjoint"`` when every pair of members is proved
disjoint (the bindings keep their fast path), else ``"checked"`` (the bindings count
the members a value matches and reject more than one).

The proof is conservative: a pair is disjoint only when one of these shows it,

* their JSON kinds do not meet (``string`` vs ``integer``; ``integer`` and ``number``
  meet: ``1`` is both);
* both are finite sets of values (``const``, ``enum``, an enum ``$ref``,
  ``boolean``, ``null``) with no value in common (JSON equality: ``1`` is ``1.0``, not
  ``true``), or one is and none of its values has a kind of the other;
* both are objects (and nothing else), and some member that one of them requires is
  declared by both with types proved disjoint (a ``const`` against an enum ``$ref``
  without that value), or is ruled out by the other (``additionalProperties: false``
  without it, a ``false`` schema, ``not: {required: [it]}``);
* one of them is itself a union every member of which is disjoint from the other.

Anything else (two strings with different patterns, two arrays, an ``allOf`` of
several schemas, a reference this file does not hold) counts as overlapping: the
check then runs, which is never wrong, only slower.
"""

from __future__ import annotations

from typing import Any, Callable, Literal

from acpgen.normalise.context import ANNOTATIONS

Exclusive = Literal["disjoint", "checked"]
Resolve = Callable[[str], Any]
#: the pairs of schemas already compared in one question, by identity: each pair is
#: compared once (an object compares its required members both ways, so a chain of
#: objects would otherwise be compared 2^depth times)
Memo = dict[tuple[int, int], bool]

#: every JSON kind; ``number`` is a number that is not an integer
ALL_KINDS = frozenset({"null", "boolean", "integer", "number", "string", "array", "object"})
_TYPE_KINDS = {
    "null": {"null"},
    "boolean": {"boolean"},
    "integer": {"integer"},
    "number": {"integer", "number"},
    "string": {"string"},
    "array": {"array"},
    "object": {"object"},
}
_DEPTH = 24


def exclusivity(members: list[Any], resolve: Resolve) -> Exclusive:
    """``"disjoint"`` when no value is valid for two of ``members``, else ``"checked"``."""
    memo: Memo = {}
    for i, a in enumerate(members):
        for b in members[i + 1 :]:
            if may_overlap(a, b, resolve, memo=memo):
                return "checked"
    return "disjoint"


def may_overlap(a: Any, b: Any, resolve: Resolve, depth: int = 0, memo: Memo | None = None) -> bool:
    """Whether some value may be valid for both schemas (``True`` unless proved not)."""
    if depth > _DEPTH:
        return True
    a, b = _deref(a, resolve), _deref(b, resolve)
    if a is None or b is None:
        return True
    memo = {} if memo is None else memo
    key = (id(a), id(b))
    if key not in memo:
        memo[key] = True  # a pair met again inside itself proves nothing
        memo[key] = _may_overlap(a, b, resolve, depth, memo)
    return memo[key]


def _may_overlap(a: Any, b: Any, resolve: Resolve, depth: int, memo: Memo) -> bool:
    if a is False or b is False:
        return False
    for one, other in ((a, b), (b, a)):
        members = _pure_union(one)
        if members is not None:
            return any(may_overlap(m, other, resolve, depth + 1, memo) for m in members)
    ka, kb = kinds(a, resolve, depth), kinds(b, resolve, depth)
    if not ka & kb:
        return False
    va, vb = values(a, resolve, depth), values(b, resolve, depth)
    if va is not None and vb is not None:
        return any(_json_eq(x, y) for x in va for y in vb)
    if va is not None:
        return any(_kind(x) in kb for x in va)
    if vb is not None:
        return any(_kind(y) in ka for y in vb)
    if ka & kb == {"object"}:
        return _objects_overlap(a, b, resolve, depth, memo)
    return True


def kinds(schema: Any, resolve: Resolve, depth: int = 0) -> frozenset[str]:
    """The JSON kinds a schema may accept (every kind when it does not say)."""
    schema = _deref(schema, resolve)
    if schema is False:
        return frozenset()
    if not isinstance(schema, dict) or depth > _DEPTH:
        return ALL_KINDS
    found = set(ALL_KINDS)
    if "const" in schema:
        found &= {_kind(schema["const"])}
    if isinstance(schema.get("enum"), list):
        found &= {_kind(v) for v in schema["enum"]}
    t = schema.get("type")
    if isinstance(t, str) or isinstance(t, list):
        named = [t] if isinstance(t, str) else t
        found &= {k for n in named if isinstance(n, str) for k in _TYPE_KINDS.get(n, ALL_KINDS)}
    for keyword in ("anyOf", "oneOf"):
        members = schema.get(keyword)
        if isinstance(members, list):
            found &= {k for m in members for k in kinds(m, resolve, depth + 1)}
    parts = schema.get("allOf")
    if isinstance(parts, list):
        for part in parts:
            found &= kinds(part, resolve, depth + 1)
    return frozenset(found)


def values(schema: Any, resolve: Resolve, depth: int = 0) -> tuple[Any, ...] | None:
    """The values a schema may take when they are finitely many, else ``None``."""
    schema = _deref(schema, resolve)
    if not isinstance(schema, dict) or depth > _DEPTH:
        return None
    if "const" in schema:
        return (schema["const"],)
    if isinstance(schema.get("enum"), list):
        return tuple(schema["enum"])
    members = _pure_union(schema)
    if members is not None:
        each = [values(m, resolve, depth + 1) for m in members]
        if all(v is not None for v in each):
            return tuple(x for v in each for x in v)  # type: ignore[union-attr]
        return None
    found = kinds(schema, resolve, depth)
    if found == {"null"}:
        return (None,)
    if found == {"boolean"}:
        return (True, False)
    if found == {"null", "boolean"}:
        return (None, True, False)
    return None


def _objects_overlap(a: Any, b: Any, resolve: Resolve, depth: int, memo: Memo) -> bool:
    if not isinstance(a, dict) or not isinstance(b, dict):
        return True  # `true` (anything) beside an object schema
    for one, other in ((a, b), (b, a)):
        required = one.get("required")
        if not isinstance(required, list):
            continue
        for name in required:
            if not isinstance(name, str):
                continue
            own, theirs = _member(one, name, resolve), _member(other, name, resolve)
            if theirs is False:
                return False
            if own is not None and theirs is not None and not may_overlap(own, theirs, resolve, depth + 1, memo):
                return False
    return True


def _member(schema: dict[str, Any], name: str, resolve: Resolve) -> Any:
    """The schema a member ``name`` of an object valid for ``schema`` must satisfy:
    ``False`` when it may not be there at all, ``None`` when nothing is known."""
    props = schema.get("properties")
    if isinstance(props, dict) and name in props:
        return props[name]
    rule_out = schema.get("not")
    if isinstance(rule_out, dict) and set(rule_out) - ANNOTATIONS == {"required"}:
        if rule_out.get("required") == [name]:
            return False
    if "patternProperties" in schema:
        return None
    extra = schema.get("additionalProperties", schema.get("unevaluatedProperties"))
    if extra is False:
        return False
    return extra if isinstance(extra, dict) else None


def _pure_union(schema: Any) -> list[Any] | None:
    """The members of a schema that is nothing but an ``anyOf``/``oneOf``."""
    if not isinstance(schema, dict):
        return None
    for keyword in ("anyOf", "oneOf"):
        members = schema.get(keyword)
        if isinstance(members, list) and set(schema) - ANNOTATIONS - {"type"} == {keyword}:
            return members
    return None


def _deref(schema: Any, resolve: Resolve) -> Any:
    """Follow plain ``$ref``s (a ``$ref`` with annotations beside it, or the
    ``allOf: [{$ref}]`` spelling); ``None`` for a reference this file does not hold,
    ``True``/``False`` as themselves."""
    for _ in range(_DEPTH):
        if not isinstance(schema, dict):
            return schema
        ref = schema.get("$ref")
        if ref is None:
            all_of = schema.get("allOf")
            if (
                isinstance(all_of, list)
                and len(all_of) == 1
                and isinstance(all_of[0], dict)
                and set(all_of[0]) == {"$ref"}
                and set(schema) - ANNOTATIONS == {"allOf"}
            ):
                ref = all_of[0]["$ref"]
            else:
                return schema
        elif set(schema) - ANNOTATIONS != {"$ref"}:
            return None  # a $ref beside other keywords: not read here
        if not isinstance(ref, str):
            return None
        schema = resolve(ref)
    return None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _json_eq(x: Any, y: Any) -> bool:
    """JSON equality: ``1`` is ``1.0``, ``1`` is not ``true``."""
    if isinstance(x, bool) or isinstance(y, bool):
        return isinstance(x, bool) and isinstance(y, bool) and x == y
    return bool(x == y)
