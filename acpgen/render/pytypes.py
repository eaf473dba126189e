"""IR type expressions -> Python annotation text (the typemap for the Python styles)."""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Mapping

from acpgen import ir
from acpgen.layout import py_str

#: JSON Schema integer formats -> bounds implied by the format (schema bounds win)
INT_FORMAT_BOUNDS: dict[str, tuple[int, int]] = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint8": (0, 2**8 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
}


def py_tuple(items: Iterable[str]) -> str:
    """A tuple display as black writes it: ``()``, ``(a,)``, ``(a, b)``."""
    parts = list(items)
    return f"({parts[0]},)" if len(parts) == 1 else "(" + ", ".join(parts) + ")"


def py_literal(value: Any) -> str:
    """A Python expression for a JSON value (or a tuple of them), as black writes it."""
    if value is None:
        return "None"
    if value is True:
        return "True"
    if value is False:
        return "False"
    if isinstance(value, str):
        return py_str(value)
    if isinstance(value, tuple):
        return py_tuple(py_literal(v) for v in value)
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(py_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{py_literal(k)}: {py_literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"not a JSON value: {value!r}")


def field_constraints(t: ir.TypeExpr) -> list[str]:
    """pydantic ``Field`` keyword arguments that a type's constraints map to."""
    out: list[str] = []
    if isinstance(t, ir.Prim):
        c = t.constraints
        lo, hi = c.minimum, c.maximum
        if t.kind == "integer" and c.format in INT_FORMAT_BOUNDS:
            f_lo, f_hi = INT_FORMAT_BOUNDS[c.format]
            lo = f_lo if lo is None else max(lo, f_lo)
            hi = f_hi if hi is None else min(hi, f_hi)
        if lo is not None:
            out.append(f"ge={lo!r}")
        if hi is not None:
            out.append(f"le={hi!r}")
        if c.exclusive_minimum is not None:
            out.append(f"gt={c.exclusive_minimum!r}")
        if c.exclusive_maximum is not None:
            out.append(f"lt={c.exclusive_maximum!r}")
        if c.multiple_of is not None:
            out.append(f"multiple_of={c.multiple_of!r}")
        if c.min_length is not None:
            out.append(f"min_length={c.min_length}")
        if c.max_length is not None:
            out.append(f"max_length={c.max_length}")
        if c.pattern is not None:
            out.append(f"pattern={py_literal(c.pattern)}")
    elif isinstance(t, ir.Array):
        if t.constraints.min_items is not None:
            out.append(f"min_length={t.constraints.min_items}")
        if t.constraints.max_items is not None:
            out.append(f"max_length={t.constraints.max_items}")
    return out


def bounded_open_enum(d: ir.EnumDef) -> ir.TypeExpr | None:
    """An open integer enum whose values share a ``format`` (JSON-RPC's ``ErrorCode``,
    ``int32``): any other value must still fit the format, so it is spelled as its
    values or a bounded integer. ``None`` for every other enum."""
    if not (d.open and d.base == "integer" and d.format in INT_FORMAT_BOUNDS):
        return None
    values = ir.Lit(tuple(v.value for v in d.values))
    return ir.AnyOf((values, ir.Prim("integer", ir.Constraints(format=d.format))))


def value_args(value: Any) -> str:
    """The arguments of a marker that puts ``value`` in place (a fresh list or dict each
    time): ``[]`` -> ``factory=list``, ``3`` -> ``3``."""
    if isinstance(value, (list, dict)):
        if not value:
            return "factory=" + ("list" if isinstance(value, list) else "dict")
        return f"factory=lambda: {py_literal(value)}"
    return py_literal(value)


def null_default(f: ir.Field, defs: Mapping[str, ir.Def], optional: bool = False) -> tuple[bool, Any] | None:
    """``x-deserialize-default-on-null``: ``None`` when the mark does nothing here (absent,
    or ``null`` is valid and no default replaces it), else the lenient value
    (``(False, None)``: the member reads as absent)."""
    if not f.default_on_null or optional:
        return None
    has, value = ir.lenient_value(f, defs)
    if has and value is None:
        return None
    return has, value


def unset_on_error(f: ir.Field, defs: Mapping[str, ir.Def], optional: bool = False) -> bool:
    """A lenient (``x-deserialize-default-on-error``) member that may be absent, has no
    default and cannot be ``null``: an invalid value must leave it absent, so that the
    binding gives back a valid message (not ``"member": null``), as the SDK's serde does."""
    return (
        f.default_on_error
        and (optional or not f.required)
        and not f.has_default
        and not ir.admits_null(f.type, defs)
    )


class TypeWriter:
    """Spells type expressions for one module. ``name`` maps an IR key to its name."""

    def __init__(
        self,
        name: Callable[[str], str],
        skip_marker: str = "_SKIP_INVALID",
        constrain: Callable[[str, list[str]], str] | None = None,
        strict: bool = False,
        whole_numbers: bool = True,
        nulls: frozenset[str] = frozenset(),
        by_value: str | None = None,
    ) -> None:
        self.name = name
        #: a marker that makes a union of types with members be written by its value's
        #: own type (pydantic: ``_BY_VALUE``)
        self.by_value = by_value
        #: defs whose schema is just ``{"type": "null"}``: spelled ``None`` where they are
        #: used, since ``A | B`` of two aliases of ``None`` is ``None | None``, which fails
        self.nulls = nulls
        #: spell JSON numbers ``int | float`` (validators that would turn 1 into 1.0)
        self.whole_numbers = whole_numbers
        #: integers, numbers and booleans refuse lax coercions ("1", true -> 1) on their own
        self.strict = strict
        self.skip_marker = skip_marker
        #: spells a constrained type; pydantic: ``Annotated[int, Field(ge=0)]``
        self.constrain = constrain or (lambda base, cons: f"Annotated[{base}, Field({', '.join(cons)})]")

    def expr(self, t: ir.TypeExpr, skip_invalid: bool = False) -> str:
        if isinstance(t, ir.Nullable):
            inner = self.expr(t.inner, skip_invalid)
            return inner if inner in ("Any", "None") else f"{inner} | None"
        if isinstance(t, ir.Prim):
            base = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}[t.kind]
            cons = field_constraints(t)
            if self.strict and t.kind != "string":
                cons.append("strict=True")
            if t.kind == "number" and self.whole_numbers:
                # a whole number stays an int, so it goes back on the wire as it came (1, not 1.0)
                return " | ".join(self.constrain(b, cons) if cons else b for b in ("int", "float"))
            return self.constrain(base, cons) if cons else base
        if isinstance(t, ir.AnyT):
            return "Any"
        if isinstance(t, ir.NullT):
            return "None"
        if isinstance(t, ir.Lit):
            return "Literal[" + ", ".join(py_literal(v) for v in t.values) + "]"
        if isinstance(t, ir.Ref):
            return "None" if t.key in self.nulls else self.name(t.key)
        if isinstance(t, ir.Array):
            item = self.expr(t.items)
            if skip_invalid:
                item = f"Annotated[{item}, {self.skip_marker}]"
            cons = field_constraints(t)
            inner = f"list[{item}]"
            return self.constrain(inner, cons) if cons else inner
        if isinstance(t, ir.Map):
            return f"dict[str, {self.expr(t.values)}]"
        if isinstance(t, ir.Tuple):
            return "tuple[" + ", ".join(self.expr(i) for i in t.items) + "]"
        if isinstance(t, ir.AnyOf):
            parts = list(dict.fromkeys(self.expr(m) for m in t.members))
            if "Any" in parts:
                return "Any"
            marker = self.by_value_marker(parts, t.members)
            if marker:
                return f"Annotated[{' | '.join(parts)}, {marker}]"
            return " | ".join(parts)
        raise TypeError(f"unknown type expression {t!r}")

    def by_value_marker(self, parts: list[str], members: Iterable[ir.TypeExpr]) -> str | None:
        """The ``by_value`` marker for a union of ``members`` (spelled ``parts``) that has
        a member naming a def (an object or union, whose members a union's serializer
        would check), not only scalars; else ``None``."""
        if self.by_value and len(parts) > 1 and any(key not in self.nulls for m in members for key in refs_of(m)):
            return self.by_value
        return None


def null_aliases(protocol: ir.Protocol) -> frozenset[str]:
    """The defs that are aliases of ``null`` (early releases' empty results)."""
    return frozenset(d.key for d in protocol.defs if isinstance(d, ir.AliasDef) and isinstance(d.type, ir.NullT))


def refs_of(t: ir.TypeExpr) -> set[str]:
    """IR keys a type expression mentions (for ordering module-level aliases)."""
    if isinstance(t, ir.Ref):
        return {t.key}
    if isinstance(t, (ir.Nullable,)):
        return refs_of(t.inner)
    if isinstance(t, ir.Array):
        return refs_of(t.items)
    if isinstance(t, ir.Map):
        return refs_of(t.values)
    if isinstance(t, ir.Tuple):
        return set().union(*(refs_of(i) for i in t.items)) if t.items else set()
    if isinstance(t, ir.AnyOf):
        return set().union(*(refs_of(m) for m in t.members)) if t.members else set()
    return set()
