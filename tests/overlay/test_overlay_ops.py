"""Each overlay operation: applied when its precondition holds, already-present when its
postcondition does, conflict when neither, not-applicable when the target is absent;
running an overlay on its own result is always "obsolete" (idempotence)."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from acpgen.overlay import apply_overlays
from acpgen.overlay.model import Row, verdict_of
from acpgen.overlay.shapes import MARK, expand, same
from acpgen.load import MethodName

from tests.overlay.overlay_helpers import doc, overlay, run, small, statuses

DEFS = "$defs"

#: one op of each kind that applies cleanly to the small fixture
APPLYING: list[dict[str, Any]] = [
    {"op": "add_def", "name": "Triangle", "schema": {"type": "object", "properties": {"base": {"type": "number"}}, "required": ["base"]}},
    {"op": "add_field", "def": "Circle", "field": "center", "type": "number[] | null", "description": "x, y"},
    {"op": "remove_field", "def": "PingRequest", "field": "sessionId"},
    {"op": "set_field_type", "def": "PingRequest", "field": "value", "from": "string", "to": "boolean"},
    {"op": "add_variant", "def": "Shape", "tag": "triangle", "fields": {"base": {"type": "number", "required": True}}},
    {"op": "flatten_union", "def": "PingRequest", "field": "value", "tag": "type", "expect": {"type": "string", "required": True},
     "variants": [{"tag": "flag", "fields": {"value": {"type": "boolean", "required": True}}}, {"default": "text", "fields": {"value": {"type": "string", "required": True}}}]},
    {"op": "open_enum", "defs": {"Color": "color", "Level": "level"}},
    {"op": "open_union", "defs": {"Shape": "shape"}},
    {"op": "open_union", "defs": {"Auth": "auth method"}, "default-variant": "agent"},
    {"op": "add_method", "method": "agent/ping", "side": "agent", "request": "PingRequest", "response": "PingResponse", "description": "Ping."},
    {"op": "annotate", "pointer": "/$defs/Circle", "set": {"x-note": "round"}},
    {"op": "json_patch", "patch": [{"op": "add", "path": "/$defs/Circle/properties/color", "value": {"$ref": "#/$defs/Color"}}],
     "expect": [{"op": "test", "path": "/$defs/Circle/properties/color", "value": {"$ref": "#/$defs/Color"}}]},
]


@pytest.mark.parametrize("operation", APPLYING, ids=lambda o: o["op"] + ":" + str(o.get("def", o.get("name", o.get("method", "")))))
def test_applies_then_is_already_present(operation: dict[str, Any]) -> None:
    once, (first,) = apply_overlays(doc(small()), (overlay(operation),), "schema.json")
    assert first.verdict == "applies-cleanly", first.rows
    twice, (second,) = apply_overlays(once, (overlay(operation),), "schema.json")
    assert second.verdict == "obsolete", second.rows
    assert (twice.data, twice.meta) == (once.data, once.meta)  # already present: nothing changes


def test_the_result_is_still_a_valid_json_schema() -> None:
    data, report = run(small(), *(o for o in APPLYING if o["op"] != "set_field_type"))
    assert report.verdict == "applies-cleanly", report.rows
    jsonschema.Draft202012Validator.check_schema(data)


def test_changed_nodes_carry_provenance() -> None:
    data, _ = run(small(), APPLYING[0], APPLYING[4], APPLYING[6])
    defs = data[DEFS]
    assert defs["Triangle"][MARK] == "rfd/test"
    assert defs["Shape"][MARK] == "rfd/test"
    assert [b.get(MARK) for b in defs["Shape"]["oneOf"]] == [None, None, "rfd/test"]
    assert defs["Color"][MARK] == "rfd/test" and defs["Color"]["anyOf"][-1][MARK] == "rfd/test"
    assert MARK not in defs["Circle"]


def test_two_overlays_on_one_node_are_both_named() -> None:
    first = overlay(APPLYING[4], ident="rfd/one")
    second = overlay({"op": "open_union", "defs": {"Shape": "shape"}}, ident="rfd/two")
    new, reports = apply_overlays(doc(small()), (first, second), "schema.json")
    assert [r.verdict for r in reports] == ["applies-cleanly", "applies-cleanly"]
    assert new.data[DEFS]["Shape"][MARK] == ["rfd/one", "rfd/two"]


def test_the_input_document_is_not_mutated() -> None:
    base = doc(small())
    before = small()
    apply_overlays(base, (overlay(*APPLYING),), "schema.json")
    assert base.data == before


# ---------------------------------------------------------------- conflicts and absence


@pytest.mark.parametrize(
    ("operation", "reason"),
    [
        ({"op": "add_def", "name": "Circle", "schema": {"type": "string"}}, "def exists with a different shape"),
        ({"op": "add_field", "def": "Circle", "field": "radius", "type": "string"}, "field exists with a different schema"),
        ({"op": "add_field", "def": "Circle", "field": "radius", "type": "number"}, "field exists but is required"),
        ({"op": "add_field", "def": "Color", "field": "x", "type": "string"}, "not an object schema"),
        ({"op": "set_field_type", "def": "PingRequest", "field": "value", "from": "integer", "to": "boolean"}, "field has another type"),
        ({"op": "set_field_type", "def": "PingRequest", "field": "gone", "from": "string", "to": "boolean"}, "field gone"),
        ({"op": "add_variant", "def": "Shape", "tag": "circle", "payload": "Circle"}, "tag exists with a different payload"),
        ({"op": "add_variant", "def": "Shape", "tag": "blob", "payload": "Nope"}, "payload def does not exist"),
        ({"op": "add_variant", "def": "Color", "tag": "blue", "payload": "Circle"}, "not a tagged union"),
        ({"op": "flatten_union", "def": "PingRequest", "field": "value", "tag": "type", "expect": {"type": "integer", "required": True},
          "variants": [{"tag": "flag", "fields": {"value": {"type": "boolean"}}}]}, "field has another type"),
        ({"op": "flatten_union", "def": "Shape", "field": "value", "tag": "type", "expect": {"type": "string"},
          "variants": [{"tag": "flag", "fields": {"value": {"type": "boolean"}}}]}, "field gone but the union differs"),
        ({"op": "open_enum", "defs": {"Kind": "kind"}}, "fallback title 'other' is a known value"),
        ({"op": "open_enum", "defs": {"Shape": "shape"}}, "not a closed string enum"),
        ({"op": "open_union", "defs": {"Color": "color"}}, "not a tagged union"),
        ({"op": "open_union", "defs": {"Auth": "auth"}, "default-variant": "nobody"}, "no untagged variant titled 'nobody'"),
        ({"op": "add_method", "method": "agent/ping", "side": "agent", "request": "PingRequest", "response": "Circle"}, None),
        ({"op": "json_patch", "patch": [{"op": "test", "path": "/$defs/Circle/type", "value": "string"}]}, "patch does not apply"),
    ],
    ids=lambda v: v["op"] if isinstance(v, dict) else "",
)
def test_conflicts_say_why(operation: dict[str, Any], reason: str | None) -> None:
    data = small()
    if operation["op"] == "add_method":  # Circle already answers another method
        data[DEFS]["Circle"]["x-method"] = "shape/circle"
        reason = "already belong to another method"
    new, report = run(data, operation)
    (row,) = report.rows
    assert (row.status, report.verdict) == ("conflict", "conflict")
    assert reason in row.detail
    assert new == data  # a conflicting operation changes nothing


def test_absent_targets_are_not_applicable() -> None:
    ops = [
        {"op": "add_field", "def": "Nope", "field": "x", "type": "string"},
        {"op": "open_enum", "defs": {"Nope": "n"}},
        {"op": "assert_closed", "defs": ["Nope"]},
        {"op": "annotate", "pointer": "/$defs/Nope", "set": {"x-a": 1}},
        {"op": "add_method", "method": "a/b", "side": "agent", "request": "Nope"},
    ]
    _, report = run(small(), *ops)
    assert {r.status for r in report.rows} == {"not-applicable"}
    assert report.verdict == "not-applicable"


def test_applies_to_gates_the_whole_overlay() -> None:
    _, report = run(small(), APPLYING[0], protocols=(2,))
    assert report.verdict == "not-applicable" and report.rows == ()
    assert "protocol 2" in report.reason
    _, report = run(small(), APPLYING[0], channels=("unstable",))
    assert "channel unstable" in report.reason


def test_a_reference_to_a_def_that_does_not_exist_is_reported() -> None:
    _, report = run(small(), {"op": "add_def", "name": "A", "schema": {"$ref": "#/$defs/B"}})
    assert statuses(report) == [("A", "applied"), ("B", "conflict")]
    assert report.verdict == "conflict"


# ---------------------------------------------------------------- what the ops build


def test_open_enum_forms() -> None:
    data, _ = run(small(), {"op": "open_enum", "defs": {"Color": "color", "Level": "level"}}, fallback_description="Any {noun}.")
    color, level = data[DEFS]["Color"], data[DEFS]["Level"]
    assert color["anyOf"][0] == {"type": "string", "enum": ["red", "green"]}
    assert color["anyOf"][1]["title"] == "other" and color["anyOf"][1]["description"] == "Any color."
    assert "type" not in color and color["description"] == "A color."
    assert [b.get("const") for b in level["anyOf"]] == ["low", "high", None]
    validator = jsonschema.Draft202012Validator({**data, "$ref": "#/$defs/Color"})
    assert validator.is_valid("red") and validator.is_valid("_vendor") and validator.is_valid("purple")
    assert not validator.is_valid(3)


def test_open_union_keeps_unknown_payloads_and_rejects_malformed_known_ones() -> None:
    data, _ = run(small(), {"op": "open_union", "defs": {"Shape": "shape"}})
    shape = data[DEFS]["Shape"]
    assert "oneOf" not in shape and "discriminator" not in shape
    validator = jsonschema.Draft202012Validator({**data, "$ref": "#/$defs/Shape"})
    assert validator.is_valid({"kind": "circle", "radius": 1})
    assert validator.is_valid({"kind": "_hexagon", "sides": [1, 2], "nested": {"a": None}})
    assert not validator.is_valid({"kind": "circle"})  # a known tag must have its payload
    assert not validator.is_valid({"radius": 1})  # the tag stays required


def test_add_variant_extends_the_fallback_not_list() -> None:
    opened, _ = run(small(), {"op": "open_union", "defs": {"Shape": "shape"}})
    data, report = run(opened, {"op": "add_variant", "def": "Shape", "tag": "triangle", "fields": {"base": {"type": "number", "required": True}}})
    assert report.verdict == "applies-cleanly"
    branches = data[DEFS]["Shape"]["anyOf"]
    assert [b.get("title") for b in branches][-1] == "other"  # inserted before the fallback
    fallback = branches[-1]
    assert [t["properties"]["kind"]["const"] for t in fallback["not"]["anyOf"]] == ["circle", "square", "triangle"]
    _, again = run(data, {"op": "open_union", "defs": {"Shape": "shape"}})
    assert again.verdict == "obsolete"


def test_a_stale_fallback_is_a_conflict() -> None:
    opened, _ = run(small(), {"op": "open_union", "defs": {"Shape": "shape"}})
    opened[DEFS]["Shape"]["anyOf"].insert(0, {"type": "object", "properties": {"kind": {"type": "string", "const": "star"}}, "required": ["kind"]})
    _, report = run(opened, {"op": "open_union", "defs": {"Shape": "shape"}})
    (row,) = report.rows
    assert row.status == "conflict" and "missing ['star']" in row.detail


def test_untagged_default_variant() -> None:
    data, _ = run(small(), {"op": "open_union", "defs": {"Auth": "auth method"}, "default-variant": "agent"})
    auth = data[DEFS]["Auth"]["anyOf"]
    assert [b.get("title") for b in auth] == [None, "other", "agent"]
    assert auth[1]["required"] == ["type", "id", "name"]
    validator = jsonschema.Draft202012Validator({**data, "$ref": "#/$defs/Auth"})
    assert validator.is_valid({"id": "a", "name": "b"})  # no type: agent
    assert validator.is_valid({"type": "agent", "id": "a", "name": "b"})
    assert validator.is_valid({"type": "_sso", "id": "a", "name": "b", "url": "x"})
    assert not validator.is_valid({"type": "_sso", "name": "b"})  # the fallback keeps common fields
    assert not validator.is_valid({"type": "env_var", "id": "a"})  # a malformed known variant


def test_assert_closed() -> None:
    _, holds = run(small(), {"op": "assert_closed", "defs": ["Outcome", "Color"]})
    assert statuses(holds) == [("Outcome", "already-present"), ("Color", "already-present")]
    assert holds.verdict == "obsolete"
    opened, _ = run(small(), {"op": "open_union", "defs": {"Outcome": "outcome"}}, {"op": "open_enum", "defs": {"Color": "c"}})
    _, broken = run(opened, {"op": "assert_closed", "defs": ["Outcome", "Color"]})
    assert [r.status for r in broken.rows] == ["conflict", "conflict"]
    assert "upstream opened it" in broken.rows[0].detail


def test_flatten_union_builds_a_tagged_branch_and_an_untagged_default() -> None:
    data, _ = run(small(), APPLYING[5])
    ping = data[DEFS]["PingRequest"]
    assert "value" not in ping["properties"] and ping["required"] == ["sessionId"]
    validator = jsonschema.Draft202012Validator({**data, "$ref": "#/$defs/PingRequest"})
    assert validator.is_valid({"sessionId": "s", "value": "x"})
    assert validator.is_valid({"sessionId": "s", "type": "flag", "value": True})
    assert not validator.is_valid({"sessionId": "s", "type": "flag", "value": 3})
    # {"type": "flag", "value": "yes"} passes as the untagged default in JSON Schema (as in
    # upstream's schema), and in the bindings (test_overlay_bundled)
    assert validator.is_valid({"sessionId": "s", "type": "flag", "value": "yes"})


def test_add_method_binds_defs_lists_meta_and_routes() -> None:
    new, (report,) = apply_overlays(doc(small()), (overlay(APPLYING[9]),), "schema.json")
    assert report.verdict == "applies-cleanly"
    assert new.meta.methods == (MethodName("agent_ping", "agent/ping", "agent"),)
    defs = new.data[DEFS]
    assert (defs["PingRequest"]["x-method"], defs["PingResponse"]["x-side"]) == ("agent/ping", "agent")
    routed = defs["ClientRequest"]["anyOf"][-1]
    assert routed == {"$ref": "#/$defs/PingRequest", "title": "PingRequest", "description": "Ping.", MARK: "rfd/test"}


def test_json_patch_marks_the_defs_it_touches() -> None:
    data, _ = run(small(), APPLYING[11])
    assert data[DEFS]["Circle"][MARK] == "rfd/test"


# ---------------------------------------------------------------- comparison and verdicts


def test_comparison_ignores_order_descriptions_and_ref_spelling() -> None:
    a = {"type": "object", "required": ["a", "b"], "properties": {"a": {"allOf": [{"$ref": "#/$defs/X"}], "description": "one"}}}
    b = {"properties": {"a": {"$ref": "#/$defs/X", "description": "two"}}, "required": ["b", "a"], "type": "object", "discriminator": {}}
    assert same(a, b)
    assert not same(a, b, descriptions=True)
    assert not same({"type": "string"}, {"type": "integer"})
    assert same({"properties": {"_meta": {"type": "object"}, "a": {}}}, {"properties": {"a": {}}})  # era boilerplate


def test_compact_notation() -> None:
    assert expand("boolean") == {"type": "boolean"}
    assert expand("Foo", "d") == {"allOf": [{"$ref": "#/$defs/Foo"}], "description": "d"}
    assert expand("Foo | null") == {"anyOf": [{"$ref": "#/$defs/Foo"}, {"type": "null"}]}
    assert expand("string | null") == {"type": ["string", "null"]}
    assert expand("Foo[] | null") == {"type": ["array", "null"], "items": {"$ref": "#/$defs/Foo"}}
    assert expand("any") == {}


def _rows(*statuses: str, op: str = "add_def") -> tuple[Row, ...]:
    return tuple(Row(i, op, f"T{i}", s, "/") for i, s in enumerate(statuses))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("rows", "verdict"),
    [
        (_rows("applied", "applied"), "applies-cleanly"),
        (_rows("already-present", "already-present"), "obsolete"),
        (_rows("applied", "already-present"), "partially-merged"),
        (_rows("applied", "conflict"), "conflict"),
        (_rows("applied", "not-applicable"), "applies-cleanly"),
        (_rows("not-applicable"), "not-applicable"),
        (_rows("applied") + _rows("already-present", op="assert_closed"), "applies-cleanly"),
        (_rows("already-present", op="assert_closed"), "obsolete"),
        (_rows("conflict", op="assert_closed"), "conflict"),
    ],
)
def test_verdicts(rows: tuple[Row, ...], verdict: str) -> None:
    assert verdict_of(rows) == verdict


def test_tag_property_opens_a_union_of_only_its_default() -> None:
    data = small()
    data[DEFS]["Auth"]["anyOf"] = data[DEFS]["Auth"]["anyOf"][1:]  # only the untagged `agent`
    operation = {"op": "open_union", "defs": {"Auth": "auth method"}, "default-variant": "agent"}
    _, without = run(data, operation)
    assert without.rows[0].status == "conflict"
    opened, report = run(data, {**operation, "tag-property": "type"})
    assert report.verdict == "applies-cleanly"
    validator = jsonschema.Draft202012Validator({**opened, "$ref": "#/$defs/Auth"})
    assert validator.is_valid({"id": "a", "name": "b"}) and validator.is_valid({"type": "_sso", "id": "a", "name": "b"})
    assert not validator.is_valid({"type": "agent"})


def test_differences_name_the_missing_and_unexpected_members() -> None:
    from acpgen.overlay.shapes import difference

    ours = {"anyOf": [{"const": "a"}, {"const": "b"}]}
    theirs = {"anyOf": [{"const": "c"}, {"const": "a"}]}
    assert difference(ours, theirs) == '/anyOf: missing [{"const": "b"}]; unexpected [{"const": "c"}]'
    assert difference({"type": "string", "x": 1}, {"type": "object", "x": 2}) == '/type: expected "string", found "object"'


def _valid(data: dict[str, Any], name: str, instance: Any) -> bool:
    return jsonschema.Draft202012Validator({**data, "$ref": f"#/$defs/{name}"}).is_valid(instance)


def test_remove_field_takes_it_out_of_required_too() -> None:
    before = small()
    assert "sessionId" in before[DEFS]["PingRequest"]["required"]
    assert not _valid(before, "PingRequest", {"value": "v"})
    data, report = run(before, {"op": "remove_field", "def": "PingRequest", "field": "sessionId"})
    assert statuses(report) == [("PingRequest.sessionId", "applied")]
    ping = data[DEFS]["PingRequest"]
    assert "sessionId" not in ping["properties"] and ping["required"] == ["value"]
    assert _valid(data, "PingRequest", {"value": "v"})  # a message without it is valid now


@pytest.mark.parametrize(
    ("current", "to", "valid", "invalid"),
    [
        ({"type": "string", "description": "The value."}, "boolean", True, "yes"),
        ({"type": "string", "description": "The value.", "x-deserialize-default-on-error": True}, "integer | null", None, "1"),
        ({"type": "string", "description": "The value."}, "Color", "red", "yes"),
    ],
    ids=["scalar", "nullable-keeps-its-leniency", "ref"],
)
def test_set_field_type_leaves_nothing_of_the_old_type(current: dict[str, Any], to: str, valid: Any, invalid: Any) -> None:
    before = small()
    before[DEFS]["PingRequest"]["properties"]["value"] = current
    data, report = run(before, {"op": "set_field_type", "def": "PingRequest", "field": "value", "from": "string", "to": to})
    assert statuses(report) == [("PingRequest.value", "applied")]
    got = data[DEFS]["PingRequest"]["properties"]["value"]
    kept = {k: v for k, v in current.items() if k in ("default", "title") or k.startswith("x-")}
    assert same(got, {**expand(to, "The value."), **kept}, descriptions=True), got
    assert {k for k in got if k not in kept and not k.startswith("x-")} == set(expand(to, "The value."))
    assert _valid(data, "PingRequest", {"sessionId": "s", "value": valid})
    assert not _valid(data, "PingRequest", {"sessionId": "s", "value": invalid})
