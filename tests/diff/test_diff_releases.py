"""Releases compared file by file (``acpgen/diff/__init__.py``)."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import acpgen.diff as diff
from acpgen.api import load_release
from acpgen.diff import Change, Release, diff_releases
from acpgen.errors import AcpgenError

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
    monkeypatch.setattr(
        diff, "compare", lambda pair: seen.append(pair.file) or real(pair)
    )
    return seen


def load(paths: list[Path], memo: dict[Any, Any] | None) -> list[Release]:
    return [load_release(p, memo=memo) for p in paths]


def test_a_file_unchanged_between_releases_is_not_walked_again(
    tmp_path: Path, walked: list[str]
) -> None:
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


def test_an_unchanged_stable_file_is_skipped_whatever_its_unstable_file_did(
    tmp_path: Path, walked: list[str]
) -> None:
    """The unstable file is read beside the stable one only for an item that left or
    joined the stable file: with the stable file unchanged there is none."""
    paths = releases(tmp_path, {}, {"schema.unstable.json": "r2"})
    a, b = load(paths, {})
    changes = diff_releases(a, b)
    assert walked == ["v1/schema.unstable.json"]
    walked.clear()
    assert changes == diff_releases(*load(paths, None)) and walked == [
        "v1/schema.json",
        "v1/schema.unstable.json",
    ]


# --- a release and its files -----------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "single", "label"),
    [
        ("releases/v0.13.4", False, "v0.13.4"),
        ("v0.13.4", False, "v0.13.4"),
        (".", False, "."),
        ("releases/v0.13.4/v1/schema.json", True, "v0.13.4"),
        ("releases/v0.13.4/v12/schema.json", True, "v0.13.4"),
        ("releases/v0.13.4/schema.json", True, "v0.13.4"),
        ("releases/v0.13.4/vx/schema.json", True, "vx"),
        ("v1/schema.json", True, "v1/schema.json"),
        ("schema.json", True, "schema.json"),
    ],
)
def test_a_release_is_labelled_by_its_own_name(
    name: str, single: bool, label: str
) -> None:
    assert Release(name, {}, single).label == label


def test_a_file_is_named_by_its_tree_and_stability(tmp_path: Path) -> None:
    (a,) = load(releases(tmp_path, {}), None)
    assert sorted(a.files) == ["v1/schema.json", "v1/schema.unstable.json"]
    assert [diff.file_name(p) for p in a.files.values()] == list(a.files)


def test_a_release_knows_where_each_file_was_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (root,) = releases(tmp_path, {})
    a = load_release(root)
    assert (a.name, a.single) == ("s0", False)
    assert a.paths == {
        "v1/schema.json": "s0/v1/schema.json",
        "v1/schema.unstable.json": "s0/v1/schema.unstable.json",
    }
    one = load_release(root / "v1" / "schema.json", name="acp@v1")
    assert (one.name, one.single, list(one.files), one.paths) == (
        "acp@v1",
        True,
        ["v1/schema.json"],
        {"v1/schema.json": "s0/v1/schema.json"},
    )


# --- comparing two releases ------------------------------------------------------------


def test_two_schema_files_must_be_of_one_tree_and_stability(tmp_path: Path) -> None:
    (root,) = releases(tmp_path, {})
    stable, unstable = (
        load_release(root / "v1" / n) for n in ("schema.json", "schema.unstable.json")
    )
    for old, new in ((stable, unstable), (unstable, stable)):
        with pytest.raises(AcpgenError) as caught:
            diff_releases(old, new)
        (d,) = caught.value.diagnostics
        assert (d.code, d.file) == ("ACPG701", new.name)
        assert d.message == (
            f"cannot compare {', '.join(old.files)} with {', '.join(new.files)}: "
            "two schema files must be of the same tree and stability"
        )
    # a file against a directory: the directory's other files are not compared
    whole = load_release(root)
    both = "v1/schema.json, v1/schema.unstable.json"
    with pytest.raises(
        AcpgenError, match=f"^.*cannot compare {both} with v1/schema.json: "
    ):
        diff_releases(whole, stable)
    with pytest.raises(
        AcpgenError, match=f"^.*cannot compare v1/schema.json with {both}: "
    ):
        diff_releases(stable, whole)
    assert diff_releases(stable, load_release(root / "v1" / "schema.json")) == []


def test_a_file_added_or_removed_is_one_record(tmp_path: Path) -> None:
    (root,) = releases(tmp_path, {})
    both = load_release(root)
    stable_only = Release("one", {"v1/schema.json": both.files["v1/schema.json"]})
    (added,) = diff_releases(stable_only, both)
    assert (added.rule, added.file, added.subject, added.message, added.breaks) == (
        "file-added",
        "v1/schema.unstable.json",
        "v1/schema.unstable.json",
        "new schema file v1/schema.unstable.json",
        (),
    )
    (removed,) = diff_releases(both, stable_only)
    assert (removed.rule, removed.file, removed.message, set(removed.breaks)) == (
        "file-removed",
        "v1/schema.unstable.json",
        "schema file v1/schema.unstable.json is gone",
        {"agent", "client"},
    )
    assert diff_releases(stable_only, both, stable_only=True) == []
    assert diff_releases(both, stable_only, stable_only=True) == []


def test_stable_only_leaves_every_unstable_file_out(tmp_path: Path) -> None:
    a, b = load(
        releases(tmp_path, {}, {"schema.json": "r2", "schema.unstable.json": "r2"}),
        None,
    )
    every = diff_releases(a, b)
    assert {c.file for c in every} == {"v1/schema.json", "v1/schema.unstable.json"}
    assert diff_releases(a, b, stable_only=True) == [
        c for c in every if c.file == "v1/schema.json"
    ]


def test_records_come_sorted(tmp_path: Path) -> None:
    a, b = load(
        releases(tmp_path, {}, {"schema.json": "r2", "schema.unstable.json": "r2"}),
        None,
    )
    changes = diff_releases(a, b)
    assert len(changes) > 1 and changes == sorted(changes, key=Change.sort_key)


def test_the_same_ir_read_from_two_places_is_no_change(
    tmp_path: Path, walked: list[str]
) -> None:
    """Equal bytes read from two directories (through one memo): the same IR but for the
    path; not walked."""
    a, b = load(releases(tmp_path, {}, {}), {})
    assert a.files["v1/schema.json"].source != b.files["v1/schema.json"].source
    assert diff_releases(a, b) == [] and walked == []


def test_equal_bytes_with_another_ir_are_walked(
    tmp_path: Path, walked: list[str]
) -> None:
    """The same bytes normalised differently (another meta file, another overlay) are
    compared, not taken as unchanged."""
    a, b = load(releases(tmp_path, {}, {}), {})
    p = b.files["v1/schema.json"]
    other = Release(b.name, {**b.files, "v1/schema.json": replace(p, defs=p.defs[1:])})
    assert diff_releases(a, other) != [] and walked == ["v1/schema.json"]
    walked.clear()
    meta = Release(
        b.name, {**b.files, "v1/schema.json": replace(p, meta_sha256="0" * 64)}
    )
    assert diff_releases(a, meta) == [] and walked == ["v1/schema.json"]


def _trees(files: dict[str, str], tmp_path: Path) -> Release:
    """A release whose files (``v2/schema.json`` ...) each hold one of r1's."""
    (root,) = releases(tmp_path, {})
    r1 = load_release(root)
    return Release(
        str(sorted(files)), {name: r1.files[of] for name, of in files.items()}
    )


def test_every_file_added_or_removed_is_a_record(tmp_path: Path) -> None:
    one = _trees({"v1/schema.json": "v1/schema.json"}, tmp_path / "a")
    three = _trees(
        {
            "v1/schema.json": "v1/schema.json",
            "v1/schema.unstable.json": "v1/schema.unstable.json",
            "v2/schema.json": "v1/schema.json",
        },
        tmp_path / "b",
    )
    assert [(c.rule, c.file) for c in diff_releases(one, three)] == [
        ("file-added", "v1/schema.unstable.json"),
        ("file-added", "v2/schema.json"),
    ]
    assert [(c.rule, c.file) for c in diff_releases(three, one)] == [
        ("file-removed", "v1/schema.unstable.json"),
        ("file-removed", "v2/schema.json"),
    ]
    assert [(c.rule, c.file) for c in diff_releases(one, three, stable_only=True)] == [
        ("file-added", "v2/schema.json")
    ]


def test_a_file_read_beside_another_meta_file_path_is_still_unchanged(
    tmp_path: Path, walked: list[str]
) -> None:
    """Where the meta file was read from is no part of the IR, as the schema file's path is not."""
    a, b = load(releases(tmp_path, {}, {}), {})
    p = b.files["v1/schema.json"]
    moved = Release(
        b.name,
        {**b.files, "v1/schema.json": replace(p, meta_source="elsewhere/meta.json")},
    )
    assert diff_releases(a, moved) == [] and walked == []
