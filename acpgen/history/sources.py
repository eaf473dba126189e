"""The releases a target's history names, as local paths (the source stage): each spec
located like a schema (a path relative to the config, ``bundled:``, a remote spec fetched
through the cache and pinned in the lock), a directory of release folders expanded.

The target's own schema ends the history: the releases after it are left out when it is
one of them, and it is added last when it is not (and is of the same kind, a directory
or a schema file, as the last release read)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from acpgen.locate import is_remote, locate_schema


def history_sources(
    specs: tuple[str, ...], root: Path, schema: Path, remote: str | None, fetch: Callable[[str], Path]
) -> list[tuple[Path, str | None]]:
    """``(path, name)`` per release, oldest first; ``name`` is the remote spec or None."""
    from acpgen.history.load import expand

    out: list[tuple[Path, str | None]] = []
    for spec in specs:
        if is_remote(spec):
            out.append((fetch(spec), spec))
        else:
            out.extend((p, None) for p in expand(locate_schema(spec, root)))
    own = schema.resolve()
    found = [i for i, (p, _) in enumerate(out) if p.resolve() == own]
    if found:
        return out[: found[-1] + 1]
    if out and out[-1][0].is_file() == schema.is_file():
        out.append((schema, remote))
    return out
