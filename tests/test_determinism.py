"""Byte-identical output from the same input: across runs, PYTHONHASHSEED values, working
directories, input locations and caches, as on another machine. Proved on corpus releases
of three eras (upstream data read in place; the copies live in tmp only)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from . import corpus
from .conftest import tree_bytes

#: an early v1 release, a mid one with unstable methods, and one with the v2 tree
RELEASES = ["v0.0.1", "v0.6.3", "schema-v1.13.7"]
STYLES = ["pydantic", "dataclasses", "typeddict", "mdx", "md"]


def build_elsewhere(release: str, home: Path, seed: str, cache: str) -> dict[str, bytes]:
    """Copy the release to ``home/<deep path>`` and build it from there with its own
    working directory, hash seed and formatter cache."""
    src = home / "some" / "where" / release
    shutil.copytree(corpus.ACP / release, src, ignore=shutil.ignore_patterns("docs"))
    out = home / "out"
    env = {**os.environ, "PYTHONHASHSEED": seed, "ACPGEN_CACHE_DIR": cache, "TZ": "Pacific/Kiritimati" if seed == "1" else "UTC"}
    styles = [arg for s in STYLES for arg in ("--style", s)]
    done = subprocess.run(
        [sys.executable, "-m", "acpgen", "build", "--schema", str(src), "--out", "out", *styles],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return tree_bytes(out)


@corpus.needs_corpus
@pytest.mark.parametrize("release", RELEASES)
def test_same_bytes_anywhere(release: str, tmp_path: Path) -> None:
    first_home, second_home = tmp_path / "machine-a", tmp_path / "b" / "machine-b"
    first = build_elsewhere(release, first_home, "1", str(tmp_path / "cache-a"))
    second = build_elsewhere(release, second_home, "4242", "")  # no formatter cache at all
    assert first.keys() == second.keys()
    differing = sorted(k for k in first if first[k] != second[k])
    assert differing == []
    # paths of this run and this machine (the user name alone, e.g. 'root', is a common word)
    machine = [str(tmp_path), str(Path.home()) + "/", os.getcwd(), socket.gethostname()]
    machine = [m for m in machine if len(m) > 5]
    for rel, data in first.items():
        text = data.decode("utf-8")
        leaks = [m for m in machine if m in text]
        assert leaks == [], f"{rel} mentions {leaks}"
