"""Mutation testing of one package with mutmut: ``make mutate PKG=normalise``.

mutmut reads one ``[tool.mutmut]`` table from the ``pyproject.toml`` of the directory it
runs in, so each package gets its own scratch directory, ``.mutate/<package>/``: a copy of
the sources, templates, schemas and tests, and a ``pyproject.toml`` whose table is the
project's ``[tool.mutmut]`` with ``only_mutate`` and the tests of that package (the tests
that mirror it, listed below). Results stay there between runs, so a run cut short by
``MINUTES`` (30 by default) goes on where it stopped when started again, as long as no
source or test changed (then the results are dropped and the run starts over).
``ONLY=<module>[,<module>...]`` narrows a run to some modules of the package;
``CHILDREN`` (1 by default) is the number of mutants tested at once. A developer tool:
``make test`` never runs it. See docs/project/mutation.md.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# package -> the test files that mirror it (fast, no network, no peers, no corpus sweep)
PACKAGES: dict[str, list[str]] = {
    "normalise": ["tests/normalise"],
    "diff": [
        "tests/diff/test_diff_rules.py",
        "tests/diff/test_diff_payloads.py",
        "tests/diff/test_diff_cli.py",
        "tests/diff/test_report.py",
        "tests/diff/test_ignore.py",
        "tests/diff/test_direction.py",
        "tests/diff/test_model.py",
    ],
    "runtime": [
        "tests/runtime/test_connection.py",
        "tests/runtime/test_jsonrpc.py",
        "tests/runtime/test_skim.py",
        "tests/runtime/test_batches.py",
        "tests/runtime/test_transports.py",
    ],
}
COPIED = ("acpgen", "templates", "schemas", "tests")


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    raise TypeError(f"no TOML for {value!r}")


def _digest() -> str:
    h = hashlib.sha256()
    for name in COPIED + ("pyproject.toml",):
        top = ROOT / name
        for path in sorted([top] if top.is_file() else top.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                h.update(
                    str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes()
                )
    return h.hexdigest()


def prepare(package: str) -> Path:
    """Refresh ``.mutate/<package>/`` from the work tree; keep mutmut's results there."""
    work = ROOT / ".mutate" / package
    work.mkdir(parents=True, exist_ok=True)
    digest = _digest()
    stamp = work / "inputs.sha256"
    if not stamp.is_file() or stamp.read_text() != digest:
        # a source or a test changed: every earlier result may be stale (mutmut would keep
        # a survivor that a new test now kills)
        shutil.rmtree(work / "mutants", ignore_errors=True)
        stamp.write_text(digest)
    for name in COPIED:
        target = work / name
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(
            ROOT / name, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]
    table = dict(tool["mutmut"])
    table["only_mutate"] = [f"acpgen/{package}/*"]
    table["pytest_add_cli_args_test_selection"] = PACKAGES[package]
    text = ""
    for name, values in (
        ("mutmut", table),
        ("pytest.ini_options", tool["pytest"]["ini_options"]),
    ):
        text += f"[tool.{name}]\n"
        text += "".join(f"{key} = {_toml_value(v)}\n" for key, v in values.items())
    (work / "pyproject.toml").write_text(text)
    return work


def main(argv: list[str]) -> int:
    package = argv[0] if argv else "normalise"
    if package not in PACKAGES:
        print(
            f"PKG must be one of {', '.join(PACKAGES)}, not {package!r}",
            file=sys.stderr,
        )
        return 2
    minutes = float(os.environ.get("MINUTES", "30"))
    children = os.environ.get("CHILDREN", "1")
    only = os.environ.get("ONLY", "")  # modules of the package: ONLY=exclusive,types
    names = [f"acpgen.{package}.{m}.*" for m in only.split(",") if m]
    work = prepare(package)
    mutmut = str(Path(sys.executable).parent / "mutmut")
    env = dict(
        os.environ,
        ACPGEN_SHARED=os.environ.get("ACPGEN_SHARED", str(ROOT.parent / "shared")),
    )
    # its own process group, so that the time limit stops mutmut and every child it forked
    run = subprocess.Popen(
        [mutmut, "run", "--max-children", children, *names],
        cwd=work,
        env=env,
        start_new_session=True,
    )
    try:
        run.wait(timeout=minutes * 60)
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGTERM)
        run.wait()
        print(f"stopped after {minutes:g} minutes; run again to go on where it stopped")
    except KeyboardInterrupt:
        os.killpg(run.pid, signal.SIGTERM)
        run.wait()
        raise
    subprocess.run([mutmut, "results"], cwd=work, env=env, check=False)
    every = subprocess.run(
        [mutmut, "results", "--all", "true"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    print(kill_rates(every.stdout))
    return 0


def kill_rates(results: str) -> str:
    """A table per module from ``mutmut results --all true``: mutants, killed (a test
    failed or timed out), survived, not tested yet, and the kill rate of those tested.
    """
    counts: dict[str, dict[str, int]] = {}
    for row in results.splitlines():
        name, sep, status = row.strip().rpartition(": ")
        if not sep or "__mutmut_" not in name:
            continue
        module = name.split(".x", 1)[0]
        status = "killed" if status in ("killed", "timeout") else status
        counts.setdefault(module, {}).setdefault(status, 0)
        counts[module][status] += 1
    lines = [
        f"{'module':40} {'mutants':>8} {'killed':>7} {'survived':>9} {'untested':>9} {'rate':>7}"
    ]
    for module, c in sorted(counts.items()):
        total = sum(c.values())
        killed, survived = c.get("killed", 0), c.get("survived", 0)
        tested = total - c.get("not checked", 0)
        rate = f"{100 * killed / tested:.1f}%" if tested else "-"
        lines.append(
            f"{module:40} {total:8} {killed:7} {survived:9} {total - tested:9} {rate:>7}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
