"""The marks of one page (acpgen/history/marks.py), from a hand-made history: which
``acpgen diff`` records give an element a "changed in" mark."""

from __future__ import annotations

import pytest

from acpgen.diff import Change
from acpgen.history.elements import def_key, member_key
from acpgen.history.marks import page_marks
from acpgen.history.model import History, Step

FILE = "v1/schema.json"
KEYS = frozenset({def_key("Thing"), member_key("Thing", "size")})


def _history(level: str, kind: str = "type-changed") -> History:
    change = Change(
        file=FILE,
        rule="type-narrowed",
        kind=kind,
        level=level,  # type: ignore[arg-type]
        code="info",
        subject="Thing.size",
        breaks=("client",) if level != "info" else (),
        message="m",
    )
    return History(
        (
            Step("0.1", "release-0-1", {FILE: KEYS}, ()),
            Step("0.2", "release-0-2", {FILE: KEYS}, (change,), previous="0.1"),
        )
    )


@pytest.mark.parametrize("level", ["error", "warning"])
def test_a_change_a_peer_may_notice_is_marked_changed_in(level: str) -> None:
    marks = page_marks(_history(level), "v1", "stable", "changes.md")
    assert [m.text for m in marks[member_key("Thing", "size")]] == ["changed in 0.2"]
    assert marks[member_key("Thing", "size")][0].href == "changes.md#release-0-2"


def test_an_info_change_or_another_kind_is_not_marked() -> None:
    assert page_marks(_history("info"), "v1", "stable", "changes.md") == {}
    assert (
        page_marks(_history("error", kind="field-added"), "v1", "stable", "changes.md")
        == {}
    )
