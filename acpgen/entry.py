"""The ``acpgen`` console entry point: the input-stamp check (standard library only), then
the real CLI. Importing the CLI is what an up-to-date ``acpgen build`` avoids, so this
module imports it only when there is work to do."""

from __future__ import annotations

import sys
from pathlib import Path

from acpgen import stamp


def main() -> None:
    argv = stamp.ARGV = sys.argv[1:]
    if argv[:1] == ["build"] and "--help" not in argv:
        lines = stamp.up_to_date(argv, Path.cwd())
        if lines is not None:
            if "--quiet" not in argv and "-q" not in argv:
                sys.stdout.write("".join(line + "\n" for line in lines))
            return
    from acpgen.cli import main as cli_main

    cli_main()
