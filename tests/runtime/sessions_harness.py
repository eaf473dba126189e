"""What the session-helper tests share: bindings of the schema files the TypeScript SDK
2.4.0 ships (v1, v1 unstable, v2; every style, once per test session), the recorded
turns of ``tests/fixtures/turns`` (``peers/record_turns.py`` writes them) and a raw agent
that replays one to a client connection."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ..conftest import generate, import_file, npm_install
from .harness import STYLES, Peer
from .peers import INTEROP, SDK

TURNS = Path(__file__).parents[1] / "fixtures" / "turns"
_BUILT: dict[str, Path] = {}


def sdk_packages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The directory holding ``acp_<style>`` with ``v1``, ``v1_unstable``, ``v2``... built
    from the SDK's ``schema/`` directory, in every style."""
    if "all" not in _BUILT:
        npm_install(INTEROP, "@agentclientprotocol/sdk", "the session-helper tests")
        out = tmp_path_factory.mktemp("sdk-sessions")
        _BUILT["all"] = generate(SDK / "schema", out, STYLES, formatted=False)
    return _BUILT["all"]


def main_packages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same from upstream ``main`` (the corpus: its v1 and v2 trees), every style."""
    from .. import corpus

    if not corpus.present():
        pytest.skip(corpus.ABSENT)
    if "main" not in _BUILT:
        out = tmp_path_factory.mktemp("main-sessions")
        _BUILT["main"] = generate(corpus.ACP / "main", out, STYLES, formatted=False)
    return _BUILT["main"]


_MODULES: dict[tuple[Path, str, str], ModuleType] = {}


def sdk_module(root: Path, style: str, name: str) -> ModuleType:
    key = (root, style, name)
    if key not in _MODULES:
        _MODULES[key] = import_file(root / f"acp_{style}" / f"{name}.py")
    return _MODULES[key]


def package(m: ModuleType) -> ModuleType:
    return sys.modules[m.__package__]


def turn(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (TURNS / f"{name}.jsonl").read_text().splitlines()]


def update_tags(frames: list[dict[str, Any]]) -> list[str]:
    """The tags of the session updates the agent sent after the prompt, in order."""
    out = []
    prompted = False
    for f in frames:
        frame = f["frame"]
        if frame.get("method") == "session/prompt":
            prompted = True
        elif prompted and f["dir"] == "in" and frame.get("method") == "session/update":
            out.append(frame["params"]["update"]["sessionUpdate"])
    return out


def typed(m: ModuleType, method: str, params: Any, kind: str = "request") -> Any:
    spec = m.RPC.spec(method, kind)
    return m.RPC.codec.load(spec.params, params)


async def play(peer: Peer, frames: list[dict[str, Any]]) -> list[Any]:
    """Be the recorded agent: wait for each frame the client wrote (the same method; its
    own ids mapped), send each frame the agent wrote (answers with the client's ids).
    Gives what the client wrote."""
    live: dict[Any, Any] = {}
    wrote: list[Any] = []
    for f in frames:
        frame = f["frame"]
        if f["dir"] == "out":
            got = await peer.recv(10)
            wrote.append(got)
            if "method" in frame:
                assert got["method"] == frame["method"], (got, frame)
                if "id" in frame:
                    live[frame["id"]] = got["id"]
            else:  # the client's answer to the agent's request (its id is the agent's)
                assert got["id"] == frame["id"] and got["result"]["outcome"] == frame["result"]["outcome"], got
        else:
            if "method" not in frame:
                frame = {**frame, "id": live[frame["id"]]}
            await peer.send(frame)
    return wrote


def run(coro: Any, timeout: float = 60.0) -> Any:
    return asyncio.run(asyncio.wait_for(coro, timeout))
