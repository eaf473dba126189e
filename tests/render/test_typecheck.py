"""mypy --strict on the generated modules of upstream `main` (v1, v2; stable, unstable)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .. import corpus
from ..conftest import SCHEMAS, generate


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
        pytest.skip(corpus.ABSENT)
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


@pytest.mark.parametrize("fixture", ["keywords.json", "shared_props.json", "defaults.json", "lenient.json", "open_union.json", "exclusive_unions.json", "lazy_defaults.json"])
def test_mypy_strict_on_fixtures(fixture: str, tmp_path: Path) -> None:
    out = generate(SCHEMAS / fixture, tmp_path / "out", STYLES)
    result = _mypy(out, PACKAGES)
    assert result.returncode == 0, result.stdout + result.stderr


SAMPLES = Path(__file__).parent.parent / "typecheck"


def _samples(target: Path, broken: bool = False) -> list[str]:
    """The sample agent, client and driver of each style beside the bundled packages;
    ``broken`` returns the wrong type from ``session_prompt`` in each."""
    names = []
    for style in STYLES:
        source = SAMPLES / ("sample_typeddict.py" if style == "typeddict" else "sample_objects.py")
        text = source.read_text().replace("PACKAGE", f"acp_{style}")
        if broken:
            text = text.replace('stop_reason="end_turn"', 'stop_reason="finished"').replace('{"stopReason": "end_turn"}', '{"stopReason": 1}')
        (target / f"sample_{style}.py").write_text(text)
        names.append(f"sample_{style}.py")
    return names


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("samples")
    for package in PACKAGES:
        shutil.copytree(Path(__file__).resolve().parents[2] / "generated" / "v0.1.3" / package, out / package)
    (out / "pyrightconfig.json").write_text('{"pythonVersion": "3.11"}')
    return out


def _pyright(target: Path, files: list[str]) -> subprocess.CompletedProcess[str]:
    pyright = Path(sys.executable).parent / "pyright"
    if not pyright.exists() or shutil.which("node") is None:
        pytest.skip("pyright (dev dependency) needs node, which is absent")
    return subprocess.run([str(pyright), "--pythonpath", sys.executable, *files], cwd=target, capture_output=True, text=True)


def test_sample_agent_and_client_type_check(bundled: Path) -> None:
    """Users' classes implementing the generated ``Agent`` and ``Client`` protocols, and a
    driver on ``RemoteAgent``, in the three styles: clean under mypy --strict and pyright."""
    files = _samples(bundled)
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-version", "3.11", *files],
        cwd=bundled, capture_output=True, text=True,
    )  # fmt: skip
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr
    checked = _pyright(bundled, files)
    assert "0 errors" in checked.stdout, checked.stdout[-3000:]


def test_a_wrong_result_type_is_caught(bundled: Path, tmp_path: Path) -> None:
    """The check can fail: ``session_prompt`` returning a stop reason the schema does not
    have is an error for both type checkers, in every style."""
    target = tmp_path / "broken"
    shutil.copytree(bundled, target)
    files = _samples(target, broken=True)
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-version", "3.11", *files],
        cwd=target, capture_output=True, text=True,
    )  # fmt: skip
    assert mypy.returncode == 1 and all(f in mypy.stdout for f in files), mypy.stdout
    checked = _pyright(target, files)
    assert checked.returncode == 1 and all(f in checked.stdout for f in files), checked.stdout[-3000:]


MISSPELLED = {
    "pydantic": 'from acp_pydantic import v1\n\nblock = v1.TextContentBlock(txet="hi")\n',
    "dataclasses": 'from acp_dataclasses import v1\n\nblock = v1.TextContentBlock(txet="hi")\n',
    "typeddict": 'from acp_typeddict import v1\n\nblock: v1.TextContentBlock = {"type": "text", "txet": "hi"}\n',
}


def test_a_misspelled_member_is_caught_when_building(bundled: Path, tmp_path: Path) -> None:
    """Building a message with a misspelled member: a type error in every style (and a
    ``TypeError`` at run time in the Pydantic and dataclasses styles; a TypedDict is a
    plain dict, its constructor checks nothing)."""
    target = tmp_path / "misspelled"
    shutil.copytree(bundled, target)
    for style, text in MISSPELLED.items():
        (target / f"m_{style}.py").write_text(text)
    files = [f"m_{style}.py" for style in MISSPELLED]
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-version", "3.11", *files],
        cwd=target, capture_output=True, text=True,
    )  # fmt: skip
    assert all(f"{f}:3: error" in mypy.stdout and "txet" in mypy.stdout for f in files), mypy.stdout
    checked = _pyright(target, files)
    assert checked.returncode == 1 and checked.stdout.count("txet") >= 3, checked.stdout[-3000:]
    assert all(f"{f}:3:" in checked.stdout for f in files), checked.stdout[-3000:]
