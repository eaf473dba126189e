"""The programs of acpgen's own documentation (README.md and the site's pages under docs/):
every ```python block is a whole program, type-checked with ``mypy --strict`` and run.

A block is one of two things:

* an include of an example (``--8<-- "examples/NAME.py"``, pymdownx.snippets): the file is
  what the reader sees, and ``tests/runtime/test_examples.py`` type-checks it against the
  TypeScript SDK's schema while the conformance and peer tests run it;
* a program that runs against the committed bindings of ``generated/v0.1.3`` (``acp_pydantic``,
  ``acp_dataclasses``, ``acp_typeddict``) or the package ``myagent._acp`` vendored from the
  bundled release, as the vendoring guide writes it. A program that serves ACP over stdio
  (``RPC.stdio``) is driven through a prompt turn.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated" / "v0.1.3"
FENCE = re.compile(r"^```python([^\n]*)\n(.*?)^```", re.S | re.M)
SNIPPET = re.compile(r'^--8<-- "([^"]+)"$')

#: a prompt turn for a program that serves ACP over stdio as an agent
AGENT_TURN = "".join(
    line + "\n"
    for line in (
        '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}',
        '{"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}',
        '{"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": "s-1", "prompt": [{"type": "text", "text": "hi"}]}}',
    )
)


@dataclass(frozen=True)
class Block:
    source: str  # "README.md:57": the file and the line of the fence
    text: str

    @property
    def include(self) -> str | None:
        """The file a snippet block includes, or None for a program written in place."""
        lines = self.text.strip().splitlines()
        match = SNIPPET.match(lines[0]) if len(lines) == 1 else None
        return match.group(1) if match else None


def python_blocks(path: Path) -> list[Block]:
    text = path.read_text()
    rel = path.relative_to(ROOT).as_posix()
    return [Block(f"{rel}:{text.count(chr(10), 0, m.start()) + 1}", m.group(2)) for m in FENCE.finditer(text)]


#: pages whose programs are checked by a test of their own, which type-checks and runs them as
#: they need: the versions page on a package with trees v1 and v2, the sessions page with its
#: client and agent driven against each other (a permission asked and answered)
OWN_TESTS = {
    "docs/reference/versions.md": "tests/runtime/test_examples.py",
    "docs/reference/sessions-and-helpers.md": "tests/test_docs_sessions.py",
}


def doc_pages() -> list[Path]:
    """The site's pages whose programs are checked here (every page but ``OWN_TESTS``)."""
    return sorted(p for p in (ROOT / "docs").rglob("*.md") if p.relative_to(ROOT).as_posix() not in OWN_TESTS)


def vendor(tmp: Path) -> Path:
    """``myagent._acp`` from the bundled release, as ``guides/vendoring.md`` builds it."""
    out = tmp / "vendored"
    env = {**os.environ, "ACPGEN_CACHE_DIR": str(tmp / "cache")}
    acpgen = Path(sys.executable).parent / "acpgen"
    done = subprocess.run(
        [str(acpgen), "build", "--schema", "bundled:v0.1.3", "--style", "pydantic", "--package", "myagent._acp", "--out", str(out), "-q"],
        cwd=tmp, capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (out / "myagent" / "__init__.py").touch()
    return out


def check_programs(blocks: list[Block], tmp: Path) -> list[str]:
    """Type-check every program in place with mypy --strict (one run) and run each; returns
    the problems, one line each (``[]`` when every program passes)."""
    problems: list[str] = []
    programs: dict[str, Block] = {}
    for block in blocks:
        include = block.include
        if include is not None:
            if not (ROOT / include).is_file() or not include.startswith("examples/"):
                problems.append(f"{block.source}: includes {include}, which is not a file of examples/")
            continue
        name = "prog_" + re.sub(r"\W", "_", block.source) + ".py"
        (tmp / name).write_text(block.text)
        programs[name] = block
    if not programs:
        return problems
    vendored = vendor(tmp)
    path = os.pathsep.join([str(GENERATED), str(vendored)])
    env = {**os.environ, "PYTHONPATH": path, "MYPYPATH": path}
    typed = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", str(tmp / ".mypy"), *sorted(programs)],
        cwd=tmp, capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    if typed.returncode != 0:
        problems += [f"mypy: {line}" for line in typed.stdout.splitlines() if ": error:" in line]
        problems += [] if problems else [f"mypy: {typed.stdout}{typed.stderr}"]
    for name, block in sorted(programs.items()):
        serves = "RPC.stdio(" in block.text
        ran = subprocess.run(
            [sys.executable, name], cwd=tmp, capture_output=True, text=True, env=env, timeout=60,
            input=AGENT_TURN if serves else "",
        )  # fmt: skip
        if ran.returncode != 0:
            problems.append(f"{block.source}: exit {ran.returncode}: {ran.stderr.strip()[-600:]}")
        elif serves and '"id":3,"result":{"stopReason":"end_turn"}' not in ran.stdout:
            problems.append(f"{block.source}: the agent did not answer the prompt: {ran.stdout[-600:]}")
    return problems
