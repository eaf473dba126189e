"""Mutation testing of one package with mutmut: ``make mutate PKG=normalise``.

mutmut reads one ``[tool.mutmut]`` table from the ``pyproject.toml`` of the directory it
runs in, so each package gets its own scratch directory, ``.mutate/<package>/``: a copy of
the sources, templates, schemas and tests, and a ``pyproject.toml`` whose table is the
project's ``[tool.mutmut]`` with ``only_mutate`` and the tests of that package (the tests
that mirror it, listed below). Results stay there between runs, so a run cut short by
``MINUTES`` (30 by default) goes on where it stopped when started again, as long as no
source or test changed (then the results are dropped and the run starts over).
``ONLY=<module>[,<module>...]`` narrows a run to some modules of the package (``__init__``
for its ``__init__.py``);
``CHILDREN`` (1 by default) is the number of mutants tested at once. A developer tool:
``make test`` never runs it. See docs/project/mutation.md.

The runtime (``PKG=runtime``): ``acpgen build`` copies each runtime module into the package
it writes, and the tests of the connection import those copies under the package's name.
mutmut switches a mutant on only in functions whose ``__module__`` is the module it was
made in (``acpgen.runtime.<module>``), so in the copies every mutant would stay off. In
the scratch copy only, ``acpgen/render/__init__.py`` gets ``RUNTIME_COPIES`` at its end: its
``render_package_runtime`` hands out each mutated module with mutmut's import of its
trampoline replaced by one that names every function of the copy ``acpgen.runtime.<module>``
(the module the file was copied from; the module itself keeps its own ``__name__``, and its
classes their ``__module__``). A mutant is then on in every copy of its module, in this
process and in an agent process it spawns; which tests reach a function is recorded
under that name too. Sources and tests are unchanged, and so is a run of ``make test``.
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
        "tests/diff/test_dataflow.py",
        "tests/diff/test_diff_releases.py",
        "tests/diff/test_renames.py",
    ],
    "runtime": [
        "tests/runtime/test_connection.py",
        "tests/runtime/test_connection_ends.py",
        "tests/runtime/test_connection_observers.py",
        "tests/runtime/test_connection_parts.py",
        "tests/runtime/test_frames.py",
        "tests/runtime/test_incoming.py",
        "tests/runtime/test_incoming_parts.py",
        "tests/runtime/test_jsonrpc.py",
        "tests/runtime/test_skim.py",
        "tests/runtime/test_batches.py",
        "tests/runtime/test_transports.py",
        "tests/runtime/test_transports_parts.py",
        "tests/runtime/test_telemetry.py",
        "tests/runtime/test_versions.py",
        "tests/runtime/test_sessions.py",
        "tests/runtime/test_connection_sessions.py",
        "tests/runtime/test_session_state.py",
        "tests/runtime/test_tool_calls.py",
        "tests/runtime/test_lines.py",
        "tests/runtime/test_channel.py",
        "tests/runtime/test_router.py",
        "tests/runtime/test_alternatives.py",
        "tests/runtime/test_codec_pydantic.py",
        "tests/runtime/test_unions_pydantic.py",
        "tests/runtime/test_runtime_pydantic.py",
        "tests/runtime/test_runtime_typeddict.py",
        "tests/runtime/test_dataclass_specs.py",
        "tests/runtime/test_runtime_dataclasses.py",
        "tests/runtime/remote/test_http_server.py",
        "tests/runtime/remote/test_remote_server.py",
        "tests/runtime/remote/test_remote_client.py",
    ],
}
COPIED = ("acpgen", "templates", "schemas", "tests")

# package -> tests of its files left out: they fail under mutmut whatever the mutant (this
# one imports a generated package by its path in another process, and under mutmut that
# package's directory is gone by then)
DESELECTED: dict[str, list[str]] = {
    "runtime": [
        "tests/runtime/test_telemetry.py::test_nothing_of_opentelemetry_is_imported_unless_asked"
    ],
}

#: the line mutmut puts in each module it mutated, before the first function
TRAMPOLINE = "from mutmut.mutation.trampoline import wrap_in_trampoline as _mutmut_mutated, MutantDict\n"

#: appended to the scratch copy of acpgen/render/__init__.py for PKG=runtime (see above)
RUNTIME_COPIES = '''

# --- added by tools/mutate.py, in the scratch copy only -------------------------------
# A copy of a mutated runtime module names its functions after the module it was copied
# from, so that mutmut switches the mutant on there too.
import dataclasses as _mutmut_dataclasses

_MUTMUT_TRAMPOLINE = {trampoline!r}
_MUTMUT_SHIM = """from mutmut.mutation.trampoline import wrap_in_trampoline as _mutmut_wrap, MutantDict
_mutmut_dicts = []


def _mutmut_mutated(mutants, *args, **kwargs):
    _mutmut_dicts.append(mutants)
    wrap = _mutmut_wrap(mutants, *args, **kwargs)

    def named(function):
        function.__module__ = {{name!r}}
        return wrap(function)

    return named
"""
_MUTMUT_TAIL = """

for _mutmut_dict in _mutmut_dicts:
    for _mutmut_function in _mutmut_dict.values():
        getattr(_mutmut_function, "__func__", _mutmut_function).__module__ = {{name!r}}
"""
_mutmut_render_package_runtime = render_package_runtime


def render_package_runtime(style: str, vendored: str | None = None) -> list[RenderedFile]:
    sources = dict(runtime.package_files(style))
    out = []
    for rendered in _mutmut_render_package_runtime(style, vendored):
        source = sources.get(rendered.path.name)
        if source is not None and _MUTMUT_TRAMPOLINE in rendered.text:
            name = "acpgen.runtime." + source.stem
            text = rendered.text.replace(
                _MUTMUT_TRAMPOLINE, _MUTMUT_SHIM.format(name=name), 1
            ) + _MUTMUT_TAIL.format(name=name)
            rendered = _mutmut_dataclasses.replace(rendered, text=text)
        elif source is not None and "_mutmut_mutated(" in rendered.text:
            # mutmut changed the line it imports its trampoline with: fail, rather than
            # leave every mutant of the copies off (see tools/mutate.py)
            raise RuntimeError(f"{{source}}: no {{_MUTMUT_TRAMPOLINE!r}} to replace")
        out.append(rendered)
    return out
'''.format(trampoline=TRAMPOLINE)


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
    # this file too: what it adds to the scratch copy (RUNTIME_COPIES) is an input
    for name in COPIED + ("pyproject.toml", "tools/mutate.py"):
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
    if package == "runtime":
        render = work / "acpgen" / "render" / "__init__.py"
        text = render.read_text()
        if "def render_package_runtime(" not in text:
            raise SystemExit(
                f"{render}: no render_package_runtime to wrap (see RUNTIME_COPIES)"
            )
        render.write_text(text + RUNTIME_COPIES)
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]
    table = dict(tool["mutmut"])
    table["only_mutate"] = [f"acpgen/{package}/*"]
    table["pytest_add_cli_args_test_selection"] = PACKAGES[package]
    for test in DESELECTED.get(package, []):
        table["pytest_add_cli_args"] = [
            *table.get("pytest_add_cli_args", []),
            "--deselect",
            test,
        ]
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
    names = [n for m in only.split(",") if m for n in _patterns(package, m)]
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


def _patterns(package: str, module: str) -> list[str]:
    """mutmut's names of the mutants of one module of the package. Those of its
    ``__init__.py`` are named after the package itself: ``acpgen.diff.x_release__mutmut_1``
    (a function), ``acpgen.diff.xǁReleaseǁlabel__mutmut_1`` (a method)."""
    if module == "__init__":
        return [f"acpgen.{package}.x_*", f"acpgen.{package}.xǁ*"]
    return [f"acpgen.{package}.{module}.*"]


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
