"""Read an overlay file: YAML -> validated against ``overlay.schema.json`` -> :class:`Overlay`.

Every problem is one diagnostic with the YAML line and column: ACPG401 for YAML
that does not parse, ACPG402 for a document the overlay format rejects (an
unknown operation, a missing key, a wrong type).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Iterator

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from acpgen.errors import AcpgenError, Diagnostic
from acpgen.overlay.model import Op, Overlay
from acpgen.overlay.shapes import NotationError, expand
from acpgen.source import SourceFile, pointer_join, read_source


@lru_cache(maxsize=1)
def format_schema() -> dict[str, Any]:
    text = resources.files("acpgen.overlay").joinpath("overlay.schema.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def _load(text: str) -> tuple[Any, dict[str, tuple[int, int]]]:
    """Parse once: the document, and JSON pointer -> (line, col) of each of its nodes (1-based)."""
    out: dict[str, tuple[int, int]] = {}

    def walk(node: yaml.Node, pointer: str) -> None:
        out[pointer] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    walk(value, pointer_join(pointer, key.value))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                walk(item, pointer_join(pointer, i))

    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    finally:
        loader.dispose()
    if root is not None:
        walk(root, "")
    return data, out


def _diag(source: SourceFile, code: str, message: str, pointer: str, where: dict[str, tuple[int, int]]) -> Diagnostic:
    probe = pointer
    while probe and probe not in where:  # the nearest node that exists (a missing key's parent)
        probe = probe.rsplit("/", 1)[0]
    line, col = where.get(probe, (None, None))
    return Diagnostic(code, message, source.path, pointer, line, col)


def _innermost(error: ValidationError) -> ValidationError:
    """"if/then" and "oneOf" errors wrap the real cause: follow the deepest one, but stop
    at a "needs one of these keys" oneOf (its alternatives only differ in ``required``)."""
    best = error
    while best.context and not _one_of_keys(best):
        best = min(best.context, key=lambda e: (-len(e.absolute_path), e.message))
    return best


def _one_of_keys(error: ValidationError) -> list[str]:
    value: Any = error.validator_value
    if error.validator != "oneOf" or not isinstance(value, list):
        return []
    if not all(isinstance(alt, dict) and set(alt) == {"required"} for alt in value):
        return []
    return sorted({k for alt in value for k in alt["required"]})


def _message(error: ValidationError) -> str:
    best = _innermost(error)
    keys = _one_of_keys(best)
    if keys:
        return "needs exactly one of: " + ", ".join(keys)
    value: Any = best.validator_value
    if best.validator == "additionalProperties" and isinstance(best.instance, dict):
        known = set(best.schema.get("properties", {})) if isinstance(best.schema, dict) else set()
        return "unknown key(s): " + ", ".join(sorted(set(best.instance) - known))
    if best.validator == "enum" and list(best.absolute_path)[-1:] == ["op"]:
        return f"unknown operation {best.instance!r}; known: {', '.join(value)}"
    return str(best.message)


def parse_overlay(source: SourceFile) -> Overlay:
    if not source.text.strip():
        raise AcpgenError([Diagnostic("ACPG102", "the file is empty", source.path)])
    try:
        data, where = _load(source.text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (None, None)
        raise AcpgenError([Diagnostic("ACPG401", f"YAML: {exc.problem or exc}", source.path, "", line, col)])
    except yaml.YAMLError as exc:
        raise AcpgenError([Diagnostic("ACPG401", f"YAML: {exc}", source.path)])
    validator = Draft202012Validator(format_schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        diags: list[Diagnostic] = []
        missing: dict[str, list[str]] = {}  # the keys missing from one mapping: one line
        for error in errors:
            inner = _innermost(error)
            pointer = pointer_join("", *inner.absolute_path)
            if inner.validator == "required":
                found = re.match(r"^'(.*)' is a required property$", str(inner.message))
                missing.setdefault(pointer, []).append(found.group(1) if found else str(inner.message))
                continue
            diags.append(_diag(source, "ACPG402", _message(error), pointer, where))
        for pointer, names in missing.items():
            noun = "a required key is" if len(names) == 1 else "required keys are"
            diags.append(_diag(source, "ACPG402", f"{noun} missing: {', '.join(map(repr, names))}", pointer, where))
        raise AcpgenError(diags)
    bad = list(_notation_errors(source, data["ops"], where))
    if bad:
        raise AcpgenError(bad)
    applies = data.get("applies-to", {})
    protocol = applies.get("protocol", [])
    return Overlay(
        id=data["id"],
        title=data["title"],
        rfd=data["rfd"],
        status=data["status"],
        link=data.get("link"),
        protocols=tuple([protocol] if isinstance(protocol, int) else protocol),
        channels=tuple(applies.get("channel", [])),
        merged_upstream=data.get("merged-upstream"),
        fallback_description=data.get("fallback-description"),
        ops=tuple(
            Op(o["op"], {k: v for k, v in o.items() if k != "op"}, f"/ops/{i}", where.get(f"/ops/{i}"))
            for i, o in enumerate(data["ops"])
        ),
        file=source.path,
        sha256=source.sha256,
    )


def _notation_errors(source: SourceFile, ops: list[Any], where: dict[str, tuple[int, int]]) -> Iterator[Diagnostic]:
    """Every compact type (``type``, ``from``, ``to``, nested in fields) must parse."""

    def walk(node: Any, pointer: str) -> Iterator[Diagnostic]:
        if isinstance(node, dict):
            for key, value in node.items():
                at = pointer_join(pointer, key)
                if key in ("type", "from", "to") and isinstance(value, str):
                    try:
                        expand(value)
                    except NotationError as exc:
                        yield _diag(source, "ACPG402", str(exc), at, where)
                elif not (key == "schema" and isinstance(value, dict)) and not (key in ("patch", "expect") and isinstance(value, list)):
                    yield from walk(value, at)
        elif isinstance(node, list):
            for i, item in enumerate(node):
                yield from walk(item, pointer_join(pointer, i))

    yield from walk(ops, "/ops")


def read_overlay(path: Path) -> Overlay:
    return parse_overlay(read_source(path))


def read_overlays(paths: tuple[Path, ...] | list[Path]) -> tuple[Overlay, ...]:
    """Every file's problems are reported together; two overlays with one id is an error."""
    problems: list[Diagnostic] = []
    out: list[Overlay] = []
    for path in paths:
        try:
            out.append(read_overlay(path))
        except AcpgenError as exc:
            problems.extend(exc.diagnostics)
    seen: dict[str, str] = {}
    for o in out:
        if o.id in seen:
            problems.append(Diagnostic("ACPG402", f"overlay id {o.id!r} is also used by {seen[o.id]}", o.file, "/id"))
        seen.setdefault(o.id, o.file)
    if problems:
        raise AcpgenError(problems)
    return tuple(out)
