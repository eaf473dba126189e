"""Input stamps: an ``acpgen build`` that has nothing to do exits before the pipeline loads.

After every successful build the CLI records, in the cache directory, a stamp keyed by the
exact command line and working directory: a digest of every input the build read (config
file, schemas and release directories, overlays, acpgen's own code and templates, the
Python and black versions) and a digest of every output file it wrote. The next identical
command recomputes both digests with the standard library alone and, if nothing moved,
prints one "up to date" line per target and exits 0 without importing typer, jinja2 or black.
Any difference (an edited schema, a touched output, a new config file on the search path,
another acpgen) runs the real build. ``ACPGEN_CACHE_DIR=""`` turns stamps off.

The entry point (``acpgen.entry``) and the CLI use this module, which imports neither
(one direction: entry -> stamp, entry -> cli -> stamp); it never writes outside the cache
directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

#: bump when the stamp format or what it covers changes
FORMAT = 1
_PACKAGE = Path(__file__).resolve().parent
#: the command line, set by ``main`` only: builds run in-process (tests) record no stamp
ARGV: list[str] | None = None


def cache_base() -> Path | None:
    """acpgen's cache directory (stamps here, black's results in ``acpgen.format``)."""
    env = os.environ.get("ACPGEN_CACHE_DIR")
    if env == "":
        return None
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "acpgen"


def stamp_file(argv: list[str], cwd: Path) -> Path | None:
    base = cache_base()
    if base is None:
        return None
    key = hashlib.sha256(json.dumps([FORMAT, argv, str(cwd)]).encode()).hexdigest()
    return base / "stamps" / key


def config_candidates(cwd: Path) -> list[Path]:
    """Where ``acpgen build`` without --schema/--config looks for its configuration: a file
    appearing there later changes what the build reads."""
    out: list[Path] = []
    for d in (cwd, *cwd.parents):
        out += [d / "acpgen.toml", d / "pyproject.toml"]
    return out


def _tree_digest(h: "hashlib._Hash", path: Path) -> None:
    if path.is_file():
        h.update(b"F" + str(path).encode() + b"\0")
        h.update(path.read_bytes())
    elif path.is_dir():
        h.update(b"D" + str(path).encode() + b"\0")
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if not name.endswith(".pyc"):
                    _tree_digest(h, Path(root) / name)
    else:
        h.update(b"M" + str(path).encode() + b"\0")


def _tool_digest(h: "hashlib._Hash") -> None:
    """acpgen's code and templates, the interpreter, and the black that formats with it."""
    h.update(sys.version.encode())
    _tree_digest(h, _PACKAGE)
    templates = _PACKAGE.parent / "templates"
    if templates.is_dir():
        _tree_digest(h, templates)
    import importlib.util

    spec = importlib.util.find_spec("black")
    if spec is not None and spec.origin:
        st = os.stat(spec.origin)
        h.update(f"black {spec.origin} {st.st_size} {st.st_mtime_ns}".encode())


def inputs_digest(inputs: list[str]) -> str:
    h = hashlib.sha256()
    _tool_digest(h)
    for p in inputs:
        _tree_digest(h, Path(p))
    return h.hexdigest()


def outputs_digest(outs: list[str]) -> str:
    h = hashlib.sha256()
    for p in outs:
        _tree_digest(h, Path(p))
    return h.hexdigest()


def up_to_date(argv: list[str], cwd: Path) -> list[str] | None:
    """One line per target of the recorded build, when nothing it read or wrote changed."""
    path = stamp_file(argv, cwd)
    if path is None or not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        if record.get("format") != FORMAT:
            return None
        if inputs_digest(record["inputs"]) != record["inputs_sha256"]:
            return None
        if outputs_digest(record["outputs"]) != record["outputs_sha256"]:
            return None
        return [f"{name}: up to date ({count} files in {out})" for name, count, out in record["targets"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def record(argv: list[str], cwd: Path, inputs: list[str], targets: list[tuple[str, int, str]]) -> None:
    """Remember a successful build (best effort: a cache that cannot be written is only slower)."""
    path = stamp_file(argv, cwd)
    if path is None:
        return
    absolute = sorted({str(Path(p).resolve()) for p in inputs} | {str(p.resolve()) for p in config_candidates(cwd)})
    outs = sorted({str(Path(out).resolve()) for _, _, out in targets})
    data = {
        "format": FORMAT,
        "inputs": absolute,
        "inputs_sha256": inputs_digest(absolute),
        "outputs": outs,
        "outputs_sha256": outputs_digest(outs),
        "targets": [list(t) for t in targets],
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass
