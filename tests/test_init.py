"""``acpgen init``: a commented configuration that build reads as written; never overwrites."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from acpgen.cli import app

runner = CliRunner()


@pytest.fixture(autouse=True)
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_init_then_build() -> None:
    result = runner.invoke(app, ["init", "--style", "pydantic", "--style", "md"])
    assert result.exit_code == 0, result.output
    text = Path("acpgen.toml").read_text()
    assert text.startswith("# acpgen:") and sum(line.startswith("#") for line in text.splitlines()) > 10
    doc = tomllib.loads(text)
    assert doc["target"] == [{"name": "bundled:v0.1.3", "schema": "bundled:v0.1.3", "styles": ["pydantic", "md"], "out": "generated/v0.1.3"}]
    built = runner.invoke(app, ["build"])
    assert built.exit_code == 0, built.output
    assert Path("generated/v0.1.3/acp_pydantic/v1.py").is_file() and Path("generated/v0.1.3/md/v1/schema.md").is_file()
    assert runner.invoke(app, ["check"]).exit_code == 0


def test_init_refuses_to_overwrite() -> None:
    Path("acpgen.toml").write_text("# mine\n")
    result = runner.invoke(app, ["init"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == ["acpgen.toml: ACPG501 /: acpgen.toml exists; refusing to overwrite it"]
    assert Path("acpgen.toml").read_text() == "# mine\n"


def test_init_into_pyproject_once() -> None:
    Path("pyproject.toml").write_text('[project]\nname = "myagent"\nversion = "0.1"\n')
    result = runner.invoke(app, ["init", "--pyproject", "--schema", "acp@schema-v1.21.0", "--package", "myagent._acp", "--out", "src"])
    assert result.exit_code == 0, result.output
    doc = tomllib.loads(Path("pyproject.toml").read_text())
    assert doc["project"]["name"] == "myagent"
    acpgen = doc["tool"]["acpgen"]
    assert acpgen["target"][0] == {
        "name": "acp@schema-v1.21.0", "schema": "acp@schema-v1.21.0", "styles": ["pydantic"], "out": "src", "package": "myagent._acp"
    }  # fmt: skip
    assert acpgen["fetch"]["timeout"] == 30 and acpgen["keywords"] == {"unimplemented": "error"}
    again = runner.invoke(app, ["init", "--pyproject"])
    assert again.exit_code == 2 and "[tool.acpgen] is there already" in again.stderr


@pytest.mark.parametrize(
    "args,message",
    [
        (["--style", "pydantc"], "did you mean 'pydantic'?"),
        (["--package", "my-agent", "--style", "pydantic"], "dotted Python import path"),
    ],
)
def test_init_rejects_bad_choices(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["init", *args])
    assert result.exit_code == 2 and message in result.stderr and not Path("acpgen.toml").exists()
