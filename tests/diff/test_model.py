"""The records ``acpgen diff`` reports (acpgen/diff/model.py): the level a record gets
from its rule and a lowering, whom it breaks, and the reasons ``--explain`` gives."""

from __future__ import annotations

import pytest

from acpgen.diff.model import Change, make

FILE = "v1/schema.json"


@pytest.mark.parametrize(
    ("note", "key"),
    [
        ("gated by the new capability `A.b`", "gate"),
        ("read leniently (x-deserialize-default): a bad value is dropped", "leniency"),
        ("as adding it to the stable file: variant-added-closed", "stable"),
        ("A rejects undeclared members: old senders that send x are rejected", "reason"),
    ],
)
def test_why_names_the_kind_of_reason_a_note_gives(note: str, key: str) -> None:
    c = make(FILE, "variant-added-closed", "U", "m", {"client"}, note=note, level="info")
    assert c.why == (
        ("rule", "variant-added-closed: error unless lowered; breaks the sides that receive the type"),
        (key, note),
        ("level", f"info, lowered from the rule's error by the {key} above"),
    )
    assert c.level == "info" and c.breaks == () and c.note == note


def test_a_level_never_rises_above_the_rule_s() -> None:
    c = make(FILE, "variant-added-open", "U", "m", {"client"}, level="error", sent_by=frozenset({"agent"}))
    assert (c.level, c.breaks) == ("info", ())
    assert c.why == (("rule", "variant-added-open: info unless lowered; breaks nobody"), ("sent_by", "agent"))
    kept = make(FILE, "variant-added-closed", "U", "m", {"client", "agent"}, level="error")
    assert (kept.level, kept.breaks) == ("error", ("agent", "client"))
    assert [k for k, _ in kept.why] == ["rule"]


def test_records_sort_by_variant_old_and_new_with_none_first() -> None:
    def one(variant: str | None = None, old: str | None = None, new: str | None = None) -> Change:
        return make(FILE, "type-changed", "A.x", "m", variant=variant, old=old, new=new)

    for bare, valued in [(one(), one(variant="A")), (one(), one(old="A")), (one(old="A"), one(old="A", new="A"))]:
        assert sorted([valued, bare], key=Change.sort_key) == [bare, valued]
