"""What a history holds: the releases read, in order, each with its element keys by
schema file and the ``acpgen diff`` records against the release before it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acpgen.diff import Change


@dataclass(frozen=True)
class Step:
    """One release of a history, with what changed since the one before it."""

    name: str
    #: the id of its section on the changes pages
    anchor: str
    #: schema file name (``v1/schema.json`` ...) -> its element keys
    files: dict[str, frozenset[str]]
    #: against ``previous`` (none for the oldest release read)
    changes: tuple["Change", ...]
    previous: str | None = None
    #: sha256 of every schema file read, for the pages' input hash
    digests: tuple[str, ...] = ()


@dataclass(frozen=True)
class History:
    steps: tuple[Step, ...]

    @property
    def digests(self) -> tuple[str, ...]:
        return tuple(d for s in self.steps for d in s.digests)


def release_anchor(name: str) -> str:
    return "release-" + (re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "x")
