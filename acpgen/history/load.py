"""Reading a history: release specs expanded, each release loaded once, each
consecutive pair compared once with ``acpgen diff``'s machinery (read-only)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

from acpgen.diff import Change, Release, diff_releases, load_release
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


def _step(release: Release, changes: list[Change], name: str, before: str | None) -> Step:
    return Step(
        name,
        release_anchor(name),
        {f: elements(p) for f, p in release.files.items()},
        tuple(changes),
        before,
        tuple(sorted(f"{p.source_sha256}:{p.meta_sha256 or ''}" for p in release.files.values())),
    )


def load_history(paths: list[Path], names: list[str] | None = None, stable_only: bool = False) -> History:
    """Each release loaded once; each consecutive pair compared once."""
    problems = Collector()
    releases: list[Release] = []
    memo: dict[object, object] = {}  # a file unchanged since an earlier release is built once
    for i, path in enumerate(paths):
        try:
            releases.append(load_release(path, name=names[i] if names else None, memo=memo))
        except AcpgenError as exc:
            problems.extend(exc)
    problems.raise_if_any()
    labels = [r.label for r in releases]
    if len(set(labels)) < len(labels):
        labels = [r.name for r in releases]
    steps: list[Step] = []
    for i, r in enumerate(releases):
        prev = releases[i - 1] if i else None
        changes = diff_releases(prev, r, stable_only) if prev is not None else []
        step = _step(r, changes, labels[i], labels[i - 1] if i else None)
        if any(s.anchor == step.anchor for s in steps):  # two names of one slug: each its own section
            step = replace(step, anchor=f"{step.anchor}-{i + 1}")
        steps.append(step)
    return History(tuple(steps))
