"""The catalogue of ``acpgen diff`` rules: one record per kind of change and direction.

A rule fixes the change's *kind* (what happened), its default *level* on the wire
(``error``: definite break, ``warning``: possible break, ``info``), its level for the
generated Python (a def rename changes no byte on the wire but breaks an import), and
*who* it breaks: the side that sends the changed value (``senders``), the side that
reads it (``receivers``), both, the side that calls a method (``callers``), the side
that implements it (``implementers``), the side that advertised a removed capability
(``advertisers``), whoever the same addition to the stable file would break
(``as-added``), or nobody. The side itself is decided per record from the method
tables (see ``acpgen.diff.direction``).

Levels only ever go down from the default, and each time with a note: a capability
added in the same release that gates the new thing, the optional member that alone brings
an identifier a new request needs (a data-flow gate, ``acpgen.diff.dataflow``), a gate
that went with what it gated, or an ``x-deserialize-*`` mark that makes the receiving side
read the value leniently.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Level = Literal["error", "warning", "info"]
LEVELS: tuple[Level, ...] = ("error", "warning", "info")
Hits = Literal["senders", "receivers", "both", "callers", "implementers", "advertisers", "as-added", "none"]

KINDS = (
    "file-added",
    "file-removed",
    "method-added",
    "method-removed",
    "def-added",
    "def-removed",
    "field-added",
    "field-removed",
    "field-now-required",
    "field-now-optional",
    "variant-added",
    "variant-removed",
    "enum-value-added",
    "enum-value-removed",
    "enum-opened",
    "enum-closed",
    "union-opened",
    "union-closed",
    "type-changed",
    "renamed",
    "moved-from-unstable-to-stable",
    "moved-from-stable-to-unstable",
)


@dataclass(frozen=True)
class Rule:
    id: str
    kind: str
    level: Level
    code: Level
    hits: Hits
    summary: str


def _r(id: str, kind: str, level: Level, code: Level, hits: Hits, summary: str) -> Rule:
    assert kind in KINDS, kind
    return Rule(id, kind, level, code, hits, summary)


RULES: tuple[Rule, ...] = (
    # files
    _r("file-added", "file-added", "info", "info", "none", "a schema file (tree and stability) appeared"),
    _r("file-removed", "file-removed", "error", "error", "both", "a schema file (tree and stability) is gone"),
    _r(
        "protocol-version-changed",
        "type-changed",
        "error",
        "warning",
        "both",
        "the protocol version a file states changed: peers negotiate another number",
    ),
    # methods
    _r(
        "method-added",
        "method-added",
        "info",
        "info",
        "none",
        "a new notification, or a new request behind a gate: a capability, or the optional member that alone brings an id it needs",
    ),
    _r(
        "request-added-without-gate",
        "method-added",
        "warning",
        "info",
        "implementers",
        "a new request nothing gates (capability or data): old implementers answer method-not-found",
    ),
    _r("method-removed", "method-removed", "error", "error", "callers", "a method is gone: its callers get method-not-found"),
    _r("method-renamed", "renamed", "error", "error", "both", "a method's wire name changed, its params and result did not"),
    _r("method-kind-changed", "type-changed", "error", "error", "both", "a request became a notification or back"),
    _r("method-side-changed", "type-changed", "error", "error", "both", "the side that implements a method changed"),
    _r("method-params-changed", "type-changed", "error", "error", "both", "a method's params are another def"),
    _r("method-result-changed", "type-changed", "error", "error", "both", "a method's result is another def"),
    # defs
    _r("def-added", "def-added", "info", "info", "none", "a new def"),
    _r(
        "def-removed",
        "def-removed",
        "info",
        "error",
        "none",
        "a def is gone (its uses are reported where they changed; the generated class is gone)",
    ),
    _r("def-renamed", "renamed", "info", "error", "none", "a def's name changed, its content did not: no wire change"),
    _r("def-kind-changed", "type-changed", "error", "error", "both", "a def changed shape (object, union, enum, alias)"),
    # object members
    _r("required-field-added", "field-added", "error", "error", "senders", "a new required member: old senders omit it"),
    _r("optional-field-added", "field-added", "info", "info", "none", "a new optional member"),
    _r(
        "required-field-removed",
        "field-removed",
        "error",
        "error",
        "receivers",
        "a required member is gone: old receivers require it",
    ),
    _r(
        "optional-field-removed",
        "field-removed",
        "warning",
        "error",
        "receivers",
        "an optional member is gone: old receivers lose what it said",
    ),
    _r("field-now-required", "field-now-required", "error", "warning", "senders", "a member became required: old senders may omit it"),
    _r(
        "field-now-optional",
        "field-now-optional",
        "error",
        "warning",
        "receivers",
        "a member became optional: old receivers require it",
    ),
    _r("field-renamed", "renamed", "error", "error", "both", "a member's wire name changed, its content did not"),
    _r(
        "field-default-changed",
        "type-changed",
        "warning",
        "info",
        "receivers",
        "a member's default changed: an absent member means something else",
    ),
    _r(
        "leniency-removed",
        "type-changed",
        "warning",
        "info",
        "senders",
        "an x-deserialize-* mark is gone: values once read leniently are rejected",
    ),
    _r("leniency-added", "type-changed", "info", "info", "none", "a new x-deserialize-* mark: readers are more lenient"),
    _r("object-closed", "type-changed", "error", "info", "senders", "an object now rejects members it does not declare"),
    _r("object-opened", "type-changed", "info", "info", "none", "an object now accepts members it does not declare"),
    # types (of a member, an alias def or a variant payload)
    _r("type-widened", "type-changed", "error", "warning", "receivers", "a type accepts more values: old receivers may reject them"),
    _r("type-narrowed", "type-changed", "error", "warning", "senders", "a type accepts fewer values: old senders may send them"),
    _r("type-changed", "type-changed", "error", "error", "both", "a type changed both ways"),
    _r("became-nullable", "type-changed", "error", "warning", "receivers", "null is now a value: old receivers may reject it"),
    _r("became-non-nullable", "type-changed", "error", "warning", "senders", "null is no longer a value: old senders may send it"),
    _r(
        "constraint-loosened",
        "type-changed",
        "error",
        "info",
        "receivers",
        "a bound, length, pattern or format is looser: old receivers may reject new values",
    ),
    _r(
        "constraint-tightened",
        "type-changed",
        "error",
        "info",
        "senders",
        "a bound, length, pattern or format is tighter: old senders may send rejected values",
    ),
    # unions
    _r(
        "variant-added-closed",
        "variant-added",
        "error",
        "info",
        "receivers",
        "a new variant of a closed union: old receivers reject it",
    ),
    _r("variant-added-open", "variant-added", "info", "info", "none", "a new variant of an open union: old receivers take it as unknown"),
    _r("variant-removed", "variant-removed", "error", "error", "senders", "a variant of a closed union is gone: old senders send it"),
    _r(
        "variant-removed-open",
        "variant-removed",
        "warning",
        "error",
        "senders",
        "a variant of an open union is gone: new receivers take it as unknown",
    ),
    _r("variant-renamed", "renamed", "error", "error", "both", "a variant's tag changed, its content did not"),
    _r("tag-changed", "type-changed", "error", "error", "both", "a tagged union is tagged by another member"),
    _r("union-opened", "union-opened", "warning", "info", "receivers", "a union now has a fallback: peers may send unknown variants"),
    _r("union-closed", "union-closed", "error", "warning", "senders", "a union lost its fallback: unknown variants are rejected"),
    # enums
    _r(
        "enum-value-added-closed",
        "enum-value-added",
        "error",
        "info",
        "receivers",
        "a new value of a closed enum: old receivers reject it",
    ),
    _r("enum-value-added-open", "enum-value-added", "info", "info", "none", "a new value of an open enum"),
    _r("enum-value-removed", "enum-value-removed", "error", "error", "senders", "a value of a closed enum is gone: old senders send it"),
    _r(
        "enum-value-removed-open",
        "enum-value-removed",
        "warning",
        "error",
        "senders",
        "a value of an open enum is gone: new receivers take it as unknown",
    ),
    _r("enum-opened", "enum-opened", "warning", "info", "receivers", "an enum now accepts other values: peers may send them"),
    _r("enum-closed", "enum-closed", "error", "warning", "senders", "an enum no longer accepts other values"),
    # capabilities
    _r(
        "capability-gate-removed",
        "field-removed",
        "warning",
        "error",
        "advertisers",
        "a capability is gone but what it gated stays: the feature is now mandatory",
    ),
    # stability
    _r(
        "moved-to-stable",
        "moved-from-unstable-to-stable",
        "info",
        "info",
        "none",
        "an unstable method, def, member or variant is now stable",
    ),
    _r(
        "moved-to-stable-breaking",
        "moved-from-unstable-to-stable",
        "error",
        "info",
        "as-added",
        "an unstable item is now stable, and adding it to the stable file breaks what that addition breaks",
    ),
    _r(
        "moved-to-unstable",
        "moved-from-stable-to-unstable",
        "error",
        "error",
        "callers",
        "a stable method, def, member or variant is now unstable only",
    ),
)

BY_ID: dict[str, Rule] = {r.id: r for r in RULES}


def rank(level: str) -> int:
    """``error`` 0 ... ``info`` 2: lower is worse."""
    return LEVELS.index(level)


def catalogue_text() -> str:
    width = max(len(r.id) for r in RULES)
    lines = [f"{'rule'.ljust(width)}  {'kind'.ljust(29)}  {'wire':7}  {'code':7}  breaks        summary"]
    for r in RULES:
        lines.append(
            f"{r.id.ljust(width)}  {r.kind.ljust(29)}  {r.level:7}  {r.code:7}  {r.hits.ljust(12)}  {r.summary}"
        )
    return "\n".join(lines)
