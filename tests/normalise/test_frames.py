"""The JSON-RPC envelope defs (acpgen/normalise/frames.py): an object with a required
string ``method`` and a ``params`` typed by the params of methods of one kind is marked
with that kind, ``request`` when it has an ``id`` member, else ``notification``; the
bindings then read its ``params`` as those of the method it names."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from acpgen import api, ir
from acpgen.normalise.frames import mark_envelopes

ORIGIN = ir.Origin("schema.json", "/$defs/X")
STRING = ir.Prim("string")
METHODS = (
    ir.Method("session/new", "agent", "request", ORIGIN, params="NewSessionRequest"),
    ir.Method("session/prompt", "agent", "request", ORIGIN, params="PromptRequest"),
    ir.Method("session/cancel", "agent", "notification", ORIGIN, params="CancelNotification"),
    ir.Method("initialized", "agent", "notification", ORIGIN),
    ir.Method("logout", "agent", "request", ORIGIN),
)


def field(name: str, t: ir.TypeExpr, required: bool = True) -> ir.Field:
    return ir.Field(name, t, required, ORIGIN)


def envelope(*fields: ir.Field, key: str = "ClientRequest") -> ir.ObjectDef:
    return ir.ObjectDef(key, ORIGIN, fields)


def params(*keys: str) -> ir.Field:
    return field("params", ir.AnyOf(tuple(ir.Ref(k) for k in keys)), required=False)


def kind(d: ir.Def) -> str | None:
    (marked,) = mark_envelopes([d], METHODS)
    assert isinstance(marked, ir.ObjectDef) and replace(marked, by_method=None) == d
    return marked.by_method


@pytest.mark.parametrize(
    "t",
    [
        ir.AnyOf((ir.Ref("NewSessionRequest"), ir.Ref("PromptRequest"))),
        ir.Nullable(ir.AnyOf((ir.Ref("PromptRequest"), ir.NullT()))),
        ir.Ref("NewSessionRequest"),
        ir.AnyOf((ir.Ref("Other"), ir.Nullable(ir.Ref("PromptRequest")))),
    ],
    ids=["union", "nullable-union", "one", "one-of-the-members"],
)
def test_a_request_envelope_is_marked(t: ir.TypeExpr) -> None:
    d = envelope(field("id", ir.Prim("integer")), field("method", STRING), field("params", t, required=False))
    assert kind(d) == "request"


def test_a_notification_envelope_has_no_id() -> None:
    assert kind(envelope(field("method", STRING), params("CancelNotification"))) == "notification"


@pytest.mark.parametrize(
    "d",
    [
        # the params of the other kind of method
        envelope(field("method", STRING), params("PromptRequest")),
        envelope(field("id", STRING), field("method", STRING), params("CancelNotification")),
        # params of no method
        envelope(field("id", STRING), field("method", STRING), params("Other")),
        envelope(field("id", STRING), field("method", STRING), field("params", ir.AnyOf(()))),
        envelope(field("id", STRING), field("method", STRING), field("params", ir.Array(ir.Ref("PromptRequest")))),
        envelope(field("id", STRING), field("method", STRING), field("params", ir.AnyT())),
        # no params, a method that may be absent or is no string
        envelope(field("id", STRING), field("method", STRING)),
        envelope(field("id", STRING), field("method", STRING, required=False), params("PromptRequest")),
        envelope(field("id", STRING), field("method", ir.Prim("integer")), params("PromptRequest")),
        envelope(field("id", STRING), field("method", ir.Lit(("session/new",))), params("NewSessionRequest")),
        envelope(field("id", STRING), field("methods", STRING), params("PromptRequest")),
    ],
    ids=[
        "request-params-without-id",
        "notification-params-with-id",
        "no-method-params",
        "empty-union",
        "list",
        "any",
        "no-params",
        "optional-method",
        "integer-method",
        "const-method",
        "no-method",
    ],
)
def test_anything_else_is_no_envelope(d: ir.ObjectDef) -> None:
    assert kind(d) is None


def test_other_defs_are_kept_in_order() -> None:
    defs: list[ir.Def] = [
        ir.AliasDef("Alias", ORIGIN, ir.Ref("PromptRequest")),
        envelope(field("id", STRING), field("method", STRING), params("PromptRequest"), key="ClientRequest"),
        ir.UnionDef("Union", ORIGIN, (ir.UnionMember(ir.Ref("PromptRequest"), ORIGIN),)),
        envelope(field("method", STRING), params("CancelNotification"), key="ClientNotification"),
        envelope(field("method", STRING), field("params", STRING), key="Plain"),
    ]
    marked = mark_envelopes(defs, METHODS)
    assert [(d.key, getattr(d, "by_method", None)) for d in marked] == [
        ("Alias", None),
        ("ClientRequest", "request"),
        ("Union", None),
        ("ClientNotification", "notification"),
        ("Plain", None),
    ]
    assert [marked[i] for i in (0, 2, 4)] == [defs[i] for i in (0, 2, 4)]


def test_the_build_marks_the_envelopes(tmp_path: Path) -> None:
    def obj(**properties: object) -> dict[str, object]:
        return {"type": "object", "properties": properties}

    defs = {
        "PromptRequest": {**obj(text={"type": "string"}), "x-side": "agent", "x-method": "session/prompt"},
        "CancelNotification": {**obj(sessionId={"type": "string"}), "x-side": "agent", "x-method": "session/cancel"},
        "ClientRequest": {
            **obj(id={"type": "integer"}, method={"type": "string"},
                  params={"anyOf": [{"$ref": "#/$defs/PromptRequest"}, {"type": "null"}]}),
            "required": ["id", "method"],
        },
        "ClientNotification": {
            **obj(method={"type": "string"}, params={"anyOf": [{"$ref": "#/$defs/CancelNotification"}]}),
            "required": ["method"],
        },
    }
    schema = tmp_path / "v1" / "schema.json"
    schema.parent.mkdir()
    schema.write_text(json.dumps({"$defs": defs}))
    (built,) = api.build_ir(schema)
    found = {d.key: getattr(d, "by_method", None) for d in built.protocol.defs}
    assert found == {
        "PromptRequest": None,
        "CancelNotification": None,
        "ClientRequest": "request",
        "ClientNotification": "notification",
    }
