"""The remote examples as a user runs them: ``examples/remote_agent.py`` serves the echo
agent at ``http://HOST:PORT/acp`` on bindings generated from the TypeScript SDK's schema
files, and ``examples/remote_client.py URL TEXT`` prints the agent's reply, over
WebSocket and Streamable HTTP (HTTP/1.1 and HTTP/2), with and without a token."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ...conftest import generate, npm_install

ROOT = Path(__file__).resolve().parents[3]
INTEROP = ROOT / "tests" / "interop"
SDK_SCHEMA = INTEROP / "node_modules" / "@agentclientprotocol" / "sdk" / "schema"
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="module")
def vendor(tmp_path_factory: pytest.TempPathFactory) -> Path:
    npm_install(INTEROP, "@agentclientprotocol/sdk", "the remote examples")
    return generate(SDK_SCHEMA, tmp_path_factory.mktemp("remote-examples"), ("pydantic",))


def serve(vendor: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": f"{vendor}{os.pathsep}{EXAMPLES}"}
    agent = subprocess.Popen(
        [sys.executable, str(EXAMPLES / "remote_agent.py"), "--host", "127.0.0.1", "--port", "0", *args],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert agent.stdout is not None
    first = agent.stdout.readline()
    found = re.search(r"at (http://\S+/acp)", first)
    assert found, first + (agent.stderr.read() if agent.poll() is not None and agent.stderr else "")
    return agent, found.group(1)


def client(vendor: Path, url: str, text: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(vendor)}
    return subprocess.run(
        [sys.executable, str(EXAMPLES / "remote_client.py"), url, text, *args],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


@pytest.mark.parametrize("scheme", ["ws", "http", "http2"])
def test_the_remote_client_gets_the_echo_from_the_remote_agent(vendor: Path, scheme: str) -> None:
    agent, url = serve(vendor, *(["--http2"] if scheme == "http2" else []))
    try:
        target = url.replace("http://", "ws://") if scheme == "ws" else url
        done = client(vendor, target, "hello over the wire", *(["--http2"] if scheme == "http2" else []))
        assert done.returncode == 0, done.stderr
        assert done.stdout == "hello over the wire\n"
    finally:
        agent.terminate()
        agent.wait(10)


def test_a_token_is_asked_for_and_a_wrong_one_refused_in_one_line(vendor: Path) -> None:
    agent, url = serve(vendor, "--token", "sekrit")
    try:
        ws = url.replace("http://", "ws://")
        assert client(vendor, ws, "hi", "--token", "sekrit").stdout == "hi\n"
        for target in (ws, url):
            done = client(vendor, target, "hi", "--token", "wrong")
            assert done.returncode == 1
            assert done.stderr.strip().splitlines() == [f"remote_client: {target} refused the connection: HTTP 401: not authenticated"], done.stderr
    finally:
        agent.terminate()
        agent.wait(10)
