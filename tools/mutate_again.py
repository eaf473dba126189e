"""Run mutants again, against the current tests, in one pytest session:
``make mutate-again PKG=runtime MUTANTS='acpgen.runtime._router.*' TESTS='tests/runtime/test_jsonrpc.py'``.

``make mutate`` (``tools/mutate.py``) makes the mutants of a package in
``.mutate/<package>/mutants/`` and runs mutmut, which starts every test file of the package
once to learn which tests reach which function, and then a fresh test run per mutant.
When tests were written for the survivors, or for mutants mutmut has not reached, this is
the faster check: the current ``tests/`` are copied beside the mutants (the package's
sources must be the ones mutated: a changed one needs ``make mutate`` again), the tests named are
collected once, and each mutant is switched on in turn (mutmut's ``MUTANT_UNDER_TEST``) and
killed by the first test that fails with it. First every test runs with no mutant on:
one that fails then stops the run.

``MUTANTS`` is a pattern (``fnmatch``) over mutmut's names, or ``@file`` with one name a
line; by default only mutants that mutmut has not seen killed (survived, no tests, not
checked); ``ALL=1`` takes every one. ``K`` is passed to pytest's ``-k``. Writes one line a
mutant (``killed <name> <test>`` or ``survived <name>``) and the counts. mutmut's own
results are not changed: a kill rate in the docs says which figures come from here.
"""

from __future__ import annotations

import fcntl
import fnmatch
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NOT_KILLED = ("survived", "no tests", "not checked", "suspicious")


def pytest_runtestloop(session: Any) -> bool:
    """The pytest side (``-p mutate_again``): each mutant of ``$MUTATE_AGAIN_LIST`` in
    turn, the results appended to ``$MUTATE_AGAIN_OUT``."""
    from _pytest.runner import runtestprotocol

    def failed(item: Any) -> bool:
        reports = runtestprotocol(item, nextitem=None, log=False)
        return any(report.failed for report in reports)

    names = Path(os.environ["MUTATE_AGAIN_LIST"]).read_text().split()
    with open(os.environ["MUTATE_AGAIN_OUT"], "a") as out:
        os.environ["MUTANT_UNDER_TEST"] = ""
        broken = [item.nodeid for item in session.items if failed(item)]
        if broken:
            out.write("".join(f"baseline-failed {nodeid}\n" for nodeid in broken))
            return True
        for name in names:
            os.environ["MUTANT_UNDER_TEST"] = name
            killer = next((item.nodeid for item in session.items if failed(item)), None)
            out.write(f"killed {name} {killer}\n" if killer else f"survived {name}\n")
            out.flush()
    os.environ.pop("MUTANT_UNDER_TEST", None)
    return True


def _names(work: Path, mutants: str, every: bool) -> list[str]:
    if mutants.startswith("@"):
        return Path(mutants[1:]).read_text().split()
    mutmut = str(Path(sys.executable).parent / "mutmut")
    results = subprocess.run(
        [mutmut, "results", "--all", "true"],
        cwd=work,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return select(results, mutants, every)


def select(results: str, pattern: str, every: bool) -> list[str]:
    """The names in ``mutmut results --all true`` that match ``pattern``: those not seen
    killed, or ``every`` one."""
    names = []
    for row in results.splitlines():
        name, sep, status = row.strip().rpartition(": ")
        if sep and "__mutmut_" in name and fnmatch.fnmatchcase(name, pattern):
            if every or status in NOT_KILLED:
                names.append(name)
    return names


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not os.environ.get("MUTANTS") or not os.environ.get("TESTS"):
        print(
            "usage: make mutate-again PKG=<package> MUTANTS=<pattern or @file>"
            " TESTS='<test files>' [K=<pytest -k>] [ALL=1]",
            file=sys.stderr,
        )
        return 2
    work = ROOT / ".mutate" / argv[0]
    mutants = work / "mutants"
    if not (mutants / "acpgen").is_dir():
        print(f"{mutants}: no mutants; run make mutate PKG={argv[0]} first", file=sys.stderr)
        return 2
    for source in (ROOT / "acpgen" / argv[0]).rglob("*.py"):
        copy = work / source.relative_to(ROOT)
        if source == ROOT / "acpgen" / "render" / "__init__.py":
            continue  # tools/mutate.py extends it in the copy (PKG=runtime)
        if not copy.is_file() or copy.read_bytes() != source.read_bytes():
            print(
                f"{source.relative_to(ROOT)} changed since the mutants were made;"
                f" run make mutate PKG={argv[0]} MINUTES=0 first",
                file=sys.stderr,
            )
            return 2
    # one run at a time in a scratch directory: each copies tests/ beside the mutants
    lock = open(work / "again.lock", "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(f"another make mutate-again runs in {work}; wait for it", file=sys.stderr)
        return 2
    names = _names(work, os.environ["MUTANTS"], os.environ.get("ALL") == "1")
    if not names:
        print("no mutant matches", file=sys.stderr)
        return 2
    shutil.rmtree(mutants / "tests", ignore_errors=True)
    shutil.copytree(
        ROOT / "tests",
        mutants / "tests",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "node_modules"),
    )
    listed, out = work / f"again-{os.getpid()}.list", work / f"again-{os.getpid()}.out"
    listed.write_text("\n".join(names) + "\n")
    out.write_text("")
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(ROOT / "tools"), "."]),
        MUTATE_AGAIN_LIST=str(listed),
        MUTATE_AGAIN_OUT=str(out),
        ACPGEN_SHARED=os.environ.get("ACPGEN_SHARED", str(ROOT.parent / "shared")),
    )
    k = ["-k", os.environ["K"]] if os.environ.get("K") else []
    tests = os.environ["TESTS"].split()
    print(f"{len(names)} mutants against {' '.join(tests)}", flush=True)
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "mutate_again", "-p", "no:randomly",
         "-p", "no:cacheprovider", "--tb=no", *k, *tests],
        cwd=mutants,
        env=env,
        stdout=subprocess.DEVNULL,
        check=False,
    )  # fmt: skip
    rows = out.read_text().splitlines()
    listed.unlink()
    out.unlink()
    print("\n".join(rows))
    if any(row.startswith("baseline-failed") for row in rows):
        print("a test fails with no mutant on: nothing was run")
        return 1
    killed = sum(row.startswith("killed") for row in rows)
    print(f"killed {killed}, survived {len(rows) - killed}, of {len(names)}")
    return 0 if len(rows) == len(names) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
