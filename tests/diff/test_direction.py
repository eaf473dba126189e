"""Who sends what and which capabilities gate what (acpgen/diff/direction.py), on small
protocols built by hand: the sides of a method, the defs a type or def refers to, the
senders of every def, and how capabilities are found and matched to the items they gate."""

from __future__ import annotations

from typing import Any

from acpgen import ir
from acpgen.diff.direction import (
    BOTH,
    Capability,
    capabilities,
    def_refs,
    gates_of,
    implementers,
    mentions,
    method_words,
    names_in,
    norm,
    other,
    senders,
    shared_words,
    type_refs,
)

AT = ir.Origin("schema.json", "#")


def _ref(key: str) -> ir.Ref:
    return ir.Ref(key)


def _field(name: str, t: ir.TypeExpr, description: str | None = None) -> ir.Field:
    return ir.Field(name, t, False, AT, description)


def _object(key: str, *fields: ir.Field, **more: Any) -> ir.ObjectDef:
    return ir.ObjectDef(key, AT, tuple(fields), **more)


def _method(name: str, side: str, params: str | None = None, result: str | None = None) -> ir.Method:
    return ir.Method(name, side, "request" if result else "notification", AT, params, result)  # type: ignore[arg-type]


def _protocol(defs: list[Any], methods: tuple[ir.Method, ...] | list[ir.Method] = ()) -> ir.Protocol:
    return ir.Protocol("schema.json", "", "v1", "stable", tuple(defs), tuple(methods))


def test_the_other_side_of_anything_but_agent_or_client_is_both() -> None:
    assert other("agent") == {"client"} and other("client") == {"agent"}
    assert other("protocol") == BOTH and other("") == BOTH


def test_a_method_without_one_implementing_side_is_implemented_by_both() -> None:
    assert implementers(_method("m", "agent", "P")) == {"agent"}
    assert implementers(_method("m", "client", "P")) == {"client"}
    assert implementers(_method("m", "both", "P")) == BOTH
    assert implementers(_method("m", "protocol", "P")) == BOTH


def test_type_refs_reach_through_every_container() -> None:
    t = ir.AnyOf(
        (
            ir.Array(_ref("A")),
            ir.Map(_ref("B")),
            ir.Nullable(_ref("C")),
            ir.Tuple((_ref("D"), ir.Prim("string"), _ref("E"))),
        )
    )
    assert list(type_refs(t)) == ["A", "B", "C", "D", "E"]
    assert list(type_refs(ir.Tuple((_ref("T"),)))) == ["T"]
    assert list(type_refs(ir.Prim("string"))) == []


def test_def_refs_of_each_kind_of_def() -> None:
    typed_extra = _object("O", _field("a", _ref("A")), extra=ir.Map(_ref("X")))
    assert list(def_refs(typed_extra)) == ["A", "X"]
    assert list(def_refs(_object("O", _field("a", _ref("A")), extra="forbid"))) == ["A"]
    union = ir.UnionDef("U", AT, (ir.UnionMember(_ref("M"), AT), ir.UnionMember(ir.NullT(), AT), ir.UnionMember(_ref("N"), AT)))
    assert list(def_refs(union)) == ["M", "N"]
    assert list(def_refs(ir.AliasDef("L", AT, ir.Array(_ref("Z"))))) == ["Z"]


def test_senders_follow_every_ref_of_every_def() -> None:
    # P2's members are pushed in order, so X (already sent by the client) is taken first:
    # Y, behind it, is still sent by the client
    defs = [
        _object("P1", _field("x", _ref("X"))),
        _object("P2", _field("y", _ref("Y")), _field("x", _ref("X"))),
        _object("X"),
        _object("Y"),
        _object("R", _field("self", ir.Array(_ref("R")))),  # a recursive def: the walk ends
        _object("Alone"),
    ]
    methods = [_method("one", "agent", "P1"), _method("two", "agent", "P2", "R")]
    sent = senders(_protocol(defs, methods))
    assert sent["P2"] == sent["X"] == sent["Y"] == {"client"}
    assert sent["R"] == {"agent"}
    assert sent["Alone"] == BOTH  # no method reaches it: both, to be safe


def test_capabilities_are_the_members_of_capabilities_defs_with_what_they_hold() -> None:
    defs = [
        _object(
            "FsCapabilities",
            _field("_meta", ir.Map(ir.AnyT())),
            _field("read", ir.Prim("boolean"), "Read files."),
            _field("watch", _ref("WatchOptions"), "Watch files."),
            _field("plain", ir.Prim("boolean")),
        ),
        _object("WatchOptions", description="Supports `fs/watch`."),
        _object("Other", _field("read", ir.Prim("boolean"))),
    ]
    caps = capabilities(_protocol(defs))
    assert set(caps) == {"read", "watch", "plain"}
    assert caps["read"] == (Capability("FsCapabilities", "read"),)
    assert caps["read"][0].description == "Read files."
    assert caps["watch"][0].description == "Watch files.\nSupports `fs/watch`."
    assert caps["plain"][0].description is None


def test_norm_drops_underscores_and_dashes_and_case() -> None:
    assert norm("load_session") == norm("loadSession") == norm("load-session") == "loadsession"


def test_method_words_are_each_part_whole_and_split_on_underscores() -> None:
    assert method_words("session/set_config_option") == {
        "session", "setconfigoption", "set", "config", "option"
    }
    assert method_words("$/cancel_request") == {"cancelrequest", "cancel", "request"}
    assert method_words("Plan_Update") == {"planupdate", "plan", "update"}


def test_shared_words_leave_out_the_word_capabilities() -> None:
    assert shared_words(Capability("SessionCapabilities", "x"), "session/capabilities") == 1
    assert shared_words(Capability("ToolCallCapabilities", "cancel"), "tool_call/cancel") == 2


def test_names_in_matches_a_value_by_itself() -> None:
    assert names_in("Sends `plan_update`.", "SessionUpdate|plan_update")
    assert names_in("Sends `planUpdate`.", "SessionUpdate|plan_update")
    assert not names_in("Sends `plan`.", "SessionUpdate|plan_update")
    # a value may hold a `|` of its own: all of it after the def's name is the value
    assert names_in("Accepts `a|b`.", "Mode|a|b")
    assert not names_in("Accepts `a`.", "Mode|a|b") and not names_in("Accepts `b`.", "Mode|a|b")
    assert not names_in(None, "Mode|a")


def test_gates_of_a_method_by_mention_by_name_and_by_the_capability_s_own_words() -> None:
    caps = {
        "list": (Capability("SessionCapabilities", "list"),),
        "fork": (Capability("SessionCapabilities", "fork"),),
        "audit": (Capability("SessionCapabilities", "audit", "Enables `session/audit_log`."),),
    }
    assert gates_of("session/list", None, caps, by_name=True) == {"list"}
    assert gates_of("session/list", None, caps, by_name=False) == set()
    assert gates_of("session/x", "Needs the `session.fork` capability.", caps, by_name=False) == {"fork"}
    assert gates_of("session/audit_log", None, caps, by_name=False) == {"audit"}
    assert mentions(None) == []
