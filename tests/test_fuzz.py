"""Loader fuzzing: real corpus schemas with Hypothesis-chosen damage (nodes dropped,
retyped, duplicated, $refs redirected) and grafted constructs the corpus lacks (a def
that is just ``null``, sibling ``anyOf``/``oneOf`` beside an object's members, a tag that
is an enum in some variants, a ``not`` forbidding a member, ``x-deserialize-*`` marks on
any member) either build in every style or stop with catalogued diagnostics; never an
uncaught exception, and every Python module written imports (black's ACPG602 would be
acpgen's own bug, and so would a module that builds and does not import).

The budget is the Hypothesis profile (``ci`` in the suite, ``fuzz`` for ``make fuzz``).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from acpgen import api
from acpgen.config import Config, Target
from acpgen.errors import CATALOGUE, AcpgenError

from . import corpus
from .conftest import import_file
from .strategies import paths_of

pytestmark = corpus.needs_corpus

#: one schema file of each era (small, mid-size with unstable methods, v2 tree, main)
SEEDS = ["v0.0.1/v1/schema.json", "v0.8.0/v1/schema.unstable.json", "schema-v1.13.7/v2/schema.json", "main/v1/schema.json"]
STYLES = ("pydantic", "dataclasses", "typeddict", "mdx", "md")
STATS: dict[str, int] = {"built": 0, "rejected": 0}
WRONG = [None, True, 7, -1.5, "", "#/$defs/Nope", "strnig", [], {}, [1, "a"], {"type": 3}, {"$ref": "#/$defs/Nope"}]


def _parent(doc: Any, path: tuple[Any, ...]) -> Any:
    for token in path[:-1]:
        doc = doc[token]
    return doc


@st.composite
def damaged(draw: st.DrawFn, seed: str) -> tuple[dict[str, Any], list[str]]:
    doc = json.loads((corpus.ACP / seed).read_text())
    done: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        paths = [p for p in paths_of(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent, key = _parent(doc, path), path[-1]
        op = draw(st.sampled_from(["drop", "retype", "duplicate", "redirect", "graft"]))
        if op == "graft":
            done.append(graft(draw, doc))
            continue
        if op == "drop":
            del parent[key]
        elif op == "retype":
            parent[key] = copy.deepcopy(draw(st.sampled_from(WRONG)))
        elif op == "duplicate":
            target = draw(st.sampled_from(paths))
            if target[: len(path)] != path:  # never into itself
                _parent(doc, target)[target[-1]] = copy.deepcopy(parent[key])
            if isinstance(parent, list):
                parent.append(copy.deepcopy(parent[key]))
        else:
            defs = sorted(doc.get("$defs", {})) if isinstance(doc.get("$defs"), dict) else []
            if defs:
                parent[key] = {"$ref": "#/$defs/" + draw(st.sampled_from(defs))}
        done.append(f"{op} {'/'.join(map(str, path))}")
    return doc, done


def graft(draw: st.DrawFn, doc: dict[str, Any]) -> str:
    """Give one def a construct the corpus has little or none of."""
    defs = doc.get("$defs")
    if not isinstance(defs, dict) or not defs:
        return "graft: no $defs"
    name = draw(st.sampled_from(sorted(defs)))
    node = defs[name]
    kind = draw(st.sampled_from(["null", "siblings", "enum-tag", "forbid", "mark"]))
    if kind == "null" or not isinstance(node, dict):
        defs[name] = {"type": "null"}
        return f"graft null {name}"
    props = node.get("properties") if isinstance(node.get("properties"), dict) else None
    if kind == "siblings" and props:
        names = sorted(props)
        first, second = draw(st.sampled_from(names)), draw(st.sampled_from(names))
        key = "oneOf" if "anyOf" in node else "anyOf"
        node[key] = [{"title": "First", "required": [first]}, {"title": "Second", "required": [second], "type": "object"}]
        return f"graft {key} {name}"
    if kind == "enum-tag":
        for union in ("oneOf", "anyOf"):
            members = node.get(union)
            if isinstance(members, list):
                for m in members:
                    consts = [p for p, v in (m.get("properties") or {}).items() if isinstance(v, dict) and "const" in v] if isinstance(m, dict) else []
                    if consts:
                        m["properties"][consts[0]] = {"type": "string", "enum": ["x_one", "x_two"]}
                        return f"graft enum-tag {name}"
        return f"graft enum-tag {name}: no tagged union"
    if kind == "forbid":
        node["not"] = {"type": "object", "required": ["zzForbidden"]}
        return f"graft not {name}"
    if props:
        prop = draw(st.sampled_from(sorted(props)))
        if isinstance(props[prop], dict):
            mark = draw(st.sampled_from(["x-deserialize-default-on-error", "x-deserialize-default-on-null"]))
            props[prop][mark] = True
            return f"graft {mark} {name}.{prop}"
    return f"graft {kind} {name}: nothing to do"


@pytest.mark.parametrize("seed", SEEDS)
def test_damaged_schemas_build_or_fail_cleanly(seed: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    home = tmp_path_factory.mktemp("fuzz")
    meta = corpus.ACP / seed.replace("schema", "meta")

    @settings(max_examples=4 * settings.default.max_examples)
    @given(st.data())
    def check(data: st.DataObject) -> None:
        doc, steps = data.draw(damaged(seed), label="damaged schema")
        note("damage: " + "; ".join(steps))
        path = home / Path(seed).name
        path.write_text(json.dumps(doc))
        if meta.is_file():
            (home / meta.name).write_text(meta.read_text())
        config = Config(home, (Target("fuzz", path, home / "out", STYLES),))
        try:
            files = api.render_target(config.targets[0], config, formatted=False)
        except AcpgenError as exc:
            assert exc.diagnostics and all(d.code in CATALOGUE for d in exc.diagnostics)
            assert all(d.code != "ACPG602" for d in exc.diagnostics)
            STATS["rejected"] += 1
            return
        out = home / f"out{STATS['built']}"
        for rel, text in files.items():
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            (out / rel).write_text(text)
        for rel in files:
            if rel.suffix == ".py" and not rel.name.startswith("_"):
                import_file(out / rel)  # every module written imports
        STATS["built"] += 1

    check()


@pytest.fixture(scope="module", autouse=True)
def report(request: pytest.FixtureRequest) -> Any:
    yield
    cache = getattr(request.config, "cache", None)  # absent under -p no:cacheprovider
    if cache is not None:
        cache.set("acpgen/fuzz", STATS)
