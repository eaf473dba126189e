"""Record real prompt turns from real peers, as the fixtures of
``tests/runtime/test_sessions.py`` (``tests/fixtures/turns/<name>.jsonl``: one frame a line,
``{"dir": "out" | "in", "frame": ...}``, "out" what the client wrote, "in" what it read).

The agents are nobody's here but their SDK's: ``turn_agent.mjs`` on the TypeScript SDK
2.4.0 (v1 stable, v1 unstable with a ``notice``, v2 ending with the idle
``state_update``) and ``sdk_agent.py`` on the Python SDK 0.12.1 (a turn that asks for
permission). The client here speaks raw lines: ``initialize``, ``session/new``, one
``session/prompt``, permission granted with the first option; recording stops at the
prompt's answer (v1) or at the idle state (v2).

    python -m tests.runtime.peers.record_turns          # from the repository root
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from . import HERE, INTEROP, ROOT, StdioPeer

TURNS = ROOT / "tests" / "fixtures" / "turns"


class Recorder(StdioPeer):
    def __init__(self, command: list[str]) -> None:
        super().__init__(command, env=dict(os.environ), cwd=ROOT)
        self.frames: list[dict[str, Any]] = []

    def send(self, frame: dict[str, Any]) -> None:
        self.frames.append({"dir": "out", "frame": frame})
        super().send(frame)

    def frame(self, timeout: float = 10.0) -> dict[str, Any]:
        value = super().frame(timeout)
        self.frames.append({"dir": "in", "frame": value})
        return value


def record(command: list[str], version: int, prompt: str) -> list[dict[str, Any]]:
    peer = Recorder(command)
    try:
        init: dict[str, Any] = {"protocolVersion": version}
        init.update({"info": {"name": "recorder", "version": "1.0.0"}} if version == 2 else {"clientCapabilities": {}})
        peer.call("initialize", init, timeout=20)
        new: dict[str, Any] = {"cwd": "/w"} if version == 2 else {"cwd": "/w", "mcpServers": []}
        session = peer.call("session/new", new)["sessionId"]
        rid = peer.request("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": prompt}]})
        while True:
            frame = peer.frame(10)
            if frame.get("method") == "session/request_permission":
                option = frame["params"]["options"][0]["optionId"]
                outcome = {"outcome": "selected", "optionId": option}
                peer.send({"jsonrpc": "2.0", "id": frame["id"], "result": {"outcome": outcome}})
            elif version == 1 and "method" not in frame and frame.get("id") == rid:
                break
            elif frame.get("method") == "session/update" and frame["params"]["update"].get("state") == "idle":
                break
        return peer.frames
    finally:
        peer.stop()


def main() -> None:
    node = shutil.which("node")
    if node is None or not (INTEROP / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
        sys.exit("node and tests/interop/node_modules (npm install there) are needed")
    turns = {
        "ts-v1": ([node, str(HERE / "turn_agent.mjs"), "v1"], 1, "What does a.txt say?"),
        "ts-v1-unstable": ([node, str(HERE / "turn_agent.mjs"), "v1-unstable"], 1, "What does a.txt say?"),
        "ts-v2": ([node, str(HERE / "turn_agent.mjs"), "v2"], 2, "What does a.txt say?"),
        # the Python SDK agent asks for permission when the prompt starts with "permission"
        "py-sdk-v1": ([sys.executable, str(HERE / "sdk_agent.py")], 1, "permission to echo this"),
    }
    TURNS.mkdir(parents=True, exist_ok=True)
    for name, (command, version, prompt) in turns.items():
        frames = record(command, version, prompt)
        text = "".join(json.dumps(f, sort_keys=True, separators=(",", ":")) + "\n" for f in frames)
        (TURNS / f"{name}.jsonl").write_text(text)
        print(f"{name}: {len(frames)} frames")


if __name__ == "__main__":
    main()
