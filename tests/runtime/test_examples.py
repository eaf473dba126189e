"""The README's programs (examples/) type-check as users will check them: mypy --strict and
pyright on bindings generated from the schema directory the TypeScript SDK ships (trees v1
and v2: the echo agent speaks both; its npm package, pinned in tests/interop, read in place;
skipped with a reason without node or the registry). The conformance, peer and version
tests run them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import generate, npm_install

ROOT = Path(__file__).resolve().parents[2]
INTEROP = ROOT / "tests" / "interop"
SDK_SCHEMA = INTEROP / "node_modules" / "@agentclientprotocol" / "sdk" / "schema"
PROGRAMS = ("echo_agent.py", "echo_agent_v2.py", "client.py")


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
