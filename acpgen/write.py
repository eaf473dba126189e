"""The only module that writes generated output: atomic swap-in, and check mode."""

from __future__ import annotations

import json
import os
import shutil
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


def write_tree(out: Path, files: dict[PurePosixPath, str]) -> None:
    """Write ``files`` as the whole content of ``out``, atomically.

    Everything is written into a temporary directory beside ``out`` and swapped in
    with renames only when all of it succeeded; a crash leaves the previous output.
    """
    name = display_path(out)
    if out.exists() and not out.is_dir():
        raise AcpgenError([Diagnostic("ACPG601", "output path exists and is not a directory", name)])
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise AcpgenError(
            [Diagnostic("ACPG603", f"{name} is not empty and has no {MANIFEST}; choose another --out", name)]
        )
    parent = out.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.acpgen-", dir=parent))
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
        old = None
        if out.exists():
            old = parent / f".{out.name}.acpgen-old-{os.getpid()}"
            os.replace(out, old)
        os.replace(staging, out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise AcpgenError([Diagnostic("ACPG601", f"cannot write output: {exc.strerror}", name)])


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
