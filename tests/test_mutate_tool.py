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


# --- make mutate-again (tools/mutate_again.py) ------------------------------------

import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

TOOLS = Path(__file__).resolve().parent.parent / "tools"


def _again() -> ModuleType:
    spec = importlib.util.spec_from_file_location("acpgen_tools_mutate_again", TOOLS / "mutate_again.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_again_selects_the_mutants_not_seen_killed() -> None:
    results = "\n".join(
        [
            "    acpgen.runtime._router.x_a__mutmut_1: killed",
            "    acpgen.runtime._router.x_a__mutmut_2: survived",
            "    acpgen.runtime._router.x_a__mutmut_3: no tests",
            "    acpgen.runtime._router.x_a__mutmut_4: not checked",
            "    acpgen.runtime._router.x_a__mutmut_5: timeout",
            "    acpgen.runtime._remote.x_b__mutmut_1: survived",
            "acpgen.runtime._router.x_a: survived",
        ]
    )
    select = _again().select
    assert select(results, "acpgen.runtime._router.*", False) == [
        "acpgen.runtime._router.x_a__mutmut_2",
        "acpgen.runtime._router.x_a__mutmut_3",
        "acpgen.runtime._router.x_a__mutmut_4",
    ]
    assert select(results, "acpgen.runtime._router.*", True) == [f"acpgen.runtime._router.x_a__mutmut_{i}" for i in range(1, 6)]
    assert select(results, "*x_b__mutmut_*", False) == ["acpgen.runtime._remote.x_b__mutmut_1"]


def _plugin_run(tmp_path: Path, names: list[str], failing: bool = False) -> list[str]:
    """The pytest side of mutate-again on a module whose mutants read MUTANT_UNDER_TEST
    as mutmut's trampolines do."""
    (tmp_path / "m.py").write_text(
        "import os\n"
        "def f():\n"
        "    return 2 if os.environ.get('MUTANT_UNDER_TEST') == 'm.x_f__mutmut_1' else 1\n"
    )
    (tmp_path / "test_m.py").write_text(
        "from m import f\n"
        "def test_other():\n    pass\n"
        "def test_f():\n    assert f() == 1\n" + ("def test_broken():\n    assert False\n" if failing else "")
    )
    listed, out = tmp_path / "names", tmp_path / "out"
    listed.write_text("\n".join(names) + "\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TOOLS), str(tmp_path)]), MUTATE_AGAIN_LIST=str(listed), MUTATE_AGAIN_OUT=str(out))
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "mutate_again", "-p", "no:randomly", "-p", "no:cacheprovider", "test_m.py"],
        cwd=tmp_path, env=env, capture_output=True, timeout=120,
    )  # fmt: skip
    return out.read_text().splitlines()


def test_again_kills_a_mutant_by_the_first_test_that_fails_with_it(tmp_path: Path) -> None:
    assert _plugin_run(tmp_path, ["m.x_f__mutmut_1", "m.x_f__mutmut_2"]) == [
        "killed m.x_f__mutmut_1 test_m.py::test_f",
        "survived m.x_f__mutmut_2",
    ]


def test_again_runs_nothing_when_a_test_fails_with_no_mutant_on(tmp_path: Path) -> None:
    assert _plugin_run(tmp_path, ["m.x_f__mutmut_1"], failing=True) == ["baseline-failed test_m.py::test_broken"]


def test_again_needs_its_arguments(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("MUTANTS", raising=False)
    monkeypatch.setenv("TESTS", "tests/x.py")
    assert _again().main(["runtime"]) == 2
    assert "usage: make mutate-again PKG=<package>" in capsys.readouterr().err


def test_again_runs_one_at_a_time_in_a_scratch_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import fcntl

    tool = _again()
    monkeypatch.setattr(tool, "ROOT", tmp_path)
    work = tmp_path / ".mutate" / "runtime"
    (work / "mutants" / "acpgen").mkdir(parents=True)
    monkeypatch.setenv("MUTANTS", "@nothing")
    monkeypatch.setenv("TESTS", "tests/x.py")
    with open(work / "again.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert tool.main(["runtime"]) == 2
    assert "another make mutate-again runs in" in capsys.readouterr().err
