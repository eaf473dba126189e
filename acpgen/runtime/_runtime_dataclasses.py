"""What every module of this package shares (dataclasses, standard library only): the
base class, the ``load``/``dump`` engine (the compiler that turns specs into Python
functions on first use, objects and tagged unions; the other specs and their interpreter
are ``_dataclass_specs.py``) and the JSON-RPC codec. Each module keeps its own
:class:`Registry` of named specs; classes are known to ``dump`` by themselves.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Final, TypeVar, dataclass_transform

from ._jsonrpc import Codec
from ._alternatives import (
    _alternatives_problem as _alternatives_problem,
    _Branch as _Branch,
    _Group as _Group,
)
from ._dataclass_specs import (
    _ANY as _ANY,
    _BOOL as _BOOL,
    _FLOAT as _FLOAT,
    _INT as _INT,
    _MISSING as _MISSING,
    _NULL as _NULL,
    _SIMPLE as _SIMPLE,
    _STR as _STR,
    ValidationError as ValidationError,
    _AnyOf as _AnyOf,
    _decodes as _decodes,
    _Emitter as _Emitter,
    _F as _F,
    _is as _is,
    _kind as _kind,
    _lines as _lines,
    _Lit as _Lit,
    _List as _List,
    _Map as _Map,
    _Nullable as _Nullable,
    _OneOf as _OneOf,
    _Ref as _Ref,
    _Scalar as _Scalar,
    _Spec as _Spec,
    _Tuple as _Tuple,
)


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

    def expr(self, c: _Emitter, v: str) -> str:
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
