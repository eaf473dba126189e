"""mypy --strict on the generated modules of upstream `main` (v1, v2; stable, unstable)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from . import corpus
from .conftest import SCHEMAS, generate


def _mypy(target: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-version", "3.11", "acp_pydantic"],
        cwd=target,
        capture_output=True,
        text=True,
    )


@corpus.needs_corpus
def test_mypy_strict_on_main(tmp_path: Path) -> None:
    out = generate(corpus.ACP / "main", tmp_path / "main")
    assert sorted(p.name for p in (out / "acp_pydantic").glob("v*.py")) == [
        "v1.py", "v1_unstable.py", "v2.py", "v2_unstable.py"
    ]
    result = _mypy(out)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("fixture", ["keywords.json", "shared_props.json", "defaults.json", "lenient.json", "open_union.json"])
def test_mypy_strict_on_fixtures(fixture: str, tmp_path: Path) -> None:
    out = generate(SCHEMAS / fixture, tmp_path / "out")
    result = _mypy(out)
    assert result.returncode == 0, result.stdout + result.stderr
