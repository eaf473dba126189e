"""Which methods are about a session (acpgen/normalise/sessions.py), decided from the
schema: params with a required string member ``sessionId``, directly or through an alias
of a string; never an optional one, a non-string one, or a method without params."""

from __future__ import annotations

from acpgen import ir
from acpgen.normalise.sessions import mark_sessions, session_member

from .. import corpus

ORIGIN = ir.Origin("schema.json", "/$defs/X")


def obj(key: str, *fields: ir.Field) -> ir.ObjectDef:
    return ir.ObjectDef(key, ORIGIN, fields)


def field(name: str, t: ir.TypeExpr, required: bool = True) -> ir.Field:
    return ir.Field(name, t, required, ORIGIN)


STRING = ir.Prim("string")
DEFS: dict[str, ir.Def] = {
    "SessionId": ir.AliasDef("SessionId", ORIGIN, STRING),
    "Wrapped": ir.AliasDef("Wrapped", ORIGIN, ir.Ref("SessionId")),
    "Loop": ir.AliasDef("Loop", ORIGIN, ir.Ref("Loop")),
    "Direct": obj("Direct", field("sessionId", STRING), field("x", ir.Prim("integer"))),
    "ByAlias": obj("ByAlias", field("sessionId", ir.Ref("SessionId"))),
    "ByTwoAliases": obj("ByTwoAliases", field("sessionId", ir.Ref("Wrapped"))),
    "Optional": obj("Optional", field("sessionId", ir.Ref("SessionId"), required=False)),
    "Number": obj("Number", field("sessionId", ir.Prim("integer"))),
    "Nullable": obj("Nullable", field("sessionId", ir.Nullable(STRING))),
    "Cyclic": obj("Cyclic", field("sessionId", ir.Ref("Loop"))),
    "Other": obj("Other", field("session", STRING)),
}


def test_a_required_string_session_id_names_the_session() -> None:
    assert session_member("Direct", DEFS) == "sessionId"
    assert session_member("ByAlias", DEFS) == "sessionId"
    assert session_member("ByTwoAliases", DEFS) == "sessionId"


def test_anything_else_is_about_no_session() -> None:
    for key in ("Optional", "Number", "Nullable", "Cyclic", "Other", "SessionId", "Missing", None):
        assert session_member(key, DEFS) is None, key


def test_methods_are_marked() -> None:
    methods = (
        ir.Method("session/update", "client", "notification", ORIGIN, params="ByAlias"),
        ir.Method("initialize", "agent", "request", ORIGIN, params="Other"),
        ir.Method("x/none", "agent", "request", ORIGIN),
    )
    marked = mark_sessions(methods, list(DEFS.values()))
    assert [m.session for m in marked] == ["sessionId", None, None]


@corpus.needs_corpus
def test_every_session_method_of_main_is_marked() -> None:
    """On upstream's main v1, the session methods are marked and initialize is not."""
    from acpgen.api import build_protocols

    protocol = next(p for p in build_protocols(corpus.ACP / "main" / "v1" / "schema.json") if p.stability == "stable")
    marked = {m.name for m in protocol.methods if m.session}
    assert {"session/update", "session/prompt", "session/cancel", "session/request_permission", "fs/read_text_file"} <= marked
    assert not marked & {"initialize", "session/new", "authenticate"}
