"""Accepted changes: ``[[diff.ignore]]`` entries, each with a mandatory reason.

An entry names a rule id (or a glob of ids) and a subject (exact, or a glob such as
``PlanItems.*``), optionally a file and a variant, and may carry an expiry date after
which it is refused (exit 2), so an accepted break is looked at again. Entries live in
``acpgen.toml`` / ``[tool.acpgen]`` under ``diff.ignore``, or in a file of their own given
with ``--ignore`` (as ``[[diff.ignore]]`` or ``[[ignore]]``).
"""

from __future__ import annotations

import datetime as dt
import difflib
import fnmatch
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acpgen.diff.model import Change
from acpgen.diff.rules import BY_ID
from acpgen.errors import AcpgenError, Diagnostic
from acpgen.source import display_path

KEYS = {"rule", "subject", "reason", "expires", "file", "variant"}


@dataclass(frozen=True)
class Ignore:
    rule: str
    subject: str
    reason: str
    source: str
    pointer: str
    expires: dt.date | None = None
    file: str | None = None
    variant: str | None = None

    def matches(self, c: Change) -> bool:
        return (
            fnmatch.fnmatchcase(c.rule, self.rule)
            and fnmatch.fnmatchcase(c.subject, self.subject)
            and (self.file is None or fnmatch.fnmatchcase(c.file, self.file))
            and (self.variant is None or fnmatch.fnmatchcase(c.variant or "", self.variant))
        )


def _table(data: dict[str, Any], path: Path) -> tuple[object, str]:
    if path.name == "pyproject.toml":
        data = data.get("tool", {}).get("acpgen", {})
    diff = data.get("diff")
    if isinstance(diff, dict) and "ignore" in diff:
        return diff["ignore"], "/diff/ignore"
    if "ignore" in data:
        return data["ignore"], "/ignore"
    return [], ""


def read_ignores(path: Path, today: dt.date | None = None, required: bool = True) -> tuple[Ignore, ...]:
    name = display_path(path)
    today = today or dt.date.today()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if not required:
            return ()
        raise AcpgenError([Diagnostic("ACPG100", "ignore file does not exist", name)])
    except tomllib.TOMLDecodeError as exc:
        raise AcpgenError([Diagnostic("ACPG702", f"invalid TOML: {exc}", name)])
    entries, base = _table(data, path)
    if not isinstance(entries, list):
        raise AcpgenError([Diagnostic("ACPG702", "diff.ignore must be an array of tables ([[diff.ignore]])", name, base)])
    out: list[Ignore] = []
    problems: list[Diagnostic] = []
    for i, e in enumerate(entries):
        at = f"{base}/{i}"

        def bad(message: str, pointer: str = at) -> None:
            problems.append(Diagnostic("ACPG702", message, name, pointer))

        if not isinstance(e, dict):
            bad("an ignore entry must be a table")
            continue
        unknown = sorted(set(e) - KEYS)
        if unknown:
            close = difflib.get_close_matches(unknown[0], sorted(KEYS), 1)
            bad(f"unknown key {unknown[0]!r}" + (f"; did you mean {close[0]!r}?" if close else ""), f"{at}/{unknown[0]}")
            continue
        rule, subject, reason = e.get("rule"), e.get("subject"), e.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            bad("an ignore entry needs a reason (why this change is accepted)")
            continue
        if not isinstance(rule, str) or not isinstance(subject, str):
            bad("an ignore entry needs a rule and a subject (strings; globs allowed)")
            continue
        if not any(fnmatch.fnmatchcase(r, rule) for r in BY_ID):
            close = difflib.get_close_matches(rule, sorted(BY_ID), 1)
            hint = f"; did you mean {close[0]!r}?" if close else "; see acpgen diff --rules"
            bad(f"no rule matches {rule!r}{hint}", f"{at}/rule")
            continue
        expires = e.get("expires")
        if isinstance(expires, str):
            try:
                expires = dt.date.fromisoformat(expires)
            except ValueError:
                bad(f"expires must be a date (YYYY-MM-DD), not {expires!r}", f"{at}/expires")
                continue
        if isinstance(expires, dt.datetime):
            expires = expires.date()
        if expires is not None and not isinstance(expires, dt.date):
            bad("expires must be a date (YYYY-MM-DD)", f"{at}/expires")
            continue
        if expires is not None and expires < today:
            bad(f"this ignore entry expired on {expires.isoformat()}: look at the change again, then renew or remove it")
            continue
        for key in ("file", "variant"):
            if key in e and not isinstance(e[key], str):
                bad(f"{key} must be a string", f"{at}/{key}")
        out.append(Ignore(rule, subject, reason.strip(), name, at, expires, e.get("file"), e.get("variant")))
    if problems:
        raise AcpgenError(problems)
    return tuple(out)


def split(changes: list[Change], ignores: tuple[Ignore, ...]) -> tuple[list[Change], list[tuple[Change, Ignore]], list[Ignore]]:
    """The changes kept, the changes hidden (with the entry that hid them), and the
    entries that hid nothing (stale: the change they accepted is gone)."""
    kept: list[Change] = []
    hidden: list[tuple[Change, Ignore]] = []
    used: set[Ignore] = set()
    for c in changes:
        entry = next((i for i in ignores if i.matches(c)), None)
        if entry is None:
            kept.append(c)
        else:
            hidden.append((c, entry))
            used.add(entry)
    return kept, hidden, [i for i in ignores if i not in used]
