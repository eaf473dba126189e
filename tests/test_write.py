"""Atomic output: a build killed with SIGKILL at any point leaves each output directory
with its previous or its new content, complete, and the next run cleans up."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest

from acpgen.write import _alive, exchange, recover

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
elif mode == "after-renames":  # no renameat2: killed after both renames, the old tree aside
    w.exchange = lambda a, b: False
    real_replace, done = os.replace, [0]

    def killing_replace(a, b):
        real_replace(a, b)
        done[0] += 1
        if done[0] == 2:
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


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    pid = int(done.stdout)
    assert not _alive(pid)
    return pid


def _tree(root: Path, text: str) -> Path:
    root.mkdir(parents=True)
    (root / "acpgen-manifest.json").write_text(text)
    (root / "v1.py").write_text(text)
    return root


def test_recover_restores_an_output_moved_aside(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    aside = _tree(tmp_path / f".gen.acpgen-{_dead_pid()}-old", "previous")
    recover(out)
    assert tree_bytes(out) == {"acpgen-manifest.json": b"previous", "v1.py": b"previous"}
    assert not aside.exists()


def test_recover_keeps_the_output_that_is_there(tmp_path: Path) -> None:
    """Killed after both renames: ``out`` is complete (the new output) and the old one is
    aside; the output that is there stays, whatever is aside goes."""
    out = _tree(tmp_path / "gen", "current")
    aside = _tree(tmp_path / f".gen.acpgen-{_dead_pid()}-old", "previous")
    staging = _tree(tmp_path / f".gen.acpgen-{_dead_pid()}-x1y2", "half")
    recover(out)
    assert tree_bytes(out) == {"acpgen-manifest.json": b"current", "v1.py": b"current"}
    assert not aside.exists() and not staging.exists()


def test_recover_touches_only_its_own_output(tmp_path: Path) -> None:
    """Leftovers are looked for beside ``out`` and by ``out``'s name: another output's,
    inside ``out``, or a live run's are left alone."""
    out = _tree(tmp_path / "gen", "current")
    dead = _dead_pid()
    others = [
        _tree(tmp_path / f".gen2.acpgen-{dead}-old", "sibling"),  # another output's
        _tree(out / f".gen.acpgen-{dead}-old", "inside"),  # not beside out
        _tree(tmp_path / f".gen.acpgen-{os.getpid()}-old", "live"),  # a live run's
    ]
    recover(out)
    assert all(p.is_dir() for p in others)
    recover(tmp_path / "gen2")  # that output's own: gen2 is missing, so it is restored
    assert tree_bytes(tmp_path / "gen2") == {"acpgen-manifest.json": b"sibling", "v1.py": b"sibling"}


def test_killed_after_both_fallback_renames_keeps_the_new_output(tmp_path: Path, outputs) -> None:  # type: ignore[no-untyped-def]
    _, new = outputs
    out = killed_build(tmp_path, "after-renames")
    assert tree_bytes(out) == new and any(name.endswith("-old") for name in leftovers(out))
    recover(out)
    assert tree_bytes(out) == new and leftovers(out) == []


@pytest.mark.parametrize("package", [None, "myagent._acp"])
def test_the_next_build_repairs_a_killed_swap(tmp_path: Path, outputs, package: str | None) -> None:  # type: ignore[no-untyped-def]
    """Through the CLI, as a user meets it: the build after a kill between the renames
    finds the output moved aside (beside the output, a vendored package's directory
    too), and ends with the new output and nothing left over."""
    out = tmp_path / "gen"
    extra = ["--package", package] if package else []
    styles = ["--style", "pydantic"] if package else STYLES
    root = out / "myagent" / "_acp" if package else out
    first = acpgen("build", "--schema", str(SCHEMAS / "enums.json"), "--out", str(out), *styles, *extra)
    assert first.returncode == 0, first.stderr
    old = tree_bytes(root)
    killed = acpgen("build", "--schema", str(SCHEMAS / "nullable.json"), "--out", str(out), *styles, *extra, kill=("between-renames", 0))
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert not root.exists() and leftovers(root)
    again = acpgen("build", "--schema", str(SCHEMAS / "enums.json"), "--out", str(out), *styles, *extra)
    assert again.returncode == 0, again.stderr
    assert tree_bytes(root) == old and leftovers(root) == []


def test_a_failed_swap_puts_the_previous_output_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No renameat2, and the second rename fails: the previous output, moved aside by the
    first, is put back; the error is one ACPG601 line, nothing is left over."""
    import acpgen.write as w
    from acpgen.errors import AcpgenError

    out = _tree(tmp_path / "gen", "previous")
    monkeypatch.setattr(w, "exchange", lambda a, b: False)
    real_replace, calls = os.replace, []

    def failing_replace(a: Path, b: Path) -> None:
        calls.append((Path(a).name, Path(b).name))
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real_replace(a, b)

    monkeypatch.setattr(w.os, "replace", failing_replace)
    with pytest.raises(AcpgenError) as exc:
        w.write_trees([(out, {PurePosixPath("acpgen-manifest.json"): "new", PurePosixPath("v1.py"): "new"})])
    assert [d.code for d in exc.value.diagnostics] == ["ACPG601"]
    assert tree_bytes(out) == {"acpgen-manifest.json": b"previous", "v1.py": b"previous"}
    assert leftovers(out) == [] and len(calls) == 3  # aside, failed, back


def test_check_counts_no_bytecode_cache_as_an_extra_file(tmp_path: Path) -> None:
    """Importing a generated package writes ``__pycache__/`` into it: ``acpgen check``
    must not see those files as extra (nor anything else below a ``__pycache__``)."""
    from acpgen.write import check

    files = {PurePosixPath("pkg/__init__.py"): "x = 1\n", PurePosixPath("pkg/v1.py"): "y = 2\n"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    for cache in (tmp_path / "pkg" / "__pycache__", tmp_path / "__pycache__"):
        cache.mkdir()
        (cache / "v1.cpython-311.pyc").write_bytes(b"\0")
    drift = check(tmp_path, files)
    assert drift.clean, drift
    (tmp_path / "pkg" / "stray.py").write_text("")
    assert check(tmp_path, files).extra == ("pkg/stray.py",)
