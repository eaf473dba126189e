"""The no-change fast path of ``acpgen build`` (acpgen/stamp.py), through the real CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from .conftest import SCHEMAS, tree_bytes

FIXTURE = SCHEMAS / "enums.json"


def _build(cwd: Path, cache: Path | str, *args: str) -> str:
    env = {**os.environ, "ACPGEN_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-m", "acpgen", "build", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def _setup(tmp_path: Path) -> tuple[Path, list[str]]:
    schema = tmp_path / "schema.json"
    shutil.copy(FIXTURE, schema)
    return schema, ["--schema", "schema.json", "--out", "out", "--style", "pydantic", "--style", "md"]


def test_second_identical_build_is_up_to_date(tmp_path: Path) -> None:
    _, args = _setup(tmp_path)
    first = _build(tmp_path, tmp_path / "cache", *args)
    assert "wrote" in first
    before = tree_bytes(tmp_path / "out")
    second = _build(tmp_path, tmp_path / "cache", *args)
    assert second == "schema.json: up to date (32 files in out)\n"
    assert tree_bytes(tmp_path / "out") == before


def test_changed_input_or_output_runs_the_build(tmp_path: Path) -> None:
    schema, args = _setup(tmp_path)
    _build(tmp_path, tmp_path / "cache", *args)
    module = tmp_path / "out" / "acp_pydantic" / "v1.py"
    good = module.read_bytes()
    module.write_bytes(good + b"# hand edit\n")
    assert "wrote" in _build(tmp_path, tmp_path / "cache", *args)
    assert module.read_bytes() == good
    assert "up to date" in _build(tmp_path, tmp_path / "cache", *args)
    schema.write_text(schema.read_text().replace('"$defs"', '"description": "changed", "$defs"', 1))
    assert "wrote" in _build(tmp_path, tmp_path / "cache", *args)
    assert "up to date" in _build(tmp_path, tmp_path / "cache", *args)
    assert "wrote" in _build(tmp_path, tmp_path / "cache", *args, "--style", "typeddict")


def test_new_config_on_the_search_path_runs_the_build(tmp_path: Path) -> None:
    _setup(tmp_path)
    (tmp_path / "acpgen.toml").write_text('[[target]]\nname = "a"\nschema = "schema.json"\nout = "out"\n')
    assert "wrote" in _build(tmp_path, tmp_path / "cache")
    assert "up to date" in _build(tmp_path, tmp_path / "cache")
    (tmp_path / "acpgen.toml").write_text('[[target]]\nname = "a"\nschema = "schema.json"\nout = "out2"\n')
    assert "a: wrote" in _build(tmp_path, tmp_path / "cache")
    assert (tmp_path / "out2").is_dir()


def test_no_cache_means_no_fast_path(tmp_path: Path) -> None:
    _, args = _setup(tmp_path)
    _build(tmp_path, "", *args)
    assert "wrote" in _build(tmp_path, "", *args)


def test_the_stamp_module_imports_neither_the_cli_nor_the_entry_point() -> None:
    """One direction only: entry -> stamp, entry -> cli -> stamp."""
    import ast

    import acpgen.stamp

    tree = ast.parse(Path(acpgen.stamp.__file__).read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not {m for m in imported if m and m.startswith("acpgen")}
