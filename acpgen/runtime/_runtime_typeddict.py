"""What every module of this package shares (TypedDict): the ``Annotated`` markers that
give ``pydantic.TypeAdapter`` the schema's constraints, leniency and union routing, and
the JSON-RPC codec. Importing needs only ``typing_extensions``; pydantic is imported when
a value is first validated."""

from __future__ import annotations

import json
from typing import Any, Callable, Final

from ._jsonrpc import Codec
from ._alternatives import (
    _alternatives_problem as _alternatives_problem,
    _Branch as _Branch,
    _Group as _Group,
    _one_of_problem,
)

_CONFIG: Final[dict[str, Any]] = {"extra": "allow", "strict": True}
_CONFIG_FORBID: Final[dict[str, Any]] = {"extra": "forbid", "strict": True}
_MISSING: Final = object()


class _Constraints:
    """JSON Schema bounds, lengths and patterns, applied by pydantic.TypeAdapter."""

    __slots__ = ("bounds",)

    def __init__(self, **bounds: Any) -> None:
        self.bounds = bounds

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        return {**handler(source), **self.bounds}


class _OnErrorDefault:
    """``x-deserialize-default-on-error``: an invalid value becomes the default (a
    missing key stays missing: TypedDicts carry no defaults)."""

    __slots__ = ("default", "factory", "omit")

    def __init__(
        self,
        default: Any = None,
        factory: Callable[[], Any] | None = None,
        required: bool = False,
        omit: bool = False,
    ) -> None:
        self.default = default
        self.factory = factory
        #: an optional key that cannot be null: an invalid value drops the key
        self.omit = omit

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic import ValidationError
        from pydantic_core import PydanticOmit, core_schema

        default, factory, omit = self.default, self.factory, self.omit

        def lenient(value: Any, inner: Any) -> Any:
            try:
                return inner(value)
            except ValidationError:
                if omit:
                    raise PydanticOmit
                return factory() if factory is not None else default

        return core_schema.no_info_wrap_validator_function(lenient, handler(source))


class _OnNull:
    """``x-deserialize-default-on-null``: ``null`` reads as the default (``omit``: as
    an absent key)."""

    __slots__ = ("default", "factory", "omit")

    def __init__(
        self,
        default: Any = None,
        factory: Callable[[], Any] | None = None,
        omit: bool = False,
    ) -> None:
        self.default = default
        self.factory = factory
        self.omit = omit

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic_core import PydanticOmit, core_schema

        default, factory, omit = self.default, self.factory, self.omit

        def on_null(value: Any, inner: Any) -> Any:
            if value is None:
                if omit:
                    raise PydanticOmit
                return factory() if factory is not None else default
            return inner(value)

        return core_schema.no_info_wrap_validator_function(on_null, handler(source))


class _SkipInvalidItems:
    """``x-deserialize-skip-invalid-items``: an invalid array item is dropped."""

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        return core_schema.with_default_schema(handler(source), on_error="omit")


_SKIP_INVALID: Final = _SkipInvalidItems()


class _Route:
    """Tagged-union dispatch: a known tag -> its variant (a malformed known variant is
    rejected); an unknown string tag -> the open fallback, which keeps the payload; no
    tag -> the untagged default variant. ``namespace`` is the module whose names
    ``choices`` holds."""

    __slots__ = ("namespace", "tag", "choices", "default", "fallback", "catch")

    def __init__(
        self,
        namespace: dict[str, Any],
        tag: str,
        choices: dict[str, str],
        *,
        default: bool,
        fallback: bool,
        catch: str | None = None,
    ) -> None:
        self.namespace = namespace
        self.tag = tag
        self.choices = choices
        self.default = default
        self.fallback = fallback
        #: the route key ("<default>" / "<fallback>") of a variant that does not rule
        #: out the known tags: a value its tag's variant rejects is tried as it too
        self.catch = catch

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        namespace = self.namespace
        schemas = {
            key: handler.generate_schema(namespace[name])
            for key, name in self.choices.items()
        }
        known = frozenset(k for k in self.choices if not k.startswith("<"))
        tag, default, fallback = self.tag, self.default, self.fallback

        def route(value: Any) -> str | None:
            found = value.get(tag, _MISSING) if isinstance(value, dict) else _MISSING
            if found is _MISSING:
                return "<default>" if default else None
            if (
                not isinstance(found, bool)
                and str(found) in known
                and type(found) in (str, int)
            ):
                return str(found)
            if fallback and isinstance(found, str):
                return "<fallback>"
            return "<default>" if default else None

        union = core_schema.tagged_union_schema(schemas, discriminator=route)
        if self.catch is None:
            return union
        caught = namespace[self.choices[self.catch]]

        def validate(value: Any, inner: Callable[[Any], Any]) -> Any:
            from pydantic import ValidationError

            try:
                return inner(value)
            except ValidationError as exc:
                if not isinstance(value, dict):
                    raise
                try:
                    return _strict(caught).validate_python(value, strict=True)
                except ValidationError:
                    raise exc from None

        return core_schema.no_info_wrap_validator_function(validate, union)


class _OneOf:
    """An untagged ``oneOf`` whose members can accept the same value (``exclusive:
    "checked"`` in the IR): a value the union accepts must be valid as exactly one
    member. A ``oneOf`` proved disjoint when the module was generated has no marker."""

    __slots__ = ("members",)

    def __init__(self, *members: tuple[str, Any]) -> None:
        self.members = members

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        members = self.members

        def check(value: Any, inner: Callable[[Any], Any]) -> Any:
            result = inner(value)
            problem = _one_of_problem(members, value, _conforms)
            if problem is not None:
                raise ValueError(problem)
            return result

        return core_schema.no_info_wrap_validator_function(check, handler(source))


def _require_alternatives(groups: tuple[_Group, ...]) -> Any:
    """An object with sibling unions: after its keys validate (leniency applied), the
    branches of every union are checked on it."""

    def hook(cls: Any, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        def check(value: Any) -> Any:
            problem = _alternatives_problem(groups, value, _conforms)
            if problem is not None:
                raise ValueError(problem)
            return value

        return core_schema.no_info_after_validator_function(check, handler(source))

    return classmethod(hook)


_STRICT: Final[dict[Any, Any]] = {}


def _strict(tp: Any) -> Any:
    """The (cached) ``TypeAdapter`` that validates wire values as ``tp``."""
    from pydantic import TypeAdapter

    adapter = _STRICT.get(tp)
    if adapter is None:
        adapter = _STRICT[tp] = TypeAdapter(tp)
    return adapter


def _conforms(tp: Any, value: Any) -> bool:
    """Whether wire ``value`` is valid as ``tp`` (strictly, as every TypedDict is)."""
    from pydantic import ValidationError

    try:
        _strict(tp).validate_python(value, strict=True)
    except ValidationError:
        return False
    return True


def _by_method(rpc: Callable[[], Any], kind: str) -> Any:
    """A JSON-RPC envelope def: its ``params`` must be the params of its ``method``."""

    def hook(cls: Any, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        def route(value: Any) -> Any:
            return rpc().route_params(value, kind)

        return core_schema.no_info_before_validator_function(route, handler(source))

    return classmethod(hook)


class TypedDictCodec(Codec):
    """JSON-RPC values of the TypedDict style: validated by ``pydantic.TypeAdapter`` (one
    per type, built on first use); a value *is* its wire JSON, so dumping copies nothing.
    """

    def __init__(self) -> None:
        self._adapters: dict[Any, Any] = {}
        self._errors: tuple[type[BaseException], ...] | None = None

    @property
    def errors(self) -> tuple[type[BaseException], ...]:  # type: ignore[override]
        if self._errors is None:
            from pydantic import ValidationError

            self._errors = (ValidationError,)
        return self._errors

    def load(self, tp: Any, data: Any) -> Any:
        adapter = self._adapters.get(tp)
        if adapter is None:
            from pydantic import TypeAdapter

            adapter = self._adapters[tp] = TypeAdapter(tp)
        return adapter.validate_python(data)

    def dump(self, value: Any) -> Any:
        return value

    def encode(self, value: Any) -> str:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)

    def describe(self, exc: BaseException) -> Any:
        errors = getattr(exc, "errors", None)
        if errors is None:
            return str(exc)
        return [
            {"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]}
            for e in errors(include_url=False, include_input=False)
        ]
