"""The dataclasses style's engine (``_runtime_dataclasses.py``, ``_runtime.py`` in a
package): objects, tagged unions, the compiler and ``dump``, through a generated package of
``dataclasses_fixture.json``; every outcome the same compiled and interpreted (see
``dataclasses_harness.py``), error texts and paths matched whole."""

from __future__ import annotations

import json
import shutil
from types import ModuleType
from typing import Any

import pytest

from ..conftest import SCHEMAS
from .dataclasses_harness import dumps, fails, load, pair

Pair = tuple[ModuleType, ModuleType]


@pytest.fixture
def ms(tmp_path_factory: pytest.TempPathFactory) -> Pair:
    return pair(tmp_path_factory)


def point(x: int, y: Any = None, present: tuple[str, ...] = ("x",), extra: Any = None) -> Any:
    return ("Point", {"x": ("int", x), "y": (type(y).__name__, y)}, extra or {}, list(present))


def test_an_object_keeps_its_members_and_records_those_received(ms: Pair) -> None:
    assert load(ms, "Point", {"x": 1}) == point(1)
    assert load(ms, "Point", {"x": 1, "y": 2}) == point(1, 2, ("x", "y"))
    assert load(ms, "Point", {"y": 0, "x": 1}) == point(1, 0, ("x", "y"))
    assert dumps(ms, "Point", {"x": 1, "y": 0}) == {"x": 1, "y": 0}
    assert fails(ms, "Point", {"x": 1, "y": None}) == "Point.y: expected integer, got null"
    assert dumps(ms, "Point", {"x": 1}) == {"x": 1}


def test_an_object_s_errors(ms: Pair) -> None:
    assert fails(ms, "Point", {"y": 1}) == "Point: missing required member 'x'"
    assert fails(ms, "Point", {}) == "Point: missing required member 'x'"
    assert fails(ms, "Point", {"x": "1"}) == "Point.x: expected integer, got string"
    assert fails(ms, "Point", {"x": 1, "y": 1.5}) == "Point.y: expected integer, got number"
    assert fails(ms, "Point", ["x"]) == "Point: expected object, got array"
    assert fails(ms, "Point", None) == "Point: expected object, got null"


def test_a_closed_object_names_its_first_unknown_member(ms: Pair) -> None:
    assert fails(ms, "Point", {"x": 1, "z": 1, "b": 2}) == "Point: unexpected member 'b'"
    assert fails(ms, "Point", {"x": 1, "w": 1}) == "Point: unexpected member 'w'"


def test_an_open_object_keeps_unknown_members_apart(ms: Pair) -> None:
    assert load(ms, "Empty", {}) == ("Empty", {}, {}, [])
    assert load(ms, "Empty", {"a": 1}) == ("Empty", {}, {"a": 1}, [])
    assert dumps(ms, "Empty", {"a": [1]}) == {"a": [1]}
    data = {"ge": 2, "le": 1, "z": {"k": 1}}
    got = load(ms, "Checks", data)
    assert got[2] == {"z": {"k": 1}}
    assert got[3] == ["ge", "le"]
    assert dumps(ms, "Checks", data) == data
    assert fails(ms, "Empty", 1) == "Empty: expected object, got integer"


def test_unknown_members_of_an_object_with_additional_properties_are_checked(ms: Pair) -> None:
    assert load(ms, "Loose", {"a": "s", "n": 1}) == ("Loose", {"a": ("str", "s")}, {"n": 1}, ["a"])
    assert dumps(ms, "Loose", {"n": 1, "a": "s"}) == {"a": "s", "n": 1}
    assert fails(ms, "Loose", {"a": "s", "n": "1"}) == "Loose.n: expected integer, got string"
    assert fails(ms, "Loose", {"a": 1}) == "Loose.a: expected string, got integer"


def test_a_member_left_out_takes_its_default(ms: Pair) -> None:
    got = load(ms, "Lenient", {})[1]
    assert got["count"] == ("int", 3)
    assert got["flag"] == ("bool", True)
    assert got["ratio"] == ("float", 0.5)
    assert got["labels"] == [("str", "a")]
    assert got["tags"] == []
    assert got["name"] == ("NoneType", None)
    assert load(ms, "Lenient", {})[3] == []


def test_a_lenient_member_takes_its_default_on_error(ms: Pair) -> None:
    got = load(ms, "Lenient", {"count": "x", "name": 5, "tags": "no"})
    assert got[1]["count"] == ("int", 3)
    assert got[1]["name"] == ("NoneType", None)
    assert got[1]["tags"] == []
    assert got[3] == ["count", "tags"]
    assert dumps(ms, "Lenient", {"count": "x", "name": 5}) == {"count": 3}
    assert load(ms, "Lenient", {"name": "n"})[3] == ["name"]


def test_a_lenient_array_skips_its_invalid_items(ms: Pair) -> None:
    got = load(ms, "Lenient", {"tags": [{"x": 1}, {"x": "2"}, 3, {"x": 4, "q": 1}, {"x": 5}]})
    assert got[1]["tags"] == [point(1), point(5)]
    assert dumps(ms, "Lenient", {"tags": [{"x": 1}, {}]}) == {"tags": [{"x": 1}]}


def test_null_reads_as_the_default_or_as_absent_where_marked(ms: Pair) -> None:
    got = load(ms, "Lenient", {"size": None, "gone": None})
    assert got[1]["size"] == ("int", 7)
    assert got[1]["gone"] == ("NoneType", None)
    assert got[3] == ["size"]
    assert dumps(ms, "Lenient", {"size": None, "gone": None}) == {"size": 7}
    assert load(ms, "Lenient", {"size": 1, "gone": "g"})[1]["gone"] == ("str", "g")
    assert fails(ms, "Lenient", {"size": "1"}) == "Lenient.size: expected integer, got string"
    for marked in ("size", "gone"):
        got = load(ms, "Lenient", {marked: None, "flag": False, "labels": []})
        assert (got[1]["flag"], got[1]["labels"]) == (("bool", False), [])
        assert got[3] == sorted(["flag", "labels", *(["size"] if marked == "size" else [])])
    assert load(ms, "AllNull", {"size": None}) == ("AllNull", {"size": ("int", 7)}, {}, ["size"])
    assert load(ms, "AllNull", {"size": 1})[1] == {"size": ("int", 1)}


def test_members_that_take_null_are_read_on_the_fast_path(ms: Pair) -> None:
    assert load(ms, "Holder", {"raw": 5, "opt": "s"}) == ("Holder", {"raw": ("int", 5), "opt": ("str", "s")}, {}, ["opt", "raw"])
    assert load(ms, "Holder", {"raw": None, "opt": None})[1] == {"raw": ("NoneType", None), "opt": ("NoneType", None)}


def test_dump_sends_members_set_members_given_and_required_ones(ms: Pair) -> None:
    for m in ms:
        assert m.dump(m.Point(x=1)) == {"x": 1}
        assert m.dump(m.Point(x=1, y=None)) == {"x": 1, "y": None}
        assert m.Point(x=1, y=None)._present == frozenset({"x", "y"})
        p = m.load(m.Point, {"x": 1})
        p.x, p._present = None, frozenset()
        assert m.dump(p) == {"x": None}
        p.y = 0
        assert m.dump(p) == {"x": None, "y": 0}
        lenient = m.load(m.Lenient, {"count": 3})
        lenient.count = 4
        assert m.dump(lenient) == {"count": 4}
        lenient = m.load(m.Lenient, {})
        lenient.count, lenient.ratio, lenient.flag = 3, 0.5, True
        assert m.dump(lenient) == {}
        lenient.flag = False
        assert m.dump(lenient) == {"flag": False}


def test_dump_walks_lists_tuples_and_dicts(ms: Pair) -> None:
    for m in ms:
        p = m.Point(x=1)
        assert m.dump([p, (p, None)]) == [{"x": 1}, [{"x": 1}, None]]
        assert m.dump({"a": p, "b": 1.5, "c": "s", "d": True}) == {"a": {"x": 1}, "b": 1.5, "c": "s", "d": True}
        with pytest.raises(TypeError) as info:
            m.dump(object())
        assert str(info.value) == "cannot dump object"
        with pytest.raises(TypeError) as info:
            m.dump({1, 2})
        assert str(info.value) == "cannot dump set"


def test_a_tagged_union_picks_the_variant_its_tag_names(ms: Pair) -> None:
    circle = {"kind": "circle", "r": 1}
    assert load(ms, "Shape", circle) == ("CircleShape", {"r": ("int", 1), "kind": ("str", "circle")}, {}, ["kind", "r"])
    assert load(ms, "Shape", {"kind": "square", "side": 2})[0] == "SquareShape"
    assert load(ms, "Closed", {"kind": "square", "side": 2})[0] == "SquareClosed"
    assert dumps(ms, "Shape", circle) == circle


def test_a_tagged_union_with_a_fallback_keeps_an_unknown_tag_whole(ms: Pair) -> None:
    got = load(ms, "Shape", {"kind": "hexagon", "n": 6})
    assert got == ("OtherShape", {"kind": ("str", "hexagon")}, {"n": 6}, ["kind"])
    assert dumps(ms, "Shape", {"kind": "hexagon", "n": 6}) == {"kind": "hexagon", "n": 6}


def test_a_tagged_union_s_errors(ms: Pair) -> None:
    assert fails(ms, "Shape", {"kind": "circle", "r": "1"}) == "Shape.r: expected integer, got string"
    assert fails(ms, "Shape", {"kind": "circle"}) == "Shape: missing required member 'r'"
    assert fails(ms, "Shape", {"r": 1}) == "Shape: missing discriminator 'kind'"
    assert fails(ms, "Shape", {"kind": 1}) == "Shape.kind: expected one of 'circle', 'square', got 1"
    assert fails(ms, "Shape", {"kind": None}) == "Shape.kind: expected one of 'circle', 'square', got None"
    assert fails(ms, "Shape", ["circle"]) == "Shape: expected object, got array"
    assert fails(ms, "Closed", {"kind": "hexagon"}) == "Closed.kind: expected one of 'circle', 'square', got 'hexagon'"
    assert fails(ms, "Closed", {"side": 2}) == "Closed: missing discriminator 'kind'"
    assert fails(ms, "Closed", "square") == "Closed: expected object, got string"


def test_a_union_member_of_an_object_is_loaded_in_place(ms: Pair) -> None:
    data = {"ge": 2, "either": {"x": 1, "y": 2}, "point": {"x": 3}}
    got = load(ms, "Checks", data)
    assert got[1]["either"] == point(1, 2, ("x", "y"))
    assert got[1]["point"] == point(3)
    assert dumps(ms, "Checks", data) == data


def test_load_knows_only_the_types_of_its_module(ms: Pair) -> None:
    for m in ms:
        with pytest.raises(TypeError) as info:
            m.load(bytes, b"")
        assert str(info.value) == "<class 'bytes'> is not a type of this module"
        with pytest.raises(TypeError):
            m.load(list[int], [1])
        assert m.load(m.Point, {"x": 1}) == m.load(m.Point, {"x": 1})
        assert m.load(m.Point, {"x": 2}).x == 2


def test_the_codec_loads_dumps_encodes_and_describes(ms: Pair) -> None:
    for m in ms:
        codec = m.RPC.codec
        value = codec.load(m.Point, {"x": 1})
        assert codec.dump(value) == {"x": 1}
        assert codec.encode({"p": value, "s": "é"}) == '{"p":{"x":1},"s":"é"}'
        with pytest.raises(codec.errors) as info:
            codec.load(m.Point, {"x": 1, "y": "2"})
        assert codec.describe(info.value) == {"path": "Point.y", "message": "expected integer, got string"}
        assert codec.describe(ValueError("boom")) == "boom"
        assert json.loads(codec.encode([m.Point(x=2, y=None)])) == [{"x": 2, "y": None}]


def test_a_tagged_union_with_a_default_variant_takes_what_its_tag_does_not(ms: Pair) -> None:
    boolean = {"type": "boolean", "configId": "c", "value": True}
    assert load(ms, "SetOption", boolean) == ("BooleanSetOption", {"config_id": ("str", "c"), "value": ("bool", True), "type_": ("str", "boolean")}, {}, ["configId", "type", "value"])
    assert dumps(ms, "SetOption", boolean) == boolean
    plain = ("ValueIdSetOption", {"config_id": ("str", "c"), "value": ("str", "v")}, {}, ["configId", "value"])
    assert load(ms, "SetOption", {"configId": "c", "value": "v"}) == plain
    other = {"type": "other", "configId": "c", "value": "v"}
    assert load(ms, "SetOption", other) == (*plain[:2], {"type": "other"}, plain[3])
    assert dumps(ms, "SetOption", other) == other


def test_a_value_its_tag_s_variant_rejects_may_still_be_the_default_variant(ms: Pair) -> None:
    data = {"type": "boolean", "configId": "c", "value": "v"}
    assert load(ms, "SetOption", data)[0] == "ValueIdSetOption"
    assert load(ms, "SetOption", data)[2] == {"type": "boolean"}
    assert fails(ms, "SetOption", {"type": "boolean", "configId": "c", "value": 1}) == "SetOption.value: expected boolean, got integer"
    assert fails(ms, "SetOption", {"configId": "c", "value": 1}) == "SetOption.value: expected string, got integer"
    assert fails(ms, "SetOption", {"type": 1, "value": "v"}) == "SetOption: missing required member 'configId'"
    assert fails(ms, "SetOption", []) == "SetOption: expected object, got array"
    assert load(ms, "McpServer", {"type": "http", "url": "u"})[0] == "HttpMcpServer"
    assert load(ms, "McpServer", {"command": "c"})[0] == "McpServerStdio"


def test_an_object_read_on_the_fast_path_takes_every_default(ms: Pair) -> None:
    defaults = {"items": [], "names": [("str", "a")], "ratio": ("float", 0.5), "flag": ("bool", False), "word": ("str", "w"), "size": ("int", 7), "note": ("NoneType", None)}
    assert load(ms, "Plain", {}) == ("Plain", defaults, {}, [])
    assert load(ms, "Plain", {"x": 1}) == ("Plain", defaults, {"x": 1}, [])
    got = load(ms, "Plain", {"items": [1], "note": "n", "size": 8})
    assert got == ("Plain", {**defaults, "items": [("int", 1)], "note": ("str", "n"), "size": ("int", 8)}, {}, ["items", "note", "size"])
    assert dumps(ms, "Plain", {}) == {}
    assert dumps(ms, "Plain", {"size": 7, "z": None}) == {"size": 7, "z": None}
    for m in ms:
        first, second = m.load(m.Plain, {}), m.load(m.Plain, {})
        first.items.append(1)
        first.names.append("b")
        assert (second.items, second.names) == ([], ["a"])
        assert m.dump(first) == {"items": [1], "names": ["a", "b"]}


def test_an_envelope_types_its_params_by_its_method(tmp_path_factory: pytest.TempPathFactory) -> None:
    rpc = pair(tmp_path_factory, SCHEMAS / "rpc")
    close = {"jsonrpc": "2.0", "id": 1, "method": "session/close", "params": {"sessionId": "s"}}
    params = ("CloseSessionRequest", {"session_id": ("str", "s")}, {}, ["sessionId"])
    got = load(rpc, "ClientRequest", close)
    assert got == ("ClientRequest", {"id": ("int", 1), "method": ("str", "session/close"), "params": params}, {"jsonrpc": "2.0"}, ["id", "method", "params"])
    assert dumps(rpc, "ClientRequest", close) == {"id": 1, "method": "session/close", "params": {"sessionId": "s"}, "jsonrpc": "2.0"}
    got = load(rpc, "ClientRequest", {**close, "params": {"x": 1, "sessionId": "s"}})
    assert got[1]["params"] == ("CloseSessionRequest", {"session_id": ("str", "s")}, {"x": 1}, ["sessionId"])
    assert load(rpc, "ClientRequest", {**close, "params": None})[1]["params"] == ("NoneType", None)
    assert load(rpc, "ClientRequest", {**close, "method": "_x/y"})[1]["params"] == params
    assert load(rpc, "ClientRequest", {"id": 1, "method": "session/prompt"})[3] == ["id", "method"]
    assert fails(rpc, "ClientRequest", {**close, "method": "session/prompt"}) == "ClientRequest.params: params of 'session/prompt': PromptRequest: missing required member 'prompt'"
    assert fails(rpc, "ClientRequest", {**close, "method": "session/unknown"}) == "ClientRequest.params: unknown request method 'session/unknown'"
    assert fails(rpc, "ClientRequest", {**close, "params": {"sessionId": 5}}) == "ClientRequest.params: params of 'session/close': CloseSessionRequest.sessionId: expected string, got integer"
    assert fails(rpc, "ClientRequest", {"id": 1, "params": {}}) == "ClientRequest: missing required member 'method'"
    both = {"sessionId": "s", "prompt": []}  # valid as PromptRequest too, the member's first fit
    got = load(rpc, "ClientRequest", {**close, "params": both})
    assert got[1]["params"] == ("CloseSessionRequest", {"session_id": ("str", "s")}, {"prompt": []}, ["sessionId"])
    assert load(rpc, "ClientRequest", {**close, "method": "_x/y", "params": both})[1]["params"][0] == "PromptRequest"
    update = {"method": "session/update", "params": {"sessionId": "s", "update": {"type": "text", "text": "x"}}}
    assert load(rpc, "AgentNotification", update)[1]["params"][0] == "SessionNotification"
    assert fails(rpc, "AgentNotification", {**update, "method": "session/close"}) == "AgentNotification.params: unknown notification method 'session/close'"


def test_an_envelope_reads_the_members_after_its_params(tmp_path_factory: pytest.TempPathFactory) -> None:
    schema = tmp_path_factory.mktemp("rpc") / "rpc"
    shutil.copytree(SCHEMAS / "rpc", schema)
    doc = json.loads((schema / "schema.json").read_text())
    members = doc["$defs"]["ClientRequest"]["properties"]
    doc["$defs"]["ClientRequest"]["properties"] = {"params": members.pop("params"), **members}
    (schema / "schema.json").write_text(json.dumps(doc))
    rpc = pair(tmp_path_factory, schema)
    close = {"jsonrpc": "2.0", "id": 1, "method": "session/close", "params": {"sessionId": "s"}}
    got = load(rpc, "ClientRequest", close)
    assert got[1]["id"] == ("int", 1)
    assert got[3] == ["id", "method", "params"]
    assert dumps(rpc, "ClientRequest", close) == {"params": {"sessionId": "s"}, "id": 1, "method": "session/close", "jsonrpc": "2.0"}
