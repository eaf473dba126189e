"""A real client nobody here wrote: ``acpx`` (npm, pinned in ``tests/peers/package.json``
with its lock file, installed by the test; skipped, saying why, without node/npm or the
registry), the headless ACP client CLI, driving the docs' echo agent
(``examples/echo_agent.py`` on bindings generated from the TypeScript SDK 2.4.0's schema)
through ``acpx --agent "<command>"``: a one-shot ``exec``, a persistent session with
several prompts, ``cancel`` of a slow prompt, ``set-mode`` and ``set`` (a config option).

acpx keeps its sessions and queue-owner locks in ``$HOME/.acpx`` (and a socket directory
in ``/tmp`` named after ``HOME``): the module has its own ``HOME`` and working directory,
and one persistent session that its tests share (each leaves it as it found it); at the
end it closes the session, reaps the queue owner it started and removes the socket
directory.
Only local commands are run (``--agent`` is the echo agent; no agent is ever downloaded).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..conftest import npm_install
from .peers import ECHO_AGENT, Lines, env_with, sdk_bindings

PEERS = Path(__file__).parents[1] / "peers"
ACPX_VERSION = "0.19.1"
TIMEOUT = 30.0


@pytest.fixture(scope="module")
def acpx_cli() -> Path:
    npm_install(PEERS, "acpx", "the acpx peer test")
    cli = PEERS / "node_modules" / "acpx" / "dist" / "cli.js"
    version = json.loads((cli.parents[1] / "package.json").read_text())["version"]
    assert version == ACPX_VERSION, f"tests/peers pins acpx {ACPX_VERSION}, node_modules has {version}"
    return cli


@pytest.fixture(scope="module")
def bindings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sdk_bindings(tmp_path_factory)


class Acpx:
    """``acpx --agent <echo agent> ...`` with its own HOME and working directory."""

    def __init__(self, cli: Path, bindings: Path, root: Path) -> None:
        self.home = root / "home"
        self.cwd = root / "work"
        self.home.mkdir()
        self.cwd.mkdir()
        self.env = env_with(bindings, HOME=str(self.home), NO_COLOR="1")
        self.env.pop("XDG_CONFIG_HOME", None)
        self.base = ["node", str(cli), "--agent", shlex.join([sys.executable, str(ECHO_AGENT)]), "--ttl", "10"]

    def popen(self, *args: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [*self.base, *args], cwd=self.cwd, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([*self.base, *args], cwd=self.cwd, env=self.env, capture_output=True, text=True, timeout=TIMEOUT)
        if check:
            assert done.returncode == 0, f"acpx {' '.join(args)}: {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        return done

    def frames(self, *args: str) -> list[dict[str, Any]]:
        """The JSON-RPC frames of a ``--format json`` run."""
        done = self.run("--format", "json", *args)
        return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]

    def owners(self) -> list[int]:
        """The queue owners (acpx processes this test started) named by their lock files."""
        pids = []
        for lock in (self.home / ".acpx" / "queues").glob("*.lock"):
            try:
                pids.append(int(json.loads(lock.read_text())["pid"]))
            except (ValueError, KeyError, OSError):
                pass
        return pids

    def cleanup(self) -> None:
        owners = self.owners()
        if (self.home / ".acpx" / "sessions").is_dir():
            self.run("sessions", "close", check=False)
        deadline = time.monotonic() + 5
        for pid in owners:
            while _alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if _alive(pid):
                os.kill(pid, signal.SIGTERM)
        # acpx's queue sockets live in /tmp/acpx-<hash of HOME> (fixed, not $TMPDIR): ours
        shutil.rmtree(Path("/tmp") / f"acpx-{hashlib.sha256(str(self.home).encode()).hexdigest()[:10]}", ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    try:  # a zombie is not alive
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][0] != "Z"
    except OSError:
        return True


@pytest.fixture(scope="module")
def acpx(acpx_cli: Path, bindings: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Acpx]:
    """One HOME and one persistent session (``s-1``) for the module: acpx starts its queue
    owner, which keeps the agent running between commands, once."""
    peer = Acpx(acpx_cli, bindings, tmp_path_factory.mktemp("acpx"))
    try:
        assert peer.run("sessions", "new").stdout.strip() == "s-1"
        yield peer
    finally:
        peer.cleanup()


def _echoed(frames: list[dict[str, Any]]) -> str:
    return "".join(
        f["params"]["update"]["content"]["text"]
        for f in frames
        if f.get("method") == "session/update" and f["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    )


def _stop_reason(frames: list[dict[str, Any]], prompt_id: Any) -> Any:
    return next(f["result"]["stopReason"] for f in frames if f.get("id") == prompt_id and "result" in f)


def _prompt_id(frames: list[dict[str, Any]]) -> Any:
    return next(f["id"] for f in frames if f.get("method") == "session/prompt")


def test_exec_echoes_the_prompt(acpx: Acpx) -> None:
    """A one-shot run: its own agent process and session, then both end."""
    frames = acpx.frames("exec", "one shot, hello from acpx")
    assert frames[0]["method"] == "initialize" and frames[1]["result"]["protocolVersion"] == 1
    assert _echoed(frames) == "one shot, hello from acpx "
    assert _stop_reason(frames, _prompt_id(frames)) == "end_turn"
    assert not any("error" in f for f in frames)


def test_exec_a_prompt_over_64_kib_from_a_file(acpx: Acpx) -> None:
    """A 200 KB word read by ``--file`` goes to the agent on one line and comes back as one
    chunk, intact (lines over 64 KiB both ways)."""
    word = "y" * 200_000
    (acpx.cwd / "big.txt").write_text(word + " end")
    frames = acpx.frames("exec", "--file", "big.txt")
    assert _echoed(frames) == word + " end "
    assert _stop_reason(frames, _prompt_id(frames)) == "end_turn"


def test_persistent_session_with_several_prompts(acpx: Acpx) -> None:
    done = acpx.run("prompt", "as text")  # what a user sees
    assert "as text" in done.stdout and "end_turn" in done.stdout, done.stdout
    echoed = []
    for text in ("one two", "three four five"):
        frames = acpx.frames("prompt", text)
        prompt = next(f for f in frames if f.get("method") == "session/prompt")
        assert prompt["params"]["sessionId"] == "s-1"  # the same session every time
        assert _stop_reason(frames, prompt["id"]) == "end_turn"
        echoed.append(_echoed([f for f in frames if f.get("params", {}).get("sessionId") == "s-1"]))
    assert echoed == ["one two ", "three four five "]
    record = json.loads((acpx.home / ".acpx" / "sessions" / "s-1.json").read_text())  # acpx's history
    turns = [(m.get("User") or m.get("Agent"))["content"][0]["Text"] for m in record["messages"]]
    assert turns[-6:] == ["as text", "as text ", "one two", "one two ", "three four five", "three four five "]


def test_cancel_a_slow_prompt(acpx: Acpx) -> None:
    words = [str(i) for i in range(100)]  # 10 s of echo unless cancelled
    turn = acpx.popen("--format", "json", "prompt", "slow " + " ".join(words))
    try:
        assert turn.stdout is not None
        out = Lines(turn.stdout)
        frames: list[dict[str, Any]] = []
        while not _echoed(frames):  # the turn is streaming
            line = out.next(timeout=TIMEOUT)
            assert line is not None, turn.stderr.read().decode() if turn.stderr else ""
            frames.append(json.loads(line))
        assert acpx.run("cancel").stdout.strip() == "cancel requested"
        assert turn.wait(10) == 0
        while (line := out.next(timeout=5)) is not None:
            frames.append(json.loads(line))
    finally:
        if turn.poll() is None:
            turn.kill()
            turn.wait(5)
    assert {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s-1"}} in frames
    assert _stop_reason(frames, _prompt_id(frames)) == "cancelled"
    assert len(_echoed(frames).split()) < 50  # stopped mid-turn
    # the session goes on
    assert _echoed(acpx.frames("prompt", "after the cancel")) == "after the cancel "


def test_set_mode_and_config_option(acpx: Acpx) -> None:
    assert acpx.run("set-mode", "code").stdout.strip() == "mode set: code"
    refused = acpx.run("set-mode", "bogus", check=False)
    assert refused.returncode != 0 and "-32602" in refused.stderr, refused.stderr
    done = acpx.run("--format", "json", "set", "voice", "loud")
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["action"] == "config_set"
    assert [(o["id"], o["currentValue"]) for o in result["configOptions"]] == [("voice", "loud")]
    try:
        refused = acpx.run("set", "voice", "whisper", check=False)
        assert refused.returncode != 0 and "-32602" in refused.stderr, refused.stderr
        assert _echoed(acpx.frames("prompt", "now loud")) == "NOW LOUD "  # the agent applies it
    finally:
        acpx.run("set", "voice", "plain")  # the session is the module's
