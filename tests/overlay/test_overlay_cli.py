"""``acpgen overlay apply|check`` and ``--overlay`` on build, check and ir."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonpatch
from typer.testing import CliRunner

from acpgen.cli import app

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "schemas" / "acp" / "v0.1.3"
RFDS = ROOT / "schemas" / "rfds"
THREE = ["session-config-options", "boolean-config-option", "open-enums"]
FIXTURES = Path(__file__).parent.parent / "fixtures" / "overlays"

runner = CliRunner()


def _overlay_args(*names: str) -> list[str]:
    return [arg for n in names for arg in ("--overlay", str(RFDS / f"{n}.yaml"))]


def test_check_prints_the_status_table(snapshot) -> None:  # type: ignore[no-untyped-def]
    result = runner.invoke(app, ["overlay", "check", "--schema", str(BUNDLED), *_overlay_args(*THREE)])
    assert result.exit_code == 0, result.output
    assert result.output == snapshot


def test_check_json_and_exit_codes() -> None:
    # the boolean overlay alone on the bundled release: it needs session config options
    result = runner.invoke(app, ["overlay", "check", "--schema", str(BUNDLED), "--json", *_overlay_args("boolean-config-option")])
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.output)
    assert report["verdict"] == "not-applicable"
    assert [(r["op"], r["status"]) for r in report["rows"]] == [
        ("add_def", "applied"),
        ("add_variant", "not-applicable"),
        ("flatten_union", "not-applicable"),
    ]
    conflict = runner.invoke(app, ["overlay", "check", "--schema", str(FIXTURES / "schemas"), "--overlay", str(FIXTURES / "conflict.yaml")])
    assert conflict.exit_code == 1
    assert "rfd/conflicting (Conflicting) on schema.json: conflict" in conflict.output
    assert "def exists with a different shape: /type: expected \"string\", found \"object\"" in conflict.output


def test_apply_writes_schema_and_meta_that_build(tmp_path: Path) -> None:
    out = tmp_path / "rfd" / "schema.json"
    result = runner.invoke(app, ["overlay", "apply", "--schema", str(BUNDLED / "schema.json"), *_overlay_args(*THREE), "--out", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["$defs"]["SessionConfigBoolean"]["x-acpgen-overlay"] == "rfd/boolean-config-option"
    meta = json.loads((out.parent / "meta.json").read_text())
    assert meta["agentMethods"]["session_set_config_option"] == "session/set_config_option"
    assert meta["version"] == 1
    built = runner.invoke(app, ["build", "--schema", str(out.parent), "--out", str(tmp_path / "gen"), "--style", "pydantic"])
    assert built.exit_code == 0, built.output


def test_apply_without_provenance_and_as_json_patch(tmp_path: Path) -> None:
    args = ["overlay", "apply", "--schema", str(BUNDLED / "schema.json"), *_overlay_args(*THREE)]
    plain = tmp_path / "schema.json"
    assert runner.invoke(app, [*args, "--out", str(plain), "--no-provenance"]).exit_code == 0
    assert "x-acpgen-overlay" not in plain.read_text()
    patch_file = tmp_path / "change.json"
    assert runner.invoke(app, [*args, "--out", str(patch_file), "--format", "json-patch", "--no-provenance"]).exit_code == 0
    patch = json.loads(patch_file.read_text())
    assert {p["op"] for p in patch} <= {"add", "remove", "replace", "move", "copy"}
    base = json.loads((BUNDLED / "schema.json").read_text())
    assert jsonpatch.apply_patch(base, patch) == json.loads(plain.read_text())  # RFC 6902 reproduces it


def test_apply_on_conflict_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "schema.json"
    result = runner.invoke(app, ["overlay", "apply", "--schema", str(BUNDLED / "schema.json"), *_overlay_args("boolean-config-option"), "--out", str(out)])
    assert result.exit_code == 1 and not out.exists()
    assert "nothing written" in result.output
    forced = runner.invoke(
        app, ["overlay", "apply", "--schema", str(BUNDLED / "schema.json"), *_overlay_args("boolean-config-option"), "--out", str(out), "--allow-conflicts"]
    )
    assert forced.exit_code == 1 and out.exists()


def test_apply_needs_one_schema_file(tmp_path: Path) -> None:
    result = runner.invoke(app, ["overlay", "apply", "--schema", str(FIXTURES), *_overlay_args("open-enums"), "--out", str(tmp_path / "x.json")])
    assert result.exit_code == 2 and "ACPG105" in result.output


def test_bad_overlay_is_exit_2_one_line(tmp_path: Path) -> None:
    result = runner.invoke(app, ["overlay", "check", "--schema", str(BUNDLED), "--overlay", str(FIXTURES.parent / "errors" / "overlay" / "unknown-op.yaml")])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "ACPG402 /ops/0/op: unknown operation" in result.output
    assert "Traceback" not in result.output


def test_build_with_a_conflicting_overlay_fails_and_keeps_the_output(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    assert runner.invoke(app, ["build", "--schema", str(BUNDLED), "--out", str(out)]).exit_code == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    missing = runner.invoke(app, ["build", "--schema", str(BUNDLED), "--out", str(out), *_overlay_args("boolean-config-option")])
    assert missing.exit_code == 2
    lines = missing.output.strip().splitlines()
    assert [line.split(": ")[1] for line in lines] == ["ACPG403 /ops/1", "ACPG403 /ops/2"]
    assert "SessionConfigOption#boolean in schema.json: no def SessionConfigOption in this schema" in lines[0]
    conflict = runner.invoke(app, ["build", "--schema", str(FIXTURES / "schemas"), "--out", str(out), "--overlay", str(FIXTURES / "conflict.yaml")])
    assert conflict.exit_code == 2 and conflict.output.startswith(str(FIXTURES / "conflict.yaml")) is False
    assert "ACPG404 /ops/0: Circle in schema.json: def exists with a different shape" in conflict.output
    assert "Traceback" not in missing.output + conflict.output
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_build_and_check_with_overlays(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    args = ["--schema", str(BUNDLED), "--out", str(out), "--style", "pydantic", *_overlay_args(*THREE)]
    assert runner.invoke(app, ["build", *args]).exit_code == 0
    module = (out / "acp_pydantic" / "v1.py").read_text()
    assert "# overlay: rfd/open-enums sha256:" in module and "class SessionConfigBoolean" in module
    assert runner.invoke(app, ["check", *args]).exit_code == 0
    assert runner.invoke(app, ["check", *args[:-2]]).exit_code == 1  # one overlay fewer: stale


def test_ir_carries_overlay_provenance() -> None:
    result = runner.invoke(app, ["ir", "--schema", str(BUNDLED), *_overlay_args(*THREE)])
    assert result.exit_code == 0, result.output
    protocol = json.loads(result.output)["v1"]["protocol"]
    assert [o["id"] for o in protocol["overlays"]] == [f"rfd/{n}" for n in THREE]
    defs = {d["key"]: d for d in protocol["defs"]}
    assert defs["SessionConfigBoolean"]["origin"]["overlays"] == ["rfd/boolean-config-option"]
    assert defs["SessionUpdate"]["origin"]["overlays"] == ["rfd/session-config-options", "rfd/open-enums"]
    assert defs["Plan"]["origin"]["overlays"] == []
    method = next(m for m in protocol["methods"] if m["name"] == "session/set_config_option")
    assert method["origin"]["overlays"] == ["rfd/session-config-options", "rfd/boolean-config-option"]


def test_config_target_with_overlays(tmp_path: Path) -> None:
    shutil.copytree(BUNDLED, tmp_path / "schema")
    shutil.copytree(RFDS, tmp_path / "rfds")
    (tmp_path / "acpgen.toml").write_text(
        '[[target]]\nschema = "schema"\nout = "gen"\nstyles = ["typeddict"]\n'
        'overlays = ["rfds/session-config-options.yaml", "rfds/missing.yaml"]\n'
    )
    result = runner.invoke(app, ["build", "--config", str(tmp_path / "acpgen.toml")])
    assert result.exit_code == 2 and "ACPG100" in result.output and "missing.yaml" in result.output
    assert not (tmp_path / "gen").exists()
