"""The specs of the dataclasses style's ``load``/``dump`` engine (standard library only):
what a generated module declares for each type and member (scalars and their checks,
literals, arrays, maps, unions, references, and ``_F``, the marker of one member of an
object), each with its interpreter (``decode``, which raises the exact
:class:`ValidationError`) and the Python source it adds to the compiled loader (``expr``).
The compiler, objects and tagged unions are in ``_runtime.py``, which imports this module
(written under the same name in every dataclasses package).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Final, Protocol


class ValidationError(ValueError):
    """A message does not match the schema. ``path`` locates the member
    (``SessionNotification.update.content.text``); ``message`` says what was expected.
    """

    def __init__(self, message: str, path: tuple[str | int, ...] = ()) -> None:
        self.message = message
        self.path = path
        super().__init__(f"{self.location}: {message}" if path else message)

    @property
    def location(self) -> str:
        out = ""
        for part in self.path:
            out += (
                f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
            )
        return out

    def at(self, part: str | int) -> ValidationError:
        return ValidationError(self.message, (part, *self.path))


_MISSING: Final = object()


def _kind(value: Any) -> str:
    return {
        dict: "object",
        list: "array",
        str: "string",
        bool: "boolean",
        int: "integer",
        float: "number",
    }.get(type(value), "null" if value is None else type(value).__name__)


class _Emitter(Protocol):
    """What a spec asks of the compiler writing its source (``_Compiler`` in ``_runtime.py``):
    a global name for a value, and the name of a spec's compiled function."""

    def const(self, value: Any) -> str: ...

    def function(self, spec: _Spec, kind: str = "decode") -> str: ...


class _Spec:
    __slots__ = ()

    def decode(self, value: Any) -> Any:
        raise NotImplementedError

    def expr(self, c: _Emitter, v: str) -> str:
        """A Python expression that decodes the variable ``v`` on the happy path; any
        other value goes to ``decode``, which raises the exact error."""
        return f"{c.const(self.decode)}({v})"

    def dump_expr(self, c: _Emitter, v: str) -> str:
        """A Python expression for the wire value of ``v``, a member of this spec."""
        return f"dump({v})"

    def entry_source(self, c: _Emitter, name: str) -> str:
        return _lines(f"def {name}(value):", f"    return {self.expr(c, 'value')}")


class _Scalar(_Spec):
    __slots__ = ("types", "name", "checks")

    def __init__(self, types: tuple[type, ...], name: str, **checks: Any) -> None:
        self.types = types
        self.name = name
        self.checks = tuple((k, v) for k, v in checks.items() if v is not None)

    def decode(self, value: Any) -> Any:
        if type(value) not in self.types:
            raise ValidationError(f"expected {self.name}, got {_kind(value)}")
        for check, bound in self.checks:
            if not _CHECKS[check](value, bound):
                raise ValidationError(f"{_CHECK_TEXT[check]} {bound!r}")
        return value

    def expr(self, c: _Emitter, v: str) -> str:
        if self.checks:
            return super().expr(c, v)
        return f"({v} if {_is(v, self.types)} else {c.const(self.decode)}({v}))"

    def dump_expr(self, c: _Emitter, v: str) -> str:
        return f"({v} if {_is(v, self.types)} else dump({v}))"


_CHECKS: Final[dict[str, Callable[[Any, Any], bool]]] = {
    "ge": lambda v, b: v >= b,
    "le": lambda v, b: v <= b,
    "gt": lambda v, b: v > b,
    "lt": lambda v, b: v < b,
    "multiple_of": lambda v, b: (v / b) == int(v / b),
    "min_length": lambda v, b: len(v) >= b,
    "max_length": lambda v, b: len(v) <= b,
    "pattern": lambda v, b: re.search(b, v) is not None,
}
_CHECK_TEXT: Final[dict[str, str]] = {
    "ge": "expected a value >=",
    "le": "expected a value <=",
    "gt": "expected a value >",
    "lt": "expected a value <",
    "multiple_of": "expected a multiple of",
    "min_length": "expected a length >=",
    "max_length": "expected a length <=",
    "pattern": "expected a string matching",
}


class _AnySpec(_Spec):
    __slots__ = ()

    def decode(self, value: Any) -> Any:
        return value

    def expr(self, c: _Emitter, v: str) -> str:
        return v


class _Null(_Spec):
    __slots__ = ()

    def decode(self, value: Any) -> Any:
        if value is not None:
            raise ValidationError(f"expected null, got {_kind(value)}")
        return None

    def expr(self, c: _Emitter, v: str) -> str:
        return f"({v} if {v} is None else {c.const(self.decode)}({v}))"


class _Lit(_Spec):
    __slots__ = ("values", "open")

    def __init__(self, values: tuple[Any, ...], open: type | None = None) -> None:
        self.values = values
        self.open = open

    def decode(self, value: Any) -> Any:
        for known in self.values:
            if value == known and type(value) is type(known):
                return value
        if self.open is not None and type(value) is self.open:
            return value
        raise ValidationError(
            "expected one of "
            + ", ".join(repr(v) for v in self.values)
            + f", got {value!r}"
        )

    def expr(self, c: _Emitter, v: str) -> str:
        kinds = {type(known) for known in self.values}
        if self.open is not None and kinds <= {self.open}:
            test = _is(v, (self.open,))
        elif len(kinds) == 1 and kinds <= {str, int}:
            test = (
                f"{_is(v, tuple(kinds))} and {v} in {c.const(frozenset(self.values))}"
            )
        else:
            return super().expr(c, v)
        return f"({v} if {test} else {c.const(self.decode)}({v}))"

    def dump_expr(self, c: _Emitter, v: str) -> str:
        kinds = {type(known) for known in self.values}
        if len(kinds) == 1 and kinds <= {str, int}:
            return f"({v} if {_is(v, tuple(kinds))} else dump({v}))"
        return super().dump_expr(c, v)


class _Ref(_Spec):
    """A named spec of one module (``specs`` is that module's table)."""

    __slots__ = ("specs", "name", "target")

    def __init__(self, specs: dict[str, _Spec], name: str) -> None:
        self.specs = specs
        self.name = name
        self.target: _Spec | None = None

    def decode(self, value: Any) -> Any:
        target = self.target
        if target is None:
            target = self.target = self.specs[self.name]
        return target.decode(value)

    def expr(self, c: _Emitter, v: str) -> str:
        return self.specs[self.name].expr(c, v)

    def dump_expr(self, c: _Emitter, v: str) -> str:
        return self.specs[self.name].dump_expr(c, v)


class _Nullable(_Spec):
    __slots__ = ("inner",)

    def __init__(self, inner: _Spec) -> None:
        self.inner = inner

    def decode(self, value: Any) -> Any:
        return None if value is None else self.inner.decode(value)

    def expr(self, c: _Emitter, v: str) -> str:
        return f"(None if {v} is None else {self.inner.expr(c, v)})"

    def dump_expr(self, c: _Emitter, v: str) -> str:
        return f"(None if {v} is None else {self.inner.dump_expr(c, v)})"


class _List(_Spec):
    __slots__ = ("item", "skip_invalid", "min_items", "max_items")

    def __init__(
        self,
        item: _Spec,
        skip_invalid: bool = False,
        min_items: int | None = None,
        max_items: int | None = None,
    ) -> None:
        self.item = item
        self.skip_invalid = skip_invalid
        self.min_items = min_items
        self.max_items = max_items

    def decode(self, value: Any) -> Any:
        if type(value) is not list:
            raise ValidationError(f"expected array, got {_kind(value)}")
        out = []
        decode = self.item.decode
        for i, item in enumerate(value):
            try:
                out.append(decode(item))
            except ValidationError as exc:
                if not self.skip_invalid:
                    raise exc.at(i) from None
        if self.min_items is not None and len(out) < self.min_items:
            raise ValidationError(f"expected at least {self.min_items} items")
        if self.max_items is not None and len(out) > self.max_items:
            raise ValidationError(f"expected at most {self.max_items} items")
        return out

    def expr(self, c: _Emitter, v: str) -> str:
        if self.min_items is not None or self.max_items is not None:
            return super().expr(c, v)
        return f"{c.function(self)}({v})"

    def decode_source(self, c: _Emitter, name: str) -> str:
        item = self.item.expr(c, "x")
        build = "list(value)" if item == "x" else f"[{item} for x in value]"
        return _lines(
            f"def {name}(value):",
            "    if type(value) is list:",
            "        try:",
            f"            return {build}",
            "        except ValidationError:",
            "            pass",
            f"    return {c.const(self.decode)}(value)",
        )


class _Map(_Spec):
    __slots__ = ("values",)

    def __init__(self, values: _Spec) -> None:
        self.values = values

    def decode(self, value: Any) -> Any:
        if type(value) is not dict:
            raise ValidationError(f"expected object, got {_kind(value)}")
        out = {}
        for key, item in value.items():
            try:
                out[key] = self.values.decode(item)
            except ValidationError as exc:
                raise exc.at(key) from None
        return out

    def expr(self, c: _Emitter, v: str) -> str:
        item = self.values.expr(c, "x")
        if item == "x":
            return f"(dict({v}) if type({v}) is dict else {c.const(self.decode)}({v}))"
        return f"{c.function(self)}({v})"

    def decode_source(self, c: _Emitter, name: str) -> str:
        item = self.values.expr(c, "x")
        return _lines(
            f"def {name}(value):",
            "    if type(value) is dict:",
            "        try:",
            "            return {k: %s for k, x in value.items()}" % item,
            "        except ValidationError:",
            "            pass",
            f"    return {c.const(self.decode)}(value)",
        )


class _Tuple(_Spec):
    __slots__ = ("items",)

    def __init__(self, items: tuple[_Spec, ...]) -> None:
        self.items = items

    def decode(self, value: Any) -> Any:
        if type(value) is not list or len(value) != len(self.items):
            raise ValidationError(f"expected an array of {len(self.items)} items")
        out = []
        for i, (spec, item) in enumerate(zip(self.items, value)):
            try:
                out.append(spec.decode(item))
            except ValidationError as exc:
                raise exc.at(i) from None
        return out


class _AnyOf(_Spec):
    __slots__ = ("members",)

    def __init__(self, members: tuple[_Spec, ...]) -> None:
        self.members = members

    def decode(self, value: Any) -> Any:
        errors = []
        for member in self.members:
            try:
                return member.decode(value)
            except ValidationError as exc:
                errors.append(exc)
        best = max(errors, key=lambda e: len(e.path))
        raise best


class _OneOf(_AnyOf):
    """An untagged ``oneOf`` whose members can accept the same value (``exclusive:
    "checked"`` in the IR): the value must be valid as exactly one member (a
    ``oneOf`` proved disjoint when the module was generated is an ``_AnyOf``)."""

    __slots__ = ("labels",)

    def __init__(self, members: tuple[_Spec, ...], labels: tuple[str, ...]) -> None:
        super().__init__(members)
        self.labels = labels

    def decode(self, value: Any) -> Any:
        errors = []
        held: list[tuple[str, Any]] = []
        for label, member in zip(self.labels, self.members):
            try:
                held.append((label, member.decode(value)))
            except ValidationError as exc:
                errors.append(exc)
        if len(held) > 1:
            labels = ", ".join(repr(label) for label, _ in held)
            raise ValidationError(
                f"expected exactly one of {labels} (oneOf), found several"
            )
        if held:
            return held[0][1]
        raise max(errors, key=lambda e: len(e.path))


class _F:
    """One member of an object: attribute, wire key, spec, and what absence/error means."""

    __slots__ = (
        "attr",
        "wire",
        "spec",
        "required",
        "always",
        "default",
        "factory",
        "lenient",
        "unset_on_error",
        "on_null",
        "unset",
    )

    def __init__(
        self,
        attr: str,
        wire: str,
        spec: _Spec,
        *,
        required: bool = False,
        always: bool = False,
        default: Any = None,
        factory: Callable[[], Any] | None = None,
        lenient: bool = False,
        unset_on_error: bool = False,
        on_null: str | None = None,
    ) -> None:
        self.attr = attr
        self.wire = wire
        self.spec = spec
        self.required = required
        self.always = always or required
        self.default = default
        self.factory = factory
        self.lenient = lenient
        self.unset_on_error = unset_on_error
        #: ``x-deserialize-default-on-null``: ``null`` reads as the "default" or as "absent"
        self.on_null = on_null
        self.unset: Any = _MISSING  # the default value, built once for comparisons

    def make_default(self) -> Any:
        return self.factory() if self.factory is not None else self.default

    def is_default(self, value: Any) -> bool:
        if self.unset is _MISSING:
            self.unset = self.make_default()  # never handed out, so never mutated
        return bool(value == self.unset)


def _decodes(spec: _Spec, value: Any) -> bool:
    try:
        spec.decode(value)
    except ValidationError:
        return False
    return True


def _lines(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def _is(v: str, types: tuple[type, ...]) -> str:
    """Source testing that the variable ``v`` has exactly one of ``types``."""
    return " or ".join(f"type({v}) is {t.__name__}" for t in types)


_STR: Final = _Scalar((str,), "string")
_INT: Final = _Scalar((int,), "integer")
_FLOAT: Final = _Scalar((int, float), "number")
_BOOL: Final = _Scalar((bool,), "boolean")
_ANY: Final = _AnySpec()
_NULL: Final = _Null()
_SIMPLE: Final[dict[Any, _Spec]] = {
    str: _STR,
    int: _INT,
    float: _FLOAT,
    bool: _BOOL,
    type(None): _NULL,
    None: _NULL,
    Any: _ANY,
}
