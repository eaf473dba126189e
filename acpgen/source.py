"""Source files: their text, their hash, and JSON pointer -> line:col lookup."""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acpgen.errors import AcpgenError, Diagnostic

MAX_DEPTH = 2000


def display_path(path: Path) -> str:
    """A stable, machine-independent name for a file: relative to the cwd when possible."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path.name
    return Path(rel).as_posix()


def escape_token(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def pointer_join(base: str, *tokens: str | int) -> str:
    # on every node of every schema read: a loop, and an escape only where one is needed
    out = base
    for token in tokens:
        text = token if type(token) is str else str(token)
        if "~" in text or "/" in text:
            text = escape_token(text)
        out += "/" + text
    return out


@dataclass(frozen=True)
class SourceFile:
    path: str
    text: str
    sha256: str
    _positions: dict[str, int] | None = field(default=None, compare=False, repr=False)

    def locate(self, pointer: str) -> tuple[int, int] | None:
        """Line and column (1-based) of the value at ``pointer``, if it exists."""
        positions = self._positions
        if positions is None:
            positions = _scan_positions(self.text)
            object.__setattr__(self, "_positions", positions)
        offset = positions.get(pointer)
        if offset is None:
            return None
        line = self.text.count("\n", 0, offset) + 1
        col = offset - (self.text.rfind("\n", 0, offset) + 1) + 1
        return line, col

    def diagnostic(self, code: str, message: str, pointer: str = "") -> Diagnostic:
        pos = self.locate(pointer) if pointer else None
        return Diagnostic(
            code,
            message,
            self.path,
            pointer,
            pos[0] if pos else None,
            pos[1] if pos else None,
        )


def read_source(path: Path) -> SourceFile:
    name = display_path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise AcpgenError([Diagnostic("ACPG100", "file does not exist", name)])
    except IsADirectoryError:
        raise AcpgenError([Diagnostic("ACPG100", "expected a file, found a directory", name)])
    except OSError as exc:
        raise AcpgenError([Diagnostic("ACPG100", f"cannot read: {exc.strerror}", name)])
    if b"\x00" in data:
        raise AcpgenError([Diagnostic("ACPG103", "binary data, expected UTF-8 text", name)])
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise AcpgenError(
            [Diagnostic("ACPG103", f"not UTF-8 text (byte {exc.start})", name)]
        )
    return SourceFile(name, text, hashlib.sha256(data).hexdigest())


class _NotJson(ValueError):
    def __init__(self, token: str) -> None:
        super().__init__(token)
        self.token = token


def _reject_constant(token: str) -> Any:
    """Python's json reads NaN and Infinity; JSON (and every other tool) does not."""
    raise _NotJson(token)


def _position_of(text: str, token: str) -> tuple[int, int]:
    at = re.search(r"(?<![\w\"])" + re.escape(token) + r"(?![\w\"])", text)
    offset = at.start() if at else 0
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def parse_json(source: SourceFile) -> Any:
    if not source.text.strip():
        raise AcpgenError([Diagnostic("ACPG102", "the file is empty", source.path)])
    try:
        return json.loads(source.text, parse_constant=_reject_constant)
    except _NotJson as exc:
        line, col = _position_of(source.text, exc.token)
        raise AcpgenError(
            [Diagnostic("ACPG101", f"{exc.token} is not a JSON value", source.path, "", line, col)]
        )
    except json.JSONDecodeError as exc:
        raise AcpgenError(
            [Diagnostic("ACPG101", exc.msg, source.path, "", exc.lineno, exc.colno)]
        )
    except RecursionError:
        raise AcpgenError(
            [Diagnostic("ACPG208", "JSON nesting is too deep to read", source.path)]
        )


# --- pointer positions -----------------------------------------------------------

_WS = " \t\r\n"


def _scan_positions(text: str) -> dict[str, int]:
    """Map every JSON pointer of a valid document to the offset of its value.

    Iterative (an explicit stack), so deeply nested documents do not recurse.
    """
    positions: dict[str, int] = {}
    decoder = json.JSONDecoder()
    n = len(text)
    i = 0

    def skip(i: int) -> int:
        while i < n and text[i] in _WS:
            i += 1
        return i

    # stack entries: [kind, pointer, index]  kind in {"obj", "arr"}
    stack: list[list[Any]] = []
    pointer = ""
    i = skip(i)
    try:
        while True:
            # at a value start
            positions[pointer] = i
            ch = text[i]
            if ch == "{":
                i = skip(i + 1)
                if text[i] == "}":
                    i += 1
                else:
                    key, i = decoder.raw_decode(text, i)
                    i = skip(i)
                    i = skip(i + 1)  # ':'
                    stack.append(["obj", pointer, 0])
                    pointer = pointer_join(pointer, key)
                    continue
            elif ch == "[":
                i = skip(i + 1)
                if text[i] == "]":
                    i += 1
                else:
                    stack.append(["arr", pointer, 0])
                    pointer = pointer_join(pointer, 0)
                    continue
            else:
                _, i = decoder.raw_decode(text, i)
            # value finished: climb
            while True:
                if not stack:
                    return positions
                i = skip(i)
                kind, parent, index = stack[-1]
                if text[i] == ",":
                    i = skip(i + 1)
                    if kind == "obj":
                        key, i = decoder.raw_decode(text, i)
                        i = skip(i)
                        i = skip(i + 1)
                        pointer = pointer_join(parent, key)
                    else:
                        stack[-1][2] = index + 1
                        pointer = pointer_join(parent, index + 1)
                    break
                i += 1  # closing bracket
                stack.pop()
    except (IndexError, ValueError):
        return positions
