"""What every module of the Pydantic bindings shares (acpgen/runtime/_runtime_pydantic.py):
the base model (wire names, construction by either name, open and strict), members whose
default is built on first read, and the markers of the schema's leniency. The models here
are written as the generator writes them."""

from __future__ import annotations

import warnings
from types import SimpleNamespace
from typing import Annotated, Any, Literal

import pytest
from pydantic import Field, TypeAdapter, ValidationError

from acpgen.runtime._runtime_pydantic import (
    _NON_NULL,
    _SKIP_INVALID,
    AcpBaseModel,
    AcpLazyModel,
    _Lazy,
    _lazy,
    _LenientStr,
    _OnErrorDefault,
    _OnNull,
    _put_in_order,
)

BUILT: list[str] = []


def _make() -> SimpleNamespace:
    """The models, made afresh for each test: their validators are built on first use
    (and the markers read then), not once for every test."""

    def _fs() -> Any:
        BUILT.append("fs")
        return FileSystem.__pydantic_validator__.validate_python({"readTextFile": False})

    class FileSystem(AcpBaseModel):
        read_text_file: bool = Field(default=False, validation_alias="readTextFile", serialization_alias="readTextFile")
        depth: Annotated[Annotated[int | None, _NON_NULL], _OnErrorDefault(omit=True)] = None

    class Capabilities(AcpLazyModel):
        first: int = 0
        fs: Annotated[FileSystem, _OnErrorDefault(factory=_fs, lazy=True)] = Field(default=_lazy(_fs), validate_default=True)
        terminal: bool = Field(default=False)
        names: Annotated[list[str], _OnErrorDefault(factory=lambda: ["a"], lazy=True)] = Field(
            default=_lazy(lambda: ["a"]), validate_default=True
        )

    class Event(AcpBaseModel):
        __acp_tags__ = ("type_",)

        session_id: str = Field(validation_alias="sessionId", serialization_alias="sessionId")
        priority: Annotated[Annotated[int | None, _NON_NULL], _OnErrorDefault(omit=True)] = None
        note: Annotated[str, _OnErrorDefault("none")] = "none"
        count: Annotated[int, _OnErrorDefault(factory=lambda: 7)] = 7
        level: Annotated[int, _OnErrorDefault(3, required=True)]
        title: Annotated[str | None, _OnNull("untitled")] = None
        tags: Annotated[list[str], _OnNull(factory=list)] = Field(default_factory=list)
        kind: Annotated[Annotated[str | None, _NON_NULL], _OnNull(omit=True)] = None
        items: list[Annotated[int, _SKIP_INVALID]] = Field(default_factory=list)
        label: _LenientStr = None
        type_: Literal["event"] = Field(default="event", validation_alias="type", serialization_alias="type")

    class SubEvent(Event):
        __acp_tags__ = ("sub",)

        sub: str = "yes"

    return SimpleNamespace(FileSystem=FileSystem, Capabilities=Capabilities, Event=Event, SubEvent=SubEvent)


@pytest.fixture
def m() -> SimpleNamespace:
    return _make()


def _read(m: SimpleNamespace, data: dict[str, Any]) -> Any:
    return m.Event.model_validate(data)


# ------------------------------------------------------------------ the base model


def test_messages_are_read_by_wire_name_and_kept_open(m: SimpleNamespace) -> None:
    event = _read(m, {"sessionId": "s", "level": 1, "unknown": [1]})
    assert event.session_id == "s"
    assert event.model_extra == {"unknown": [1]}
    assert event.model_dump(exclude_unset=True) == {"sessionId": "s", "level": 1, "unknown": [1]}
    with pytest.raises(ValidationError):
        _read(m, {"session_id": "s", "level": 1})  # the attribute name is no wire name
    with pytest.raises(ValidationError):
        _read(m, {"sessionId": 1, "level": 1})  # strict: no 1 -> "1"
    assert m.Event.__pydantic_complete__ is False or m.Event.__pydantic_validator__ is not None


def test_building_takes_either_name_and_sends_every_member_given_and_the_tag(m: SimpleNamespace) -> None:
    assert m.Event(session_id="s", level=1) == m.Event(sessionId="s", level=1)
    event = m.Event(sessionId="s", level=1, label=None)
    assert event.model_dump(exclude_unset=True) == {"sessionId": "s", "level": 1, "label": None, "type": "event"}
    sub = m.SubEvent(session_id="s", level=1)
    assert sub.model_dump(exclude_unset=True) == {"sessionId": "s", "level": 1, "type": "event", "sub": "yes"}
    with pytest.raises(TypeError, match=r"^Event\(\) got an unexpected keyword argument 'sesion_id'$"):
        m.Event(sesion_id="s", level=1)


def test_an_unknown_attribute_stays_an_error(m: SimpleNamespace) -> None:
    event = _read(m, {"sessionId": "s", "level": 1})
    with pytest.raises(AttributeError):
        event.nothing  # noqa: B018


# ------------------------------------------------------------------ leniency


def test_an_invalid_value_reads_as_the_default(m: SimpleNamespace) -> None:
    event = _read(m, {"sessionId": "s", "level": 1, "note": 5, "count": "x", "label": 3})
    assert (event.note, event.count, event.label) == ("none", 7, None)
    assert event.model_dump(exclude_unset=True) == {"sessionId": "s", "level": 1, "note": "none", "count": 7, "label": None}
    assert _read(m, {"sessionId": "s", "level": 1, "note": "n", "count": 2}).count == 2


def test_a_required_lenient_member_stays_required(m: SimpleNamespace) -> None:
    assert _read(m, {"sessionId": "s", "level": "bad"}).level == 3
    assert _read(m, {"sessionId": "s", "level": 4}).level == 4
    with pytest.raises(ValidationError, match="level"):
        _read(m, {"sessionId": "s"})


def test_an_invalid_optional_member_that_cannot_be_null_is_left_absent(m: SimpleNamespace) -> None:
    event = _read(m, {"sessionId": "s", "level": 1, "priority": "high"})
    assert event.priority is None
    assert "priority" not in event.model_dump(exclude_unset=True)
    assert event == _read(m, {"sessionId": "s", "level": 1})
    assert _read(m, {"sessionId": "s", "level": 1, "priority": 2}).priority == 2
    assert "priority" not in m.Event(session_id="s", level=1, priority=None).model_dump(exclude_unset=True)


def test_null_reads_as_the_default_or_as_absent(m: SimpleNamespace) -> None:
    event = _read(m, {"sessionId": "s", "level": 1, "title": None, "tags": None, "kind": None})
    assert (event.title, event.tags, event.kind) == ("untitled", [], None)
    assert event.model_dump(exclude_unset=True) == {"sessionId": "s", "level": 1, "title": "untitled", "tags": []}
    other = _read(m, {"sessionId": "s", "level": 1, "tags": None})
    assert other.tags is not event.tags  # a fresh default each time
    event = _read(m, {"sessionId": "s", "level": 1, "title": "t", "tags": ["x"], "kind": "k"})
    assert (event.title, event.tags, event.kind) == ("t", ["x"], "k")


def test_an_invalid_item_is_dropped(m: SimpleNamespace) -> None:
    assert _read(m, {"sessionId": "s", "level": 1, "items": [1, "two", 3]}).items == [1, 3]


def test_a_member_that_may_be_absent_cannot_be_null(m: SimpleNamespace) -> None:
    with pytest.raises(ValidationError):
        TypeAdapter(Annotated[int | None, _NON_NULL]).validate_python(None)
    assert TypeAdapter(Annotated[int, _NON_NULL]).validate_python(1) == 1


# ------------------------------------------------------------------ defaults built on read


def test_an_object_default_is_built_on_first_read_and_kept(m: SimpleNamespace) -> None:
    BUILT.clear()
    caps = m.Capabilities.model_validate({"terminal": True})
    assert BUILT == []
    assert caps.model_dump(exclude_unset=True) == {"terminal": True}
    assert BUILT == []
    fs = caps.fs
    assert fs == m.FileSystem(read_text_file=False)
    assert caps.fs is fs and BUILT == ["fs"]
    fs.read_text_file = True
    assert caps.fs.read_text_file is True  # a change to it stays
    assert list(caps.__dict__) == ["first", "fs", "terminal"]  # in declared order


def test_an_invalid_object_member_reads_as_its_default(m: SimpleNamespace) -> None:
    caps = m.Capabilities.model_validate({"fs": 3, "names": [1]})
    assert caps.fs == m.FileSystem(read_text_file=False)
    assert caps.names == ["a"]
    assert m.Capabilities.model_validate({"names": ["b"]}).names == ["b"]


def test_full_dumps_repr_and_iteration_build_the_defaults(m: SimpleNamespace) -> None:
    caps = m.Capabilities.model_validate({})
    assert caps.model_dump() == {"first": 0, "fs": {"readTextFile": False, "depth": None}, "terminal": False, "names": ["a"]}
    assert TypeAdapter(m.Capabilities).dump_python(m.Capabilities.model_validate({}), mode="json") == {
        "first": 0,
        "fs": {"readTextFile": False, "depth": None},
        "terminal": False,
        "names": ["a"],
    }
    assert dict(m.Capabilities.model_validate({})) == {
        "first": 0,
        "fs": m.FileSystem(read_text_file=False),
        "terminal": False,
        "names": ["a"],
    }
    assert repr(m.Capabilities.model_validate({})) == (
        "Capabilities(first=0, fs=FileSystem(read_text_file=False, depth=None), terminal=False, names=['a'])"
    )
    assert m.Capabilities.model_validate({}).model_dump(exclude_defaults=True) == {}


def test_equality_does_not_care_whether_a_default_was_built(m: SimpleNamespace) -> None:
    built = m.Capabilities.model_validate({})
    built.fs  # noqa: B018
    assert built == m.Capabilities.model_validate({})
    assert m.Capabilities.model_validate({}) == built
    assert built != m.Capabilities.model_validate({"terminal": True})
    assert built != m.Capabilities.model_validate({"x": 1})
    assert m.Capabilities.model_validate({"fs": {"readTextFile": True}}) != built
    changed = m.Capabilities.model_validate({})
    changed.fs.read_text_file = True
    assert changed != m.Capabilities.model_validate({})


def test_model_construct_builds_object_defaults_on_read(m: SimpleNamespace) -> None:
    BUILT.clear()
    caps = m.Capabilities.model_construct(terminal=True)
    assert "fs" not in caps.__dict__ and "names" not in caps.__dict__
    assert caps.fs == m.FileSystem(read_text_file=False) and BUILT == ["fs"]
    assert caps.names == ["a"]
    given = m.Capabilities.model_construct(fs=m.FileSystem(read_text_file=True))
    assert given.fs.read_text_file is True


def test_a_lazy_default_compares_prints_and_builds_as_its_value(m: SimpleNamespace) -> None:
    lazy = _Lazy(lambda: [1])
    assert lazy == [1] and lazy == lazy and lazy != [2]
    assert lazy() == [1] and lazy() is not lazy()
    assert repr(lazy) == "<default built on first read: [1]>"
    assert hash(lazy) == object.__hash__(lazy)
    assert {lazy: 1}[lazy] == 1
    schema = m.Capabilities.model_json_schema()
    assert schema["properties"]["names"]["default"] == ["a"]
    assert schema["properties"]["names"]["type"] == "array"
    assert schema["properties"]["fs"]["default"] == {"readTextFile": False, "depth": None}
    event = m.Event.model_json_schema()["properties"]
    assert event["note"] == {"default": "none", "title": "Note", "type": "string"}
    assert event["level"]["type"] == "integer"
    assert m.Event.model_json_schema()["required"] == ["sessionId", "level"]


def test_a_member_left_absent_inside_an_object_default_dumps_without_warnings(m: SimpleNamespace) -> None:
    caps = m.Capabilities.model_validate({"fs": {"readTextFile": True, "depth": "deep"}})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert caps.model_dump(exclude_unset=True) == {"fs": {"readTextFile": True}}
        assert caps.model_dump()["fs"] == {"readTextFile": True}
        assert caps.model_dump_json(exclude_unset=True) == '{"fs":{"readTextFile":true}}'


def test_put_in_order_keeps_declared_order_and_unknown_members_last(m: SimpleNamespace) -> None:
    caps = m.Capabilities.model_validate({"zz": 1, "terminal": True})
    caps.__dict__["zz"] = 1
    _put_in_order(caps, "first", 5)
    assert list(caps.__dict__) == ["first", "terminal", "zz"]
    assert caps.first == 5
