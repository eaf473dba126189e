"""Reading a history: release specs expanded, each release loaded once (by the pipeline's
``load``, which the caller hands in: ``api.load_release``), each consecutive pair compared
once with ``acpgen diff``'s machinery (read-only)."""

from __future__ import annotations

import json
import os
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from acpgen.diff import Change, Release, diff_releases
from acpgen.errors import AcpgenError, Collector, Diagnostic
from acpgen.history.elements import elements
from acpgen.history.model import History, Step, release_anchor
from acpgen.source import display_path


def version_key(name: str) -> tuple[float, ...]:
    """Upstream's tags in release order: ``v0.x.y`` and ``schema-v1.x.y`` share one line
    (``schema-v1.13.7`` is ``v0.13.7``), pre-releases before their release, ``main`` last."""
    if name == "main":
        return (float("inf"),)
    m = re.match(r"^(?:schema-)?v(\d+)\.(\d+)\.(\d+)(?:-(alpha|beta|rc)\.(\d+))?$", name)
    if not m:
        return (-1.0,)
    major = 0 if name.startswith("schema-") else int(m[1])
    pre = (0.0, float(m[5])) if m[4] else (1.0, 0.0)
    return (float(major), float(m[2]), float(m[3]), *pre)


def is_release(path: Path) -> bool:
    from acpgen.load import find_schema_files

    return path.is_file() or bool(find_schema_files(path))


def expand(path: Path) -> list[Path]:
    """A release (directory or schema file) is itself; a directory of release folders is
    its releases, in the order of its ``INDEX.json`` (``releases[].release``) when it has
    one, else in version order."""
    if not path.exists():
        raise AcpgenError([Diagnostic("ACPG100", "no such file or directory", display_path(path))])
    if is_release(path):
        return [path]
    folders = [p for p in path.iterdir() if p.is_dir() and is_release(p)]
    index = path / "INDEX.json"
    order: dict[str, int] = {}
    if index.is_file():
        try:
            order = {r["release"]: i for i, r in enumerate(json.loads(index.read_text())["releases"])}
        except (ValueError, KeyError, TypeError):
            order = {}
    if order:
        folders = [p for p in folders if p.name in order]
        folders.sort(key=lambda p: order[p.name])
    else:
        folders.sort(key=lambda p: (version_key(p.name), p.name))
    if not folders:
        raise AcpgenError([Diagnostic("ACPG105", "no release here, nor release folders in it", display_path(path))])
    return folders


class LoadRelease(Protocol):
    """How a history has a release built: the pipeline's ``api.load_release``."""

    def __call__(self, path: Path, *, name: str | None = None, memo: Any = None) -> Release: ...


@dataclass(frozen=True)
class _Read:
    """One release as a history needs it: no IR, only what its step is made of (small
    enough to come back from another process)."""

    label: str
    name: str
    files: dict[str, frozenset[str]]
    changes: tuple[Change, ...]
    digests: tuple[str, ...]


def _read(release: Release, changes: list[Change]) -> _Read:
    return _Read(
        release.label,
        release.name,
        {f: elements(p) for f, p in release.files.items()},
        tuple(changes),
        tuple(sorted(f"{p.source_sha256}:{p.meta_sha256 or ''}" for p in release.files.values())),
    )


def _read_span(
    paths: list[Path], load: LoadRelease, names: list[str] | None, stable_only: bool, start: int, end: int
) -> tuple[list[_Read], list[Diagnostic]]:
    """Releases ``start`` to ``end`` (excluded), each compared with the one before it (the
    release before ``start`` is loaded for that too)."""
    problems: list[Diagnostic] = []
    releases: list[Release] = []
    memo: dict[object, object] = {}  # a file unchanged since an earlier release is built once
    for i in range(max(start - 1, 0), end):
        try:
            releases.append(load(paths[i], name=names[i] if names else None, memo=memo))
        except AcpgenError as exc:
            problems.extend(exc.diagnostics)  # the seam's twice: AcpgenError keeps one
    if problems:
        return [], problems  # a release that cannot be read fails the history
    first = 1 if start else 0  # the seam's release is read by the span it is in
    changes = [diff_releases(releases[k - 1], r, stable_only) if k else [] for k, r in enumerate(releases)]
    return [_read(r, changes[k]) for k, r in enumerate(releases) if k >= first], problems


def _jobs(count: int, jobs: int | None) -> int:
    """Processes to read ``count`` releases with: one per CPU this process may use, with
    at least 12 releases each (below that, starting a process costs more than it saves)."""
    if jobs is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        jobs = min(cpus, count // 12)
    return max(1, min(jobs, count))


def _size(path: Path) -> int:
    """The bytes of a release's schema files: what reading it costs, roughly."""
    if path.is_file():
        return path.stat().st_size
    return sum(f.stat().st_size for f in path.rglob("*.json"))


def _bounds(sizes: list[int], n: int) -> list[int]:
    """``n`` consecutive spans of about the same size (later releases are much larger)."""
    total, bounds, acc = sum(sizes) or 1, [0], 0
    for i, size in enumerate(sizes):
        acc += size
        if len(bounds) < n and acc * n >= total * len(bounds) and i + 1 < len(sizes):
            bounds.append(i + 1)
    return bounds + [len(sizes)]


def load_history(
    paths: list[Path], load: LoadRelease, names: list[str] | None = None, stable_only: bool = False, jobs: int | None = None
) -> History:
    """Each release loaded once by ``load`` (a module's function, so that other processes
    can call it too: ``api.load_release``); each consecutive pair compared once. A long history is
    read in consecutive spans by several processes (``jobs``, default: one per CPU), each
    loading the release before its span again to compare across the seam; the steps are
    the same to the byte whatever the split."""
    n = _jobs(len(paths), jobs)
    bounds = _bounds([_size(p) for p in paths], n) if n > 1 else [0, len(paths)]
    spans = [(paths, load, names, stable_only, a, b) for a, b in zip(bounds, bounds[1:])]
    if n == 1:
        results = [_read_span(*span) for span in spans]
    else:
        with ProcessPoolExecutor(n) as pool:
            results = list(pool.map(_read_span, *zip(*spans)))
    problems = Collector()
    for _, found in results:
        problems.items.extend(found)
    problems.raise_if_any()
    reads = [r for span, _ in results for r in span]
    labels = [r.label for r in reads]
    if len(set(labels)) < len(labels):
        labels = [r.name for r in reads]
    steps: list[Step] = []
    for i, r in enumerate(reads):
        step = Step(labels[i], release_anchor(labels[i]), r.files, r.changes, labels[i - 1] if i else None, r.digests)
        if any(s.anchor == step.anchor for s in steps):  # two names of one slug: each its own section
            step = replace(step, anchor=f"{step.anchor}-{i + 1}")
        steps.append(step)
    return History(tuple(steps))
