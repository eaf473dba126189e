"""What every module of this package shares (Pydantic v2): the base models and the markers
that implement the schema's ``x-deserialize-*`` leniency (unions are ``_unions.py``, the
JSON-RPC codec ``_codec.py``). Imported relatively by the modules beside it."""

from __future__ import annotations

from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Callable,
    ClassVar,
    Final,
    TypeAlias,
    TypeVar,
    cast,
)

from pydantic import (
    BaseModel,
    ConfigDict,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticOmit, core_schema


class AcpBaseModel(BaseModel):
    """Base of every generated model: wire names on the wire, snake_case in Python.

    Messages are read by wire name only (``__init__`` also takes attribute names).
    Unknown members are kept (ACP objects are open), validation is strict (no
    ``"yes"`` -> ``True``), and ``model_dump(exclude_unset=True)`` gives back exactly
    what was received. Validators are built on a model's first use, not at import
    (``defer_build``): importing the module stays cheap.
    """

    model_config = ConfigDict(
        validate_by_name=False,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="allow",
        strict=True,
        defer_build=True,
    )

    if TYPE_CHECKING:
        # declared for type checkers only: pydantic reads every annotation of every base
        # again for each subclass, and this module's are strings (a ForwardRef compiled
        # per model on import)
        #: attributes sent even when not set: a variant's tag, which it fills itself
        __acp_tags__: ClassVar[tuple[str, ...]]
        #: the sibling ``anyOf``/``oneOf`` unions the object must satisfy (``_Group``)
        __acp_alternatives__: ClassVar[tuple[Any, ...]]
    else:
        __acp_tags__ = ()
        __acp_alternatives__ = ()

    def __init__(self, /, **data: Any) -> None:
        """Build a message: members by attribute or wire name. An unknown keyword is an
        error (a misspelled member must not become a wire member); unknown members are
        kept when a message is *parsed*. Every member given, ``None`` included, is sent,
        and so is the variant's tag."""
        info = _INIT_INFO.get(type(self))
        if info is None:
            info = _INIT_INFO[type(self)] = _init_info(type(self))
        known, tags = info
        wire = {}
        for key, value in data.items():
            name = known.get(key)
            if name is None:
                raise TypeError(
                    f"{type(self).__name__}() got an unexpected keyword argument {key!r}"
                )
            wire[name] = value
        super().__init__(**wire)
        if tags:
            self.__pydantic_fields_set__.update(tags)

    # construction only: parsing must not call this (pydantic's own marker, as on
    # BaseModel.__init__ and RootModel.__init__), so unknown members stay welcome there
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    # A member left absent by the schema's leniency (an optional member that cannot be
    # null, given an invalid value: ``_OnErrorDefault(omit=True)``, ``_OnNull(omit=True)``)
    # is not in the instance's ``__dict__``: pydantic-core leaves it out, which costs
    # nothing per message where a model validator would run Python for every instance.
    # It reads as its default, and compares equal to the member never sent. So does a
    # member whose default is an object (``_lazy``), absent or invalid: its default is
    # built on its first read, and kept (a change to it stays), not for every message.
    # Full dumps (``AcpLazyModel``), ``repr`` and iteration build such defaults first.

    if not TYPE_CHECKING:  # as BaseModel's own: attribute typos stay type errors

        def __getattr__(self, name: str) -> Any:
            field = type(self).__pydantic_fields__.get(name)
            if field is not None:
                default = field.default
                if type(default) is _Lazy:
                    value = default.factory()
                    _put_in_order(self, name, value)
                    return value
                return field.get_default(call_default_factory=True)
            return super().__getattr__(name)

        def __iter__(self) -> Any:
            _build_own_defaults(self)
            return super().__iter__()

        def __repr_args__(self) -> Any:
            _build_own_defaults(self)
            return super().__repr_args__()

        @classmethod
        def model_construct(
            cls, _fields_set: set[str] | None = None, **values: Any
        ) -> Any:
            built = super().model_construct(_fields_set, **values)
            # pydantic puts each field's default in: an object's default is built on read
            for name in _lazy_names(cls):
                if type(built.__dict__.get(name)) is _Lazy:
                    del built.__dict__[name]
            return built

    def __eq__(self, other: object) -> bool:
        if type(other) is type(self) and self.__dict__.keys() != other.__dict__.keys():
            fields = type(self).__pydantic_fields__
            return (
                [getattr(self, name) for name in fields]
                == [getattr(other, name) for name in fields]
                and self.__pydantic_extra__ == other.__pydantic_extra__
                and self.__pydantic_private__ == other.__pydantic_private__
            )
        return super().__eq__(other)


class _Lazy:
    """The default of a member that is an object (``_lazy``): pydantic-core keeps it as
    the field's default without a copy per message (it is hashable) and validates it,
    which leaves the member absent (``_OnErrorDefault(lazy=True)``), to be built on its
    first read (``AcpBaseModel.__getattr__``). It compares equal to the default it
    builds (``model_dump(exclude_defaults=True)``)."""

    __slots__ = ("factory",)

    def __init__(self, factory: Callable[[], Any]) -> None:
        self.factory = factory

    __hash__ = object.__hash__

    def __call__(self) -> Any:
        """The default, built (callable: how pydantic-core tells it from any value)."""
        return self.factory()

    def __eq__(self, other: object) -> bool:
        return other is self or bool(self.factory() == other)

    def __repr__(self) -> str:
        return f"<default built on first read: {self.factory()!r}>"

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        # how pydantic's JSON schema writes a default: as the value it builds
        return core_schema.any_schema(
            serialization=core_schema.plain_serializer_function_ser_schema(
                lambda lazy: lazy.factory()
            )
        )


_T = TypeVar("_T")


def _lazy(factory: Callable[[], _T]) -> _T:
    """A member's default built on its first read (for type checkers: the default)."""
    return cast(_T, _Lazy(factory))


def _put_in_order(model: BaseModel, name: str, value: Any) -> None:
    """Set member ``name`` of ``model`` where pydantic-core would have put it: members
    stay in their declared order (full dumps and ``repr`` list them so)."""
    present = vars(model)
    present[name] = value
    order = type(model).__pydantic_fields__
    ordered = {k: present[k] for k in order if k in present}
    if list(ordered) != list(present):
        rest = {k: v for k, v in present.items() if k not in order}
        present.clear()
        present.update(ordered)
        present.update(rest)


_LAZY_NAMES: dict[type, tuple[str, ...]] = {}


def _lazy_names(cls: type[BaseModel]) -> tuple[str, ...]:
    """The members of ``cls`` whose default is built on first read."""
    names = _LAZY_NAMES.get(cls)
    if names is None:
        fields = cls.__pydantic_fields__.items()
        names = tuple(n for n, f in fields if type(f.default) is _Lazy)
        _LAZY_NAMES[cls] = names
    return names


def _build_own_defaults(model: BaseModel) -> None:
    """Build the defaults of ``model``'s absent members that are built on first read."""
    names = _lazy_names(type(model))
    if names:
        present = model.__dict__
        for name in names:
            if name not in present:
                getattr(model, name)


class AcpLazyModel(AcpBaseModel):
    """Base of a model with a member whose default is built on first read (``_lazy``):
    a dump that writes defaults (not ``exclude_unset``) builds them first, whichever way
    it is asked for (``model_dump``, a ``TypeAdapter``, the model inside another). One
    Python call per dump of such a model (the capabilities of ``initialize``)."""

    @model_serializer(mode="wrap")
    def _acp_with_defaults(  # type: ignore[no-untyped-def]
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ):  # no return annotation: pydantic's JSON schema then describes the model itself
        if not info.exclude_unset:
            _build_own_defaults(self)
        return handler(self)


_INIT_INFO: dict[type, tuple[dict[str, str], tuple[str, ...]]] = {}


def _init_info(cls: type[BaseModel]) -> tuple[dict[str, str], tuple[str, ...]]:
    """The keywords a class takes (attribute and wire names), each with the wire name
    it stands for, and the tags it fills (its own and, for a nested variant, its
    base's). Parsing takes wire names only: ``{"session_id": ...}`` is not a message
    with a ``sessionId``."""
    names: dict[str, str] = {}
    for attr, f in cls.model_fields.items():
        wire = f.validation_alias if isinstance(f.validation_alias, str) else attr
        names[attr] = names[wire] = wire
    tags = [t for k in cls.__mro__ for t in vars(k).get("__acp_tags__", ())]
    return names, tuple(dict.fromkeys(tags))


class _OnErrorDefault:
    """``x-deserialize-default-on-error``: an invalid value becomes the default (on a
    ``required`` member, absence stays an error; ``omit``: an optional member that
    cannot be null is left absent; ``lazy``: the member's default is a ``_lazy`` one,
    left absent when the member is)."""

    __slots__ = ("default", "factory", "required", "omit", "lazy")

    def __init__(
        self,
        default: Any = None,
        factory: Callable[[], Any] | None = None,
        required: bool = False,
        omit: bool = False,
        lazy: bool = False,
    ) -> None:
        self.default = default
        self.factory = factory
        self.required = required
        self.omit = omit
        self.lazy = lazy

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        schema = handler(source)
        if self.lazy:
            # the field's default, a _Lazy (the one callable value it can meet), is
            # validated here and left out by pydantic-core: three checks that cost less
            # than the member's own type failing on it; any other value goes on to the
            # member's type, a bad one becoming the default, sent (as serde does)
            absent = core_schema.chain_schema(
                [
                    core_schema.callable_schema(),
                    core_schema.is_instance_schema(_Lazy),
                    core_schema.with_default_schema(
                        core_schema.int_schema(strict=True), on_error="omit"
                    ),
                ]
            )
            # written by the value's own type, as pydantic's SerializeAsAny does: a
            # union's serializer would check the value's members one by one, and warn
            # about those it finds absent (a default not yet built)
            return core_schema.union_schema(
                [absent, self._lenient(schema)],
                mode="left_to_right",
                serialization=core_schema.simple_ser_schema("any"),
            )
        if self.omit:
            # pydantic-core leaves the member out of the instance and of its set members,
            # with no Python on the path; AcpBaseModel reads it as absent
            return core_schema.with_default_schema(schema, on_error="omit")
        if self.required:
            # pydantic-core's own default-on-error, with no Python on the path; the
            # chain's second step hides the default from the field, so that absence
            # stays an error (a field whose schema is a default is optional)
            return core_schema.chain_schema(
                [self._lenient(schema), core_schema.any_schema()]
            )
        return self._lenient(schema)

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        if self.lazy:  # the member's own type (the union's first branch is no value)
            union: Any = schema
            return handler(union["choices"][1])
        return handler(schema)

    def _lenient(self, schema: CoreSchema) -> CoreSchema:
        if self.factory is not None:
            return core_schema.with_default_schema(
                schema, default_factory=self.factory, on_error="default"
            )
        return core_schema.with_default_schema(
            schema, default=self.default, on_error="default"
        )


#: the leniency annotations most members carry (upstream's ``_meta``: 102 of the 375
#: members of v1), spelled once: pydantic, which evaluates every annotation of every
#: model (and of its bases) on import, then reads one name (see ``SHARED_ANNOTATIONS``
#: in ``acpgen/render/pyviews.py``)
_LenientObject: TypeAlias = Annotated[dict[str, Any] | None, _OnErrorDefault(None)]
_LenientStr: TypeAlias = Annotated[str | None, _OnErrorDefault(None)]


class _OnNull:
    """``x-deserialize-default-on-null``: ``null`` reads as the default (``omit``: as an
    absent member)."""

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

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        default, factory, omit = self.default, self.factory, self.omit

        def on_null(value: Any, inner: Callable[[Any], Any]) -> Any:
            if value is None:
                if omit:
                    raise PydanticOmit
                return factory() if factory is not None else default
            return inner(value)

        return core_schema.no_info_wrap_validator_function(on_null, handler(source))


class _SkipInvalid:
    """``x-deserialize-skip-invalid-items``: an invalid array item is dropped."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        return core_schema.with_default_schema(handler(source), on_error="omit")


class _NonNull:
    """An optional member that may be absent but not ``null``."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        schema = handler(source)
        if schema.get("type") == "nullable":
            return schema["schema"]  # type: ignore[no-any-return]
        return schema


_SKIP_INVALID: Final = _SkipInvalid()
_NON_NULL: Final = _NonNull()
