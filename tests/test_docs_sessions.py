"""The programs of ``docs/reference/sessions-and-helpers.md`` run as written: the client
(the session object) starts the agent (the tool-call and permission helpers) on the
committed bindings of ``generated/v0.1.3``, and prints what the page says; the same text
with ``acp_dataclasses`` runs too."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs/reference/sessions-and-helpers.md"
GENERATED = ROOT / "generated" / "v0.1.3"


def programs() -> dict[str, str]:
    """The page's whole programs, by the file name their docstring's usage line runs."""
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.DOTALL)
    out = {}
    for block in blocks:
        name = re.search(r"python (\w+\.py)", block)
        assert name, block[:200]
        out[name.group(1)] = block
    return out


def test_the_page_has_a_client_and_an_agent() -> None:
    assert sorted(programs()) == ["file_agent.py", "session_client.py"]


@pytest.mark.parametrize("style", ["pydantic", "dataclasses"])
def test_the_client_drives_the_agent_as_the_page_says(style: str, tmp_path: Path) -> None:
    for name, text in programs().items():
        (tmp_path / name).write_text(text.replace("acp_pydantic", f"acp_{style}"))
    note = tmp_path / "note.txt"
    note.write_text("hello world\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(GENERATED)
    command = [sys.executable, "session_client.py", str(note), "--", sys.executable, "file_agent.py"]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert [line.rstrip() for line in done.stdout.splitlines()] == [
        "update: tool_call pending",
        "update: tool_call_update in_progress",
        "update: tool_call_update completed",
        "update: agent_message_chunk",
        "stop reason: end_turn",
        "tool call: Read note.txt completed {'bytes': 12}",
        "message: note.txt: 12 bytes",
    ]
    page = PAGE.read_text()
    assert "# tool call: Read note.txt completed {'bytes': 12}" in page
