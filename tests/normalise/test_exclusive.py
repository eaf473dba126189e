"""Disjointness of the members of an untagged ``oneOf`` (acpgen/normalise/exclusive.py):
a pair is disjoint only when proved so; JSON kinds meet as JSON Schema says they do
(``integer`` is a kind of ``number``: ``1`` is valid for both)."""

from __future__ import annotations

from typing import Any

import pytest

from acpgen.normalise.exclusive import exclusivity, kinds, may_overlap


def _nothing(ref: str) -> Any:
    return None


@pytest.mark.parametrize(
    ("a", "b", "overlap"),
    [
        ({"type": "integer"}, {"type": "number"}, True),  # 1 is both
        ({"type": "number"}, {"type": "integer"}, True),
        ({"type": "number"}, {"const": 2}, True),
        ({"type": "integer"}, {"const": 2.5}, False),
        ({"type": "integer"}, {"type": "string"}, False),
        ({"type": "number"}, {"type": "boolean"}, False),
    ],
)
def test_kinds_meet_as_json_schema_says(a: Any, b: Any, overlap: bool) -> None:
    assert may_overlap(a, b, _nothing) is overlap


def test_an_integer_and_a_number_member_are_checked() -> None:
    assert exclusivity([{"type": "integer"}, {"type": "number"}], _nothing) == "checked"
    assert kinds({"type": "number"}, _nothing) == {"integer", "number"}
