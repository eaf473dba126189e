"""``make mutate`` (tools/mutate.py): which mutants ``ONLY=`` selects, and the kill-rate
table it prints from mutmut's results."""

from __future__ import annotations

import fnmatch
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest


def _tool() -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "tools" / "mutate.py"
    spec = importlib.util.spec_from_file_location("acpgen_tools_mutate", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MUTANTS = [
    "acpgen.diff.x_release__mutmut_1",
    "acpgen.diff.xǁReleaseǁlabel__mutmut_2",
    "acpgen.diff.ignore.x_read_ignores__mutmut_8",
    "acpgen.diff.ignore.xǁIgnoreǁmatches__mutmut_25",
    "acpgen.diff.dataflow.x_needs__mutmut_3",
]


@pytest.mark.parametrize(
    ("only", "chosen"),
    [
        ("__init__", MUTANTS[:2]),
        ("ignore", MUTANTS[2:4]),
        ("dataflow", MUTANTS[4:]),
    ],
)
def test_only_selects_the_mutants_of_one_module(only: str, chosen: list[str]) -> None:
    patterns = _tool()._patterns("diff", only)
    assert [
        m for m in MUTANTS if any(fnmatch.fnmatchcase(m, p) for p in patterns)
    ] == chosen


def test_the_kill_rate_table_counts_each_module() -> None:
    results = "\n".join(
        [
            "    acpgen.diff.x_release__mutmut_1: killed",
            "    acpgen.diff.x_release__mutmut_2: survived",
            "    acpgen.diff.ignore.x_read_ignores__mutmut_1: killed",
            "    acpgen.diff.ignore.x_read_ignores__mutmut_2: timeout",
            "    acpgen.diff.ignore.x_read_ignores__mutmut_3: survived",
            "    acpgen.diff.ignore.x_read_ignores__mutmut_4: not checked",
            "    acpgen.diff.model.x_make__mutmut_1: not checked",
            "a line that is no mutant: killed",
        ]
    )
    rows = [line.split() for line in _tool().kill_rates(results).splitlines()]
    assert rows == [
        ["module", "mutants", "killed", "survived", "untested", "rate"],
        ["acpgen.diff", "2", "1", "1", "0", "50.0%"],
        ["acpgen.diff.ignore", "4", "2", "1", "1", "66.7%"],
        ["acpgen.diff.model", "1", "0", "0", "1", "-"],
    ]
