"""Published agents nobody here wrote, as they really run: installed by the test from npm
(pinned in ``tests/peers/agents/package.json``; skipped, saying why, without node/npm or
the registry), each started the usual way, through its node launcher, with
``RPC.spawn``: ``initialize``, ``session/new`` (an authentication error is fine: no
account is configured, no key is given), then ``close()``. No process of the agent's tree
(the launcher, the binary or CLI it starts) is alive a few seconds after the close.

- codex-acp: a node launcher that runs the Rust binary (``spawnSync``), which outlived the
  close when only the launcher was signalled; it answers ``$/cancel_request`` with an
  error that has no id, which is logged and never answered.
- claude-code-acp: TypeScript, starts the ``claude`` CLI per session.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ..conftest import generate, import_file, npm_install
from .harness import STYLES, alive, package, run, tree

AGENTS = Path(__file__).parents[1] / "peers" / "agents"
SCHEMA = Path(__file__).parents[2] / "schemas" / "acp" / "v0.1.3"
PINNED = json.loads((AGENTS / "package.json").read_text())["dependencies"]
LAUNCHERS = {
    "@zed-industries/codex-acp": "bin/codex-acp.js",
    "@zed-industries/claude-code-acp": "dist/index.js",
}
#: seconds after close() by which the whole tree must be gone
GONE_WITHIN = 5.0

pytestmark = pytest.mark.skipif(not hasattr(os, "killpg") or not Path("/proc").is_dir(), reason="POSIX process groups, /proc")


@pytest.fixture(scope="module")
def agents() -> Path:
    modules = AGENTS / "node_modules"
    for name, version in PINNED.items():
        npm_install(AGENTS, name, "the real-agent tests")
        found = json.loads((modules / name / "package.json").read_text())["version"]
        assert found == version, f"tests/peers/agents pins {name} {version}, node_modules has {found}"
    return modules


_MODULES: dict[str, ModuleType] = {}


@pytest.fixture(params=STYLES)
def m(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """The v1 bindings of ACP v0.1.3 in each style, built from this checkout."""
    style = request.param
    if style not in _MODULES:
        out = generate(SCHEMA, tmp_path_factory.mktemp(f"acp-{style}"), (style,), formatted=False)
        _MODULES[style] = import_file(out / f"acp_{style}" / "v1.py")
    return _MODULES[style]


class Client:
    async def session_update(self, params: Any) -> None:
        pass


def _environment(home: Path) -> dict[str, str]:
    """A bare environment: no API key or account of whoever runs the tests."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "NO_COLOR": "1", "LANG": "C.UTF-8"}


@pytest.mark.parametrize("name", sorted(LAUNCHERS))
def test_a_real_agent_leaves_nothing_running_after_close(
    agents: Path, m: ModuleType, name: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pkg = package(m)
    home = tmp_path / "home"
    home.mkdir()
    launcher = agents / name / LAUNCHERS[name]

    async def scenario() -> tuple[float, set[int], list[int]]:
        conn = await m.RPC.spawn("node", str(launcher), env=_environment(home), cwd=str(home), stderr=-3)  # DEVNULL
        conn.start(Client())
        agent = m.RemoteAgent(conn)
        pids: set[int] = set()
        try:
            answer = await asyncio.wait_for(agent.initialize(m.RPC.codec.load(m.InitializeRequest, {"protocolVersion": 1, "clientCapabilities": {}})), 30)
            assert answer is not None
            # an id-less error answering this (codex) is logged, never answered
            await conn.notify("$/cancel_request", {"requestId": 12345})
            try:
                await asyncio.wait_for(agent.session_new(m.RPC.codec.load(m.NewSessionRequest, {"cwd": str(home), "mcpServers": []})), 30)
            except pkg.RemoteError as exc:  # no account: "Authentication required"
                assert exc.code in (-32000, -32603), str(exc)
            await asyncio.sleep(0.5)  # what the session starts is running
            pids = tree(conn.process.pid)
            assert len(pids) >= 2, f"expected the launcher and what it started, got {pids}"
            loop = asyncio.get_running_loop()
            started = loop.time()
            await asyncio.wait_for(conn.close(), 15)
            while [p for p in pids if alive(p)] and loop.time() - started < GONE_WITHIN:
                await asyncio.sleep(0.02)
            return loop.time() - started, pids, [p for p in pids if alive(p)]
        finally:
            await asyncio.wait_for(conn.close(), 15)
            for pid in pids:
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)

    with caplog.at_level(logging.WARNING):
        took, pids, left = run(scenario(), timeout=60)
    assert left == [], f"{name}: processes alive {took:.2f} s after close(): {left}"
    print(f"{name}: {len(pids)} processes, all gone {took:.2f} s after close()")
    if name.endswith("codex-acp"):
        assert any("Unmatched response" in r.getMessage() for r in caplog.records), [r.getMessage() for r in caplog.records]
