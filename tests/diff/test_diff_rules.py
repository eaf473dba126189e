"""One fixture pair per rule of the catalogue (tests/fixtures/diff/cases.yaml): each case
must report exactly the records it lists, no more, no fewer, and say of each what the
snapshot says (``--explain`` text: message, note, and why it got its level)."""

from __future__ import annotations

from pathlib import Path

import pytest

from acpgen.diff.report import render_text
from acpgen.diff.rules import BY_ID, KINDS, RULES, catalogue_text
from tests.diff.diff_helpers import CASES, FILES, expected, record, run_case


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_reports_exactly_its_records(tmp_path: Path, snapshot, name: str) -> None:  # type: ignore[no-untyped-def]
    changes = run_case(tmp_path, name)
    assert {record(c) for c in changes} == expected(name)
    assert render_text(changes, [], explain=True) == snapshot
    for subject, note in CASES[name].get("notes", {}).items():  # the gate a record names (stable file)
        assert [c.note for c in changes if c.subject == subject and c.file == FILES["s"]] == [note], subject
    for subject, values in CASES[name].get("values", {}).items():  # what it was and is (`old`, `new` in JSON)
        assert [[c.old, c.new] for c in changes if c.subject == subject and c.file == FILES["s"]] == [values], subject


def test_every_rule_has_a_fixture_pair() -> None:
    covered = {CASES[n].get("rule", n) for n in CASES if CASES[n]["expect"]}
    assert covered >= set(BY_ID), sorted(set(BY_ID) - covered)
    for name, case in CASES.items():
        rule = case.get("rule", name)
        if not name.startswith("same-"):
            assert rule in BY_ID, name
            assert any(e[1] == rule for e in case["expect"]), name


def test_catalogue_is_well_formed() -> None:
    ids = [r.id for r in RULES]
    assert len(ids) == len(set(ids))
    for r in RULES:
        assert r.kind in KINDS
        assert r.id == r.id.lower() and " " not in r.id
        assert r.summary and "\n" not in r.summary
    # every kind the issue names is used by a rule
    assert {r.kind for r in RULES} == set(KINDS)


def test_catalogue_text_is_a_table_with_aligned_columns() -> None:
    header, *rows = catalogue_text().splitlines()
    names = ["rule", "kind", "wire", "code", "breaks", "summary"]
    assert header.split() == names and header.startswith("rule ")
    starts = [header.index(f" {name}") + 1 for name in names[1:]]
    assert starts[0] == max(len(r.id) for r in RULES) + 2  # the rule column is as wide as the longest id
    assert len(rows) == len(RULES)
    for row, r in zip(rows, RULES):
        cells = [r.id, r.kind, r.level, r.code, r.hits, r.summary]
        for start, cell in zip([0, *starts], cells):
            # each value starts its column, and the column before it ends in two spaces
            assert row[start:].startswith(cell + (" " if cell != r.summary else "")), (r.id, cell)
            assert start == 0 or row[start - 2 : start] == "  ", (r.id, cell)
        assert row.endswith(r.summary)
