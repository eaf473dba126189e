"""``acpgen diff``: what changed between two ACP releases, and whom it breaks.

Both sides are loaded, overlaid and normalised exactly as ``build`` does, by the pipeline
(``api.load_release`` builds a :class:`Release`; this package imports nothing above it),
paired file by file (tree and stability), and compared by ``compare``. Only the IR is
compared: two spellings the IR does not tell apart are no change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from acpgen import ir
from acpgen.diff.compare import Pair, compare
from acpgen.diff.model import Change, make
from acpgen.errors import AcpgenError, Diagnostic
from acpgen.source import display_path


@dataclass(frozen=True)
class Release:
    """One side of a diff: its IR by file name (``v1/schema.json`` ...)."""

    name: str
    files: dict[str, ir.Protocol]
    single: bool = False
    #: file name -> the schema file it was read from (GitHub annotations point there)
    paths: dict[str, str] | None = None

    @property
    def label(self) -> str:
        """The release's own name: its directory (``v0.13.4``), or, for a schema file, the
        directory above its tree folder."""
        path = Path(self.name)
        if not self.single:
            return path.name or self.name
        parent = path.parent
        return (parent.parent.name if re.fullmatch(r"v\d+", parent.name) else parent.name) or self.name


def file_name(p: ir.Protocol) -> str:
    return f"{p.tree}/schema{'.unstable' if p.stability == 'unstable' else ''}.json"


def release(path: Path, protocols: list[ir.Protocol], name: str | None = None) -> Release:
    """The release read from ``path``, of the ``protocols`` the pipeline built from it."""
    return Release(
        name or display_path(path),
        {file_name(p): p for p in protocols},
        path.is_file(),
        {file_name(p): display_path(Path(p.source)) for p in protocols},
    )


def diff_releases(old: Release, new: Release, stable_only: bool = False) -> list[Change]:
    if old.single or new.single:
        if set(old.files) != set(new.files):
            raise AcpgenError(
                [
                    Diagnostic(
                        "ACPG701",
                        f"cannot compare {', '.join(old.files)} with {', '.join(new.files)}: "
                        "two schema files must be of the same tree and stability",
                        new.name,
                    )
                ]
            )
    out: list[Change] = []
    for name in sorted(set(old.files) | set(new.files)):
        if stable_only and name.endswith(".unstable.json"):
            continue
        o, n = old.files.get(name), new.files.get(name)
        if o is None:
            out.append(make(name, "file-added", name, f"new schema file {name}"))
            continue
        if n is None:
            out.append(make(name, "file-removed", name, f"schema file {name} is gone", frozenset({"agent", "client"})))
            continue
        if _same(o, n):
            # the same IR on both sides (a history's unchanged file): nothing to find. The
            # other-stability files are read only for an item that left or joined this
            # file (base.left_stable, base.became_stable), and none did
            continue
        other = name.replace(".json", ".unstable.json") if not name.endswith(".unstable.json") else None
        out.extend(
            compare(Pair(name, o, n, old.files.get(other) if other else None, new.files.get(other) if other else None))
        )
    return sorted(out, key=Change.sort_key)


def _same(old: ir.Protocol, new: ir.Protocol) -> bool:
    """Both sides hold the same IR: read from the same bytes and equal but for the path
    they were read from. The bytes are checked first, so that two different files are
    told apart at once; equal bytes mostly share their nodes (a history's memo), which
    makes the comparison cheap."""
    if (old.source_sha256, old.meta_sha256) != (new.source_sha256, new.meta_sha256):
        return False
    return replace(old, source=new.source, meta_source=new.meta_source) == new


__all__ = ["Change", "Release", "diff_releases", "file_name", "release"]
