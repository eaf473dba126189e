"""Bundled assets by name: ``bundled:<release>`` for --schema (and ``schema =``),
``rfd:<name>`` for --overlay (and ``overlays =``), listed by ``acpgen overlay list``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from acpgen.cli import app
from acpgen.locate import assets_dir, bundled_overlays, bundled_releases

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


def test_the_assets_are_the_repository_schemas_in_a_checkout() -> None:
    assert assets_dir() == ROOT / "schemas"
    assert bundled_releases() == ["v0.1.3"]
    assert [p.stem for p in bundled_overlays()] == ["boolean-config-option", "open-enums", "session-config-options"]


def _tree(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != "acpgen-manifest.json"}


def test_names_build_what_paths_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    by_name = runner.invoke(app, ["build", "--schema", "bundled:v0.1.3", "--overlay", "rfd:open-enums", "--out", "a", "--style", "md"])
    assert by_name.exit_code == 0, by_name.output
    by_path = runner.invoke(
        app,
        ["build", "--schema", str(ROOT / "schemas/acp/v0.1.3"), "--overlay", str(ROOT / "schemas/rfds/open-enums.yaml"), "--out", "b", "--style", "md"],
    )
    assert by_path.exit_code == 0
    assert _tree(Path("a")) == _tree(Path("b"))
    assert runner.invoke(app, ["build", "--schema", "bundled:v0.1.3", "--style", "md"]).exit_code == 0
    assert Path("generated/v0.1.3/md/v1/schema.md").is_file()  # the default out is named after the release


def test_a_config_names_them_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("acpgen.toml").write_text(
        '[[target]]\nschema = "bundled:v0.1.3"\nout = "gen"\nstyles = ["md"]\n'
        'overlays = ["rfd:session-config-options", "rfd:boolean-config-option"]\n'
    )
    assert runner.invoke(app, ["build"]).exit_code == 0
    assert "SessionConfigBoolean" in Path("gen/md/v1/schema.md").read_text()
    assert runner.invoke(app, ["ir", "--schema", "bundled:v0.1.3"]).exit_code == 0
    assert runner.invoke(app, ["overlay", "check", "--schema", "bundled:v0.1.3", "--overlay", "rfd:open-enums"]).exit_code == 0


@pytest.mark.parametrize(
    "args,line",
    [
        (["build", "--schema", "bundled:v0.1.4"], "bundled:v0.1.4: ACPG100 /: no bundled release 'v0.1.4'; bundled: v0.1.3; did you mean 'v0.1.3'?"),
        (["build", "--schema", "bundled:v0.1.3", "--overlay", "rfd:open-enum"], "rfd:open-enum: ACPG100 /: no bundled overlay 'open-enum'; bundled: boolean-config-option, open-enums, session-config-options; did you mean 'open-enums'?"),
    ],
)
def test_an_unknown_name_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], line: str) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and result.stderr.splitlines() == [line]


def test_a_config_with_an_unknown_name_points_at_its_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("acpgen.toml").write_text('[[target]]\nschema = "bundled:nope"\nout = "gen"\n')
    result = runner.invoke(app, ["build"])
    assert result.exit_code == 2
    assert result.stderr.startswith("acpgen.toml: ACPG100 /target/0: no bundled release 'nope'")


def test_overlay_list() -> None:
    result = runner.invoke(app, ["overlay", "list"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["rfd:boolean-config-option", "rfd:open-enums", "rfd:session-config-options", "bundled:v0.1.3"]
    assert "merged upstream in schema-v1.18.0" in lines[0]
    doc = json.loads(runner.invoke(app, ["overlay", "list", "--json"]).stdout)
    assert doc["releases"] == ["bundled:v0.1.3"] and doc["overlays"][1]["id"] == "rfd/open-enums"
