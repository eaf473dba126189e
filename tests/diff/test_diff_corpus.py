"""``acpgen diff`` over the upstream corpus, checked by property (the corpus is read in
place): no change from a release to itself, every consecutive pair runs and is
deterministic, swapping the sides swaps every record, a renamed def is one record."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest

from acpgen.api import diff_paths, load_release
from acpgen.diff import Release, diff_releases
from acpgen.diff.report import render_json
from acpgen.diff.rules import BY_ID
from tests.corpus import ACP, index, needs_corpus, present

pytestmark = needs_corpus


def ordered() -> list[str]:
    if not present():
        return []
    return [r["release"] for r in sorted(index()["releases"], key=lambda r: r["date"])]


@lru_cache(maxsize=None)
def release(name: str) -> Release:
    return load_release(ACP / name)


PAIRS = list(zip(ordered(), ordered()[1:]))

#: what each rule becomes when the two sides are swapped
SWAP = {
    "file-added": "file-removed",
    "method-added": "method-removed",
    "request-added-without-gate": "method-removed",
    "def-added": "def-removed",
    "required-field-added": "required-field-removed",
    "optional-field-added": "optional-field-removed",
    "capability-gate-removed": "optional-field-added",
    "field-now-required": "field-now-optional",
    "type-widened": "type-narrowed",
    "became-nullable": "became-non-nullable",
    "constraint-loosened": "constraint-tightened",
    "object-opened": "object-closed",
    "leniency-added": "leniency-removed",
    "variant-added-closed": "variant-removed",
    "variant-added-open": "variant-removed-open",
    "enum-value-added-closed": "enum-value-removed",
    "enum-value-added-open": "enum-value-removed-open",
    "enum-opened": "enum-closed",
    "union-opened": "union-closed",
    "moved-to-stable": "moved-to-unstable",
}
SWAP.update({v: k for k, v in list(SWAP.items()) if v not in SWAP})
#: a record's kind decides its mirror; where the rule also depends on the other side's
#: openness (a variant added to a union closed before, removed from one open after) or
#: on a gate, the mirror is compared by kind
KIND_SWAP = {
    "file-added": "file-removed",
    "method-added": "method-removed",
    "def-added": "def-removed",
    "field-added": "field-removed",
    "field-now-required": "field-now-optional",
    "variant-added": "variant-removed",
    "enum-value-added": "enum-value-removed",
    "enum-opened": "enum-closed",
    "union-opened": "union-closed",
    "moved-from-unstable-to-stable": "moved-from-stable-to-unstable",
}
KIND_SWAP.update({v: k for k, v in list(KIND_SWAP.items())})


@pytest.mark.parametrize("name", ordered())
def test_a_release_against_itself_is_no_change(name: str) -> None:
    r = release(name)
    assert diff_releases(r, r) == []


@pytest.mark.parametrize("old,new", PAIRS, ids=[f"{a}..{b}" for a, b in PAIRS])
def test_consecutive_pairs_run_and_are_deterministic(old: str, new: str) -> None:
    first = diff_releases(release(old), release(new))
    again = diff_paths(ACP / old, ACP / new)
    assert render_json(first, [], old, new) == render_json(again, [], old, new)
    for c in first:
        assert c.subject and c.message and c.file.startswith(("v1/", "v2/"))
        rule = BY_ID[c.rule]
        # an info record breaks nobody; any other breaks someone unless its rule hits nobody
        assert bool(c.breaks) == (rule.hits != "none" and c.level != "info"), c
        assert c.level == rule.level or c.note, c  # a level only goes down with a reason


def _names(changes: list) -> dict[str, str]:  # type: ignore[type-arg]
    """Each def renamed in a run -> one name for both of its names."""
    out: dict[str, str] = {}
    for c in changes:
        if c.rule == "def-renamed":
            a, b = c.old, c.new
            out[a] = out[b] = min(a, b)
    return out


def _norm(text: str | None, names: dict[str, str]) -> str:
    if not text:
        return ""
    if " -> " in text:
        return " <-> ".join(sorted(_norm(p, names) for p in text.split(" -> ")))
    head, dot, rest = text.partition(".")
    return names.get(head, names.get(text, head)) + dot + rest


def _key(c, names: dict[str, str], swap: bool) -> tuple[str, ...]:  # type: ignore[no-untyped-def]
    if c.kind == "type-changed":
        what = SWAP.get(c.rule, c.rule) if swap else c.rule
    else:
        what = KIND_SWAP.get(c.kind, c.kind) if swap else c.kind
    return (c.file, what, _norm(c.subject, names), _norm(c.variant, names))


@pytest.mark.parametrize("old,new", PAIRS, ids=[f"{a}..{b}" for a, b in PAIRS])
def test_swapping_the_sides_swaps_every_record(old: str, new: str) -> None:
    forward = diff_releases(release(old), release(new))
    backward = diff_releases(release(new), release(old))
    names = _names(forward) | _names(backward)
    a = Counter(_key(c, names, swap=True) for c in forward)
    b = Counter(_key(c, names, swap=False) for c in backward)
    assert a == b, (sorted((a - b).items())[:10], sorted((b - a).items())[:10])


def _renamed_copy(src: Path, dest: Path, old: str, new: str) -> Path:
    """The release file ``src`` with def ``old`` renamed ``new`` (key and every $ref)."""
    dest.mkdir(parents=True)
    for sibling in src.parent.glob("meta*.json"):
        shutil.copy(sibling, dest / sibling.name)
    text = src.read_text()
    doc = json.loads(text)
    doc["$defs"] = {(new if k == old else k): v for k, v in doc["$defs"].items()}
    body = json.dumps(doc)
    body = re.sub(r'"#/\$defs/' + re.escape(old) + r'"', f'"#/$defs/{new}"', body)
    (dest / src.name).write_text(body)
    return dest / src.name


def _rename_samples() -> list[tuple[str, str]]:
    if not present():  # read while pytest collects: without the corpus, nothing to sample
        return []
    out = []
    for name in ordered()[::6] + ["main"]:
        path = ACP / name / "v1" / "schema.json"
        all_defs = json.loads(path.read_text()).get("$defs", {})
        # a params or result def linked to its method by name alone would lose its method
        defs = sorted(
            k for k, v in all_defs.items() if "x-method" in v or not k.endswith(("Request", "Response", "Notification"))
        )
        for d in (defs[0], defs[len(defs) // 2], defs[-1]):
            out.append((name, d))
    return sorted(set(out))


@pytest.mark.parametrize("name,def_name", _rename_samples())
def test_a_def_renamed_with_its_content_is_one_record(tmp_path: Path, name: str, def_name: str) -> None:
    src = ACP / name / "v1" / "schema.json"
    # a prefix keeps the Request/Response suffix the method table reads roles from
    renamed = _renamed_copy(src, tmp_path / "v1", def_name, "Renamed" + def_name)
    changes = diff_paths(src, renamed)
    assert [(c.rule, c.subject) for c in changes] == [("def-renamed", f"{def_name} -> Renamed{def_name}")]
    assert changes[0].level == "info" and changes[0].code == "error"
