"""What the Python agent and client of the interop test share: the generated module they
are written on (nothing else from acpgen), messages built in its style, and the record of
what happened, printed as JSON on stderr for the test to read."""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import os
import re
import sys
from typing import Any

RECORD: dict[str, list[Any]] = {"events": []}
#: what this run plays (as common.mjs): "turn", "cancel", "large" or "order"
SCENARIO = os.environ.get("INTEROP_SCENARIO", "turn")
ORDERED = 1000


def blob(tag: str, n: int) -> str:
    """The same text as common.mjs's ``blob``: ``n`` characters, over 1 MB as a line."""
    unit = "abcdefghijklmnopqrstuvwxyz0123456789é€ж"
    return (tag + "|" + unit * math.ceil(n / len(unit)))[:n]


def digest(text: str) -> dict[str, Any]:
    """What a large value is recorded as (as common.mjs's ``digest``)."""
    return {"length": len(text), "sha256": hashlib.sha256(text.encode()).hexdigest()}


def module(package_dir: str, name: str) -> Any:
    sys.path.insert(0, package_dir)
    return importlib.import_module(name)


def _snake(wire: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", wire.lstrip("_")).lower()


class Style:
    """Building and reading messages the way a user of each style does: constructors with
    attribute names (Pydantic, dataclasses) or dict literals with wire keys (TypedDict)."""

    def __init__(self, m: Any, style: str) -> None:
        self.m = m
        self.td = style == "typeddict"

    def make(self, cls: Any, **members: Any) -> Any:
        """``make(m.PromptResponse, stopReason="end_turn")`` -> a value of ``cls``."""
        if self.td:
            return cls(**members)
        return cls(**{_snake(k): v for k, v in members.items()})

    def get(self, value: Any, wire: str) -> Any:
        return value[wire] if self.td else getattr(value, _snake(wire))

    def json(self, value: Any) -> Any:
        return self.m.RPC.codec.dump(value)


def event(*parts: Any) -> None:
    RECORD["events"].append(list(parts))


def done() -> None:
    sys.stderr.write("INTEROP-RECORD " + json.dumps(RECORD) + "\n")
    sys.stderr.flush()
