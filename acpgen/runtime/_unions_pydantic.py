"""How the Pydantic bindings read and write unions: tagged-union routing (a default or open
variant beside the tagged ones), ``oneOf`` exclusivity, sibling unions checked on an
object's wire form, and unions written by their value's own type. Imported relatively by
the modules beside it (written as ``_unions.py`` in the package)."""

from __future__ import annotations

from typing import Any, Callable, Final

from pydantic import BaseModel, GetCoreSchemaHandler, TypeAdapter
from pydantic import ValidationError as PydanticValidationError
from pydantic_core import CoreSchema, core_schema

from ._alternatives import (
    _alternatives_problem as _alternatives_problem,
    _Branch as _Branch,
    _Group as _Group,
    _one_of_problem,
)


class _HasTag:
    """A tagged union of one variant: no discriminator routes it, so the tag's presence
    on the wire is checked here (the variant's class fills it only when built)."""

    __slots__ = ("tag",)

    def __init__(self, tag: str) -> None:
        self.tag = tag

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        tag = self.tag

        def check(value: Any) -> Any:
            if isinstance(value, dict) and tag not in value:
                raise ValueError(f"missing discriminator {tag!r}")
            return value

        return core_schema.no_info_before_validator_function(check, handler(source))


class _ByValue:
    """A union of objects is written by its value's own type (as pydantic's
    ``SerializeAsAny`` does): pydantic-core's union serializer would check the value's
    members one by one, warn about any it finds absent (one left out by the schema's
    leniency, a default not yet built) and then write it by its own type anyway."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        schema = handler(source)
        target: Any = schema
        while target.get("type") == "definitions":  # the union itself is inside
            target = target["schema"]
        target["serialization"] = core_schema.simple_ser_schema("any")
        return schema


_BY_VALUE: Final = _ByValue()
_MISSING: Final = object()


def _route(
    tag: str, attr: str, known: frozenset[Any], *, default: bool, fallback: bool
) -> Callable[[Any], str | None]:
    """Dispatch a tagged union: a known tag -> its variant; an unknown string tag ->
    the open fallback; no tag, or an unknown one when there is no fallback -> the
    untagged default variant (its schema does not constrain the tag). A malformed
    *known* variant is still validated as that variant, and rejected."""

    def route(value: Any) -> str | None:
        if isinstance(value, dict):
            found = value.get(tag, _MISSING)
        else:
            found = getattr(value, attr, _MISSING)
        if found is _MISSING:
            return "<default>" if default else None
        if type(found) in (str, int) and found in known:
            return str(found)
        if fallback and isinstance(found, str):
            return "<fallback>"
        return "<default>" if default else None

    return route


class _WireTag:
    """A tagged union read by its tag's wire name, in pydantic-core alone when parsing
    JSON. Pydantic's own discriminator looks for the tag under the attribute name first
    (``type_``, ``session_update``), so a message carrying a key of that name was routed
    by it; and a routed union (a default variant beside the tagged ones) called a Python
    function for each value, after turning the JSON value into Python objects.

    JSON: the tag under its wire name chooses the variant; without a known tag, the
    untagged default variant when there is one. That is what ``_route`` does when the
    default rules out none of the known tags: ``_OrVariant`` has already put it behind
    each of them (the renderer gives no ``_WireTag`` to the other routed unions). Python
    values keep ``_route``, which reads a dict by the wire name and an instance by the
    attribute."""

    __slots__ = ("tag", "known")

    def __init__(self, tag: str, known: frozenset[Any] | None = None) -> None:
        self.tag = tag
        #: a routed union's tag values (its choices are keyed by their text)
        self.known = known

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        schema = handler(source)
        holder: Any = None
        target: Any = schema
        while target.get("type") == "definitions":  # the union itself is inside
            holder, target = target, target["schema"]
        if target["type"] != "tagged-union":
            return schema
        choices: dict[Any, Any] = dict(target["choices"])
        default = choices.pop("<default>", None)
        if self.known is None:  # pydantic's discriminator: choices keyed by the tag
            # the attribute's name and the wire name, or the one name they share
            found = target["discriminator"]
            paths = [[found]] if isinstance(found, str) else found
            attr = next((p[0] for p in paths if p != [self.tag]), self.tag)
            python = core_schema.tagged_union_schema(
                {str(k): v for k, v in choices.items()},
                _route(
                    self.tag, attr, frozenset(choices), default=False, fallback=False
                ),
            )
        else:  # already routed in Python
            python = target
            real = {str(k): k for k in self.known}
            choices = {real[k]: v for k, v in choices.items()}
        wire: CoreSchema = core_schema.tagged_union_schema(choices, self.tag)
        if default is not None:
            wire = core_schema.union_schema([wire, default], mode="left_to_right")
        both = core_schema.json_or_python_schema(wire, python)
        if holder is None:
            return both
        holder["schema"] = both
        return schema


def _check_alternatives(model: BaseModel) -> None:
    """The sibling unions of the model's class and of its bases
    (``__acp_alternatives__``) hold for its wire form, read after the schema's leniency
    applied."""
    groups = tuple(
        g for k in type(model).__mro__ for g in vars(k).get("__acp_alternatives__", ())
    )
    wire = model.model_dump(mode="json", by_alias=True, exclude_unset=True)
    problem = _alternatives_problem(groups, wire, _conforms)
    if problem is not None:
        raise ValueError(problem)


_STRICT: Final[dict[Any, TypeAdapter[Any]]] = {}


def _strict(tp: Any) -> TypeAdapter[Any]:
    """The (cached) adapter that validates wire values as ``tp``."""
    adapter = _STRICT.get(tp)
    if adapter is None:
        adapter = _STRICT[tp] = TypeAdapter(tp)
    return adapter


def _conforms(tp: Any, value: Any) -> bool:
    """Whether wire ``value`` is valid as ``tp`` (strictly, as every model is)."""
    try:
        _strict(tp).validate_python(value, strict=True)
    except PydanticValidationError:
        return False
    return True


class _OneOf:
    """An untagged ``oneOf`` whose members can accept the same value (``exclusive:
    "checked"`` in the IR): a value the union accepts must be valid as exactly one
    member. A ``oneOf`` proved disjoint when the module was generated has no marker."""

    __slots__ = ("members",)

    def __init__(self, *members: tuple[str, Any]) -> None:
        self.members = members

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        members = self.members

        def check(value: Any, inner: Callable[[Any], Any]) -> Any:
            result = inner(value)
            if isinstance(value, BaseModel):  # built in Python: judged on the wire
                value = value.model_dump(mode="json", by_alias=True, exclude_unset=True)
            problem = _one_of_problem(members, value, _conforms)
            if problem is not None:
                raise ValueError(problem)
            return result

        return core_schema.no_info_wrap_validator_function(check, handler(source))


class _OrVariant:
    """A tagged union whose untagged default (or open fallback) variant does not rule
    out the known tags: a value that its tag's variant rejects is still valid as that
    variant (JSON Schema's ``anyOf``), and is read as it."""

    __slots__ = ("variant",)

    def __init__(self, variant: Any) -> None:
        self.variant = variant

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        schema = handler(source)
        catch = handler.generate_schema(self.variant)
        if schema["type"] != "tagged-union":
            return core_schema.union_schema([schema, catch], mode="left_to_right")
        # only a known tag can be read as the catch-all too (no tag, an unknown tag and
        # a value that is no object already go to it): the tag's variant first, the
        # catch-all after it, both in pydantic-core
        choices: dict[Any, CoreSchema] = dict(schema["choices"])
        for tag, choice in choices.items():
            if tag not in ("<default>", "<fallback>"):
                choices[tag] = core_schema.union_schema(
                    [choice, catch], mode="left_to_right"
                )
        return core_schema.tagged_union_schema(
            choices,
            schema["discriminator"],
            custom_error_type=schema.get("custom_error_type"),
            custom_error_message=schema.get("custom_error_message"),
            custom_error_context=schema.get("custom_error_context"),
            strict=schema.get("strict"),
            from_attributes=schema.get("from_attributes"),
            ref=schema.get("ref"),
            metadata=schema.get("metadata"),
            serialization=schema.get("serialization"),
        )
