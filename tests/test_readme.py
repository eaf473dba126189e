"""The README's programs are the files in examples/ (which the runtime tests run)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_readme_programs_are_the_examples() -> None:
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    for name in ("echo_agent.py", "client.py"):
        assert (ROOT / "examples" / name).read_text() in blocks, name
