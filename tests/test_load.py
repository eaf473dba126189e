from __future__ import annotations

import json
from pathlib import Path

import pytest

from acpgen.errors import AcpgenError
from acpgen.load import load_file, load_inputs

from .conftest import SCHEMAS


def codes(exc: pytest.ExceptionInfo[AcpgenError]) -> list[str]:
    return [d.code for d in exc.value.diagnostics]


def test_file_with_meta_beside_it() -> None:
    (doc,) = load_inputs(SCHEMAS / "methods" / "schema.json")
    assert doc.tree == "v1" and doc.stability == "stable"
    assert {m.wire for m in doc.meta.methods} >= {"initialize", "session/update", "$/cancel_request"}


def test_release_directory_with_trees(tmp_path: Path) -> None:
    for rel in ("v1/schema.json", "v1/schema.unstable.json", "v2/schema.json"):
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_text('{"$defs": {}}')
    (tmp_path / "v2" / "meta.json").write_text('{"version": 2, "agentMethods": {}}')
    docs = load_inputs(tmp_path)
    assert [d.label for d in docs] == ["v1", "v1-unstable", "v2"]
    assert docs[2].meta.version == 2


def test_flat_directory_and_legacy_methods_json(tmp_path: Path) -> None:
    (tmp_path / "schema.json").write_text('{"$defs": {}}')
    (tmp_path / "methods.json").write_text('{"new_session": "acp/new_session"}')
    (doc,) = load_inputs(tmp_path)
    assert doc.meta.methods[0].wire == "acp/new_session"


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b"", "ACPG102"),
        (b"   \n", "ACPG102"),
        (b"\x00\x01\x02", "ACPG103"),
        (b"\xff\xfe{", "ACPG103"),
        (b"[1, 2]", "ACPG104"),
        (b"42", "ACPG104"),
        (b'{"$defs": {', "ACPG101"),
    ],
)
def test_bad_files(tmp_path: Path, content: bytes, code: str) -> None:
    path = tmp_path / "schema.json"
    path.write_bytes(content)
    with pytest.raises(AcpgenError) as exc:
        load_inputs(path)
    assert codes(exc) == [code]


def test_invalid_json_has_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "schema.json"
    path.write_text('{\n  "$defs": {\n    "A": }\n}')
    with pytest.raises(AcpgenError) as exc:
        load_inputs(path)
    d = exc.value.diagnostics[0]
    assert (d.line, d.col) == (3, 10)
    assert d.render().startswith(f"{d.file}:3:10: ACPG101 /: ")


def test_missing_path_and_empty_directory(tmp_path: Path) -> None:
    with pytest.raises(AcpgenError) as exc:
        load_inputs(tmp_path / "nope")
    assert codes(exc) == ["ACPG100"]
    with pytest.raises(AcpgenError) as exc:
        load_inputs(tmp_path)
    assert codes(exc) == ["ACPG105"]


def test_malformed_meta(tmp_path: Path) -> None:
    (tmp_path / "schema.json").write_text('{"$defs": {}}')
    (tmp_path / "meta.json").write_text(json.dumps({"version": 1, "agentMethods": {"x": 3}}))
    with pytest.raises(AcpgenError) as exc:
        load_inputs(tmp_path / "schema.json")
    assert codes(exc) == ["ACPG106"]
    assert exc.value.diagnostics[0].pointer == "/agentMethods/x"


def test_protocol_version_from_the_files_place_when_no_meta_says_it(tmp_path: Path) -> None:
    """The schema files of the npm SDK come without meta.json: ``v2/schema.json`` is
    protocol version 2 all the same; a flat file with no meta has none; meta wins."""
    from acpgen.normalise import build_protocol

    doc = json.dumps({"$defs": {"A": {"type": "string"}}})
    for rel, expected in (("v2/schema.json", 2), ("v1/schema.unstable.json", 1), ("flat/schema.json", None), ("x/schema.v3.json", 3)):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(doc)
        assert build_protocol(load_file(path)).protocol_version == expected, rel
    (tmp_path / "v2" / "meta.json").write_text(json.dumps({"version": 7, "agentMethods": {}, "clientMethods": {}}))
    assert build_protocol(load_file(tmp_path / "v2" / "schema.json")).protocol_version == 7


@pytest.mark.parametrize(("version", "tree"), [(None, "v1"), (1, "v1"), (2, "v2"), (3, "v3")])
def test_an_unversioned_schema_is_in_the_tree_its_meta_names(tmp_path: Path, version: int | None, tree: str) -> None:
    """A schema file whose name and folder carry no version (``flat/schema.json``) is in
    the tree its meta file's version names; without one it is tree v1."""
    schema = tmp_path / "flat" / "schema.json"
    schema.parent.mkdir()
    schema.write_text(json.dumps({"$defs": {"A": {"type": "string"}}}))
    if version is not None:
        meta = {"version": version, "agentMethods": {}, "clientMethods": {}}
        (tmp_path / "flat" / "meta.json").write_text(json.dumps(meta))
    assert load_file(schema).tree == tree
