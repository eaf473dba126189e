"""A member whose default is an object (``_lazy`` in the Pydantic bindings): left absent by
pydantic-core when the message leaves it out (or sends a bad value, with
``x-deserialize-default-on-error``), and built on its first read, once, instead of for
every message. Everything a user sees must stay as if it had been built when parsed."""

from __future__ import annotations

import copy
import json
import pickle
import sys
import warnings
from typing import Any, Callable

import jsonschema
import pytest
from pydantic import TypeAdapter

from ..conftest import SCHEMAS

Loader = Callable[..., Any]
DEFAULT = {"fs": {"readTextFile": False}, "terminal": False}


@pytest.fixture
def m(pydantic_module: Loader) -> Any:
    return pydantic_module("lazy_defaults.json")


def parse(m: Any, data: dict[str, Any]) -> Any:
    return m.Hello.model_validate_json(json.dumps(data))


def python_calls(action: Callable[[], Any]) -> list[str]:
    """The Python functions ``action`` runs (pydantic's wrappers aside)."""
    seen: list[str] = []

    def profile(frame: Any, event: str, _: Any) -> None:
        if event == "call" and "pydantic" not in frame.f_code.co_filename:
            seen.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        action()
    finally:
        sys.setprofile(None)
    return [name for name in seen if name != "action"]


def test_parsing_builds_no_default(m: Any) -> None:
    """No Python runs for a valid message, whether it has the member or not (a bad value,
    the rare case, has its default built when parsed)."""
    parse(m, {"protocolVersion": 1})  # validators built
    for data in ({"protocolVersion": 1}, {"protocolVersion": 1, "capabilities": {}}):
        raw = json.dumps(data)
        assert python_calls(lambda: m.Hello.model_validate_json(raw)) == []
        value = m.Hello.model_validate_json(raw)
        assert "choice" not in value.__dict__ and "names" not in value.__dict__


def test_absent_reads_as_the_default(m: Any) -> None:
    value = parse(m, {"protocolVersion": 1})
    assert "capabilities" not in value.__dict__
    caps = value.capabilities
    assert caps == m.Capabilities(fs=m.FileSystem(read_text_file=False), terminal=False)
    assert caps.fs.read_text_file is False and caps.terminal is False
    assert value.capabilities is caps  # built once: a change to it stays
    caps.fs.read_text_file = True
    assert value.capabilities.fs.read_text_file is True
    assert (
        parse(m, {"protocolVersion": 1}).capabilities.fs.read_text_file is False
    )  # never shared
    assert value.choice == m.Inner(n=2) and value.names == ["a"]
    assert value.model_dump(by_alias=True, exclude_unset=True) == {"protocolVersion": 1}


@pytest.mark.parametrize("bad", [3, None, [{}], "x", {"fs": 1}])
def test_a_bad_value_is_replaced_by_the_default_and_stays_sent(
    m: Any, bad: Any
) -> None:
    """x-deserialize-default-on-error, as serde and the referee read it: the member was
    sent, so the repaired message has it, with its default (tests/referee.py)."""
    value = parse(
        m,
        {
            "protocolVersion": 1,
            "capabilities": bad,
            "choice": [bad],
            "names": {"x": bad},
        },
    )
    caps = DEFAULT if bad != {"fs": 1} else {"fs": {"readTextFile": False}}
    assert value.model_dump(mode="json", by_alias=True, exclude_unset=True) == {
        "protocolVersion": 1,
        "capabilities": caps,
        "choice": {"n": 2},
        "names": ["a"],
    }
    assert {"capabilities", "choice", "names"} <= value.model_fields_set
    assert value.capabilities is value.capabilities


def test_a_nested_default_is_built_on_read_too(m: Any) -> None:
    value = parse(m, {"protocolVersion": 1, "capabilities": {"terminal": True}})
    assert "fs" not in value.capabilities.__dict__
    assert value.capabilities.fs == m.FileSystem(read_text_file=False)
    assert value.model_dump(by_alias=True, exclude_unset=True) == {
        "protocolVersion": 1,
        "capabilities": {"terminal": True},
    }


def test_full_dumps_repr_and_iteration_show_the_defaults(m: Any) -> None:
    full = {
        "protocolVersion": 1,
        "capabilities": DEFAULT,
        "choice": {"n": 2},
        "names": ["a"],
    }
    assert parse(m, {"protocolVersion": 1}).model_dump(by_alias=True) == full
    assert json.loads(parse(m, {"protocolVersion": 1}).model_dump_json(by_alias=True)) == full
    for tp in (m.Hello, m.Hello | int):  # however the dump is asked for, inside a union too
        assert TypeAdapter(tp).dump_python(parse(m, {"protocolVersion": 1}), mode="json", by_alias=True) == full
    nested = parse(m, {"protocolVersion": 1, "capabilities": {"terminal": True}})
    assert nested.model_dump(by_alias=True)["capabilities"] == {
        "fs": {"readTextFile": False},
        "terminal": True,
    }
    assert "capabilities=Capabilities(fs=FileSystem(read_text_file=False)" in repr(
        parse(m, {"protocolVersion": 1})
    )
    assert dict(parse(m, {"protocolVersion": 1}))["names"] == ["a"]
    jsonschema.validate(
        parse(m, {"protocolVersion": 1}).model_dump(mode="json", by_alias=True),
        schema_of(m, "Hello"),
    )


def test_members_stay_in_their_declared_order(m: Any) -> None:
    value = parse(m, {"protocolVersion": 1, "capabilities": {"terminal": True}})
    dumped = value.model_dump(by_alias=True)
    assert list(dumped) == ["protocolVersion", "capabilities", "choice", "names"]
    assert list(dumped["capabilities"]) == ["fs", "terminal"]
    value = parse(m, {"protocolVersion": 1})
    value.names  # noqa: B018  (built first)
    assert list(value.model_dump(by_alias=True)) == [
        "protocolVersion",
        "capabilities",
        "choice",
        "names",
    ]
    assert repr(value).startswith(
        "Hello(protocol_version=1, capabilities=Capabilities(fs="
    )


def test_exclude_defaults_leaves_out_a_default_built_or_not(m: Any) -> None:
    for value in (
        parse(m, {"protocolVersion": 1}),
        parse(m, {"protocolVersion": 1, "capabilities": DEFAULT}),
    ):
        assert value.model_dump(by_alias=True, exclude_defaults=True) == {
            "protocolVersion": 1
        }
    changed = parse(m, {"protocolVersion": 1, "capabilities": {"terminal": True}})
    assert changed.model_dump(by_alias=True, exclude_defaults=True) == {
        "protocolVersion": 1,
        "capabilities": {"terminal": True},
    }


def test_equality_copies_and_pickles(m: Any) -> None:
    absent, sent = parse(m, {"protocolVersion": 1}), parse(
        m, {"protocolVersion": 1, "capabilities": DEFAULT}
    )
    assert absent == sent and sent == absent
    assert parse(m, {"protocolVersion": 1}) != parse(
        m, {"protocolVersion": 1, "capabilities": {"terminal": True}}
    )
    for other in (copy.deepcopy(absent), pickle.loads(pickle.dumps(absent))):
        assert other == absent and other.capabilities is not absent.capabilities
    unread = parse(m, {"protocolVersion": 1})
    shallow = unread.model_copy()  # a copy made before the first read builds its own
    assert shallow == unread and shallow.capabilities is not unread.capabilities
    assert (
        absent.model_copy(
            update={"capabilities": m.Capabilities(terminal=True)}
        ).capabilities.terminal
        is True
    )


def test_built_in_python_the_same_way(m: Any) -> None:
    for value in (
        m.Hello(protocol_version=1),
        m.Hello.model_construct(protocol_version=1),
    ):
        assert (
            type(value.capabilities) is m.Capabilities
            and value.capabilities.fs.read_text_file is False
        )
        assert value.model_dump(by_alias=True, exclude_unset=True) == {
            "protocolVersion": 1
        }
    with pytest.raises(AttributeError):
        m.Hello(protocol_version=1).no_such_member  # noqa: B018


def schema_of(m: Any, name: str) -> dict[str, Any]:
    schema = json.loads((SCHEMAS / "lazy_defaults.json").read_text())
    return {**schema, "$ref": f"#/$defs/{name}"}


def test_the_json_schema_states_the_default(m: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        schema = m.Hello.model_json_schema(by_alias=True)
        assert m.Hello.model_json_schema(by_alias=True, mode="serialization")["properties"] == schema["properties"]
    assert schema["properties"]["capabilities"]["default"] == DEFAULT
    assert schema["properties"]["choice"]["default"] == {"n": 2}
    assert schema["properties"]["names"]["default"] == ["a"]


def test_dumps_do_not_warn(m: Any) -> None:
    """pydantic-core checks the members of a value it writes under a union one by one
    and warns about any it finds absent, as a default not yet built is."""
    built = m.Hello(protocol_version=1, capabilities=m.Capabilities(terminal=True))
    parsed = parse(m, {"protocolVersion": 1, "capabilities": {"terminal": True}})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for value in (built, parsed):
            assert value.model_dump(mode="json", by_alias=True, exclude_unset=True) == {
                "protocolVersion": 1,
                "capabilities": {"terminal": True},
            }
            assert json.loads(
                value.__pydantic_serializer__.to_json(
                    value, by_alias=True, exclude_unset=True
                )
            ) == {
                "protocolVersion": 1,
                "capabilities": {"terminal": True},
            }


def test_unions_write_members_left_absent_without_warnings(m: Any) -> None:
    """A union's serializer in pydantic-core checks a value's members one by one and warns
    about any absent from it (a bad value dropped, a default not yet built); the bindings'
    unions are written by their value's own type (``_BY_VALUE``)."""
    cases = [
        (m.Event, {"type": "bye", "priority": "high"}, {"type": "bye"}),
        (m.Event, {"type": "hello"}, {"type": "hello"}),
        (m.Event, {"type": "hello", "capabilities": {"terminal": True}}, {"type": "hello", "capabilities": {"terminal": True}}),
        (m.Greeting, {"protocolVersion": 1}, {"protocolVersion": 1}),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for tp, data, wire in cases:
            adapter = TypeAdapter(tp)
            value = adapter.validate_json(json.dumps(data))
            assert adapter.dump_python(value, mode="json", by_alias=True, exclude_unset=True) == wire
            assert json.loads(adapter.dump_json(value, by_alias=True, exclude_unset=True)) == wire
        full = TypeAdapter(m.Event).dump_python(TypeAdapter(m.Event).validate_json('{"type": "hello"}'), mode="json", by_alias=True)
        assert full == {"type": "hello", "capabilities": DEFAULT}


def test_a_callable_is_a_bad_value_like_any_other(m: Any) -> None:
    """Only the default's own marker is left absent: a callable given in Python is a bad
    value, replaced by the default and sent."""
    value = m.Hello(protocol_version=1, capabilities=len)
    assert value.model_dump(mode="json", by_alias=True, exclude_unset=True) == {"protocolVersion": 1, "capabilities": DEFAULT}
