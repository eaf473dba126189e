"""mypy --strict on the generated modules of upstream `main` (v1, v2; stable, unstable)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from . import corpus
from .conftest import SCHEMAS, generate


STYLES = ("pydantic", "dataclasses", "typeddict")
PACKAGES = tuple(f"acp_{s}" for s in STYLES)


def _mypy(target: Path, packages: tuple[str, ...] = ("acp_pydantic",)) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-version", "3.11", *packages],
        cwd=target,
        capture_output=True,
        text=True,
    )


@pytest.fixture(scope="module")
def main_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not corpus.releases():
        pytest.skip("../shared/corpus is absent")
    out = generate(corpus.ACP / "main", tmp_path_factory.mktemp("main"), STYLES)
    for package in PACKAGES:
        assert sorted(p.name for p in (out / package).glob("v*.py")) == [
            "v1.py", "v1_unstable.py", "v2.py", "v2_unstable.py"
        ]  # fmt: skip
    return out


@corpus.needs_corpus
def test_mypy_strict_on_main(main_out: Path) -> None:
    result = _mypy(main_out, PACKAGES)
    assert result.returncode == 0, result.stdout + result.stderr


@corpus.needs_corpus
def test_pyright_on_main(main_out: Path) -> None:
    pyright = Path(sys.executable).parent / "pyright"
    if not pyright.exists() or shutil.which("node") is None:
        pytest.skip("pyright (dev dependency) needs node, which is absent")
    (main_out / "pyrightconfig.json").write_text('{"pythonVersion": "3.11"}')
    result = subprocess.run(
        [str(pyright), "--pythonpath", sys.executable, *PACKAGES],
        cwd=main_out,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr
    assert "0 errors, 0 warnings" in result.stdout, result.stdout[-3000:]


@pytest.mark.parametrize("fixture", ["keywords.json", "shared_props.json", "defaults.json", "lenient.json", "open_union.json"])
def test_mypy_strict_on_fixtures(fixture: str, tmp_path: Path) -> None:
    out = generate(SCHEMAS / fixture, tmp_path / "out", STYLES)
    result = _mypy(out, PACKAGES)
    assert result.returncode == 0, result.stdout + result.stderr
