"""Atomic output: a build killed with SIGKILL at any point leaves each output directory
with its previous or its new content, complete, and the next run cleans up."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from acpgen.write import exchange, recover

from .conftest import SCHEMAS, tree_bytes

# Runs the real CLI in a child process with one seam of acpgen.write replaced by a
# version that SIGKILLs the process at the chosen moment.
KILLER = r"""
import os, signal, sys
import acpgen.write as w

mode, n = sys.argv[1], int(sys.argv[2])
del sys.argv[1:3]


def die():
    os.kill(os.getpid(), signal.SIGKILL)


if mode == "staging":  # after n files of the new output are written to the staging dir
    real_open, opened = open, [0]

    def killing_open(path, *args, **kwargs):
        opened[0] += 1
        if opened[0] > n:
            die()
        return real_open(path, *args, **kwargs)

    w.open = killing_open
elif mode == "after-exchange":  # the swap is done, the old tree not yet deleted
    real_exchange = w.exchange

    def killing_exchange(a, b):
        real_exchange(a, b)
        die()

    w.exchange = killing_exchange
elif mode == "between-renames":  # no renameat2: killed after moving the old tree aside
    w.exchange = lambda a, b: False
    real_replace = os.replace

    def killing_replace(a, b):
        real_replace(a, b)
        die()

    os.replace = killing_replace

from acpgen.cli import app

app(prog_name="acpgen")
"""

STYLES = ["--style", "pydantic", "--style", "dataclasses", "--style", "md"]


def acpgen(*args: str, kill: tuple[str, int] | None = None) -> subprocess.CompletedProcess[str]:
    prefix = ["-c", KILLER, kill[0], str(kill[1])] if kill else ["-m", "acpgen"]
    return subprocess.run([sys.executable, *prefix, *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """The previous output (enums.json) and the new one (nullable.json), built normally."""
    base = tmp_path_factory.mktemp("reference")
    for name in ("enums", "nullable"):
        done = acpgen("build", "--schema", str(SCHEMAS / f"{name}.json"), "--out", str(base / name), *STYLES)
        assert done.returncode == 0, done.stderr
    old, new = tree_bytes(base / "enums"), tree_bytes(base / "nullable")
    assert old != new and len(old) >= 5
    return old, new


def killed_build(tmp_path: Path, mode: str, n: int = 0) -> Path:
    out = tmp_path / "gen"
    done = acpgen("build", "--schema", str(SCHEMAS / "enums.json"), "--out", str(out), *STYLES)
    assert done.returncode == 0, done.stderr
    killed = acpgen("build", "--schema", str(SCHEMAS / "nullable.json"), "--out", str(out), *STYLES, kill=(mode, n))
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    return out


def leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if ".acpgen-" in p.name)


@pytest.mark.parametrize("n", [0, 2, 4])
def test_killed_while_staging_keeps_the_previous_output(tmp_path: Path, outputs, n: int) -> None:  # type: ignore[no-untyped-def]
    old, new = outputs
    out = killed_build(tmp_path, "staging", n)
    assert tree_bytes(out) == old
    assert leftovers(out), "the kill should have left a staging directory"
    done = acpgen("build", "--schema", str(SCHEMAS / "nullable.json"), "--out", str(out), *STYLES)
    assert done.returncode == 0 and tree_bytes(out) == new
    assert leftovers(out) == [], "the next run removes a dead run's staging directory"


def test_killed_after_the_swap_has_the_new_output(tmp_path: Path, outputs) -> None:  # type: ignore[no-untyped-def]
    if not exchange_supported(tmp_path):
        pytest.skip("renameat2(RENAME_EXCHANGE) is not available here")
    old, new = outputs
    out = killed_build(tmp_path, "after-exchange")
    assert tree_bytes(out) == new
    recover(out)
    assert leftovers(out) == []


def test_killed_between_fallback_renames_is_repaired(tmp_path: Path, outputs) -> None:  # type: ignore[no-untyped-def]
    old, _ = outputs
    out = killed_build(tmp_path, "between-renames")
    assert not out.exists() and any(name.endswith("-old") for name in leftovers(out))
    recover(out)  # what the next `acpgen build` does first
    assert tree_bytes(out) == old and leftovers(out) == []


def test_recover_leaves_a_live_run_alone(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    out.mkdir()
    live = tmp_path / f".gen.acpgen-{os.getpid()}-abc"
    live.mkdir()
    recover(out)
    assert live.is_dir()


def exchange_supported(tmp_path: Path) -> bool:
    a, b = tmp_path / "probe-a", tmp_path / "probe-b"
    a.mkdir()
    b.mkdir()
    (a / "x").write_text("a")
    ok = exchange(a, b)
    if ok:
        assert (b / "x").read_text() == "a" and not (a / "x").exists()
    return ok
