"""Sibling unions (``ir.Mixin`` branches) on the reference pages: each union is shown as
a labelled choice ("one of" / "at least one of", as the schema says), each branch with
its label, its description and its own members (required ones marked), never merged
into the property list of the object or variant that carries it.

A one-branch union (an object's own ``not``) is a rule, not a choice: it stays one
sentence (``Must also hold: ...``), written by :func:`rule_note`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable

from acpgen import ir
from acpgen.render.doctypes import Types, plain

if TYPE_CHECKING:
    from acpgen.render.docviews import DocField


@dataclass(frozen=True)
class DocBranch:
    label: str
    description: str
    fields: tuple["DocField", ...] = ()
    #: the def whose members the branch asks for, linked from it
    payload: str | None = None
    #: what the branch asks beyond its members: required members the object declares,
    #: members that must be absent, values a member must not have
    rules: tuple[str, ...] = ()
    groups: tuple["DocGroup", ...] = ()


@dataclass(frozen=True)
class DocGroup:
    keyword: str  # "oneOf" | "anyOf"
    branches: tuple[DocBranch, ...]

    @property
    def heading(self) -> str:
        return "One of" if self.keyword == "oneOf" else "At least one of"

    @property
    def rule(self) -> str:
        return "exactly one must hold" if self.keyword == "oneOf" else "at least one must hold"


FieldsOf = Callable[[str, tuple[ir.Field, ...]], "tuple[DocField, ...]"]


class Alternatives:
    """Builds the groups of a page; ``fields`` is the page builder's field list maker."""

    def __init__(self, defs: dict[str, ir.Def], types: Types, fields: FieldsOf, clean: Callable[[str | None], str]) -> None:
        self.defs = defs
        self.types = types
        self.fields = fields
        self.clean = clean

    def base_object(self, key: str | None) -> ir.ObjectDef | None:
        d = self.defs.get(key or "")
        return d if isinstance(d, ir.ObjectDef) else None

    def groups(self, owner: str, mixins: tuple[ir.Mixin, ...]) -> tuple[DocGroup, ...]:
        """The choices of ``mixins`` (one-branch rules left out: see :func:`rule_note`)."""
        return tuple(
            DocGroup(keyword, tuple(self.branch(owner, b) for b in branches))
            for keyword, branches in ir.mixin_groups(mixins)
            if len(branches) > 1
        )

    def branch(self, owner: str, b: ir.Mixin) -> DocBranch:
        base = self.base_object(b.base)
        members = b.fields + (base.fields if base else ())
        required = set(b.required)
        marked = tuple(ir_required(f, required) for f in members)
        own = {f.wire_name for f in members}
        rules = [f"`{name}` is required" for name in b.required if name not in own]
        rules += [f"`{member}` must be absent" for member in b.absent]
        for member, values in b.excludes:
            rules.append(f"`{member}` must not be " + ", ".join(f"`{json.dumps(v)}`" for v in values))
        nested = b.mixins + (base.mixins if base else ())
        description = self.clean(b.description) or (self.clean(base.description) if base else "")
        note = rule_note(self.types, nested)
        if note:
            rules.append(note)
        shown = self.defs.get(b.base or "")
        payload = b.base if shown is not None and not shown.docs_ignore and not getattr(shown, "lifted_from", None) else None
        return DocBranch(
            b.label,
            description,
            self.fields(f"{owner}|{b.label}", marked),
            payload,
            tuple(rules),
            self.groups(owner, nested),
        )


def ir_required(f: ir.Field, required: set[str]) -> ir.Field:
    """``f`` required when its branch requires it (a branch may require a member that
    the object declares optional: ``required`` without ``properties``)."""
    return f if f.required or f.wire_name not in required else replace(f, required=True)


def rule_note(types: Types, mixins: tuple[ir.Mixin, ...]) -> str:
    """One sentence per one-branch union (a rule the value must also satisfy)."""
    return "\n\n".join(
        f"Must also hold: {branch_text(types, branches[0])}."
        for _, branches in ir.mixin_groups(mixins)
        if len(branches) == 1
    )


def branch_text(types: Types, b: ir.Mixin) -> str:
    asks = [f"the members of `{b.base}`"] if b.base else []
    for f in b.fields:
        kind = "required" if f.required else "optional"
        if isinstance(f.type, ir.Lit) and len(f.type.values) == 1:
            asks.append(f"`{f.wire_name}` ({kind}) `= {json.dumps(f.type.values[0])}`")
        else:
            asks.append(f"`{f.wire_name}` ({kind}): `{plain(types.text(f.type))}`")
    own = {f.wire_name for f in b.fields}
    asks += [f"`{name}` (required)" for name in b.required if name not in own]
    asks += [f"no `{member}`" for member in b.absent]
    for member, values in b.excludes:
        asks.append(f"`{member}` not " + ", ".join(f"`{json.dumps(v)}`" for v in values))
    if b.mixins:
        asks.append("and one of " + ", ".join(f"`{inner.label}`" for inner in b.mixins))
    return f"`{b.label}`" + (" (" + "; ".join(asks) + ")" if asks else "")
