"""The keyword census (acpgen/normalise/keywords.py): every keyword that constrains validity,
in every corpus schema file, every schema file the npm SDK ships and every fixture, was
consumed by the IR builder; a keyword it does not implement is refused (ACPG209, the
error fixture keywords-not-implemented.json), never dropped."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from acpgen.normalise import keywords
from acpgen.normalise.context import Context
from acpgen.normalise.defs import build_def
from acpgen.load import load_inputs

from .. import corpus
from ..conftest import SCHEMAS

NPM = Path(__file__).parent.parent / "interop" / "node_modules" / "@agentclientprotocol" / "sdk" / "schema"


def _files() -> list[Path]:
    seen: set[str] = set()
    out = []
    candidates = sorted(SCHEMAS.rglob("*.json"))
    if corpus.releases():
        candidates += sorted(corpus.ACP.glob("*/v*/schema*.json"))
    candidates += sorted(NPM.glob("v*/schema*.json"))
    for path in candidates:
        if "meta" in path.name:
            continue
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest not in seen:
            seen.add(digest)
            out.append(path)
    return out


FILES = _files()
TOTALS: dict[str, dict[str, int]] = {}


def _consumed(path: Path) -> tuple[Context, dict[str, object]]:
    (raw,) = [r for r in load_inputs(path) if Path(r.source.path).resolve() == path.resolve()]
    ctx = Context(raw)
    for name in sorted(ctx.defs):
        build_def(ctx, name, ctx.defs[name], ctx.def_pointer(name))
    return ctx, raw.data


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.as_posix().split("schemas/")[-1].split("acp/")[-1])
def test_every_validating_keyword_is_consumed(path: Path) -> None:
    if "methods" in path.parts and path.name != "schema.json":
        pytest.skip("not a schema file")
    ctx, data = _consumed(path)
    assert keywords.unconsumed(data, ctx.container, ctx.consumed) == []
    for key, row in keywords.census(data, ctx.container, ctx.consumed).items():
        assert key in keywords.IMPLEMENTED, key
        total = TOTALS.setdefault(key, {"seen": 0, "consumed": 0})
        total["seen"] += row["seen"]
        total["consumed"] += row["consumed"]


def test_census_covers_what_the_corpus_uses() -> None:
    if not corpus.releases():
        pytest.skip(corpus.ABSENT)
    used = {k for r in corpus.index()["releases"] for k in r.get("keywords", [])}
    # every keyword upstream ever used is either validating (and implemented) or known
    # not to be (an annotation, or $defs)
    from acpgen.normalise.context import ANNOTATIONS

    for key in used:
        assert key in keywords.IMPLEMENTED or key in ANNOTATIONS or key in keywords.NOT_VALIDATING, key


def test_an_unimplemented_keyword_is_refused_not_dropped(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    for extra in ({"uniqueItems": True}, {"maxContains": 2, "contains": {"type": "string"}}):
        node = {"type": "array", "items": {"type": "string"}, **extra}
        schema.write_text(json.dumps({"$defs": {"Tags": {"type": "object", "properties": {"t": node}}}}))
        ctx, data = _consumed(schema)
        missing = keywords.unconsumed(data, ctx.container, ctx.consumed)
        assert missing == [("/$defs/Tags/properties/t", k) for k in extra], missing


_UNIQUE = {"type": "array", "items": {"type": "string"}, "uniqueItems": True}


@pytest.mark.parametrize(
    ("node", "where"),
    [
        ({"type": "object", "additionalProperties": _UNIQUE}, "/additionalProperties"),
        ({"type": "object", "additionalProperties": {"type": "object", "properties": {"t": _UNIQUE}}}, "/additionalProperties/properties/t"),
        ({"type": "array", "items": _UNIQUE}, "/items"),
        ({"type": "object", "properties": {"t": _UNIQUE}}, "/properties/t"),
        ({"anyOf": [{"type": "string"}, _UNIQUE]}, "/anyOf/1"),
        ({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "array", "items": _UNIQUE}}}},
         "/properties/m/additionalProperties/items"),
    ],
)
def test_the_census_walks_every_subschema(tmp_path: Path, node: dict[str, object], where: str) -> None:
    """A map's values (``additionalProperties``) are a subschema like any other: a keyword
    refused there is found, with its pointer."""
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"$defs": {"X": node}}))
    ctx, data = _consumed(schema)
    assert ("/$defs/X" + where, "uniqueItems") in keywords.unconsumed(data, ctx.container, ctx.consumed)
    assert "/$defs/X" + where in dict(keywords.nodes(data, ctx.container))


def test_the_documented_option_builds_with_a_warning_per_keyword(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from acpgen.cli import app

    from ..conftest import FIXTURES, import_file

    (tmp_path / "schema.json").write_text((FIXTURES / "errors" / "schema" / "keywords-not-implemented.json").read_text())
    config = tmp_path / "acpgen.toml"
    base = '[[target]]\nschema = "schema.json"\nout = "out"\nstyles = ["pydantic", "dataclasses"]\n'
    runner = CliRunner()
    config.write_text(base)
    refused = runner.invoke(app, ["build", "--config", str(config)])
    assert refused.exit_code == 2 and refused.output.count("ACPG209") == 5
    assert not (tmp_path / "out").exists()
    config.write_text(base + '\n[keywords]\nunimplemented = "warn"\n')
    built = runner.invoke(app, ["build", "--config", str(config)])
    assert built.exit_code == 0, built.output
    warnings = [line for line in built.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 5 and all("ACPG209" in w and 'unimplemented = "warn"' in w for w in warnings)
    module = import_file(tmp_path / "out" / "acp_dataclasses" / "v1.py")
    assert module.dump(module.load(module.Dropped, {"tags": ["a", "a"]})) == {"tags": ["a", "a"]}  # not enforced
    config.write_text(base + '\n[keywords]\nunimplemented = "ignore"\n')
    bad = runner.invoke(app, ["build", "--config", str(config)])
    assert bad.exit_code == 2 and "ACPG501" in bad.output and "/keywords" in bad.output


# -- the walk and the census, on schemas held in memory ------------------------------------


def test_nodes_walks_every_subschema_in_order() -> None:
    data = {
        "$defs": {
            "B": {"type": "string"},
            "A": {
                "items": {"type": "string"},
                "additionalProperties": False,
                "anyOf": [{"const": 1}, 3],
                "prefixItems": [{"const": 2}],
                "properties": {"p": {"type": "object", "unevaluatedProperties": {"type": "integer"}}},
                "not": {"type": "null"},
            },
            "C": 3,
            "D": {},
        }
    }
    assert [pointer for pointer, _ in keywords.nodes(data, "$defs")] == [
        "/$defs/A",
        "/$defs/A/items",
        "/$defs/A/anyOf/0",
        "/$defs/A/prefixItems/0",
        "/$defs/A/properties/p",
        "/$defs/A/properties/p/unevaluatedProperties",
        "/$defs/B",
        "/$defs/D",
    ]
    assert dict(keywords.nodes(data, "$defs"))["/$defs/B"] == {"type": "string"}


@pytest.mark.parametrize("data", [None, [], "x", {}, {"$defs": []}, {"definitions": {"A": {}}}])
def test_nodes_of_a_document_without_defs_are_none(data: object) -> None:
    assert list(keywords.nodes(data, "$defs")) == []


def test_the_census_counts_each_keyword_seen_and_consumed() -> None:
    data = {
        "definitions": {
            "A": {"type": "object", "properties": {"a": {"type": "string", "minLength": 1}}, "title": "A"},
            "B": {"type": "string", "minLength": 2, "uniqueItems": True},
        }
    }
    consumed = {("/definitions/A", "type"), ("/definitions/A", "properties"), ("/definitions/B", "type")}
    consumed |= {("/definitions/A/properties/a", "type"), ("/definitions/A/properties/a", "minLength")}
    assert keywords.census(data, "definitions", consumed) == {
        "type": {"seen": 3, "consumed": 3},
        "properties": {"seen": 1, "consumed": 1},
        "minLength": {"seen": 2, "consumed": 1},
        "uniqueItems": {"seen": 1, "consumed": 0},
    }
    assert keywords.unconsumed(data, "definitions", consumed) == [
        ("/definitions/B", "minLength"),
        ("/definitions/B", "uniqueItems"),
    ]
