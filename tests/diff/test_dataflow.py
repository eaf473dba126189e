"""Data-flow gates read from one release (acpgen/diff/dataflow.py), on small protocols built
by hand: which required identifiers of a request its caller can only have from optional
parts of what the other side sends, by which paths, and where those parts are found again.

The running example is ACP's own: the client calls ``session/set_model`` with a ``ModelId``
that it receives only inside the optional ``models`` of the agent's ``session/new`` result.
"""

from __future__ import annotations

from typing import Any

import pytest

from acpgen import ir
from acpgen.diff import dataflow
from acpgen.diff.dataflow import (
    Need,
    Point,
    descriptions,
    identifiers,
    needs,
    present,
    required_ids,
    vid,
)

AT = ir.Origin("schema.json", "#")
STR = ir.Prim("string")


def _f(
    name: str, t: ir.TypeExpr, required: bool = True, description: str | None = None
) -> ir.Field:
    return ir.Field(name, t, required, AT, description)


def _ref(key: str) -> ir.Ref:
    return ir.Ref(key)


def _obj(key: str, *fields: ir.Field, **more: Any) -> ir.ObjectDef:
    return ir.ObjectDef(key, AT, tuple(fields), **more)


def _alias(
    key: str, t: ir.TypeExpr = STR, description: str | None = None
) -> ir.AliasDef:
    return ir.AliasDef(key, AT, t, description)


def _request(name: str, side: str, params: str, result: str) -> ir.Method:
    return ir.Method(name, side, "request", AT, params, result)  # type: ignore[arg-type]


def _note(name: str, side: str, params: str) -> ir.Method:
    return ir.Method(name, side, "notification", AT, params)  # type: ignore[arg-type]


def _mixin(
    fields: tuple[ir.Field, ...], title: str | None = None, base: str | None = None
) -> ir.Mixin:
    return ir.Mixin(title, None, base, fields, AT)


def _protocol(defs: list[Any], methods: list[ir.Method]) -> ir.Protocol:
    return ir.Protocol("schema.json", "", "v1", "stable", tuple(defs), tuple(methods))


def _session_result(*fields: ir.Field) -> ir.ObjectDef:
    """The result of ``session/new``: its session (received for sure) and ``fields``."""
    return _obj("NewSessionResponse", _f("sessionId", _ref("SessionId")), *fields)


SET_MODEL = _request(
    "session/set_model", "agent", "SetModelRequest", "SetModelResponse"
)
NEW = _request("session/new", "agent", "NewSessionRequest", "NewSessionResponse")

BASE_DEFS: list[Any] = [
    _alias("ModelId", description="A model's id."),
    _alias("SessionId"),
    _obj(
        "SetModelRequest",
        _f("sessionId", _ref("SessionId")),
        _f("modelId", _ref("ModelId")),
    ),
    _obj("SetModelResponse"),
    _obj("NewSessionRequest", _f("cwd", STR)),
    _session_result(
        _f(
            "models",
            _ref("SessionModelState"),
            False,
            "The models, when the agent offers a choice.",
        ),
    ),
    _obj(
        "SessionModelState",
        _f("availableModels", ir.Array(_ref("ModelInfo"))),
        description="Models and the current one.",
    ),
    _obj("ModelInfo", _f("modelId", _ref("ModelId")), _f("name", STR)),
]
MODELS = Point("NewSessionResponse", "models", None, "SessionModelState")


def _with(*defs: Any, methods: tuple[ir.Method, ...] = ()) -> ir.Protocol:
    """The running example with some defs replaced or added, and some methods added."""
    keyed = {d.key: d for d in BASE_DEFS}
    keyed.update({d.key: d for d in defs})
    return _protocol(list(keyed.values()), [NEW, SET_MODEL, *methods])


# --- the parts -------------------------------------------------------------------------


def test_a_point_is_labelled_as_the_diff_names_it() -> None:
    assert MODELS.label == "NewSessionResponse.models"
    assert Point("Update", variant="plan").label == "Update variant plan"
    assert Point("Update", "entries", "plan").label == "Update.entries"


def test_a_variant_is_named_by_its_tag_else_its_title_else_its_kind() -> None:
    assert vid(ir.Variant("A", "tagged", AT, tag_value="plan", title="Plan")) == "plan"
    assert vid(ir.Variant("A", "tagged", AT, tag_value=3)) == "3"
    assert vid(ir.Variant("A", "default", AT, title="Stdio")) == "Stdio"
    assert vid(ir.Variant("A", "fallback", AT)) == "fallback"


def test_identifiers_are_named_aliases_of_a_string_or_an_integer() -> None:
    defs: dict[str, ir.Def] = {
        "S": _alias("S"),
        "I": _alias("I", ir.Prim("integer")),
        "N": _alias("N", ir.Prim("number")),
        "B": _alias("B", ir.Prim("boolean")),
        "R": _alias("R", _ref("S")),
        "O": _obj("O"),
    }
    assert identifiers(defs) == {"S", "I"}


def test_required_ids_follow_required_members_only() -> None:
    defs: dict[str, ir.Def] = {d.key: d for d in BASE_DEFS}
    defs["P"] = _obj(
        "P",
        _f("model", _ref("ModelId")),
        _f("optional", _ref("SessionId"), False),
        _f("list", ir.Array(_ref("SessionId"))),
        _f("nullable", ir.Nullable(_ref("SessionId"))),
        _f("inner", _ref("Inner")),
        _f("again", _ref("Inner")),
        _f("self", _ref("P")),
        _f("missing", _ref("Nowhere")),
    )
    defs["Inner"] = _obj("Inner", _f("session", _ref("SessionId")))
    defs["U"] = ir.TaggedUnionDef(
        "U", AT, "type", (), shared_fields=(_f("model", _ref("ModelId")),)
    )
    assert required_ids("P", defs) == [
        ("Inner.session", "SessionId"),
        ("P.model", "ModelId"),
    ]
    assert required_ids("U", defs) == [("U.model", "ModelId")]
    assert required_ids(None, defs) == []
    assert required_ids("ModelId", defs) == []


# --- needs: the gate -------------------------------------------------------------------


def test_an_identifier_the_caller_receives_only_in_an_optional_member_gates_the_request() -> (
    None
):
    assert needs(_with(), SET_MODEL) == [
        Need("SetModelRequest.modelId", "ModelId", ((MODELS,),))
    ]


def test_an_identifier_received_by_a_required_path_gates_nothing() -> None:
    required = _session_result(
        _f("models", _ref("SessionModelState")),
    )
    assert needs(_with(required), SET_MODEL) == []


def test_only_a_request_between_agent_and_client_is_gated() -> None:
    assert needs(_with(), _note("session/set_model", "agent", "SetModelRequest")) == []
    for side in ("both", "protocol", ""):
        assert (
            needs(
                _with(),
                _request(
                    "session/set_model", side, "SetModelRequest", "SetModelResponse"
                ),
            )
            == []
        )


def test_an_identifier_never_received_gates_nothing() -> None:
    no_models = _session_result()
    assert needs(_with(no_models), SET_MODEL) == []


def test_the_requests_own_result_is_not_a_source() -> None:
    """The caller has to call the request before it sees its result."""
    result = _obj("SetModelResponse", _f("models", _ref("SessionModelState"), False))
    no_models = _session_result()
    assert needs(_with(result, no_models), SET_MODEL) == []
    # the same result, received from another request, is a source
    other = _request("session/other", "agent", "NewSessionRequest", "SetModelResponse")
    (need,) = needs(_with(result, no_models, methods=(other,)), SET_MODEL)
    assert need.paths == (
        (Point("SetModelResponse", "models", None, "SessionModelState"),),
    )


def test_the_params_of_what_the_other_side_calls_are_a_source_too() -> None:
    """A request or notification the agent sends the client (the client implements it)."""
    no_models = _session_result()
    update = _obj("ModelUpdate", _f("models", _ref("SessionModelState"), False))
    told = _note("session/models", "client", "ModelUpdate")
    assert needs(_with(no_models, update, methods=(told,)), SET_MODEL) == [
        Need(
            "SetModelRequest.modelId",
            "ModelId",
            ((Point("ModelUpdate", "models", None, "SessionModelState"),),),
        )
    ]
    # a notification the client itself sends is no source
    mine = _note("session/models", "agent", "ModelUpdate")
    assert needs(_with(no_models, update, methods=(mine,)), SET_MODEL) == []


def test_an_identifier_the_caller_sends_as_its_own_data_gates_nothing() -> None:
    """The client has models of its own when it sends one in a notification, an optional
    member of a request's params, or a result it returns."""
    mine = _obj("Mine", _f("modelId", _ref("ModelId")))
    optional = _obj("Mine", _f("modelId", _ref("ModelId"), False))
    assert (
        needs(_with(mine, methods=(_note("mine", "agent", "Mine"),)), SET_MODEL) == []
    )
    assert (
        needs(
            _with(
                optional,
                methods=(_request("mine", "agent", "Mine", "SetModelResponse"),),
            ),
            SET_MODEL,
        )
        == []
    )
    returned = _request("ask", "client", "NewSessionRequest", "Mine")
    assert needs(_with(mine, methods=(returned,)), SET_MODEL) == []


def test_an_identifier_the_caller_only_hands_back_in_a_request_still_gates_it() -> None:
    """A required member of another request's params consumes the identifier: it is not
    the caller's own."""
    other = _obj("Other", _f("modelId", _ref("ModelId")))
    (need,) = needs(
        _with(
            other, methods=(_request("other", "agent", "Other", "SetModelResponse"),)
        ),
        SET_MODEL,
    )
    assert need.paths == ((MODELS,),)


def test_every_path_is_given_once_in_order() -> None:
    second = _session_result(
        _f("models", _ref("SessionModelState"), False),
        _f("fallback", _ref("ModelInfo"), False),
        _f("again", _ref("SessionModelState"), False),
    )
    (need,) = needs(_with(second), SET_MODEL)
    assert [[p.label for p in path] for path in need.paths] == [
        ["NewSessionResponse.again"],
        ["NewSessionResponse.fallback"],
        ["NewSessionResponse.models"],
    ]


def test_paths_through_unions_aliases_mixins_and_bases() -> None:
    variant = ir.Variant(
        "Update",
        "tagged",
        AT,
        tag_value="models",
        fields=(_f("state", _ref("SessionModelState")),),
    )
    based = ir.Variant("Update", "tagged", AT, tag_value="based", base="ModelInfo")
    mixed = ir.Variant(
        "Update",
        "tagged",
        AT,
        tag_value="mixed",
        mixins=(_mixin((_f("m", _ref("ModelId"), False),)),),
    )
    tagged = ir.TaggedUnionDef(
        "Update",
        AT,
        "type",
        (variant, based, mixed),
        shared_fields=(_f("shared", _ref("ModelId"), False),),
    )
    union = ir.UnionDef(
        "Either",
        AT,
        (ir.UnionMember(STR, AT), ir.UnionMember(_ref("ModelId"), AT, title="Model")),
    )
    untitled = ir.UnionDef(
        "Untitled", AT, (ir.UnionMember(STR, AT), ir.UnionMember(_ref("ModelId"), AT))
    )
    alias = _alias("Held", _ref("ModelInfo"))
    with_mixin = _obj(
        "WithMixin",
        mixins=(
            _mixin((_f("x", _ref("ModelId"), False),), title="Side"),
            _mixin((), base="ModelInfo"),
        ),
    )
    result = _session_result(
        _f("update", _ref("Update"), False),
        _f("either", _ref("Either"), False),
        _f("untitled", _ref("Untitled"), False),
        _f("held", _ref("Held"), False),
        _f("mixed", _ref("WithMixin"), False),
    )
    (need,) = needs(
        _with(result, tagged, union, untitled, alias, with_mixin), SET_MODEL
    )
    at = Point("NewSessionResponse", "update", None, "Update")
    assert need.paths == tuple(
        sorted(
            {
                (
                    Point("NewSessionResponse", "either", None, "Either"),
                    Point("Either", variant="Model"),
                ),
                (Point("NewSessionResponse", "held", None, "Held"),),
                (Point("NewSessionResponse", "mixed", None, "WithMixin"),),
                (
                    Point("NewSessionResponse", "mixed", None, "WithMixin"),
                    Point("WithMixin", "x", "Side", "ModelId"),
                ),
                (
                    Point("NewSessionResponse", "untitled", None, "Untitled"),
                    Point("Untitled", variant="1"),
                ),
                (at, Point("Update", "shared", None, "ModelId")),
                (at, Point("Update", variant="based")),
                (
                    at,
                    Point("Update", variant="mixed"),
                    Point("Update", "m", "mixed", "ModelId"),
                ),
                (at, Point("Update", variant="models")),
            },
            key=lambda p: [x.label for x in p],
        )
    )


def test_a_cycle_is_followed_once() -> None:
    looped = _obj(
        "SessionModelState",
        _f("next", _ref("SessionModelState"), False),
        _f("model", _ref("ModelInfo"), False),
    )
    (need,) = needs(_with(looped), SET_MODEL)
    assert need.paths == (
        (MODELS, Point("SessionModelState", "model", None, "ModelInfo")),
    )


def test_too_many_paths_gate_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the limit the search gives up: no gate rather than a wrong one. The limit counts
    every path found to the identifier: here 5 from what the client receives and 1 from what
    it sends (the request's own params)."""
    many = _session_result(
        *(_f(f"m{i}", _ref("ModelInfo"), False) for i in range(5)),
    )
    assert len(needs(_with(many), SET_MODEL)[0].paths) == 5
    monkeypatch.setattr(dataflow, "_LIMIT", 4)
    assert needs(_with(many), SET_MODEL) == []
    monkeypatch.setattr(dataflow, "_LIMIT", 5)
    assert needs(_with(many), SET_MODEL) == []
    monkeypatch.setattr(dataflow, "_LIMIT", 6)
    assert len(needs(_with(many), SET_MODEL)[0].paths) == 5


def test_too_many_paths_to_the_callers_own_data_count_as_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    other = _obj("Other", *(_f(f"m{i}", _ref("ModelInfo")) for i in range(5)))
    sent = _request(
        "other", "agent", "Other", "SetModelResponse"
    )  # consumed: not its own
    assert len(needs(_with(other, methods=(sent,)), SET_MODEL)) == 1
    monkeypatch.setattr(dataflow, "_LIMIT", 5)
    assert needs(_with(other, methods=(sent,)), SET_MODEL) == []


# --- present and descriptions: the point found again -----------------------------------


def _defs(*extra: Any) -> dict[str, ir.Def]:
    return _with(*extra).def_map()


def test_a_member_point_is_present_where_its_owner_still_has_the_member() -> None:
    defs = _defs()
    assert present(MODELS, defs, {}) is True
    assert present(Point("NewSessionResponse", "gone"), defs, {}) is False
    assert present(Point("Nowhere", "models"), defs, {}) is False
    assert (
        present(Point("NewSessionResponse", variant="x"), defs, {}) is False
    )  # an object has no variant
    renamed = {"OldResponse": "NewSessionResponse"}
    assert present(Point("OldResponse", "models"), defs, renamed) is True


def test_a_mixins_member_is_present_too() -> None:
    with_mixin = _obj("M", _f("a", STR), mixins=(_mixin((_f("b", STR, False),)),))
    defs = _defs(with_mixin)
    assert present(Point("M", "b"), defs, {}) and present(Point("M", "a"), defs, {})


def test_a_union_points_are_its_members() -> None:
    union = ir.UnionDef(
        "E",
        AT,
        (ir.UnionMember(STR, AT), ir.UnionMember(_ref("ModelId"), AT, title="Model")),
    )
    defs = _defs(union)
    assert present(Point("E", variant="Model"), defs, {}) is True
    assert present(Point("E", variant="0"), defs, {}) is True
    assert (
        present(Point("E", variant="1"), defs, {}) is False
    )  # titled: named by its title
    assert present(Point("E", variant="Other"), defs, {}) is False
    assert (
        present(Point("E", "x", "Model"), defs, {}) is False
    )  # a union has no members of its own


def test_a_tagged_unions_points_are_its_variants_and_their_members() -> None:
    variant = ir.Variant(
        "U",
        "tagged",
        AT,
        tag_value="a",
        base="Base",
        fields=(_f("own", STR, False),),
        mixins=(_mixin((_f("mix", STR, False),)),),
    )
    plain = ir.Variant("U", "tagged", AT, tag_value="b", base="NotAnObject")
    tagged = ir.TaggedUnionDef(
        "U", AT, "type", (variant, plain), shared_fields=(_f("shared", STR, False),)
    )
    defs = _defs(
        tagged, _obj("Base", _f("inherited", STR, False)), _alias("NotAnObject")
    )
    assert present(Point("U", variant="a"), defs, {}) is True
    assert present(Point("U", variant="c"), defs, {}) is False
    for wire in ("own", "mix", "inherited"):
        assert present(Point("U", wire, "a"), defs, {}) is True, wire
        assert present(Point("U", wire, "b"), defs, {}) is False, wire
    assert (
        present(Point("U", "shared", "a"), defs, {}) is False
    )  # a variant's own members only
    assert present(Point("U", "shared"), defs, {}) is True
    assert present(Point("U", "own"), defs, {}) is False
    assert present(Point("U", "own", "c"), defs, {}) is False


def test_a_points_descriptions_are_its_members_and_the_held_defs() -> None:
    defs = _defs()
    assert descriptions(MODELS, defs) == [
        "The models, when the agent offers a choice.",
        "Models and the current one.",
    ]
    assert descriptions(Point("NewSessionResponse", "models"), defs) == [
        "The models, when the agent offers a choice."
    ]
    assert descriptions(Point("Nowhere", "x", None, "ModelId"), defs) == [
        "A model's id."
    ]
    twice = _obj(
        "T",
        _f("a", STR, False, "first"),
        mixins=(_mixin((_f("a", STR, False, "second"),)),),
    )
    assert descriptions(Point("T", "a"), _defs(twice)) == ["first"]
    assert descriptions(
        Point("T", "a"),
        _defs(_obj("T", mixins=(_mixin((_f("a", STR, False, "mixed"),)),))),
    ) == ["mixed"]


def test_a_tagged_unions_member_descriptions_are_found_in_its_variants() -> None:
    variant = ir.Variant(
        "U", "tagged", AT, tag_value="a", fields=(_f("own", STR, False, "of a"),)
    )
    tagged = ir.TaggedUnionDef(
        "U", AT, "type", (variant,), shared_fields=(_f("shared", STR, False, "shared"),)
    )
    defs = _defs(tagged)
    assert descriptions(Point("U", "own", "a"), defs) == ["of a"]
    assert descriptions(Point("U", "shared"), defs) == ["shared"]
    assert descriptions(Point("U", variant="a"), defs) == []


def test_a_method_without_params_the_caller_implements_brings_nothing() -> None:
    ping = ir.Method("ping", "client", "notification", AT)  # the agent sends it, bare
    asked = ir.Method("ask", "client", "request", AT, None, "SetModelResponse")
    assert needs(_with(methods=(ping, asked)), SET_MODEL) == [
        Need("SetModelRequest.modelId", "ModelId", ((MODELS,),))
    ]


def test_each_identifier_of_a_request_is_looked_at() -> None:
    """An identifier that gates nothing (the session's, received for sure) does not hide
    the next one (the model's)."""
    params = _obj(
        "SetModelRequest",
        _f("aSession", _ref("SessionId")),
        _f("modelId", _ref("ModelId")),
    )
    assert needs(_with(params), SET_MODEL) == [
        Need("SetModelRequest.modelId", "ModelId", ((MODELS,),))
    ]


def test_paths_through_parts_that_hold_the_identifier_further_down() -> None:
    """Each kind of part (a variant's own member, a mixin's, a union member, a shared
    member) holding a def that holds the identifier, not the identifier itself."""
    variant = ir.Variant(
        "Update",
        "tagged",
        AT,
        tag_value="a",
        fields=(_f("own", _ref("ModelInfo"), False),),
        mixins=(_mixin((_f("mix", _ref("ModelInfo"), False),)),),
    )
    tagged = ir.TaggedUnionDef(
        "Update",
        AT,
        "type",
        (variant,),
        shared_fields=(_f("shared", _ref("ModelInfo"), False),),
    )
    union = ir.UnionDef("Either", AT, (ir.UnionMember(_ref("ModelInfo"), AT),))
    with_mixin = _obj(
        "WithMixin",
        mixins=(_mixin((_f("x", _ref("ModelInfo"), False),), title="Side"),),
    )
    result = _session_result(
        _f("update", _ref("Update")),
        _f("either", _ref("Either")),
        _f("mixed", _ref("WithMixin")),
    )
    (need,) = needs(_with(result, tagged, union, with_mixin), SET_MODEL)
    assert {tuple(p.label for p in path) for path in need.paths} == {
        ("Either variant 0",),
        ("WithMixin.x",),
        ("Update.shared",),
        ("Update variant a", "Update.own"),
        ("Update variant a", "Update.mix"),
    }
    own = next(path[1] for path in need.paths if path[-1].wire == "own")
    assert own == Point("Update", "own", "a", "ModelInfo")


def test_a_cycle_through_a_base_is_followed_once() -> None:
    """A variant's base, or a mixin's, that leads back to where it was reached from."""
    variant = ir.Variant("Update", "tagged", AT, tag_value="a", base="Looped")
    tagged = ir.TaggedUnionDef("Update", AT, "type", (variant,))
    looped = _obj(
        "Looped",
        _f("back", _ref("Update"), False),
        _f("model", _ref("ModelInfo"), False),
    )
    result = _session_result(
        _f("update", _ref("Update")),
    )
    (need,) = needs(_with(result, tagged, looped), SET_MODEL)
    assert [tuple(p.label for p in path) for path in need.paths] == [
        ("Update variant a", "Looped.model")
    ]

    mixed = _obj("Mixed", mixins=(_mixin((), base="Back"),))
    back = _obj(
        "Back", _f("again", _ref("Mixed"), False), _f("model", _ref("ModelInfo"), False)
    )
    result = _session_result(
        _f("mixed", _ref("Mixed")),
    )
    (need,) = needs(_with(result, mixed, back), SET_MODEL)
    assert [tuple(p.label for p in path) for path in need.paths] == [("Back.model",)]
