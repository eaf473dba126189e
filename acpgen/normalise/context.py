"""Shared state of one build: the document, the resolver, lifted nodes, diagnostics."""

from __future__ import annotations

import re
from typing import Any

from acpgen import ir
from acpgen.errors import AcpgenError, Collector
from acpgen.load import RawDocument
from acpgen.overlay.shapes import marks_of
from acpgen.refs import Resolver, Target
from acpgen.source import pointer_join

#: keywords that only annotate a schema; a schema made of nothing else accepts anything
ANNOTATIONS = frozenset(
    {
        "description",
        "title",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
        "$schema",
        "x-docs-ignore",
        "x-deserialize-default-on-error",
        "x-deserialize-skip-invalid-items",
        "x-deserialize-default-on-null",
        "x-method",
        "x-side",
        "x-acpgen-overlay",
        "discriminator",
    }
)

SCALAR_TYPES = ("string", "integer", "number", "boolean")
KNOWN_TYPES = frozenset({*SCALAR_TYPES, "null", "array", "object"})


class Context:
    def __init__(self, raw: RawDocument) -> None:
        self.raw = raw
        self.source = raw.source
        self.defs: dict[str, Any] = {}
        defs = raw.data.get("$defs", raw.data.get("definitions", {}))
        self.container = "$defs" if "$defs" in raw.data else "definitions"
        self.problems = Collector()
        if not isinstance(defs, dict):
            self.problems.items.append(
                self.source.diagnostic("ACPG202", f"{self.container} must be an object", "/" + self.container)
            )
            defs = {}
        self.defs = defs
        self.resolver = Resolver(raw.source, raw.data)
        self.lifted: dict[str, ir.Def] = {}
        #: pointers whose keywords were already checked (a node is reached on several paths)
        self.checked: set[str] = set()
        self.lifted_at: dict[str, str] = {}
        #: (pointer, keyword) of every keyword read into the IR (acpgen/normalise/keywords.py)
        self.consumed: set[tuple[str, str]] = set()

    def use(self, pointer: str, schema: Any, *keywords: str) -> None:
        """Record that the keywords of ``schema`` (at ``pointer``) were read into the IR."""
        if isinstance(schema, dict):
            consumed = self.consumed
            for k in keywords:
                if k in schema:
                    consumed.add((pointer, k))

    # -- diagnostics ---------------------------------------------------------------
    def error(self, code: str, message: str, pointer: str) -> AcpgenError:
        return AcpgenError([self.source.diagnostic(code, message, pointer)])

    def origin(self, pointer: str, node: Any = None) -> ir.Origin:
        return ir.Origin(self.source.path, pointer, marks_of(node))

    # -- references ----------------------------------------------------------------
    def resolve(self, ref: Any, pointer: str) -> Target:
        """The target of the ``$ref`` at ``pointer`` (the keyword's own pointer), which is
        then consumed."""
        if pointer.endswith("/$ref"):
            self.consumed.add((pointer[: -len("/$ref")], "$ref"))
        return self.resolver.resolve(ref, pointer)

    def local_def(self, ref: str) -> Any:
        """The schema of ``$ref`` when it names a def of this file, else ``None``."""
        prefix = f"#/{self.container}/"
        if not ref.startswith(prefix):
            return None
        name = ref[len(prefix) :].replace("~1", "/").replace("~0", "~")
        return self.defs.get(name)

    def def_pointer(self, name: str) -> str:
        return pointer_join("/" + self.container, name)

    def lift(self, node: ir.Def, pointer: str) -> ir.Ref:
        """Register a node lifted out of an inline schema; keys must be unique."""
        if node.key in self.defs:
            raise self.error(
                "ACPG301",
                f"inline schema would be named {node.key!r}, which is already a def "
                f"({self.def_pointer(node.key)})",
                pointer,
            )
        previous = self.lifted_at.get(node.key)
        if previous is not None and previous != pointer:
            raise self.error(
                "ACPG301", f"inline schema key {node.key!r} is also used at {previous}", pointer
            )
        self.lifted[node.key] = node
        self.lifted_at[node.key] = pointer
        return ir.Ref(node.key)


def check_schema(ctx: Context, schema: Any, pointer: str) -> None:
    """Reject malformed keywords with one diagnostic each (collected, not raised)."""
    if not isinstance(schema, dict) or pointer in ctx.checked:
        return
    ctx.checked.add(pointer)
    problems = ctx.problems.items
    diag = ctx.source.diagnostic
    if "required" in schema and not (
        isinstance(schema["required"], list) and all(isinstance(r, str) for r in schema["required"])
    ):
        problems.append(diag("ACPG202", "required must be a list of strings", pointer + "/required"))
    if "properties" in schema and not isinstance(schema["properties"], dict):
        problems.append(diag("ACPG202", "properties must be an object", pointer + "/properties"))
    if "enum" in schema and not isinstance(schema["enum"], list):
        problems.append(diag("ACPG202", "enum must be a list", pointer + "/enum"))
    elif schema.get("enum") == []:
        problems.append(diag("ACPG202", "enum must list at least one value", pointer + "/enum"))
    for kw in ("oneOf", "anyOf", "allOf", "prefixItems"):
        if kw not in schema:
            continue
        members = schema[kw]
        if not isinstance(members, list):
            problems.append(diag("ACPG202", f"{kw} must be a list of schemas", f"{pointer}/{kw}"))
        elif not members and kw != "prefixItems":
            problems.append(diag("ACPG202", f"{kw} must list at least one schema", f"{pointer}/{kw}"))
        for i, member in enumerate(members if isinstance(members, list) else []):
            if not isinstance(member, (dict, bool)):
                found = type(member).__name__
                problems.append(diag("ACPG202", f"expected a schema object, found {found}", f"{pointer}/{kw}/{i}"))
    for kw in (
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    ):
        value = schema.get(kw)
        if kw in schema and (isinstance(value, bool) or not isinstance(value, (int, float))):
            problems.append(diag("ACPG202", f"{kw} must be a number", f"{pointer}/{kw}"))
    for kw in ("minLength", "maxLength", "minItems", "maxItems"):
        value = schema.get(kw)
        if kw in schema and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            problems.append(diag("ACPG202", f"{kw} must be a non-negative integer", f"{pointer}/{kw}"))
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        for k in kinds:
            if not isinstance(k, str) or k not in KNOWN_TYPES:
                problems.append(diag("ACPG202", f"unknown type {k!r}", pointer + "/type"))
    for kw in ("format", "contentEncoding", "description", "title"):
        if kw in schema and not isinstance(schema[kw], str):
            problems.append(diag("ACPG202", f"{kw} must be a string", f"{pointer}/{kw}"))
    if "pattern" in schema:
        problem = _pattern_problem(schema["pattern"])
        if problem:
            problems.append(diag("ACPG202", problem, pointer + "/pattern"))


def _pattern_problem(pattern: Any) -> str | None:
    if not isinstance(pattern, str):
        return "pattern must be a string"
    try:
        re.compile(pattern)
    except re.error as exc:
        return f"pattern is not a valid regular expression: {exc}"
    return None
