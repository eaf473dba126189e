"""Releases compared file by file (``acpgen/diff/__init__.py``)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import acpgen.diff as diff
from acpgen.api import load_release
from acpgen.diff import Release, diff_releases

HISTORY = Path(__file__).parent.parent / "fixtures" / "history"


def releases(tmp_path: Path, *files: dict[str, str]) -> list[Path]:
    """Release directories holding r1's files, with the named files taken from others."""
    out = []
    for i, taken in enumerate(files):
        root = tmp_path / f"s{i}"
        shutil.copytree(HISTORY / "r1", root)
        for name, release in taken.items():
            shutil.copy(HISTORY / release / "v1" / name, root / "v1" / name)
        out.append(root)
    return out


@pytest.fixture
def walked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = diff.compare
    monkeypatch.setattr(diff, "compare", lambda pair: seen.append(pair.file) or real(pair))
    return seen


def load(paths: list[Path], memo: dict[Any, Any] | None) -> list[Release]:
    return [load_release(p, memo=memo) for p in paths]


def test_a_file_unchanged_between_releases_is_not_walked_again(tmp_path: Path, walked: list[str]) -> None:
    """A history compares every consecutive pair; an unchanged file (same bytes, the same
    IR from the memo) has no change to find, so the walk is skipped."""
    paths = releases(tmp_path, {}, {}, {"schema.json": "r2"})
    a, a_again, b = load(paths, {})
    assert diff_releases(a, a_again) == [] and walked == []
    changes = diff_releases(a, b)
    # the stable file changed: walked; so is the unstable file, although its bytes did not
    # change: what is unstable in it is read against the stable file (same bytes are not
    # the same IR)
    assert changes and walked == ["v1/schema.json", "v1/schema.unstable.json"]
    assert changes == diff_releases(*load([paths[0], paths[2]], None))


def test_an_unchanged_stable_file_is_skipped_whatever_its_unstable_file_did(tmp_path: Path, walked: list[str]) -> None:
    """The unstable file is read beside the stable one only for an item that left or
    joined the stable file: with the stable file unchanged there is none."""
    paths = releases(tmp_path, {}, {"schema.unstable.json": "r2"})
    a, b = load(paths, {})
    changes = diff_releases(a, b)
    assert walked == ["v1/schema.unstable.json"]
    walked.clear()
    assert changes == diff_releases(*load(paths, None)) and walked == ["v1/schema.json", "v1/schema.unstable.json"]
