"""The programs of the site's agent-and-client guide (examples/) type-check as users will
check them: mypy --strict and pyright on bindings generated from the schema directory the
TypeScript SDK ships (trees v1 and v2: the echo agent speaks both; its npm package, pinned in
tests/interop, read in place; skipped with a reason without node or the registry). The
conformance, peer and version tests run them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import generate, npm_install

ROOT = Path(__file__).resolve().parents[2]
INTEROP = ROOT / "tests" / "interop"
SDK_SCHEMA = INTEROP / "node_modules" / "@agentclientprotocol" / "sdk" / "schema"
PROGRAMS = ("echo_agent.py", "echo_agent_v2.py", "client.py", "remote_agent.py", "remote_client.py", "session_store.py")


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    npm_install(INTEROP, "@agentclientprotocol/sdk", "the examples' type check")
    out = generate(SDK_SCHEMA, tmp_path_factory.mktemp("examples"), ("pydantic",))
    for name in PROGRAMS:
        shutil.copy(ROOT / "examples" / name, out / name)
    return out


def test_examples_pass_mypy_strict(checked: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", *PROGRAMS],
        cwd=checked, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_examples_pass_pyright(checked: Path) -> None:
    pyright = Path(sys.executable).parent / "pyright"
    if not pyright.exists() or shutil.which("node") is None:
        pytest.skip("pyright (dev dependency) needs node, which is absent")
    done = subprocess.run([str(pyright), "--pythonpath", sys.executable, *PROGRAMS], cwd=checked, capture_output=True, text=True)
    assert "0 errors" in done.stdout, done.stdout[-3000:]


VERSIONS_PAGE = ROOT / "docs/reference/versions.md"


def test_the_versions_page_programs_type_check_and_run(checked: Path, tmp_path: Path) -> None:
    """The two programs of docs/reference/versions.md (an agent speaking v1 and v2, a
    client offering v2 and falling back to v1) pass mypy --strict, and the client run on
    the agent prints what the page says it prints."""
    text = VERSIONS_PAGE.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 2
    (tmp_path / "agent.py").write_text(blocks[0])
    (tmp_path / "client.py").write_text(blocks[1])
    env = {**os.environ, "MYPYPATH": str(checked), "PYTHONPATH": str(checked)}
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "agent.py", "client.py"],
        cwd=tmp_path, capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    ran = subprocess.run([sys.executable, "client.py"], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=60)
    printed = text.split("It prints:\n\n```text\n")[1].split("```")[0]
    assert ran.returncode == 0 and ran.stdout == printed, ran.stdout + ran.stderr
