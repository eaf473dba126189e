from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from acpgen.cli import app

from .conftest import SCHEMAS

runner = CliRunner()


def test_build_check_and_manifest(tmp_path: Path) -> None:
    out = tmp_path / "out"
    schema = SCHEMAS / "methods"
    result = runner.invoke(app, ["build", "--schema", str(schema), "--out", str(out)])
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "acpgen-manifest.json").read_text())
    entry = next(f for f in manifest["files"] if f["path"] == "acp_pydantic/v1.py")
    assert entry["module"] == "acp_pydantic.v1" and entry["tree"] == "v1" and entry["stability"] == "stable"
    assert len(entry["sha256"]) == 64 and entry["style"] == "pydantic"
    assert runner.invoke(app, ["check", "--schema", str(schema), "--out", str(out)]).exit_code == 0
    module = out / "acp_pydantic" / "v1.py"
    module.write_text(module.read_text() + "# edited by hand\n")
    (out / "stray.txt").write_text("x")
    result = runner.invoke(app, ["check", "--schema", str(schema), "--out", str(out)])
    assert result.exit_code == 1
    assert "stale:" in result.output and "v1.py" in result.output and "extra:" in result.output


def test_ir_is_sorted_json(tmp_path: Path) -> None:
    result = runner.invoke(app, ["ir", "--schema", str(SCHEMAS / "tagged_union.json")])
    assert result.exit_code == 0
    doc = json.loads(result.output)
    assert list(doc) == ["v1"]
    assert doc["v1"]["names"]["ContentBlock#text"] == "TextContentBlock"
    assert result.output == json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_bad_input_one_line_exit_2_nothing_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    runner.invoke(app, ["build", "--schema", str(SCHEMAS / "enums.json"), "--out", str(out)])
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    bad = tmp_path / "schema.json"
    bad.write_text('{"$defs": {"A": {"$ref": "#/$defs/Missing"}, "B": {"type": "strnig"}}}')
    result = runner.invoke(app, ["build", "--schema", str(bad), "--out", str(out)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 2 and all(": ACPG2" in line for line in lines)
    assert "Traceback" not in result.output
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_refuses_to_overwrite_foreign_directory(tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    result = runner.invoke(app, ["build", "--schema", str(SCHEMAS / "enums.json"), "--out", str(out)])
    assert result.exit_code == 2 and "ACPG603" in result.output
    assert (out / "notes.txt").read_text() == "mine"


def test_config_targets(tmp_path: Path) -> None:
    shutil.copy(SCHEMAS / "enums.json", tmp_path / "schema.json")
    (tmp_path / "acpgen.toml").write_text(
        '[[target]]\nname = "t"\nschema = "schema.json"\nout = "gen"\nstyles = ["pydantic"]\n'
    )
    result = runner.invoke(app, ["build", "--config", str(tmp_path / "acpgen.toml")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "gen" / "acp_pydantic" / "v1.py").is_file()
    (tmp_path / "acpgen.toml").write_text('[[target]]\nschema = 3\n')
    result = runner.invoke(app, ["build", "--config", str(tmp_path / "acpgen.toml")])
    assert result.exit_code == 2 and "ACPG501" in result.output


def test_diff_pages(tmp_path: Path) -> None:
    page = Path(__file__).resolve().parent.parent / "generated" / "v0.1.3" / "mdx" / "v1" / "schema.mdx"
    same = runner.invoke(app, ["diff-pages", str(page), str(page)])
    assert same.exit_code == 0, same.output
    changed = tmp_path / "changed.mdx"
    changed.write_text(page.read_text().replace('<ResponseField name="methodId" type={<a href="#authmethodid">AuthMethodId</a>} required>', '<ResponseField name="methodId" type={"string"}>'))
    result = runner.invoke(app, ["diff-pages", str(changed), str(page), "--json", "--explain"])
    assert result.exit_code == 1
    rows = json.loads(result.stdout)
    assert {(r["where"], r["what"], r["rule"]) for r in rows} == {
        ("AuthenticateRequest.methodId", "type", None),
        ("AuthenticateRequest.methodId", "required", None),
    }
    missing = runner.invoke(app, ["diff-pages", str(tmp_path / "nope.mdx"), str(page)])
    assert missing.exit_code == 2 and "ACPG100" in missing.output


def test_diff_pages_rejects_a_malformed_page(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mdx"
    bad.write_text('## <span class="font-mono">X</span>\n\n**Type:** Object\n\n<ResponseField name=')
    result = runner.invoke(app, ["diff-pages", str(bad), str(bad)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and " ACPG107 " in lines[0] and lines[0].endswith("not a schema reference page: unterminated tag")


def test_schema_with_config_keeps_the_configs_naming_overrides(tmp_path: Path) -> None:
    """``--schema`` replaces the config's targets, not its other tables: a ``[naming]``
    override of the config still names the generated class."""
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"$defs": {"Thing": {"type": "object", "properties": {"a": {"type": "string"}}}}}))
    config = tmp_path / "acpgen.toml"
    config.write_text('[[target]]\nschema = "unused"\nout = "unused"\n[naming]\n"Thing" = { name = "Widget", reason = "r" }\n')
    out = tmp_path / "out"
    args = ["--schema", str(schema), "--config", str(config), "--out", str(out)]
    result = runner.invoke(app, ["build", *args])
    assert result.exit_code == 0, result.output
    module = (out / "acp_pydantic" / "v1.py").read_text()
    assert "class Widget(" in module and "class Thing(" not in module
    assert runner.invoke(app, ["check", *args]).exit_code == 0
