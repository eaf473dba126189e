"""The second bundled target: v0.1.3 as the three seed RFDs propose it (generated/v0.1.3-rfds).

Bindings of every style behave as the RFDs say (strict boolean branch, unknown enum
values kept, unknown variants round-trip whole, malformed known variants rejected);
the docs mark what each overlay changed and close with its status table.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from acpgen.load import load_inputs
from acpgen.overlay import apply_overlays, read_overlays

from tests.conftest import import_file

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "generated" / "v0.1.3-rfds"
THREE = [ROOT / "schemas" / "rfds" / f"{n}.yaml" for n in ("session-config-options", "boolean-config-option", "open-enums")]
STYLES = ("pydantic", "dataclasses", "typeddict")
_MODULES: dict[str, ModuleType] = {}


def module(style: str) -> ModuleType:
    if style not in _MODULES:
        _MODULES[style] = import_file(OUT / f"acp_{style}" / "v1.py")
    return _MODULES[style]


def load(style: str, name: str, data: Any) -> Any:
    m = module(style)
    if style == "dataclasses":
        return m.dump(m.load(getattr(m, name), data))
    ta = TypeAdapter(getattr(m, name))
    return ta.dump_python(ta.validate_json(json.dumps(data)), mode="json", by_alias=True, exclude_unset=True)


def rejected(style: str, name: str, data: Any) -> bool:
    m = module(style)
    error = m.ValidationError if style == "dataclasses" else ValidationError
    try:
        load(style, name, data)
    except error:
        return True
    return False


SET = "SetSessionConfigOptionRequest"
ROUND_TRIPS = [
    (SET, {"sessionId": "s", "configId": "mode", "value": "code"}),
    (SET, {"sessionId": "s", "configId": "brave", "type": "boolean", "value": True}),
    (SET, {"sessionId": "s", "configId": "brave", "type": "_future", "value": "x"}),
    ("SessionConfigOption", {"id": "brave", "name": "Brave", "type": "boolean", "currentValue": False}),
    ("SessionConfigOption", {"id": "m", "name": "M", "type": "select", "currentValue": "a", "options": [{"value": "a", "name": "A"}]}),
    ("SessionConfigOption", {"id": "x", "name": "X", "type": "_slider", "min": 0, "max": {"deep": [1, 2]}}),
    ("SessionUpdate", {"sessionUpdate": "config_option_update", "configOptions": []}),
    ("SessionUpdate", {"sessionUpdate": "_zed_progress", "percent": 40, "nested": {"a": [1, None]}}),
    ("ContentBlock", {"type": "_vendor_block", "blob": "x"}),
    ("ToolCallContent", {"type": "_terminal_ref", "id": "t1"}),
    ("Role", "_vendor_role"),
    ("Role", "system"),
    ("StopReason", "_paused"),
    ("ToolKind", "unknown"),
    ("NewSessionResponse", {"sessionId": "s", "configOptions": [{"id": "brave", "name": "Brave", "type": "boolean", "currentValue": True}]}),
    # a malformed boolean is still a valid untagged `value_id` (the RFD's default branch
    # does not rule out the tag): kept as received, no "yes" -> True
    (SET, {"sessionId": "s", "configId": "brave", "type": "boolean", "value": "yes"}),
]
REJECTED = [
    (SET, {"sessionId": "s", "configId": "brave", "type": "boolean", "value": 1}),
    ("SessionConfigOption", {"id": "brave", "name": "Brave", "type": "boolean", "currentValue": "true"}),
    ("SessionUpdate", {"sessionUpdate": "plan"}),  # a known tag with a malformed payload
    ("ContentBlock", {"type": "image", "data": "x"}),
    ("Role", 3),
    ("RequestPermissionOutcome", {"outcome": "_deferred"}),  # request-critical: stays closed
]


@pytest.mark.parametrize("style", ("pydantic", "dataclasses"))
@pytest.mark.parametrize(("name", "data"), ROUND_TRIPS, ids=lambda v: v if isinstance(v, str) else "")
def test_round_trips_exactly(style: str, name: str, data: Any) -> None:
    assert load(style, name, data) == data


@pytest.mark.parametrize("style", ("pydantic", "dataclasses"))
@pytest.mark.parametrize(("name", "data"), REJECTED, ids=lambda v: v if isinstance(v, str) else "")
def test_rejects(style: str, name: str, data: Any) -> None:
    assert rejected(style, name, data)


def test_typeddict_style_names_the_overlaid_shapes() -> None:
    td = module("typeddict")
    assert td.SessionConfigBoolean.__required_keys__ == {"currentValue"}
    assert {"type", "value"} <= set(td.BooleanSetSessionConfigOptionRequest.__annotations__)
    assert "configOptions" in td.NewSessionResponse.__optional_keys__


def test_unknown_values_are_marked_as_unknown() -> None:
    m = module("pydantic")
    update = TypeAdapter(m.SessionUpdate).validate_python({"sessionUpdate": "_zed_progress", "percent": 1})
    assert type(update).__name__ == "OtherSessionUpdate"


def test_headers_name_the_overlays() -> None:
    for style in STYLES:
        head = (OUT / f"acp_{style}" / "v1.py").read_text().splitlines()[:6]
        assert [line.split()[2] for line in head if line.startswith("# overlay:")] == [
            "rfd/session-config-options",
            "rfd/boolean-config-option",
            "rfd/open-enums",
        ]


def test_overlaid_schema(snapshot) -> None:  # type: ignore[no-untyped-def]
    """The schema the bindings come from: the bundled release as the three RFDs propose it."""
    (doc,) = load_inputs(ROOT / "schemas" / "acp" / "v0.1.3")
    new, reports = apply_overlays(doc, read_overlays(THREE), "v1/schema.json")
    assert [r.verdict for r in reports] == ["applies-cleanly"] * 3
    changed = {k: v for k, v in new.data["$defs"].items() if v != doc.data["$defs"].get(k)}
    assert json.dumps(changed, indent=1, sort_keys=True) == snapshot
    assert [(m.key, m.wire, m.side) for m in new.meta.methods if m not in doc.meta.methods] == [
        ("session_set_config_option", "session/set_config_option", "agent")
    ]


@pytest.mark.parametrize("style", ("mdx", "md"))
def test_docs_mark_every_overlaid_item(style: str) -> None:
    page = (OUT / style / "v1" / f"schema.{style}").read_text()
    base = (ROOT / "generated" / "v0.1.3" / style / "v1" / f"schema.{style}").read_text()
    assert "RFD" not in base and "Proposed changes" not in base
    head, _, tail = page.partition("## Proposed changes")
    assert tail, "the page ends with a Proposed changes section"
    for slug in ("session-config-options", "boolean-config-option", "open-enums"):
        assert f"RFD: {slug}" in head  # badges on the items
        assert f"RFD: {slug}" in tail  # and a block in the closing section
    if style == "mdx":
        assert '<Badge color="blue">RFD: boolean-config-option</Badge>' in head
        assert 'post={["RFD: session-config-options"]}' in head  # NewSessionResponse.configOptions
        assert 'post={["open", "RFD: open-enums"]}' in head  # the fallback variants
        assert "| `flatten_union` | [`SetSessionConfigOptionRequest.value`](#setsessionconfigoptionrequest) | applied |" in tail
    else:
        assert "### RFD: open-enums" in tail and "[RFD: open-enums](#rfd-open-enums)" in head
    assert tail.count("| applied |") + tail.count("| not-applicable") + tail.count("| already-present") == 12 + 3 + 22
