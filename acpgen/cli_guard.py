"""How every command turns failures into output: diagnostics and exit 2, never a traceback
(unless ``--debug``)."""

from __future__ import annotations

import traceback
from typing import Callable, TypeVar

import typer

from acpgen.depth import deep_stack
from acpgen.errors import AcpgenError, Diagnostic

T = TypeVar("T")


def example(command: str) -> str:
    """A ``--help`` epilog: how the command is typically run."""
    return f"Example: {command}"
state = {"debug": False}


def guard(fn: Callable[[], T]) -> T:
    try:
        with deep_stack():
            return fn()
    except AcpgenError as exc:
        for d in exc.diagnostics:
            typer.echo(d.render(), err=True)
        raise typer.Exit(2)
    except RecursionError:
        # a stage without its own ACPG208 check met a pathologically deep input
        typer.echo(Diagnostic("ACPG208", "input nesting is too deep to process").render(), err=True)
        raise typer.Exit(2)
    except typer.Exit:
        raise
    except Exception as exc:  # pragma: no cover - a bug in acpgen itself
        if state["debug"]:
            traceback.print_exc()
        else:
            typer.echo(f"acpgen: internal error: {type(exc).__name__}: {exc} (run with --debug for a traceback)", err=True)
        raise typer.Exit(3)
