"""Progress: plain numbered lines when the output is not a terminal (or in CI), a bar on a
terminal, nothing but problems with --quiet."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from typer.testing import CliRunner

from acpgen.cli import app
from acpgen.progress import Bar, Lines, Silent, reporter

runner = CliRunner()

TWO_TARGETS = """
[[target]]
name = "plain"
schema = "bundled:v0.1.3"
styles = ["pydantic"]
out = "gen/plain"

[[target]]
name = "rfds"
schema = "bundled:v0.1.3"
overlays = ["rfd:open-enums"]
styles = ["md", "typeddict"]
out = "gen/rfds"
"""


@pytest.fixture(autouse=True)
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("acpgen.toml").write_text(TWO_TARGETS)


def test_many_targets_print_numbered_lines_off_a_terminal() -> None:
    result = runner.invoke(app, ["build"])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    steps = [line for line in result.stdout.splitlines() if line.startswith("[")]
    assert steps[0] == "[1/30] plain: acp_pydantic/v1.py"  # the total grows as targets are read
    assert steps[-1] == "[59/59] rfds: acp_typeddict/py.typed"
    assert len(steps) == 59 and all(line.startswith("[") for line in steps)
    assert [line.split(" to ")[0] for line in result.stdout.splitlines() if not line.startswith("[")] == ["plain: wrote 31 files", "rfds: wrote 30 files"]


def test_quiet_prints_only_problems() -> None:
    built = runner.invoke(app, ["build", "--quiet"])
    assert (built.exit_code, built.stdout, built.stderr) == (0, "", "")
    checked = runner.invoke(app, ["check", "-q"])
    assert (checked.exit_code, checked.stdout, checked.stderr) == (0, "", "")
    Path("gen/plain/acp_pydantic/v1.py").write_text("# edited\n")
    stale = runner.invoke(app, ["check", "-q"])
    assert stale.exit_code == 1 and stale.stdout.startswith("stale: ") and stale.stdout.endswith("gen/plain/acp_pydantic/v1.py\n")
    bad = runner.invoke(app, ["build", "-q", "--schema", "nowhere.json"])
    assert bad.exit_code == 2 and "ACPG100" in bad.stderr


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_a_bar_ci_and_pipes_get_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    bar = reporter(False, Tty())
    assert isinstance(bar, Bar)
    bar.close()
    assert isinstance(reporter(False, io.StringIO()), Lines)
    assert isinstance(reporter(True, Tty()), Silent)
    monkeypatch.setenv("CI", "true")
    assert isinstance(reporter(False, Tty()), Lines)


def test_the_bar_draws_and_goes_away() -> None:
    stream = io.StringIO()
    bar = Bar(stream, force_terminal=True)
    bar.grow(4)
    for i in range(4):
        bar.step(f"file {i}")
    assert bar.bar.tasks[0].completed == 4 and bar.bar.tasks[0].total == 4
    bar.close()
    assert "━" in stream.getvalue() and "4/4" in stream.getvalue()


def test_one_schema_file_shows_no_progress(tmp_path: Path) -> None:
    from tests.diff.diff_helpers import BASE
    import json

    Path("s.json").write_text(json.dumps(BASE))
    result = runner.invoke(app, ["build", "--schema", "s.json", "--out", "o"])
    assert result.exit_code == 0 and result.stderr == "" and result.stdout.startswith("s.json: wrote")
