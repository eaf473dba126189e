"""The error catalogue: every fixture under tests/fixtures/errors/ is one run of the CLI
that must fail with exit status 2, one ``file[:line:col]: CODE /pointer: message`` line
per problem (a syrupy snapshot of them), no traceback, and nothing written.

- ``schema/*``: ``acpgen build --schema FILE`` over a previous good output
- ``release/*/``: ``acpgen build --schema DIR``
- ``overlay/*.yaml``: ``acpgen build --schema <overlay test schema> --overlay FILE``
- ``config/**/*.toml``: ``acpgen build --config FILE`` in a copy of ``config/``
- ``pages/*``: ``acpgen diff-pages FILE <bundled page>``
- ``diff/*/``: ``acpgen diff`` with the arguments in the case's ``args`` (paths relative to it)
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from acpgen.cli import app
from acpgen.errors import CATALOGUE

from .conftest import FIXTURES, SCHEMAS, tree_bytes

ROOT = Path(__file__).resolve().parent.parent
ERRORS = FIXTURES / "errors"
SNAPSHOT = Path(__file__).parent / "__snapshots__" / "test_errors.ambr"
LINE = re.compile(r"^[^ ]+?(:\d+:\d+)?: (ACPG\d{3}) /[^ ]*: \S.*$")
#: codes no user input can cause: black failing on acpgen's own rendering is a bug
NOT_USER_CAUSED = {"ACPG602"}

runner = CliRunner()


def _cases() -> list[tuple[str, str]]:
    cases = [("schema", p.name) for p in sorted((ERRORS / "schema").iterdir())]
    cases += [("release", p.name) for p in sorted((ERRORS / "release").iterdir()) if p.is_dir()]
    cases += [("overlay", p.name) for p in sorted((ERRORS / "overlay").glob("*.yaml"))]
    cases += [("config", p.relative_to(ERRORS / "config").as_posix()) for p in sorted((ERRORS / "config").rglob("*.toml"))]
    cases += [("pages", p.name) for p in sorted((ERRORS / "pages").iterdir())]
    cases += [("diff", p.name) for p in sorted((ERRORS / "diff").iterdir()) if p.is_dir()]
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def previous_output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("previous") / "out"
    result = runner.invoke(app, ["build", "--schema", str(SCHEMAS / "enums.json"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def _run(kind: str, name: str, tmp_path: Path, previous: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], Path]:
    """Run one case; returns its stderr lines and the directory that must be unchanged."""
    watched = tmp_path / "work"
    if kind == "config":
        shutil.copytree(ERRORS / "config", watched)
        monkeypatch.chdir(watched)
        args = ["build", "--config", name]
    else:
        shutil.copytree(previous, watched / "out")
        monkeypatch.chdir(ROOT)
        out = ["--out", str(watched / "out")]
        fixture = (ERRORS / kind / name).relative_to(ROOT).as_posix()
        if kind in ("schema", "release"):
            args = ["build", "--schema", fixture, *out]
        elif kind == "diff":
            monkeypatch.chdir(ERRORS / kind / name)
            args = ["diff", *(ERRORS / kind / name / "args").read_text().split()]
        elif kind == "overlay":
            base = (FIXTURES / "overlays" / "schemas" / "schema.json").relative_to(ROOT).as_posix()
            args = ["build", "--schema", base, "--overlay", fixture, *out]
        else:
            args = ["diff-pages", fixture, "generated/v0.1.3/mdx/v1/schema.mdx"]
    before = tree_bytes(watched)
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    # stdout: at most the progress lines of the targets that were rendered before the failure
    assert all(re.match(r"^\[\d+/\d+\] ", line) for line in result.stdout.splitlines()), result.stdout
    assert tree_bytes(watched) == before, "a failed run wrote or removed files"
    leftovers = [p.name for p in watched.rglob(".*acpgen-*")]
    assert leftovers == [], "a failed run left staging directories behind"
    return result.stderr.strip().splitlines(), watched


@pytest.mark.parametrize(("kind", "name"), CASES, ids=[f"{k}/{n}" for k, n in CASES])
def test_error_fixture(kind: str, name: str, tmp_path: Path, previous_output: Path, monkeypatch: pytest.MonkeyPatch, snapshot) -> None:  # type: ignore[no-untyped-def]
    lines, _ = _run(kind, name, tmp_path, previous_output, monkeypatch)
    assert lines, "an error run printed nothing"
    for line in lines:
        match = LINE.match(line)
        assert match, f"not one diagnostic line: {line!r}"
        assert match.group(2) in CATALOGUE
    assert len(lines) == len(set(lines)), "a problem was reported twice"
    assert lines == snapshot


def test_at_least_40_fixtures() -> None:
    assert len(CASES) >= 40


def test_every_user_facing_code_has_a_fixture() -> None:
    """Read back from the snapshots: each catalogued code is produced by some fixture (the
    remote-schema codes by tests/test_fetch.py, which needs its fake upstream running)."""
    if not SNAPSHOT.is_file():
        pytest.skip("snapshots not written yet (run `make snapshots`)")
    text = SNAPSHOT.read_text() + (SNAPSHOT.parent / "test_fetch.ambr").read_text()
    seen = set(re.findall(r": (ACPG\d{3}) /", text))
    assert set(CATALOGUE) - NOT_USER_CAUSED - seen == set()


def test_all_problems_of_a_run_are_reported(tmp_path: Path, previous_output: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines, _ = _run("schema", "many-errors.json", tmp_path, previous_output, monkeypatch)
    assert {LINE.match(line).group(2) for line in lines} == {"ACPG201", "ACPG202", "ACPG203", "ACPG207"}  # type: ignore[union-attr]
    assert len(lines) == 6
    lines, _ = _run("release", "bad-trees", tmp_path / "trees", previous_output, monkeypatch)
    assert [line.split(":")[0].rsplit("/", 2)[-2] for line in lines] == ["v1", "v2"]


def test_one_failing_target_stops_every_target(tmp_path: Path, previous_output: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines, watched = _run("config", "second-target-fails.toml", tmp_path, previous_output, monkeypatch)
    assert not (watched / "gen-good").exists() and len(lines) == 1


def test_debug_shows_tracebacks_only_for_internal_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    bad = (ERRORS / "schema" / "unknown-type.json").relative_to(ROOT).as_posix()
    result = runner.invoke(app, ["--debug", "build", "--schema", bad, "--out", "/nonexistent/never"])
    assert result.exit_code == 2 and "Traceback" not in result.output

    def boom(*_: object, **__: object) -> None:
        raise KeyError("bug")

    monkeypatch.setattr("acpgen.api.render_all", boom)
    quiet = runner.invoke(app, ["build", "--schema", bad, "--out", "/nonexistent/never"])
    assert quiet.exit_code == 3 and "internal error: KeyError" in quiet.output and "Traceback" not in quiet.output
    loud = runner.invoke(app, ["--debug", "build", "--schema", bad, "--out", "/nonexistent/never"])
    assert loud.exit_code == 3 and "Traceback" in loud.output


@pytest.mark.parametrize("depth", [900, 3000])
def test_deep_schemas_build_or_stop_with_acpg208(depth: int, tmp_path: Path) -> None:
    """Thousands of levels: every style builds, or the run stops with ACPG208; never a
    RecursionError (which would be exit 3, an internal error)."""
    schema = tmp_path / "deep.json"
    schema.write_text('{"$defs":{"Deep":' + '{"type":"array","items":' * depth + '{"type":"string"}' + "}" * depth + "}}")
    styles = [arg for s in ("pydantic", "dataclasses", "typeddict", "mdx", "md") for arg in ("--style", s)]
    result = runner.invoke(app, ["build", "--schema", str(schema), "--out", str(tmp_path / "out"), *styles])
    if depth < 1000:
        assert result.exit_code == 0, result.output
    else:
        assert result.exit_code in (0, 2), result.output
        assert result.exit_code == 0 or " ACPG208 " in result.stderr
