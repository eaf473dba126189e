"""What can be known of a line too long to read: a bounded scan of its two ends.

A line over a connection's ``max_line`` is never held whole: the connection keeps its
first and last bytes (``SKIM`` each) and asks :func:`skim` what they say. The head is
scanned token by token at the top level of the object the line starts; the tail is read
backwards, member by member, from the object's closing brace. Either end can name the
``id`` and the ``method``, and show whether the line is a call or a response, so that a
request is answered with its own id and a response fails the request it answers.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Final, NamedTuple

#: bytes kept at each end of a line too long to read
SKIM: Final = 64 * 1024

_TOKEN: Final = re.compile(
    rb'\s*(?:("(?:[^"\\]|\\.)*")|([{}\[\]:,])|([^\s{}\[\]:,"]+))', re.DOTALL
)
_SCALAR: Final = rb'-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*"|null|true|false'
_TAIL_MEMBER: Final = re.compile(
    rb'[,{]\s*"(id|method|jsonrpc|result|error)"\s*:\s*(' + _SCALAR + rb")\s*$",
    re.DOTALL,
)
_CALL_KEYS: Final = frozenset({"method", "params"})
_RESPONSE_KEYS: Final = frozenset({"result", "error"})


class Skimmed(NamedTuple):
    """``kind``: "call", "response" or ``None`` (unknown); ``id`` and ``method`` as read
    (``has_id`` says whether an id was read at all: ``None`` is a valid id)."""

    kind: str | None
    has_id: bool
    id: Any
    method: str | None


def _members_of_head(head: bytes) -> tuple[set[str], dict[str, Any]]:
    """The top-level keys the head shows, and the scalar values read among them."""
    keys: set[str] = set()
    values: dict[str, Any] = {}
    pos, depth = 0, 0
    key: str | None = None
    expect_key = after_colon = False
    while True:
        m = _TOKEN.match(head, pos)
        if m is None or m.end() == pos:
            break
        pos = m.end()
        string, punct, literal = m.groups()
        if punct is not None:
            if punct in b"{[":
                if depth == 0 and punct != b"{":
                    break  # not an object
                depth += 1
                after_colon = False
                expect_key = depth == 1
            elif punct in b"}]":
                depth -= 1
                if depth <= 0:
                    break
            elif punct == b":" and depth == 1:
                after_colon = True
            elif punct == b"," and depth == 1:
                expect_key, key = True, None
            continue
        if depth != 1:
            continue
        token = string if string is not None else literal
        if expect_key and string is not None:
            try:
                key = json.loads(string)
            except ValueError:
                break
            keys.add(str(key))
            expect_key = False
        elif after_colon and key is not None:
            try:
                values[key] = json.loads(token)
            except ValueError:
                pass
            after_colon = False
    return keys, values


def _members_of_tail(tail: bytes) -> dict[str, Any]:
    """The scalar members that end the object the tail closes, read backwards."""
    values: dict[str, Any] = {}
    rest = tail.rstrip()
    if not rest.endswith(b"}"):
        return values
    rest = rest[:-1]
    while True:
        m = _TAIL_MEMBER.search(rest)
        if m is None:
            return values
        try:
            values.setdefault(m.group(1).decode(), json.loads(m.group(2)))
        except ValueError:
            return values
        rest = rest[: m.start() + 1]  # it ends with the "," or "{" before the member
        if rest.endswith(b"{"):
            return values
        rest = rest[:-1]


_NO_ID: Final = object()


def skim(head: bytes, tail: bytes) -> Skimmed:
    """What the two ends of a line say about it (see the module docstring)."""
    keys, values = _members_of_head(head)
    for key, value in _members_of_tail(tail).items():
        keys.add(key)
        values.setdefault(key, value)
    rid = values.get("id", _NO_ID)
    has_id = (
        rid is None
        or type(rid) in (int, str)
        or (type(rid) is float and math.isfinite(rid))
    )
    method = values.get("method")
    if not isinstance(method, str):
        method = None
    if keys & _CALL_KEYS:
        kind: str | None = "call"
    elif keys & _RESPONSE_KEYS:
        kind = "response"
    else:
        kind = None
    return Skimmed(kind, has_id, values.get("id") if has_id else None, method)
