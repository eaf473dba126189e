"""The only module that writes generated output: atomic swap-in, and check mode."""

from __future__ import annotations

import ctypes
import errno
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from acpgen.errors import AcpgenError, Diagnostic
from acpgen.source import display_path

MANIFEST = "acpgen-manifest.json"


@dataclass(frozen=True)
class Drift:
    stale: tuple[str, ...]
    missing: tuple[str, ...]
    extra: tuple[str, ...]

    @property
    def clean(self) -> bool:
        return not (self.stale or self.missing or self.extra)


def _existing(out: Path) -> set[str]:
    if not out.is_dir():
        return set()
    return {
        p.relative_to(out).as_posix()
        for p in out.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def check(out: Path, files: dict[PurePosixPath, str]) -> Drift:
    existing = _existing(out)
    wanted = {p.as_posix(): t for p, t in files.items()}
    stale, missing = [], []
    for rel, text in sorted(wanted.items()):
        target = out / rel
        if not target.is_file():
            missing.append(rel)
        elif target.read_bytes() != text.encode("utf-8"):
            stale.append(rel)
    extra = sorted(existing - set(wanted))
    return Drift(tuple(stale), tuple(missing), tuple(extra))


def write_trees(trees: list[tuple[Path, dict[PurePosixPath, str]]]) -> None:
    """Write each ``files`` as the whole content of its ``out``, all or nothing.

    Every tree is first written in full into a temporary directory beside its ``out``;
    only when all of them are staged are they swapped in, each with one atomic
    ``renameat2(RENAME_EXCHANGE)`` on Linux (two renames elsewhere, which the next run
    repairs if a crash fell between them). A crash or a failure at any point leaves
    every ``out`` holding either its previous or its new content, never a mixture
    (callers run :func:`recover` first).
    """
    problems = [d for out, _ in trees for d in _refusals(out)]
    if problems:
        raise AcpgenError(problems)
    staged: list[tuple[Path, Path]] = []
    try:
        for out, files in trees:
            staged.append((_stage(out, files), out))
    except AcpgenError:
        for staging, _ in staged:
            shutil.rmtree(staging, ignore_errors=True)
        raise
    for staging, out in staged:
        _swap(staging, out)


def _refusals(out: Path) -> list[Diagnostic]:
    name = display_path(out)
    if out.exists() and not out.is_dir():
        return [Diagnostic("ACPG601", "output path exists and is not a directory", name)]
    blocker = next((p for p in out.parents if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        return [Diagnostic("ACPG601", f"cannot create the output directory: {display_path(blocker)} is a file", name)]
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        return [Diagnostic("ACPG603", f"{name} is not empty and has no {MANIFEST}; choose another --out", name)]
    return []


def _prefix(out: Path) -> str:
    return f".{out.name}.acpgen-"


def _stage(out: Path, files: dict[PurePosixPath, str]) -> Path:
    name = display_path(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f"{_prefix(out)}{os.getpid()}-", dir=out.parent))
    except OSError as exc:
        raise AcpgenError([Diagnostic("ACPG601", f"cannot write here: {exc.strerror}", name)])
    try:
        for rel, text in sorted(files.items()):
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise AcpgenError([Diagnostic("ACPG601", f"cannot write output: {exc.strerror}", name)])
    return staging


def _swap(staging: Path, out: Path) -> None:
    old = out.parent / f"{_prefix(out)}{os.getpid()}-old"
    try:
        if not out.exists():
            os.replace(staging, out)
            return
        if exchange(staging, out):
            shutil.rmtree(staging, ignore_errors=True)  # it now holds the previous output
            return
        os.replace(out, old)
        os.replace(staging, out)
    except OSError as exc:
        if old.exists() and not out.exists():
            os.replace(old, out)
        shutil.rmtree(staging, ignore_errors=True)
        raise AcpgenError([Diagnostic("ACPG601", f"cannot write output: {exc.strerror}", display_path(out))])
    shutil.rmtree(old, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recover(out: Path) -> None:
    """Clean up after a run that was killed: restore an output moved aside mid-swap
    (the two-rename fallback) and delete staging directories of dead processes."""
    if not out.parent.is_dir():
        return
    prefix = _prefix(out)
    for leftover in sorted(out.parent.iterdir()):
        pid, _, rest = leftover.name[len(prefix):].partition("-")
        if not leftover.name.startswith(prefix) or not pid.isdigit() or _alive(int(pid)):
            continue
        if rest == "old" and not out.exists():
            os.replace(leftover, out)
        else:
            shutil.rmtree(leftover, ignore_errors=True)


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths in one atomic step (Linux ``renameat2``); False where
    the platform or the file system cannot, so the caller falls back to renames."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    renameat2.restype = ctypes.c_int
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), os.fsdecode(b))


def manifest_text(entries: list[dict[str, object]], tool_version: str) -> str:
    body = {"tool": "acpgen", "version": tool_version, "files": sorted(entries, key=lambda e: str(e["path"]))}
    return json.dumps(body, indent=2, sort_keys=True) + "\n"


def write_files(files: dict[Path, str]) -> None:
    """Write single files (``overlay apply``): each into a temporary file beside it, then
    renamed over the target only when every one was written."""
    staged: list[tuple[Path, Path]] = []
    try:
        for path, text in sorted(files.items()):
            name = display_path(path)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.acpgen-", dir=path.parent)
            except OSError as exc:
                raise AcpgenError([Diagnostic("ACPG601", f"cannot write here: {exc.strerror}", name)])
            staged.append((Path(tmp_name), path))
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
        for staged_file, path in staged:
            os.replace(staged_file, path)
    except OSError as exc:
        raise AcpgenError([Diagnostic("ACPG601", f"cannot write output: {exc.strerror}", display_path(staged[-1][1]))])
    finally:
        for leftover, _ in staged:
            if leftover.exists():
                leftover.unlink()
