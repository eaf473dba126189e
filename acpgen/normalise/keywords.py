"""The keyword census: the one place that says which JSON Schema keywords acpgen knows,
and the proof that the IR builder consumed every keyword of its input that constrains
validity.

The builder marks each keyword it reads into the IR (``Context.use``). After a build,
:func:`unconsumed` walks every schema node of the document (every ``$defs`` entry, down
through the keywords that hold subschemas) and returns each validating keyword that was
not marked: acpgen would have dropped it, so the build refuses it (ACPG209), naming the
pointer and the keyword. Annotations are never required: they do not change what is
valid. A ``not`` is consumed as a whole (acpgen reads the forms ACP writes, or refuses
it), so the walk does not go inside one.
"""

from __future__ import annotations

from typing import Any, Iterator

from acpgen.source import pointer_join

#: keywords that constrain what is valid: JSON Schema 2020-12's validation and applicator
#: vocabularies, ``format`` (acpgen enforces integer formats as bounds) and the
#: extensions acpgen honours, which change what a reader accepts
VALIDATING = frozenset(
    {
        "type",
        "enum",
        "const",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "format",
        "maxItems",
        "minItems",
        "uniqueItems",
        "maxContains",
        "minContains",
        "maxProperties",
        "minProperties",
        "required",
        "dependentRequired",
        "properties",
        "patternProperties",
        "additionalProperties",
        "propertyNames",
        "items",
        "prefixItems",
        "contains",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "dependentSchemas",
        "unevaluatedItems",
        "unevaluatedProperties",
        "$ref",
        "$dynamicRef",
        "x-deserialize-default-on-error",
        "x-deserialize-skip-invalid-items",
        "x-deserialize-default-on-null",
    }
)

#: keywords that never change what is valid, besides the annotations the builder reads
#: for docs and names (``acpgen.normalise.context.ANNOTATIONS``): content hints and the
#: document's own structure
NOT_VALIDATING = frozenset(
    {"contentEncoding", "contentMediaType", "contentSchema", "$defs", "definitions", "$id", "$anchor"}
)

#: the validating keywords the IR builder does not implement: refused (ACPG209)
UNIMPLEMENTED = frozenset(
    {
        "uniqueItems",
        "maxContains",
        "minContains",
        "maxProperties",
        "minProperties",
        "dependentRequired",
        "patternProperties",
        "propertyNames",
        "contains",
        "if",
        "then",
        "else",
        "dependentSchemas",
        "unevaluatedItems",
        "$dynamicRef",
    }
)

#: the validating keywords the IR builder reads (where it reads them: see ``Context.use``)
IMPLEMENTED = VALIDATING - UNIMPLEMENTED

#: the implemented keywords whose value is one subschema / a list of them / a name ->
#: subschema map; the walk goes down these (under a keyword that is refused, the
#: subschemas are not looked at: the one line naming the keyword says it)
_ONE = ("items", "additionalProperties", "unevaluatedProperties")
_MANY = ("allOf", "anyOf", "oneOf", "prefixItems")
_NAMED = ("properties",)


def nodes(data: Any, container: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema node under ``container`` (``$defs``), with its JSON pointer."""
    defs = data.get(container) if isinstance(data, dict) else None
    if not isinstance(defs, dict):
        return
    stack = [(pointer_join("/" + container, name), node) for name, node in sorted(defs.items(), reverse=True)]
    while stack:
        pointer, node = stack.pop()
        if not isinstance(node, dict):
            continue
        yield pointer, node
        children: list[tuple[str, Any]] = []
        for key in _ONE:
            if isinstance(node.get(key), dict):
                children.append((pointer_join(pointer, key), node[key]))
        for key in _MANY:
            if isinstance(node.get(key), list):
                children += [(pointer_join(pointer, key, i), sub) for i, sub in enumerate(node[key])]
        for key in _NAMED:
            if isinstance(node.get(key), dict):
                children += [(pointer_join(pointer, key, name), sub) for name, sub in node[key].items()]
        stack.extend(reversed(children))


def unconsumed(data: Any, container: str, consumed: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """Each (pointer, keyword) of a validating keyword the builder did not consume."""
    return [
        (pointer, key)
        for pointer, node in nodes(data, container)
        for key in node
        if key in VALIDATING and (pointer, key) not in consumed
    ]


def census(data: Any, container: str, consumed: set[tuple[str, str]]) -> dict[str, dict[str, int]]:
    """Per keyword: how many times it was seen, and consumed (a report for the tests)."""
    out: dict[str, dict[str, int]] = {}
    missing = set(unconsumed(data, container, consumed))
    for pointer, node in nodes(data, container):
        for key in node:
            if key in VALIDATING:
                row = out.setdefault(key, {"seen": 0, "consumed": 0})
                row["seen"] += 1
                row["consumed"] += (pointer, key) not in missing
    return out
