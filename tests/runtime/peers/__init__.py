"""What the real-peer and conformance tests share: bindings generated from the ACP schema
files that ``@agentclientprotocol/sdk`` 2.4.0 ships (the npm package pinned in
``tests/interop``, installed by the first test that needs it; skipped, saying why,
without node/npm or the registry), the examples they drive, and a bounded line reader
for a peer's stdout."""

from __future__ import annotations

import compileall
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

import pytest

from ...conftest import generate, npm_install

HERE = Path(__file__).parent
ROOT = HERE.parents[2]
EXAMPLES = ROOT / "examples"
ECHO_AGENT = EXAMPLES / "echo_agent.py"
CLIENT = EXAMPLES / "client.py"
INTEROP = ROOT / "tests" / "interop"
SDK = INTEROP / "node_modules" / "@agentclientprotocol" / "sdk"

_BUILT: dict[str, Path] = {}


def sdk_bindings(tmp_path_factory: pytest.TempPathFactory, stability: str = "stable") -> Path:
    """The directory to put on ``PYTHONPATH``: ``acp_pydantic`` generated from the SDK's
    ``schema/v1`` file (once per test session)."""
    if stability not in _BUILT:
        npm_install(INTEROP, "@agentclientprotocol/sdk", "the bindings of the real-peer tests")
        name = "schema.json" if stability == "stable" else "schema.unstable.json"
        out = tmp_path_factory.mktemp(f"peer-bindings-{stability}")
        _BUILT[stability] = generate(SDK / "schema" / "v1" / name, out, ("pydantic",), formatted=False)
        compileall.compile_dir(out, quiet=1)  # every process the tests start imports it
    return _BUILT[stability]


def env_with(bindings: Path, **extra: str) -> dict[str, str]:
    """This environment with the bindings (and nothing else of ours) on ``PYTHONPATH``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYTHONPATH=str(bindings), PYTHONUNBUFFERED="1", **extra)
    return env


def echo_agent_command() -> list[str]:
    return [sys.executable, str(ECHO_AGENT)]


class Lines:
    """The lines a process writes on one of its pipes, read by a thread, each waited for
    with a timeout (a test never hangs on a silent peer)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._queue: queue.Queue[bytes | None] = queue.Queue()
        self._peeked: list[bytes | None] = []
        self.seen: list[bytes] = []
        self.eof = False
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream: IO[bytes]) -> None:
        for line in iter(stream.readline, b""):
            self._queue.put(line)
        self._queue.put(None)

    def next(self, timeout: float = 5.0) -> bytes | None:
        """The next line (with its newline), or ``None`` at the end of the stream."""
        if self.eof:
            return None
        try:
            line = self._peeked.pop() if self._peeked else self._queue.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no line within {timeout} s; seen so far: {self.seen[-5:]!r}") from None
        if line is None:
            self.eof = True
        else:
            self.seen.append(line)
        return line

    def quiet(self, seconds: float) -> bool:
        """Whether nothing at all arrives for ``seconds``."""
        if self._peeked:
            return False
        try:
            self._peeked.append(self._queue.get(timeout=seconds))
        except queue.Empty:
            return True
        return False


class StdioPeer:
    """A process spoken to in newline-delimited JSON-RPC over its stdin and stdout, the
    way a client drives an agent: raw lines in, parsed frames out."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: Path | None = None) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd
        )
        assert self.process.stdin and self.process.stdout and self.process.stderr
        self.stdin = self.process.stdin
        self.out = Lines(self.process.stdout)
        self.err = Lines(self.process.stderr)
        self.ids = iter(range(1, 1_000_000))

    def send_raw(self, line: bytes) -> None:
        self.stdin.write(line if line.endswith(b"\n") else line + b"\n")
        self.stdin.flush()

    def send(self, frame: dict[str, Any]) -> None:
        self.send_raw(json.dumps(frame).encode())

    def request(self, method: str, params: Any = None, **extra: Any) -> int:
        rid = next(self.ids)
        frame: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method, **extra}
        if params is not None:
            frame["params"] = params
        self.send(frame)
        return rid

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def frame(self, timeout: float = 5.0) -> dict[str, Any]:
        line = self.out.next(timeout)
        assert line is not None, f"the peer closed its stdout; stderr: {self.stderr_text()}"
        value = json.loads(line)
        assert isinstance(value, dict), line
        return value

    def answer(self, rid: Any, timeout: float = 5.0) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The response to ``rid``, and the frames that came before it."""
        before: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while True:
            frame = self.frame(max(0.01, deadline - time.monotonic()))
            if "method" not in frame and frame.get("id") == rid:
                return frame, before
            before.append(frame)

    def call(self, method: str, params: Any = None, timeout: float = 5.0) -> Any:
        """A request that must succeed: its result."""
        response, _ = self.answer(self.request(method, params), timeout)
        assert "result" in response, response
        return response["result"]

    def start_session(self) -> str:
        self.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        return str(self.call("session/new", {"cwd": str(ROOT), "mcpServers": []})["sessionId"])

    def close_stdin(self) -> None:
        try:
            self.stdin.close()
        except OSError:  # the peer is gone already
            pass

    def wait(self, timeout: float) -> int:
        return self.process.wait(timeout)

    def stderr_text(self) -> str:
        return b"".join(self.err.seen).decode(errors="replace")[-3000:]

    def stop(self) -> None:
        """End the process (it was started here) and reap it."""
        self.close_stdin()
        try:
            self.process.wait(2)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
#: the npm peers of tests/peers (acpx), pinned with their lock file
PEERS_DIR = ROOT / "tests" / "peers"
