"""Build the two sides of a diff fixture (tests/fixtures/diff/cases.yaml) as release
directories, and run the diff on them."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonpatch
import yaml

from acpgen.api import diff_paths
from acpgen.diff import Change

HERE = Path(__file__).parent.parent / "fixtures" / "diff"
BASE = json.loads((HERE / "base.json").read_text())
CASES: dict[str, dict[str, Any]] = yaml.safe_load((HERE / "cases.yaml").read_text())
FILES = {"s": "v1/schema.json", "u": "v1/schema.unstable.json"}


def patched(ops: list[dict[str, Any]]) -> dict[str, Any]:
    return jsonpatch.apply_patch(copy.deepcopy(BASE), ops)


def write_side(root: Path, case: dict[str, Any], side: str) -> Path:
    tree = root / side / "v1"
    tree.mkdir(parents=True)
    (tree / "schema.json").write_text(json.dumps(patched(case.get(side, [])), indent=2))
    if f"{side}_meta" in case:
        (tree / "meta.json").write_text(json.dumps(case[f"{side}_meta"]))
    if f"{side}_unstable" in case:
        (tree / "schema.unstable.json").write_text(json.dumps(patched(case[f"{side}_unstable"]), indent=2))
    return root / side


def sides(root: Path, name: str) -> tuple[Path, Path]:
    case = CASES[name]
    return write_side(root, case, "old"), write_side(root, case, "new")


def run_case(root: Path, name: str) -> list[Change]:
    old, new = sides(root, name)
    return diff_paths(old, new)


def record(c: Change) -> tuple[Any, ...]:
    return (c.file, c.rule, c.level, c.subject, c.variant, tuple(c.breaks))


def expected(name: str) -> set[tuple[Any, ...]]:
    return {(FILES[f], rule, level, subject, variant, tuple(breaks)) for f, rule, level, subject, variant, breaks in CASES[name]["expect"]}
