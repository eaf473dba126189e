"""A history read in spans by several processes (``acpgen/history/load.py``): the same
steps to the byte whatever the split, every problem reported once."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acpgen.api import load_release
from acpgen.errors import AcpgenError
from acpgen.history.load import _bounds, load_history

from ..corpus import ACP

HISTORY = Path(__file__).parent.parent / "fixtures" / "history"
RELEASES = [HISTORY / f"r{i}" for i in range(1, 5)]


@pytest.mark.parametrize("jobs", [2, 3, 4])
def test_any_split_gives_the_steps_of_one_process(jobs: int) -> None:
    one = load_history(RELEASES, load_release, jobs=1)
    assert [s.name for s in one.steps] == ["r1", "r2", "r3", "r4"] and any(s.changes for s in one.steps)
    assert load_history(RELEASES, load_release, jobs=jobs) == one


@given(st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=60), st.integers(min_value=1, max_value=8))
def test_spans_are_consecutive_and_cover_every_release(sizes: list[int], n: int) -> None:
    bounds = _bounds(sizes, n)
    assert bounds[0] == 0 and bounds[-1] == len(sizes) and bounds == sorted(set(bounds))
    assert len(bounds) - 1 <= n
    if n <= len(sizes) and all(sizes):
        # no span holds more than its share and one release (the releases are not cut)
        spans = [sum(sizes[a:b]) for a, b in zip(bounds, bounds[1:])]
        assert max(spans) <= sum(sizes) / n + max(sizes)


def test_spans_follow_size_not_count() -> None:
    # old releases are small, new ones large: two processes split at the weight's middle
    assert _bounds([1] * 40 + [10] * 8, 2) == [0, 42, 48]  # 60 and 60


@pytest.mark.parametrize("broken", [1, 2])  # the seam's release (loaded by both spans), and one inside a span
def test_a_release_that_cannot_be_read_is_reported_once(tmp_path: Path, broken: int) -> None:
    paths = []
    for i, release in enumerate(RELEASES):
        shutil.copytree(release, tmp_path / release.name)
        paths.append(tmp_path / release.name)
    (paths[broken] / "v1" / "schema.json").write_text("{ not json")
    with pytest.raises(AcpgenError) as one:
        load_history(paths, load_release, jobs=1)
    with pytest.raises(AcpgenError) as two:
        load_history(paths, load_release, jobs=2)
    assert one.value.diagnostics == two.value.diagnostics and len(two.value.diagnostics) == 1


def test_the_corpus_history_is_the_same_in_one_process_and_in_several() -> None:
    if not (ACP / "INDEX.json").is_file():
        pytest.skip("../shared/corpus is absent: the upstream corpus is read in place, never copied")
    from acpgen.history.load import expand

    paths = expand(ACP)
    assert load_history(paths, load_release, jobs=2) == load_history(paths, load_release, jobs=1)
