"""The JSON-RPC codec of the Pydantic bindings: values validated and dumped by pydantic-core,
and whole frames read in one pass. Imported relatively by the modules beside it (written as
``_codec.py`` in the package)."""

from __future__ import annotations

import json
from typing import Any, Callable

from pydantic import BaseModel, TypeAdapter
from pydantic import ValidationError as PydanticValidationError
from pydantic_core import PydanticSerializationError

from ._jsonrpc import Codec, MethodSpec


class PydanticCodec(Codec):
    """JSON-RPC values through pydantic: validation by ``TypeAdapter`` (one per type),
    dumping by alias with only the members that were received or set."""

    errors = (PydanticValidationError,)

    def __init__(self) -> None:
        self._adapters: dict[Any, TypeAdapter[Any]] = {}

    def adapter(self, tp: Any) -> TypeAdapter[Any]:
        adapter = self._adapters.get(tp)
        if adapter is None:
            adapter = self._adapters[tp] = TypeAdapter(tp)
        return adapter

    def load(self, tp: Any, data: Any) -> Any:
        return self.adapter(tp).validate_python(data)

    def dump(self, value: Any) -> Any:
        if isinstance(value, BaseModel):
            return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return self.adapter(Any).dump_python(
            value, mode="json", by_alias=True, exclude_unset=True
        )

    def encode(self, value: Any) -> str:
        try:
            if isinstance(value, BaseModel):
                return value.__pydantic_serializer__.to_json(
                    value, by_alias=True, exclude_unset=True
                ).decode()
            # models inside other values (a list, a dict) written as `dump` writes them:
            # only the members received or set
            return (
                self.adapter(Any)
                .dump_json(value, by_alias=True, exclude_unset=True)
                .decode()
            )
        except PydanticSerializationError as exc:
            if "surrogates not allowed" not in str(exc):
                raise
        # a lone surrogate, which pydantic-core does not write: the JSON text with it kept,
        # escaped by the frame's encoder (`Rpc.encode`)
        return json.dumps(self.dump(value), separators=(",", ":"), ensure_ascii=False)

    def describe(self, exc: BaseException) -> Any:
        """pydantic's errors as JSON: location, message and type of each."""
        if isinstance(exc, PydanticValidationError):
            return [
                {"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]}
                for e in exc.errors(include_url=False, include_input=False)
            ]
        return str(exc)

    def frame_reader(
        self, calls: dict[tuple[str, str], MethodSpec]
    ) -> Callable[[bytes | bytearray | str], dict[str, Any] | None] | None:
        """Whole frames validated by pydantic-core from the JSON text in one pass: one
        strict ``TypedDict`` per method (its ``method`` a literal, its ``params`` the
        method's type), in a union discriminated by ``method``, for requests and for
        notifications."""
        from typing import Literal, Union

        from pydantic import Field
        from typing_extensions import Annotated, TypedDict

        make_typed_dict: Any = TypedDict  # one TypedDict per method, made at run time

        def frame(method: str, kind: str, params: Any) -> Any:
            keys: dict[str, Any] = {
                "jsonrpc": Literal["2.0"],
                "method": Literal[method],
                "params": params,
            }
            if kind == "request":
                keys["id"] = Union[int, str, None]
            td = make_typed_dict("Frame", keys)
            td.__pydantic_config__ = {"strict": True, "extra": "forbid"}
            return td

        def adapter(members: list[Any]) -> TypeAdapter[Any] | None:
            if not members:
                return None
            if len(members) == 1:
                return TypeAdapter(members[0])
            union: Any = Annotated[Union[tuple(members)], Field(discriminator="method")]
            return TypeAdapter(union)

        typed = sorted(
            (key, spec) for key, spec in calls.items() if spec.params is not None
        )
        methods = [method for (method, _), _ in typed]
        if len(set(methods)) == len(methods):  # one union, told apart by method alone
            both = adapter([frame(m, k, spec.params) for (m, k), spec in typed])

            def read_one(line: bytes | bytearray | str) -> dict[str, Any] | None:
                if both is None:
                    return None
                try:
                    return both.validate_json(line)  # type: ignore[no-any-return]
                except PydanticValidationError:
                    return None

            return read_one
        requests = adapter(
            [frame(m, k, s.params) for (m, k), s in typed if k == "request"]
        )
        notifications = adapter(
            [frame(m, k, s.params) for (m, k), s in typed if k == "notification"]
        )

        def read(line: bytes | bytearray | str) -> dict[str, Any] | None:
            marker = '"id"' if isinstance(line, str) else b'"id"'
            chosen = requests if marker in line else notifications  # type: ignore[operator]
            if chosen is None:
                return None
            try:
                return chosen.validate_json(line)  # type: ignore[no-any-return]
            except PydanticValidationError:
                return None

        return read
