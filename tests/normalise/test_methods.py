"""The method table (acpgen/normalise/methods.py): the methods the defs name with ``x-method``
(and ``x-side``), paired by name with a response def that carries no mark; then the methods
of the meta file that no def names, linked by the Rust naming convention (``FooRequest``,
``FooResponse``, ``FooNotification``); and their prose, read from the routing unions."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acpgen import ir
from acpgen.load import Meta, MethodName, RawDocument
from acpgen.normalise.context import Context
from acpgen.normalise.methods import _split, _words, build_methods, method_prose
from acpgen.source import SourceFile


def _ctx(defs: Any, methods: tuple[MethodName, ...] = (), container: str = "$defs", **root: Any) -> Context:
    data = {container: defs, **root}
    source = SourceFile("schema.json", json.dumps(data), "0" * 64)
    return Context(RawDocument(source, data, Meta(None, 1, methods), "v1", "stable"))


def _build(defs: Any, *methods: MethodName, **root: Any) -> tuple[ir.Method, ...]:
    return build_methods(_ctx(defs, methods, **root))


def _meta(key: str, wire: str, side: str = "agent") -> MethodName:
    return MethodName(key, wire, side)


def _marked(wire: str, side: str | None = None, **more: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "x-method": wire, **more}
    if side is not None:
        out["x-side"] = side
    return out


def _at(name: str, *overlays: str, container: str = "$defs") -> ir.Origin:
    return ir.Origin("schema.json", f"/{container}/{name}", overlays)


OBJ = {"type": "object"}


# -- names --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "split"),
    [
        ("PromptRequest", ("params", "Prompt")),
        ("ToolArguments", ("params", "Tool")),
        ("CallParams", ("params", "Call")),
        ("PromptResponse", ("result", "Prompt")),
        ("ToolOutput", ("result", "Tool")),
        ("CallResult", ("result", "Call")),
        ("SessionNotification", ("notification", "Session")),
        ("Request", None),  # the suffix alone names nothing
        ("Notification", None),
        ("Result", None),
        ("Session", None),
        ("Requests", None),
    ],
)
def test_a_def_name_splits_into_a_role_and_a_stem(name: str, split: tuple[str, str] | None) -> None:
    assert _split(name) == split


@pytest.mark.parametrize(
    ("camel", "words"),
    [
        ("ReadTextFile", {"read", "text", "file"}),
        ("readTextFile", {"read", "text", "file"}),
        ("HTTPHeader", {"http", "header"}),
        ("Mcp2Server", {"mcp2", "server"}),
        ("ID", {"id"}),
        ("", set()),
    ],
)
def test_a_camel_case_name_is_read_as_lower_case_words(camel: str, words: set[str]) -> None:
    assert _words(camel) == frozenset(words)


# -- x-method ---------------------------------------------------------------------


def test_a_request_is_linked_by_its_marks() -> None:
    defs = {
        "PromptRequest": _marked("session/prompt", "agent"),
        "PromptResponse": _marked("session/prompt", "agent"),
    }
    assert _build(defs, _meta("session_prompt", "session/prompt")) == (
        ir.Method(
            "session/prompt",
            "agent",
            "request",
            _at("PromptRequest"),
            params="PromptRequest",
            result="PromptResponse",
            meta_key="session_prompt",
            linked_by="x-method",
            types=("PromptRequest", "PromptResponse"),
        ),
    )


def test_a_notification_is_linked_by_its_mark() -> None:
    defs = {"SessionNotification": _marked("session/update", "client")}
    assert _build(defs) == (
        ir.Method(
            "session/update",
            "client",
            "notification",
            _at("SessionNotification"),
            params="SessionNotification",
            linked_by="x-method",
            types=("SessionNotification",),
        ),
    )


def test_a_def_named_by_no_convention_is_the_params() -> None:
    (m,) = _build({"Cancel": _marked("x/cancel", "agent")})
    assert (m.kind, m.params, m.result, m.types) == ("request", "Cancel", None, ("Cancel",))


def test_the_first_def_of_each_role_in_name_order_is_kept() -> None:
    defs = {
        "BRequest": _marked("x/y", "agent"),
        "ARequest": _marked("x/y", "agent"),
        "BResponse": _marked("x/y", "agent"),
        "AResponse": _marked("x/y", "agent"),
    }
    (m,) = _build(defs)
    assert (m.params, m.result, m.origin) == ("ARequest", "AResponse", _at("ARequest"))
    assert m.types == ("ARequest", "AResponse", "BRequest", "BResponse")


def test_a_method_marked_as_both_a_request_and_a_notification_is_a_notification() -> None:
    defs = {
        "AMcpRequest": _marked("mcp/message", "agent"),
        "BMcpNotification": _marked("mcp/message", "agent"),
        "BMcpResponse": OBJ,
    }
    (m,) = _build(defs)
    assert (m.kind, m.params, m.result, m.origin) == (
        "notification",
        "BMcpNotification",
        None,
        _at("AMcpRequest"),  # where the first of its defs is
    )
    assert m.types == ("AMcpRequest", "BMcpNotification")


def test_each_side_of_a_method_is_a_method_of_its_own() -> None:
    defs = {
        "AgentRequest": _marked("x/ping", "agent"),
        "ClientRequest": _marked("x/ping", "client"),
    }
    assert [(m.name, m.side, m.params) for m in _build(defs)] == [
        ("x/ping", "agent", "AgentRequest"),
        ("x/ping", "client", "ClientRequest"),
    ]


@pytest.mark.parametrize("side", ["agent", "client", "protocol", "both"])
def test_each_side_is_read(side: str) -> None:
    (m,) = _build({"XRequest": _marked("x/y", side)}, _meta("x", "x/y", "client" if side == "agent" else "agent"))
    assert m.side == side


@pytest.mark.parametrize("side", [None, "nobody", 3])
def test_without_a_side_of_its_own_a_method_takes_the_first_the_meta_file_gives(side: Any) -> None:
    defs = {"XRequest": _marked("x/y", side)}
    (m,) = _build(defs, _meta("first", "x/y", "client"), _meta("second", "x/y", "agent"))
    assert (m.side, m.meta_key) == ("client", "first")
    (m,) = _build(defs)
    assert (m.side, m.meta_key) == ("", None)


def test_defs_that_are_not_marked_objects_name_no_method() -> None:
    defs = {"Anything": True, "Nothing": False, "Listed": ["x-method"], "Numbered": {"x-method": 3}, "XRequest": OBJ}
    assert _build(defs) == ()


def test_the_marked_defs_after_a_def_that_is_no_object_are_read() -> None:
    defs = {"ANothing": False, "BRequest": _marked("x/b", "agent"), "CList": [], "DRequest": _marked("x/d", "agent")}
    assert [m.name for m in _build(defs)] == ["x/b", "x/d"]


def test_a_def_with_a_side_and_one_without_are_two_methods() -> None:
    defs = {"ARequest": _marked("x/y", "agent"), "BRequest": _marked("x/y")}
    assert [(m.side, m.params) for m in _build(defs)] == [("", "BRequest"), ("agent", "ARequest")]
    assert [(m.side, m.params) for m in _build(defs, _meta("x_y", "x/y", "client"))] == [
        ("agent", "ARequest"),
        ("client", "BRequest"),
    ]


def test_methods_come_sorted_by_name_then_side() -> None:
    defs = {
        "ARequest": _marked("z/last", "agent"),
        "BRequest": _marked("a/first", "client"),
        "CRequest": _marked("a/first", "agent"),
    }
    assert [(m.name, m.side) for m in _build(defs)] == [("a/first", "agent"), ("a/first", "client"), ("z/last", "agent")]


def test_the_origin_carries_the_overlays_of_the_carrier_def() -> None:
    defs = {
        "ARequest": _marked("x/y", "agent", **{"x-acpgen-overlay": "rfd/one"}),
        "BNotification": _marked("x/n", "agent", **{"x-acpgen-overlay": ["rfd/two", "rfd/three"]}),
        "CRequest": _marked("x/n", "agent", **{"x-acpgen-overlay": "rfd/not-the-carrier"}),
    }
    got = {m.name: m.origin for m in _build(defs)}
    assert got == {
        "x/y": _at("ARequest", "rfd/one"),
        "x/n": _at("BNotification", "rfd/two", "rfd/three"),
    }


def test_definitions_is_read_as_the_defs_container() -> None:
    ctx = _ctx({"XRequest": _marked("x/y", "agent")}, container="definitions")
    (m,) = build_methods(ctx)
    assert m.origin == _at("XRequest", container="definitions")


# -- a response paired by name --------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "result"),
    [
        ("ReadRequest", "ReadResponse"),
        ("ReadArguments", "ReadOutput"),
        ("ReadParams", "ReadResult"),
        ("ReadRequest", "ReadResult"),
    ],
)
def test_a_response_without_a_mark_is_paired_by_name(params: str, result: str) -> None:
    (m,) = _build({params: _marked("fs/read", "client"), result: OBJ})
    assert (m.params, m.result, m.types, m.linked_by) == (params, result, (params,), "x-method")


def test_the_response_suffix_comes_first_then_output_then_result() -> None:
    (m,) = _build({"ReadRequest": _marked("fs/read", "client"), "ReadResult": OBJ, "ReadOutput": OBJ, "ReadResponse": OBJ})
    assert m.result == "ReadResponse"
    (m,) = _build({"ReadRequest": _marked("fs/read", "client"), "ReadResult": OBJ, "ReadOutput": OBJ})
    assert m.result == "ReadOutput"


def test_a_response_marked_for_another_method_is_not_paired() -> None:
    defs = {"ReadRequest": _marked("fs/read", "client"), "ReadResponse": _marked("fs/other", "client")}
    got = {m.name: m.result for m in _build(defs)}
    assert got == {"fs/read": None, "fs/other": "ReadResponse"}


def test_a_response_that_is_not_an_object_is_paired() -> None:
    (m,) = _build({"ReadRequest": _marked("fs/read", "client"), "ReadResponse": True})
    assert m.result == "ReadResponse"


def test_no_response_is_paired_with_a_notification_nor_with_params_named_by_no_convention() -> None:
    defs = {
        "Ping": _marked("x/ping", "agent"),
        "PingResponse": OBJ,
        "NoteNotification": _marked("x/note", "agent"),
        "NoteResponse": OBJ,
        "NoteRequest": _marked("x/note", "agent"),
    }
    got = {m.name: (m.kind, m.result) for m in _build(defs)}
    assert got == {"x/ping": ("request", None), "x/note": ("notification", None)}


def test_a_response_marked_for_its_method_is_not_replaced() -> None:
    defs = {"ReadRequest": _marked("fs/read", "client"), "ReadOutput": _marked("fs/read", "client"), "ReadResponse": OBJ}
    (m,) = _build(defs)
    assert m.result == "ReadOutput"


def test_each_request_is_paired_whatever_the_methods_before_it() -> None:
    defs = {
        "AOwnRequest": _marked("x/a", "agent"),
        "AOwnResponse": _marked("x/a", "agent"),
        "BNoteNotification": _marked("x/b", "client"),
        "BNoteResponse": OBJ,
        "CReadRequest": _marked("x/c", "agent"),
        "CReadResponse": OBJ,
    }
    assert [(m.name, m.result) for m in _build(defs)] == [("x/a", "AOwnResponse"), ("x/b", None), ("x/c", "CReadResponse")]


def test_a_method_with_no_response_has_no_result() -> None:
    (m,) = _build({"ReadRequest": _marked("fs/read", "client"), "WriteResponse": OBJ})
    assert m.result is None


# -- methods of the meta file that no def names -----------------------------------------


def test_a_meta_method_is_linked_by_the_words_of_its_key() -> None:
    defs = {"ReadTextFileRequest": OBJ, "ReadTextFileResponse": OBJ, "WriteTextFileRequest": OBJ}
    assert _build(defs, _meta("fs_read_text_file", "fs/read_text_file", "client")) == (
        ir.Method(
            "fs/read_text_file",
            "client",
            "request",
            ir.Origin("schema.json", "/$defs"),
            params="ReadTextFileRequest",
            result="ReadTextFileResponse",
            meta_key="fs_read_text_file",
            linked_by="meta+name",
        ),
    )


def test_a_meta_method_is_linked_by_all_the_words_of_its_key_too() -> None:
    (m,) = _build({"SessionPromptRequest": OBJ}, _meta("session_prompt", "session/prompt"))
    assert m.params == "SessionPromptRequest"
    (m,) = _build({"InitializeRequest": OBJ}, _meta("initialize", "initialize"))
    assert (m.params, m.linked_by) == ("InitializeRequest", "meta+name")


def test_a_marked_notification_takes_the_key_of_its_meta_method() -> None:
    defs = {"SessionNotification": _marked("session/update", "client")}
    methods = _build(defs, _meta("other", "x/other"), _meta("session_update", "session/update", "client"))
    assert [(m.name, m.meta_key, m.linked_by) for m in methods] == [
        ("session/update", "session_update", "x-method"),
        ("x/other", "other", "meta"),
    ]


def test_a_def_whose_stem_has_no_words_is_linked_to_no_meta_method() -> None:
    assert _words("_") == frozenset()
    (m,) = _build({"_Request": OBJ, "_Response": OBJ}, _meta("ping", "x/ping"))
    assert (m.params, m.result, m.linked_by) == (None, None, "meta")


def test_a_meta_method_whose_words_match_no_def_is_linked_by_nothing() -> None:
    defs = {"PromptRequest": OBJ, "TextFileRequest": OBJ, "SessionRequest": OBJ}
    assert _build(defs, _meta("session_prompt_text", "session/prompt_text", "client")) == (
        ir.Method(
            "session/prompt_text",
            "client",
            "request",
            ir.Origin("schema.json", "/$defs"),
            meta_key="session_prompt_text",
            linked_by="meta",
        ),
    )


def test_a_meta_method_keeps_the_first_def_of_each_role_in_name_order() -> None:
    defs = {"CancelNotification": OBJ, "CancelParams": OBJ, "CancelRequest": OBJ, "CancelResult": OBJ}
    (m,) = _build(defs, _meta("session_cancel", "session/cancel", "agent"))
    assert (m.kind, m.params, m.result, m.types) == ("notification", "CancelNotification", None, ())
    assert (m.meta_key, m.linked_by) == ("session_cancel", "meta+name")
    assert m.origin == ir.Origin("schema.json", "/$defs", ())


def test_a_meta_method_takes_the_overlays_of_its_carrier() -> None:
    defs = {"CancelNotification": {"type": "object", "x-acpgen-overlay": "rfd/cancel"}}
    (m,) = _build(defs, _meta("session_cancel", "session/cancel"))
    assert m.origin == ir.Origin("schema.json", "/$defs", ("rfd/cancel",))


def test_a_meta_method_named_by_a_def_is_not_linked_again() -> None:
    defs = {"PromptRequest": _marked("session/prompt", "agent"), "SessionPromptRequest": OBJ}
    assert [(m.side, m.params, m.linked_by) for m in _build(defs, _meta("session_prompt", "session/prompt", "client"))] == [
        ("agent", "PromptRequest", "x-method")
    ]


def test_a_meta_method_listed_twice_is_one_method() -> None:
    methods = _build(
        {"PingRequest": OBJ},
        _meta("ping", "x/ping", "agent"),
        _meta("ping", "x/ping", "agent"),
        _meta("ping", "x/ping", "client"),
    )
    assert [(m.name, m.side, m.params) for m in methods] == [("x/ping", "agent", "PingRequest"), ("x/ping", "client", "PingRequest")]


def test_a_meta_method_in_a_definitions_file_points_at_definitions() -> None:
    ctx = _ctx({"PingRequest": OBJ}, (_meta("ping", "x/ping"),), container="definitions")
    (m,) = build_methods(ctx)
    assert m.origin == ir.Origin("schema.json", "/definitions")


def test_meta_methods_come_sorted_with_the_others() -> None:
    methods = _build(
        {"ZRequest": _marked("z/z", "agent")},
        _meta("b", "b/b", "client"),
        _meta("a", "a/a", "client"),
    )
    assert [m.name for m in methods] == ["a/a", "b/b", "z/z"]


# -- prose --------------------------------------------------------------------------


def _member(title: str, description: str, ref: str | None = None, wrap: bool = False) -> dict[str, Any]:
    target: dict[str, Any] = {"$ref": ref or f"#/$defs/{title}"}
    out: dict[str, Any] = {"allOf": [target]} if wrap else dict(target)
    return {**out, "title": title, "description": description}


def test_a_method_takes_the_prose_of_its_params_member_in_a_router() -> None:
    defs = {
        "PromptRequest": _marked("session/prompt", "agent"),
        "PromptResponse": _marked("session/prompt", "agent"),
        "AgentRequest": {"x-docs-ignore": True, "anyOf": [_member("PromptRequest", "Sends a prompt.")]},
    }
    (m,) = _build(defs)
    assert m.description == "Sends a prompt."


def test_a_meta_method_takes_its_prose_too() -> None:
    defs = {"PingRequest": OBJ, "Router": {"oneOf": [_member("PingRequest", "Pings.")]}}
    (m,) = _build(defs, _meta("ping", "x/ping"))
    assert m.description == "Pings."


def test_a_method_without_params_or_prose_has_none() -> None:
    defs = {"Router": {"oneOf": [_member("None", "Not a method.")]}, "None": OBJ}
    (m,) = _build(defs, _meta("ping", "x/ping"))
    assert (m.params, m.description) == (None, None)


def test_prose_is_read_from_members_titled_with_the_def_they_carry() -> None:
    ctx = _ctx(
        {
            "Router": {
                "anyOf": [
                    _member("A", "a."),
                    _member("B", "b.", wrap=True),
                    _member("C", "c.", ref="#/$defs/Other"),  # titled with another def
                    _member("D", "d.", ref="other.json#/$defs/D"),  # not in this file
                    {"title": "E", "description": "e."},  # carries no def
                    {"$ref": "#/$defs/F", "title": "F"},  # no prose
                    {"$ref": "#/$defs/G", "description": "g."},  # no title
                    {"$ref": "#/$defs/H", "title": "H", "description": 3},
                    {"allOf": [{"$ref": "#/$defs/I"}, OBJ], "title": "I", "description": "i."},
                    {"allOf": ["#/$defs/J"], "title": "J", "description": "j."},
                    {"allOf": {"$ref": "#/$defs/K"}, "title": "K", "description": "k."},
                    {"$ref": 3, "title": "L", "description": "l."},
                    {"$ref": "#/$defs/M", "allOf": [{"$ref": "#/$defs/N"}], "title": "N", "description": "n."},
                    {"$ref": "#/$defs/a/O", "title": "O", "description": "o."},
                ]
            }
        }
    )
    assert method_prose(ctx) == {"A": "a.", "B": "b.", "O": "o."}


def test_prose_is_found_at_any_depth_of_a_router() -> None:
    ctx = _ctx(
        {
            "Router": {
                "oneOf": [
                    {"allOf": [{"anyOf": [_member("A", "a.")]}]},
                    {"properties": {"params": {"anyOf": [[_member("B", "b.")]]}, "id": 3}},
                    {"properties": [_member("C", "c.")]},
                ]
            },
            "Other": [{"oneOf": [_member("D", "d.")]}],
            "Scalar": "anything",
        }
    )
    assert method_prose(ctx) == {"A": "a.", "B": "b.", "C": "c.", "D": "d."}


def test_members_of_a_member_with_prose_are_read_too() -> None:
    ctx = _ctx({"Router": {"anyOf": [{**_member("A", "a."), "anyOf": [_member("B", "b.")]}]}})
    assert method_prose(ctx) == {"A": "a.", "B": "b."}


def test_prose_is_not_read_from_other_keywords() -> None:
    ctx = _ctx({"Router": {"items": _member("A", "a."), "not": _member("B", "b."), "$defs": {"C": _member("C", "c.")}}})
    assert method_prose(ctx) == {}


def test_the_root_routers_come_first_then_the_marked_ones_then_the_others() -> None:
    root: dict[str, Any] = {"anyOf": [_member("A", "root.")]}
    defs = {
        "A1": {"anyOf": [_member("A", "unmarked."), _member("B", "unmarked."), _member("C", "unmarked first.")]},
        "A2": {"anyOf": [_member("C", "unmarked second.")]},
        "Z1": {"x-docs-ignore": True, "anyOf": [_member("A", "marked."), _member("B", "marked.")]},
        "Z2": {"x-docs-ignore": "true", "anyOf": [_member("D", "not marked.")]},
        "Z3": True,
    }
    assert method_prose(_ctx(defs, **root)) == {
        "A": "root.",
        "B": "marked.",
        "C": "unmarked first.",
        "D": "not marked.",
    }


def test_the_first_marked_router_in_name_order_wins() -> None:
    defs = {
        "B": {"x-docs-ignore": True, "anyOf": [_member("A", "b.")]},
        "A": {"x-docs-ignore": True, "anyOf": [_member("A", "a.")]},
    }
    assert method_prose(_ctx(defs)) == {"A": "a."}


def test_a_root_that_is_no_union_gives_nothing() -> None:
    assert method_prose(_ctx({}, oneOf=[_member("A", "a.")])) == {}
    assert method_prose(_ctx({}, anyOf=[_member("A", "a.")])) == {"A": "a."}
