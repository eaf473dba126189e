"""What every module of this package shares (dataclasses, standard library only): the
base class, the ``load``/``dump`` engine (specs, their interpreter and the compiler that
turns them into Python functions on first use) and the JSON-RPC codec. Each module keeps
its own :class:`Registry` of named specs; classes are known to ``dump`` by themselves.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Final, TypeVar, dataclass_transform

from ._jsonrpc import Codec
from ._alternatives import (
    _alternatives_problem as _alternatives_problem,
    _Branch as _Branch,
    _Group as _Group,
)


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


@dataclass(slots=True, kw_only=True)
class AcpObject:
    """Base of every generated class. ``_extra`` keeps members the schema does not
    name (ACP objects are open); ``_present`` records which members a loaded message
    carried, so ``dump(load(T, x)) == x`` with no defaults injected."""

    _extra: dict[str, Any] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _present: frozenset[str] = field(
        default=frozenset(), init=False, repr=False, compare=False
    )


_T = TypeVar("_T")


@dataclass_transform(kw_only_default=True, field_specifiers=(field,))
def acp_dataclass(cls: type[_T]) -> type[_T]:
    """``@dataclass(slots=True, kw_only=True)``, recording the members given at
    construction: each of them, ``None`` included, is sent by ``dump``."""
    made = dataclass(slots=True, kw_only=True)(cls)
    init = made.__init__

    def __init__(self: Any, **kwargs: Any) -> None:
        init(self, **kwargs)
        if kwargs:
            wires = _CLASS_SPECS[made].wire_of
            self._present = frozenset(wires[k] for k in kwargs)

    __init__.__qualname__ = f"{made.__qualname__}.__init__"
    __init__.__doc__ = init.__doc__
    made.__init__ = __init__  # type: ignore[method-assign]
    return made


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


class _Spec:
    __slots__ = ()

    def decode(self, value: Any) -> Any:
        raise NotImplementedError

    def expr(self, c: _Compiler, v: str) -> str:
        """A Python expression that decodes the variable ``v`` on the happy path; any
        other value goes to ``decode``, which raises the exact error."""
        return f"{c.const(self.decode)}({v})"

    def dump_expr(self, c: _Compiler, v: str) -> str:
        """A Python expression for the wire value of ``v``, a member of this spec."""
        return f"dump({v})"

    def entry_source(self, c: _Compiler, name: str) -> str:
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

    def expr(self, c: _Compiler, v: str) -> str:
        if self.checks:
            return super().expr(c, v)
        return f"({v} if {_is(v, self.types)} else {c.const(self.decode)}({v}))"

    def dump_expr(self, c: _Compiler, v: str) -> str:
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

    def expr(self, c: _Compiler, v: str) -> str:
        return v


class _Null(_Spec):
    __slots__ = ()

    def decode(self, value: Any) -> Any:
        if value is not None:
            raise ValidationError(f"expected null, got {_kind(value)}")
        return None

    def expr(self, c: _Compiler, v: str) -> str:
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

    def expr(self, c: _Compiler, v: str) -> str:
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

    def dump_expr(self, c: _Compiler, v: str) -> str:
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

    def expr(self, c: _Compiler, v: str) -> str:
        return self.specs[self.name].expr(c, v)

    def dump_expr(self, c: _Compiler, v: str) -> str:
        return self.specs[self.name].dump_expr(c, v)


class _Nullable(_Spec):
    __slots__ = ("inner",)

    def __init__(self, inner: _Spec) -> None:
        self.inner = inner

    def decode(self, value: Any) -> Any:
        return None if value is None else self.inner.decode(value)

    def expr(self, c: _Compiler, v: str) -> str:
        return f"(None if {v} is None else {self.inner.expr(c, v)})"

    def dump_expr(self, c: _Compiler, v: str) -> str:
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

    def expr(self, c: _Compiler, v: str) -> str:
        if self.min_items is not None or self.max_items is not None:
            return super().expr(c, v)
        return f"{c.function(self)}({v})"

    def decode_source(self, c: _Compiler, name: str) -> str:
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

    def expr(self, c: _Compiler, v: str) -> str:
        item = self.values.expr(c, "x")
        if item == "x":
            return f"(dict({v}) if type({v}) is dict else {c.const(self.decode)}({v}))"
        return f"{c.function(self)}({v})"

    def decode_source(self, c: _Compiler, name: str) -> str:
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


class _Compiled(_Spec):
    """A spec decoded by its own compiled function (objects, tagged unions): built on
    first use, and called by name from the functions that contain it."""

    __slots__ = ("fn",)

    def __init__(self) -> None:
        self.fn: Callable[[Any], Any] | None = None

    def decode(self, value: Any) -> Any:
        fn = self.fn
        if fn is None:
            fn = self.fn = _COMPILER.compile(self)
        return fn(value)

    def expr(self, c: _Compiler, v: str) -> str:
        return f"{c.function(self)}({v})"


class _Obj(_Compiled):
    __slots__ = (
        "cls",
        "fields",
        "wires",
        "wire_of",
        "extra",
        "groups",
        "by_method",
        "enc",
    )

    def __init__(
        self,
        cls: type,
        fields: tuple[_F, ...],
        extra: str | _Spec = "allow",
        groups: tuple[_Group, ...] = (),
        by_method: tuple[str, Registry] | None = None,
    ) -> None:
        self.cls = cls
        self.fields = fields
        self.wires = frozenset(f.wire for f in fields)
        self.wire_of = {f.attr: f.wire for f in fields}
        self.extra = extra
        #: the object's sibling unions (checked on the wire form, leniency applied)
        self.groups = groups
        #: a JSON-RPC envelope: its ``params`` are typed by its ``method`` (their kind,
        #: and the module whose method table says so)
        self.by_method = by_method
        self.enc: Callable[[Any], dict[str, Any]] | None = None
        _CLASS_SPECS[cls] = self
        super().__init__()

    def decode_source(self, c: _Compiler, name: str) -> str:
        slow = c.const(self.interpret)
        if (
            self.by_method is not None
            or self.groups
            or any(f.on_null is not None for f in self.fields)
        ):  # always the interpreter
            return _lines(f"def {name}(value):", f"    return {slow}(value)")
        out = [
            f"def {name}(value):",
            "    if type(value) is not dict:",
            f"        return {slow}(value)",
            f"    o = _new({c.const(self.cls)})",
            "    get = value.get",
            "    n = 0",
            "    try:",
        ]
        for f in self.fields:
            if f.required:
                absent = f"return {slow}(value)"
            elif f.factory is not None:
                absent = f"o.{f.attr} = {c.const(f.factory)}()"
            elif f.default is None or type(f.default) is bool:
                absent = f"o.{f.attr} = {f.default!r}"
            else:
                absent = f"o.{f.attr} = {c.const(f.default)}"
            out += [
                f"        v = get({f.wire!r}, _MISSING)",
                "        if v is _MISSING:",
                f"            {absent}",
                "        else:",
                "            n += 1",
                f"            o.{f.attr} = {f.spec.expr(c, 'v')}",
            ]
        if not self.fields:  # `"properties": {}`: `try:` still needs a body
            out.append("        pass")
        out += ["    except ValidationError:", f"        return {slow}(value)"]
        out += [
            "    if n == len(value):",
            "        o._extra = {}",
            "        o._present = frozenset(value)",
            "    else:",
        ]
        if self.extra == "allow":
            wires = c.const(self.wires)
            out += [
                "        extra = {k: x for k, x in value.items() if k not in %s}"
                % wires,
                "        o._extra = extra",
                "        o._present = frozenset(value).difference(extra)",
            ]
        else:
            out.append(f"        return {slow}(value)")
        out.append("    return o")
        return _lines(*out)

    def interpret(self, value: Any) -> Any:
        if type(value) is not dict:
            raise ValidationError(f"expected object, got {_kind(value)}")
        kwargs = {}
        present = []
        routed = self.routed_params(value) if self.by_method is not None else None
        for f in self.fields:
            raw = value.get(f.wire, _MISSING)
            if routed is not None and f.wire == "params":
                kwargs[f.attr] = routed[0]
                present.append(f.wire)
                continue
            if raw is None and f.on_null is not None:
                if f.on_null == "absent":
                    continue
                kwargs[f.attr] = f.make_default()
                present.append(f.wire)
                continue
            if raw is _MISSING:
                if f.required:
                    raise ValidationError(f"missing required member {f.wire!r}")
                continue
            present.append(f.wire)
            try:
                kwargs[f.attr] = f.spec.decode(raw)
            except ValidationError as exc:
                if not f.lenient:
                    raise exc.at(f.wire) from None
                kwargs[f.attr] = f.make_default()
                if f.unset_on_error:
                    present.pop()
        extra = {k: v for k, v in value.items() if k not in self.wires}
        if extra and self.extra == "forbid":
            raise ValidationError(f"unexpected member {sorted(extra)[0]!r}")
        if extra and isinstance(self.extra, _Spec):
            for key, item in extra.items():
                try:
                    self.extra.decode(item)
                except ValidationError as exc:
                    raise exc.at(key) from None
        obj = self.cls(**kwargs)
        obj._extra = extra
        obj._present = frozenset(present)
        if self.groups:
            problem = _alternatives_problem(self.groups, self.encode(obj), _decodes)
            if problem is not None:
                raise ValidationError(problem)
        return obj

    def routed_params(self, value: dict[str, Any]) -> tuple[Any] | None:
        """The envelope's params typed by its method (``None``: left to the member's own
        spec, as for absent or null params and extension methods)."""
        assert self.by_method is not None
        kind, registry = self.by_method
        try:
            routed = registry.rpc.route_params(value, kind)
        except ValueError as exc:
            raise ValidationError(str(exc)).at("params") from None
        if routed is value:
            return None
        return (routed["params"],)

    def encode(self, obj: Any) -> dict[str, Any]:
        fn = self.enc
        if fn is None:
            fn = self.enc = _COMPILER.compile(self, "encode")
        return fn(obj)

    def encode_source(self, c: _Compiler, name: str) -> str:
        out = [f"def {name}(obj):", "    present = obj._present", "    out = {}"]
        for f in self.fields:
            value = f.spec.dump_expr(c, "v")
            out.append(f"    v = obj.{f.attr}")
            if f.always:
                out.append(f"    out[{f.wire!r}] = {value}")
                continue
            unset = f.make_default()
            if unset is None:
                test = "v is not None"
            else:
                test = f"v != {c.const(unset)}"
            out += [
                f"    if {f.wire!r} in present or {test}:",
                f"        out[{f.wire!r}] = {value}",
            ]
        out += [
            "    if obj._extra:",
            "        out.update(obj._extra)",
            "    return out",
        ]
        return _lines(*out)

    def interpret_encode(self, obj: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        present = obj._present
        for f in self.fields:
            value = getattr(obj, f.attr)
            if f.always or f.wire in present or not f.is_default(value):
                out[f.wire] = dump(value)
        out.update(obj._extra)
        return out


class _Tagged(_Compiled):
    """A tagged union: a known tag -> its variant (a malformed known variant is
    rejected); an unknown string tag -> the open fallback, which keeps the whole
    payload; no tag -> the untagged default variant."""

    __slots__ = ("specs", "tag", "choices", "default", "fallback", "catch", "resolved")

    def __init__(
        self,
        specs: dict[str, _Spec],
        tag: str,
        choices: dict[Any, str],
        default: str | None = None,
        fallback: str | None = None,
        catch: str | None = None,
    ) -> None:
        self.specs = specs
        self.tag = tag
        self.choices = choices
        self.default = default
        self.fallback = fallback
        #: a default or fallback variant that does not rule out the known tags: a value
        #: its tag's variant rejects is still valid as it (JSON Schema's ``anyOf``)
        self.catch = catch
        self.resolved: dict[Any, _Spec] | None = None
        super().__init__()

    def decode_source(self, c: _Compiler, name: str) -> str:
        if self.catch is not None:  # a rejected known variant is tried again
            return _lines(
                f"def {name}(value):", f"    return {c.const(self.interpret)}(value)"
            )
        choices = {k: c.compile(self.specs[v]) for k, v in self.choices.items()}
        return _lines(
            f"def {name}(value):",
            "    if type(value) is dict:",
            f"        found = value.get({self.tag!r}, _MISSING)",
            "        if type(found) is str or type(found) is int:",
            f"            fn = {c.const(choices)}.get(found)",
            "            if fn is not None:",
            "                return fn(value)",
            f"    return {c.const(self.interpret)}(value)",
        )

    def interpret(self, value: Any) -> Any:
        if type(value) is not dict:
            raise ValidationError(f"expected object, got {_kind(value)}")
        resolved = self.resolved
        if resolved is None:
            resolved = self.resolved = {
                k: self.specs[v] for k, v in self.choices.items()
            }
        found = value.get(self.tag, _MISSING)
        if found is not _MISSING and type(found) in (str, int) and found in resolved:
            if self.catch is None:
                return resolved[found].decode(value)
            try:
                return resolved[found].decode(value)
            except ValidationError as exc:
                try:
                    return self.specs[self.catch].decode(value)
                except ValidationError:
                    raise exc from None
        if found is not _MISSING and self.fallback is not None and type(found) is str:
            return self.specs[self.fallback].decode(value)
        if self.default is not None:
            return self.specs[self.default].decode(value)
        if found is _MISSING:
            raise ValidationError(f"missing discriminator {self.tag!r}")
        expected = ", ".join(repr(k) for k in self.choices)
        raise ValidationError(f"expected one of {expected}, got {found!r}").at(self.tag)


def _lines(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def _is(v: str, types: tuple[type, ...]) -> str:
    """Source testing that the variable ``v`` has exactly one of ``types``."""
    return " or ".join(f"type({v}) is {t.__name__}" for t in types)


class _Compiler:
    """Turns specs into Python functions on first use, as ``dataclasses`` writes
    ``__init__``: one function per object, tagged union, list and map, with members
    and scalar checks inlined. Only the happy path is compiled: a missing or invalid
    member, an unknown tag, leniency or an unknown member the spec does not allow send
    the whole value to the spec's interpreter, which raises the exact error (with its
    path) or applies the fallback. Decoding has no side effects, so running it again
    is safe."""

    def __init__(self) -> None:
        self.ns: dict[str, Any] = {
            "ValidationError": ValidationError,
            "_MISSING": _MISSING,
            "_new": object.__new__,
            "dump": dump,
        }
        self.names: dict[tuple[int, str], str] = {}

    def const(self, value: Any) -> str:
        name = f"_k{len(self.ns)}"
        self.ns[name] = value
        return name

    def function(self, spec: _Spec, kind: str = "decode") -> str:
        """The global name of ``spec``'s ``kind`` function; compiled when first called."""
        key = (id(spec), kind)
        name = self.names.get(key)
        if name is None:
            name = self.names[key] = f"_{kind[0]}{len(self.names)}"

            def first(value: Any) -> Any:
                return self.compile(spec, kind)(value)

            self.ns[name] = first
        return name

    def compile(self, spec: _Spec, kind: str = "decode") -> Callable[[Any], Any]:
        name = self.function(spec, kind)
        fn = self.ns[name]
        if fn.__name__ != name:
            exec(getattr(spec, kind + "_source")(self, name), self.ns)
            fn = self.ns[name]
        return fn  # type: ignore[no-any-return]

    def entry(self, spec: _Spec) -> Callable[[Any], Any]:
        """A function decoding a whole value as ``spec`` (what ``load`` calls)."""
        kind = "decode" if isinstance(spec, _Compiled) else "entry"
        return self.compile(spec, kind)


_CLASS_SPECS: dict[type, _Obj] = {}
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


class Registry:
    """One module's named specs (``specs``) and exported names (``types``: runtime
    object -> name): what that module's ``load`` knows."""

    def __init__(self) -> None:
        self.specs: dict[str, _Spec] = {}
        self.types: dict[Any, str] = {}
        self.loaders: dict[Any, Callable[[Any], Any]] = {}
        #: the module's ``RPC`` (its method table), for envelope defs
        self.rpc: Any = None

    def ref(self, name: str) -> _Ref:
        return _Ref(self.specs, name)

    def tagged(
        self,
        tag: str,
        choices: dict[Any, str],
        default: str | None = None,
        fallback: str | None = None,
        catch: str | None = None,
    ) -> _Tagged:
        return _Tagged(self.specs, tag, choices, default, fallback, catch)

    def name_of(self, tp: Any) -> str | None:
        try:
            return self.types.get(tp)
        except TypeError:  # an unhashable typing object: not one of ours
            return None

    def spec_of(self, tp: Any) -> _Spec:
        name = self.name_of(tp)
        if name is not None:
            return self.specs[name]
        if tp in _SIMPLE:
            return _SIMPLE[tp]
        raise TypeError(f"{tp!r} is not a type of this module")

    def load(self, tp: Any, data: Any) -> Any:
        """Validate ``data`` (parsed JSON) as ``tp`` (any exported name) and build it.

        Raises :class:`ValidationError` (with the member's path) when it does not match.
        """
        try:
            fn = self.loaders[tp]
        except (KeyError, TypeError):  # not loaded yet, or an unhashable typing object
            fn = _COMPILER.entry(self.spec_of(tp))
            try:
                self.loaders[tp] = fn
            except TypeError:
                pass
        try:
            return fn(data)
        except ValidationError as exc:
            name = self.name_of(tp)
            raise exc.at(
                name if name is not None else str(getattr(tp, "__name__", "value"))
            ) from None


def dump(obj: Any) -> Any:
    """The wire JSON value of ``obj``: wire names, only the members that were received
    or set, unknown members kept."""
    kind = type(obj)
    if kind in (str, int, float, bool) or obj is None:
        return obj
    if kind is list or kind is tuple:
        return [dump(item) for item in obj]
    if kind is dict:
        return {key: dump(value) for key, value in obj.items()}
    spec = _CLASS_SPECS.get(kind)
    if spec is None:
        raise TypeError(f"cannot dump {kind.__name__}")
    return spec.encode(obj)


_COMPILER: Final = _Compiler()


class DataclassCodec(Codec):
    """JSON-RPC values of the dataclasses style: one module's ``load``, and ``dump``."""

    errors = (ValidationError,)

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    def load(self, tp: Any, data: Any) -> Any:
        return self.registry.load(tp, data)

    def dump(self, value: Any) -> Any:
        return dump(value)

    def encode(self, value: Any) -> str:
        return json.dumps(dump(value), separators=(",", ":"), ensure_ascii=False)

    def describe(self, exc: BaseException) -> Any:
        if isinstance(exc, ValidationError):
            return {"path": exc.location, "message": exc.message}
        return str(exc)
