"""CLI habits: --version answers, a near miss suggests the closest valid word, and every
command's --help ends with an example."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from acpgen import __version__
from acpgen.cli import app

runner = CliRunner()


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert (result.exit_code, result.stdout) == (0, f"acpgen {__version__}\n")
    ran = subprocess.run([sys.executable, "-m", "acpgen", "--version"], capture_output=True, text=True)
    assert (ran.returncode, ran.stdout) == (0, f"acpgen {__version__}\n")


def _commands() -> list[list[str]]:
    group = typer.main.get_command(app)
    out: list[list[str]] = []
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        subs = getattr(command, "commands", None)
        if subs:
            out.extend([name, sub] for sub in subs)
        else:
            out.append([name])
    return sorted(out)


def test_every_command_is_listed() -> None:
    assert {tuple(c) for c in _commands()} >= {("build",), ("check",), ("diff",), ("changelog",), ("overlay", "check")}


@pytest.mark.parametrize("command", _commands(), ids=lambda c: " ".join(c))
def test_help_ends_with_an_example(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--help"], terminal_width=200)
    assert result.exit_code == 0
    tail = result.stdout.rsplit("╰", 1)[-1]
    assert "Example: acpgen " + command[0] in tail, tail


def _texts(command: list[str]) -> list[str]:
    """Every help text that ``acpgen <command> --help`` shows: the command's own (its
    docstring), its epilog and each parameter's help."""
    node = typer.main.get_command(app)
    for name in command:
        node = node.commands[name]  # type: ignore[attr-defined]
    texts = [node.help or "", node.epilog or ""]
    texts += [getattr(p, "help", None) or "" for p in node.params]
    return [t for t in texts if t]


def _bracketed(command: list[str]) -> list[str]:
    return sorted({m for t in _texts(command) for m in re.findall(r"\[[^\]\n]+\]", t)})


def test_some_help_text_has_brackets() -> None:
    # the test below would prove nothing if no help text had any
    assert "[tool.acpgen]" in _bracketed(["init"])


@pytest.mark.parametrize("command", [[], *_commands()], ids=lambda c: " ".join(c) or "acpgen")
def test_help_keeps_bracketed_text(command: list[str]) -> None:
    """Rich markup would take ``[tool.acpgen]`` for a style tag and drop it (init's help read
    "(or  in pyproject.toml)"): every bracketed word of a help text is printed as written."""
    result = runner.invoke(app, [*command, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    shown = " ".join(result.stdout.replace("│", " ").split())
    for text in _bracketed(command):
        assert text in shown, (text, shown)


def test_a_mistyped_command_suggests_one() -> None:
    result = runner.invoke(app, ["biuld"])
    assert result.exit_code == 2 and "Did you mean 'build'?" in result.output


@pytest.mark.parametrize(
    "args,config,expected",
    [
        (["build", "--schema", "x.json", "--style", "pydantc"], None, "did you mean 'pydantic'?"),
        (["build", "--config", "c.toml"], '[[target]]\nschema="s"\nout="o"\nstyle=["md"]\n', "unknown key(s) style; did you mean 'styles'?"),
        (["build", "--config", "c.toml"], '[[target]]\nschema="s"\nout="o"\nstyles=["pydantik"]\n', "did you mean 'pydantic'?"),
        (["build", "--config", "c.toml"], '[[target]]\nschema="s"\nout="o"\n[namng]\n', "unknown key 'namng'; did you mean 'naming'?"),
        (["diff", "a", "b", "--format", "jsn"], None, "did you mean 'json'?"),
        (["diff", "a", "b", "--fail-on", "eror"], None, "did you mean 'error'?"),
    ],
)
def test_a_near_miss_suggests_the_closest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], config: str | None, expected: str) -> None:
    monkeypatch.chdir(tmp_path)
    if config:
        Path("c.toml").write_text(config)
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert "ACPG501" in line and line.endswith(expected), line
