"""The three RFD overlays against real upstream releases (read from ../shared, never copied).

For each RFD: applied to the last release without it, the touched defs equal the first
release with it (canonically) and accept or reject the same instances, in JSON Schema
and in the generated Pydantic bindings; on releases that have it the overlay reports
itself obsolete, or the conflict upstream's later reshaping causes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pydantic import TypeAdapter, ValidationError

from acpgen.load import load_file, load_inputs
from acpgen.overlay import Report, apply_overlays, read_overlays
from acpgen.overlay.shapes import same

from tests import corpus
from tests.conftest import generate, import_file

pytestmark = corpus.needs_corpus

ROOT = Path(__file__).resolve().parents[2]
RFDS = ROOT / "schemas" / "rfds"
VERDICTS = {"applies-cleanly", "partially-merged", "obsolete", "conflict", "not-applicable"}


def _overlays(*names: str):  # type: ignore[no-untyped-def]
    return read_overlays([RFDS / f"{n}.yaml" for n in names])


def _apply(rel: str, *names: str) -> tuple[dict[str, Any], tuple[Report, ...]]:
    new, reports = apply_overlays(load_file(corpus.ACP / rel), _overlays(*names), rel)
    return new.data, reports


def _defs(rel: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((corpus.ACP / rel).read_text())["$defs"]
    return data


def _validator(data: dict[str, Any], name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({"$defs": data["$defs"], "$ref": f"#/$defs/{name}"})


def _messages_of(types: set[str], tree: str) -> list[tuple[str, Any]]:
    return [
        (m["type"], corpus.payload(m))
        for m in corpus.messages()
        if m["type"] in types and m["written_for"]["schema_file"].startswith(tree + "/")
    ]


def _same_verdicts(ours: dict[str, Any], theirs: dict[str, Any], cases: list[tuple[str, Any]]) -> list[tuple[str, Any, bool]]:
    """Every case both schemas accept or both reject; returns (type, instance, accepted)."""
    out = []
    for name, instance in cases:
        a = _validator(ours, name).is_valid(instance)
        b = _validator(theirs, name).is_valid(instance)
        assert a == b, (name, instance, a, b)
        out.append((name, instance, a))
    return out


# ------------------------------------------------------------------ boolean config option

BOOLEAN_TOUCHED = ("SessionConfigBoolean", "SessionConfigOption", "SetSessionConfigOptionRequest")
SET = "SetSessionConfigOptionRequest"
BOOLEAN_CASES: list[tuple[str, Any]] = [
    (SET, {"sessionId": "s", "configId": "mode", "value": "code"}),
    (SET, {"sessionId": "s", "configId": "brave", "type": "boolean", "value": True}),
    (SET, {"sessionId": "s", "configId": "brave", "type": "boolean", "value": False, "_meta": {"a": 1}}),
    (SET, {"sessionId": "s", "configId": "brave", "type": "_future", "value": "x"}),
    (SET, {"sessionId": "s", "configId": "brave", "type": "boolean"}),
    (SET, {"sessionId": "s", "configId": "brave", "value": True}),
    (SET, {"sessionId": "s", "configId": "brave", "type": "boolean", "value": 1}),
    (SET, {"sessionId": "s", "value": "code"}),
    ("SessionConfigOption", {"id": "brave", "name": "Brave", "type": "boolean", "currentValue": True}),
    ("SessionConfigOption", {"id": "brave", "name": "Brave", "type": "boolean", "currentValue": "yes"}),
    ("SessionConfigOption", {"id": "brave", "name": "Brave", "type": "boolean"}),
    ("SessionConfigOption", {"id": "m", "name": "M", "type": "select", "currentValue": "a", "options": [{"value": "a", "name": "A"}]}),
    ("SessionConfigOption", {"id": "m", "name": "M", "type": "toggle", "currentValue": True}),
    ("SessionConfigBoolean", {"currentValue": False}),
    ("SessionConfigBoolean", {"currentValue": "false"}),
]


def test_boolean_overlay_on_v1_16_gives_v1_19() -> None:
    ours, (report,) = _apply("schema-v1.16.0/v1/schema.json", "boolean-config-option")
    assert report.verdict == "applies-cleanly"
    theirs = json.loads((corpus.ACP / "schema-v1.19.0/v1/schema.json").read_text())
    for name in BOOLEAN_TOUCHED:
        assert same(ours["$defs"][name], theirs["$defs"][name]), name
    cases = BOOLEAN_CASES + _messages_of({SET, "SessionConfigOption", "NewSessionResponse"}, "v1")
    results = _same_verdicts(ours, theirs, cases)
    assert sum(ok for *_, ok in results) >= 6 and sum(not ok for *_, ok in results) >= 6


def test_boolean_bindings_behave_like_v1_19(tmp_path: Path) -> None:
    """The generated Pydantic bindings of both schemas agree, with JSON Schema too where
    the schema is lenient: {"type": "boolean", "value": "yes"} is a valid ``value_id``."""
    ours, _ = _apply("schema-v1.16.0/v1/schema.json", "boolean-config-option")
    (tmp_path / "ours").mkdir()
    (tmp_path / "ours" / "schema.json").write_text(json.dumps(ours))
    modules = []
    for label, schema in (("ours", tmp_path / "ours" / "schema.json"), ("theirs", corpus.ACP / "schema-v1.19.0/v1/schema.json")):
        out = generate(schema, tmp_path / f"gen-{label}", formatted=False)
        modules.append(import_file(out / "acp_pydantic" / "v1.py"))
    cases = BOOLEAN_CASES + [(SET, {"sessionId": "s", "configId": "brave", "type": "boolean", "value": "yes"})]
    for name, instance in cases:
        verdicts = []
        for module in modules:
            adapter = TypeAdapter(getattr(module, name))
            try:
                value = adapter.validate_python(instance)
                verdicts.append(adapter.dump_python(value, mode="json", by_alias=True, exclude_unset=True) == instance)
            except ValidationError:
                verdicts.append(None)
        assert verdicts[0] == verdicts[1], (name, instance, verdicts)
    yes = {"sessionId": "s", "configId": "brave", "type": "boolean", "value": "yes"}
    value = TypeAdapter(modules[0].SetSessionConfigOptionRequest).validate_python(yes)
    assert type(value).__name__ == "ValueIdSetSessionConfigOptionRequest" and value.value == "yes"


def test_boolean_overlay_on_main_is_obsolete_for_v1_and_conflicts_for_v2() -> None:
    for rel in ("main/v1/schema.json", "main/v1/schema.unstable.json"):
        _, (report,) = _apply(rel, "boolean-config-option")
        assert report.verdict == "obsolete", rel
    _, (report,) = _apply("main/v2/schema.json", "boolean-config-option")
    assert report.verdict == "conflict"
    assert [(r.op, r.status) for r in report.rows] == [
        ("add_def", "already-present"),
        ("add_variant", "already-present"),
        ("flatten_union", "conflict"),
    ]
    assert "found [id, boolean, <other (tag required)>]" in report.rows[-1].detail


# ------------------------------------------------------------------ open enums

#: what upstream changed in the same release besides the RFD (not the overlay's to add)
OPEN_ENUM_DRIFT = {"SessionUpdate": "current_mode_update"}  # session modes were removed in v0.13.5


def _without_tag(schema: dict[str, Any], tag: str) -> dict[str, Any]:
    branches = [b for b in schema["anyOf"] if b.get("properties", {}).get("sessionUpdate", {}).get("const") != tag]
    return {**schema, "anyOf": [_drop_not_tag(b, tag) for b in branches]}


def _drop_not_tag(branch: dict[str, Any], tag: str) -> dict[str, Any]:
    if "not" not in branch:
        return branch
    return {**branch, "not": {"anyOf": [t for t in branch["not"]["anyOf"] if t["properties"]["sessionUpdate"]["const"] != tag]}}


OPEN_CASES: list[tuple[str, Any]] = [
    ("Role", "assistant"),
    ("Role", "_vendor_role"),
    ("Role", "system"),
    ("Role", 3),
    ("ToolKind", "other"),
    ("ToolKind", "_custom"),
    ("StopReason", "end_turn"),
    ("StopReason", None),
    ("SessionUpdate", {"sessionUpdate": "_zed_progress", "percent": 40, "nested": {"a": [1]}}),
    ("SessionUpdate", {"sessionUpdate": "future_update"}),
    ("SessionUpdate", {"sessionUpdate": "agent_message_chunk"}),  # known tag, malformed
    ("SessionUpdate", {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}),
    ("SessionUpdate", {"content": {"type": "text", "text": "no tag"}}),
    ("ContentBlock", {"type": "_vendor_block", "blob": "x"}),
    ("ContentBlock", {"type": "image", "data": "x"}),  # known tag, missing mimeType
    ("AuthMethod", {"id": "a", "name": "Agent"}),
    ("AuthMethod", {"type": "_sso", "id": "a", "name": "SSO", "url": "https://x"}),
    ("AuthMethod", {"type": "_sso", "name": "SSO"}),
    ("AuthMethod", {"type": "env_var", "id": "a", "name": "Env"}),
    ("RequestPermissionOutcome", {"outcome": "_deferred"}),
    ("RequestPermissionOutcome", {"outcome": "cancelled"}),
]


def test_open_enums_overlay_on_v0_13_4_gives_v0_13_5() -> None:
    rel = "v0.13.4/v2/schema.unstable.json"
    ours, (report,) = _apply(rel, "open-enums")
    assert report.verdict == "applies-cleanly"
    touched = {r.target for r in report.rows if r.status == "applied"}
    assert len(touched) == 18
    theirs = json.loads((corpus.ACP / "v0.13.5/v2/schema.unstable.json").read_text())
    for name in sorted(touched | {"AuthMethodAgent"}):
        mine = ours["$defs"][name]
        if name in OPEN_ENUM_DRIFT:
            mine = _without_tag(mine, OPEN_ENUM_DRIFT[name])
        assert same(mine, theirs["$defs"][name]), name
    results = _same_verdicts(ours, theirs, OPEN_CASES + _messages_of(touched, "v2"))
    accepted = {(n, json.dumps(i)) for n, i, ok in results if ok}
    assert ("Role", '"system"') in accepted and ("SessionUpdate", '{"sessionUpdate": "agent_message_chunk"}') not in accepted
    _, (again,) = _apply("v0.13.5/v2/schema.unstable.json", "open-enums")
    assert again.verdict == "obsolete"


def test_open_enums_on_main_v2_reports_what_upstream_opened_since() -> None:
    _, (report,) = _apply("main/v2/schema.json", "open-enums")
    assert report.verdict == "conflict"
    conflicts = {r.target: r.detail for r in report.rows if r.status == "conflict"}
    assert {"RequestPermissionOutcome", "McpServer"} <= set(conflicts)
    assert all("upstream opened it" in conflicts[n] for n in ("RequestPermissionOutcome", "McpServer"))


# ------------------------------------------------------------------ session config options


def test_session_config_options_on_v0_10_7_gives_v0_11_1() -> None:
    ours, (report,) = _apply("v0.10.7/v1/schema.json", "session-config-options")
    assert report.verdict == "applies-cleanly"
    theirs = json.loads((corpus.ACP / "v0.11.1/v1/schema.json").read_text())
    added = {r.target for r in report.rows if r.op == "add_def"}
    differing = sorted(n for n in added if not same(ours["$defs"][n], theirs["$defs"][n]))
    assert differing == ["SessionConfigSelect"]  # upstream also allows grouped values (not in the seeds)
    cases: list[tuple[str, Any]] = [
        ("SetSessionConfigOptionRequest", {"sessionId": "s", "configId": "mode", "value": "code"}),
        ("SetSessionConfigOptionRequest", {"sessionId": "s", "configId": "mode"}),
        ("SessionConfigOptionCategory", "_my_custom_category"),
        ("SessionConfigOptionCategory", "thought_level"),
        ("SessionUpdate", {"sessionUpdate": "config_option_update", "configOptions": []}),
        ("SessionUpdate", {"sessionUpdate": "config_option_update"}),
        ("NewSessionResponse", {"sessionId": "s", "configOptions": None}),
        ("SessionConfigOption", {"id": "m", "name": "M", "type": "select", "currentValue": "a", "options": [{"value": "a", "name": "A"}]}),
        ("SessionConfigOption", {"id": "m", "name": "M", "type": "select", "currentValue": "a"}),
    ]
    _same_verdicts(ours, theirs, cases + _messages_of({"NewSessionResponse"}, "v1"))
    _, (later,) = _apply("v0.11.1/v1/schema.json", "session-config-options")
    assert later.verdict == "conflict"
    assert [r.target for r in later.rows if r.status != "already-present"] == ["SessionConfigSelect"]


# ------------------------------------------------------------------ every release


def test_every_overlay_on_every_corpus_schema_file() -> None:
    """Never an exception: a verdict for each overlay (alone, and the three in order) on
    every schema file of every release; where they apply, the result builds."""
    from acpgen.normalise import build_protocol

    each = {n: _overlays(n) for n in ("session-config-options", "boolean-config-option", "open-enums")}
    chain = _overlays("session-config-options", "boolean-config-option", "open-enums")
    seen = 0
    for release in corpus.releases():
        for doc in load_inputs(corpus.ACP / release):
            for overlays in (*each.values(), chain):
                new, reports = apply_overlays(doc, overlays, doc.source.path)
                assert {r.verdict for r in reports} <= VERDICTS
                if all(r.verdict in ("applies-cleanly", "obsolete", "partially-merged") for r in reports):
                    build_protocol(new)
                seen += 1
    assert seen >= 4 * 90
