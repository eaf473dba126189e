"""Find and read schema releases: a schema file (with its meta beside it) or a directory.

``load_inputs(path)`` returns one :class:`RawDocument` per schema file, in a fixed
order (tree, then stable before unstable). Nothing here interprets the schema.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from acpgen.errors import AcpgenError, Collector, Diagnostic
from acpgen.source import SourceFile, display_path, parse_json, read_source

Stability = Literal["stable", "unstable"]

_SCHEMA_NAME = re.compile(r"^schema(\.v(?P<tree>\d+))?(?P<unstable>\.unstable)?\.json$")


@dataclass(frozen=True)
class MethodName:
    """One entry of meta.json: the constant-style key and the wire method name."""

    key: str
    wire: str
    side: str  # agent | client | protocol


@dataclass(frozen=True)
class Meta:
    source: SourceFile | None
    version: int | None
    methods: tuple[MethodName, ...]


@dataclass(frozen=True)
class RawDocument:
    source: SourceFile
    data: dict[str, Any]
    meta: Meta
    tree: str
    stability: Stability
    #: the protocol version the file's place states (``v2/schema.json``,
    #: ``schema.v2.unstable.json``), used when no meta file says it
    located_version: int | None = None

    @property
    def label(self) -> str:
        return self.tree if self.stability == "stable" else f"{self.tree}-unstable"


def _meta_candidates(schema: Path) -> list[Path]:
    m = _SCHEMA_NAME.match(schema.name)
    names = []
    if m:
        names.append("meta" + schema.name[len("schema") :])
        if m.group("tree"):
            names.append("meta" + (".unstable" if m.group("unstable") else "") + ".json")
    names.append("methods.json")
    return [schema.with_name(n) for n in names]


def located_version(schema: Path) -> int | None:
    """The version in the file's name or its ``vN`` folder, if either carries one."""
    m = _SCHEMA_NAME.match(schema.name)
    if m and m.group("tree"):
        return int(m.group("tree"))
    parent = re.fullmatch(r"v(\d+)", schema.parent.name)
    return int(parent.group(1)) if parent else None


def _tree_of(schema: Path, meta_version: int | None) -> str:
    located = located_version(schema)
    if located is not None:
        return f"v{located}"
    if meta_version is not None and meta_version >= 2:
        return f"v{meta_version}"
    return "v1"


def _parse_meta(source: SourceFile, data: Any) -> Meta:
    problems = Collector()
    if not isinstance(data, dict):
        raise AcpgenError([source.diagnostic("ACPG106", "meta file must be a JSON object")])
    methods: list[MethodName] = []
    sides = {"agentMethods": "agent", "clientMethods": "client", "protocolMethods": "protocol"}
    if not any(k in data for k in sides) and "version" not in data:
        # legacy methods.json: {snake_name: wire_name}
        for key, wire in data.items():
            if not isinstance(wire, str):
                problems.items.append(
                    source.diagnostic("ACPG106", "method name must be a string", "/" + key)
                )
                continue
            methods.append(MethodName(key, wire, ""))  # legacy file: side unknown
        problems.raise_if_any()
        return Meta(source, None, tuple(methods))
    version = data.get("version")
    if version is not None and not isinstance(version, int):
        problems.items.append(source.diagnostic("ACPG106", "version must be an integer", "/version"))
    for group, side in sides.items():
        table = data.get(group, {})
        if not isinstance(table, dict):
            problems.items.append(
                source.diagnostic("ACPG106", f"{group} must be an object", "/" + group)
            )
            continue
        for key, wire in table.items():
            if not isinstance(wire, str):
                problems.items.append(
                    source.diagnostic(
                        "ACPG106", "method name must be a string", f"/{group}/{key}"
                    )
                )
                continue
            methods.append(MethodName(key, wire, side))
    problems.raise_if_any()
    return Meta(source, version if isinstance(version, int) else None, tuple(methods))


def read_meta(schema: Path) -> Meta:
    for candidate in _meta_candidates(schema):
        if candidate.is_file():
            source = read_source(candidate)
            return _parse_meta(source, parse_json(source))
    return Meta(None, None, ())


def load_file(schema: Path) -> RawDocument:
    source = read_source(schema)
    data = parse_json(source)
    if not isinstance(data, dict):
        kind = type(data).__name__ if data is not None else "null"
        raise AcpgenError(
            [Diagnostic("ACPG104", f"top level is a JSON {_json_kind(data)} ({kind}), expected an object", source.path)]
        )
    meta = read_meta(schema)
    stability: Stability = "unstable" if ".unstable." in schema.name else "stable"
    return RawDocument(source, data, meta, _tree_of(schema, meta.version), stability, located_version(schema))


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "null"


def find_schema_files(path: Path) -> list[Path]:
    """Schema files of a release directory: ``vN/schema*.json`` trees, or a flat layout."""
    subtrees = sorted(
        (p for p in path.iterdir() if p.is_dir() and re.fullmatch(r"v\d+", p.name)),
        key=lambda p: int(p.name[1:]),
    )

    def schemas_in(directory: Path) -> list[Path]:
        return [c for c in sorted(directory.glob("schema*.json")) if _SCHEMA_NAME.match(c.name)]

    nested = [f for d in subtrees for f in schemas_in(d)]
    return nested or schemas_in(path)


def _order(doc: RawDocument) -> tuple[int, int, str]:
    return (int(doc.tree[1:]), 0 if doc.stability == "stable" else 1, doc.source.path)


def load_inputs(path: Path) -> list[RawDocument]:
    if not path.exists():
        raise AcpgenError([Diagnostic("ACPG100", "no such file or directory", display_path(path))])
    if path.is_file():
        return [load_file(path)]
    files = find_schema_files(path)
    if not files:
        raise AcpgenError(
            [
                Diagnostic(
                    "ACPG105",
                    "no schema*.json here or in v1/, v2/ subdirectories",
                    display_path(path),
                )
            ]
        )
    problems = Collector()
    docs: list[RawDocument] = []
    for f in files:
        try:
            docs.append(load_file(f))
        except AcpgenError as exc:
            problems.extend(exc)
    problems.raise_if_any()
    labels: dict[str, str] = {}
    for doc in docs:
        if doc.label in labels:
            raise AcpgenError(
                [
                    Diagnostic(
                        "ACPG105",
                        f"two schema files for {doc.label}: {labels[doc.label]} and {doc.source.path}",
                        display_path(path),
                    )
                ]
            )
        labels[doc.label] = doc.source.path
    return sorted(docs, key=_order)
