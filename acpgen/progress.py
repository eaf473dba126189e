"""How a long build shows its progress: a bar on a terminal (rich, which typer brings),
plain lines in CI or when the output is not a terminal, nothing with ``--quiet``. The
pipeline calls ``grow`` when it learns how much work is left and ``step`` per file."""

from __future__ import annotations

import os
import sys
from typing import IO, Any, Protocol


class Progress(Protocol):
    def grow(self, steps: int) -> None: ...

    def step(self, label: str) -> None: ...

    def close(self) -> None: ...


class Silent:
    def grow(self, steps: int) -> None:
        pass

    def step(self, label: str) -> None:
        pass

    def close(self) -> None:
        pass


class Lines:
    """``[3/18] v0.1.3: acp_pydantic/v1.py``: one line per step, for logs."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream, self.total, self.done = stream, 0, 0

    def grow(self, steps: int) -> None:
        self.total += steps

    def step(self, label: str) -> None:
        self.done += 1
        self.stream.write(f"[{self.done}/{self.total}] {label}\n")
        self.stream.flush()

    def close(self) -> None:
        pass


class Bar:
    """A rich progress bar on the terminal; it goes away when the build ends."""

    def __init__(self, stream: IO[str], force_terminal: bool | None = None) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn

        console = Console(file=stream, force_terminal=force_terminal)
        self.bar: Any = RichProgress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=console, transient=True
        )
        self.task = self.bar.add_task("acpgen", total=0)
        self.bar.start()

    def grow(self, steps: int) -> None:
        total = self.bar.tasks[0].total or 0
        self.bar.update(self.task, total=total + steps)

    def step(self, label: str) -> None:
        self.bar.update(self.task, advance=1, description=label)

    def close(self) -> None:
        self.bar.stop()


def reporter(quiet: bool, stream: IO[str] | None = None) -> Progress:
    """Silent with --quiet; a bar on an interactive terminal; plain lines elsewhere (CI sets
    ``CI``; a pipe or a file is not a terminal). On stdout, the normal output: stderr keeps
    only problems, one line each."""
    stream = stream or sys.stdout
    if quiet:
        return Silent()
    interactive = stream.isatty() and not os.environ.get("CI") and os.environ.get("TERM") != "dumb"
    return Bar(stream) if interactive else Lines(stream)
