"""Which records an accepted-change entry hides (acpgen/diff/ignore.py): every part it
names must match (rule, subject, and the file and variant when given), each as a glob.
"""

from __future__ import annotations

from typing import Any

import pytest

from acpgen.diff.ignore import Ignore
from acpgen.diff.model import Change

RECORD = Change(
    file="v1/schema.json",
    rule="variant-removed",
    kind="removed",
    level="error",
    code="error",
    subject="ContentBlock",
    breaks=("agent",),
    message="m",
    variant="audio",
)


def _entry(**parts: Any) -> Ignore:
    fields: dict[str, Any] = {"rule": "variant-removed", "subject": "ContentBlock"}
    fields.update(parts)
    return Ignore(reason="r", source="acpgen.toml", pointer="/diff/ignore/0", **fields)


@pytest.mark.parametrize(
    ("parts", "hidden"),
    [
        ({}, True),
        ({"rule": "variant-*"}, True),
        ({"rule": "field-removed"}, False),
        ({"subject": "Content*"}, True),
        ({"subject": "ToolCall"}, False),
        ({"rule": "field-removed", "subject": "ToolCall"}, False),
        ({"file": "v1/*"}, True),
        ({"file": "v1/schema.json"}, True),
        ({"file": "v2/*"}, False),
        ({"variant": "aud*"}, True),
        ({"variant": "image"}, False),
        ({"file": "v1/*", "variant": "image"}, False),
        ({"file": "v2/*", "variant": "audio"}, False),
        ({"rule": "x", "file": "v1/*", "variant": "audio"}, False),
        ({"subject": "x", "file": "v1/*", "variant": "audio"}, False),
    ],
)
def test_every_named_part_must_match(parts: dict[str, Any], hidden: bool) -> None:
    assert _entry(**parts).matches(RECORD) is hidden


def test_a_variant_entry_does_not_hide_a_record_without_a_variant() -> None:
    plain = Change(**{**RECORD.__dict__, "variant": None})
    assert _entry(variant="*").matches(plain) is True  # `*` matches the empty name
    assert _entry(variant="a*").matches(plain) is False
    assert _entry().matches(plain) is True
