"""Configuration: ``acpgen.toml`` or ``[tool.acpgen]`` in ``pyproject.toml``.

```toml
[[target]]
name = "v0.1.3"                       # free text, shown in messages
schema = "schemas/acp/v0.1.3"         # a schema file or a release directory
styles = ["pydantic"]
out = "generated/v0.1.3"
# package = "myagent._acp"           # vendored: written to out/myagent/_acp/ (one Python style)

[naming]                              # reviewed overrides, each with a reason
"ContentBlock#text" = { name = "TextBlock", reason = "matches the SDK's public name" }

[keywords]
# a keyword that constrains validity and that acpgen does not implement is an error
# (ACPG209); "warn" builds anyway, prints each one, and the bindings do not enforce it
unimplemented = "error"
```
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acpgen.errors import AcpgenError, Diagnostic, did_you_mean
from acpgen.locate import is_remote, locate_overlay, locate_schema
from acpgen.naming import Override
from acpgen.source import display_path

DEFAULT_STYLES = ("pydantic",)


PYTHON_STYLES = ("pydantic", "dataclasses", "typeddict")
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


@dataclass(frozen=True)
class Target:
    name: str
    schema: Path
    out: Path
    styles: tuple[str, ...] = DEFAULT_STYLES
    overlays: tuple[Path, ...] = ()
    #: the import path of the generated package (``myagent._acp``) when it is vendored into
    #: another package: written to ``out/myagent/_acp/``, which is all acpgen then owns
    package: str | None = None
    #: a remote schema (``https://...``, ``acp@<tag>``): ``schema`` is its local copy once
    #: ``api.resolve_sources`` has fetched it
    remote: str | None = None
    #: the releases whose history the reference pages mark (paths relative to the config,
    #: directories of release folders, ``bundled:``, ``acp@<tag>``, URLs), oldest first
    history: tuple[str, ...] = ()
    #: remote history spec -> its local copy, once ``api.resolve_sources`` has fetched it
    fetched_history: tuple[tuple[str, Path], ...] = ()

    @property
    def root(self) -> Path:
        """The directory acpgen owns and swaps whole: ``out``, or the vendored package's."""
        return self.out.joinpath(*self.package.split(".")) if self.package else self.out


def package_problem(package: object, styles: tuple[str, ...]) -> str | None:
    """Why ``package`` cannot name a target's generated package, or None."""
    import keyword

    if not isinstance(package, str) or not _DOTTED.match(package):
        return f"package must be a dotted Python import path such as 'myagent._acp', not {package!r}"
    reserved = [p for p in package.split(".") if keyword.iskeyword(p)]
    if reserved:
        return f"package {package!r}: {reserved[0]!r} is a Python keyword"
    if len(styles) != 1 or styles[0] not in PYTHON_STYLES:
        return (
            f"a vendored package is one Python style ({', '.join(PYTHON_STYLES)}), not {', '.join(styles)}: "
            "give the docs and other styles targets of their own"
        )
    return None


@dataclass(frozen=True)
class Fetch:
    """``[fetch]``: where ``acp@<tag>`` is read from, and how long to wait."""

    upstream: str = ""
    timeout: float = 30.0


@dataclass(frozen=True)
class Config:
    root: Path
    targets: tuple[Target, ...]
    naming: dict[str, Override] = field(default_factory=dict)
    source: str = ""
    #: ``[keywords] unimplemented``: "error" (ACPG209) or "warn" (built, not enforced)
    unimplemented: str = "error"
    fetch: Fetch = field(default_factory=Fetch)

    @property
    def lock_path(self) -> Path:
        """``acpgen.lock``, next to the config (in the working directory without one)."""
        return self.root / "acpgen.lock"


def find_config(start: Path) -> Path | None:
    for directory in [start, *start.parents]:
        candidate = directory / "acpgen.toml"
        if candidate.is_file():
            return candidate
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file():
            try:
                data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, OSError):
                continue
            if "acpgen" in data.get("tool", {}):
                return pyproject
    return None


def load_config(path: Path, known_styles: tuple[str, ...]) -> Config:
    name = display_path(path)

    def err(message: str, pointer: str = "") -> AcpgenError:
        return AcpgenError([Diagnostic("ACPG501", message, name, pointer)])

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise err("configuration file does not exist")
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"^(.*) \(at line (\d+), column (\d+)\)$", str(exc))
        if found is None:
            raise err(f"invalid TOML: {exc}")
        line, col = int(found.group(2)), int(found.group(3))
        raise AcpgenError([Diagnostic("ACPG501", f"invalid TOML: {found.group(1)}", name, "", line, col)])
    if path.name == "pyproject.toml":
        data = data.get("tool", {}).get("acpgen")
        if not isinstance(data, dict):
            raise err("no [tool.acpgen] table")
    root = path.parent
    problems: list[Diagnostic] = []
    targets: list[Target] = []
    tables = ("target", "naming", "keywords", "diff", "fetch")
    for key in sorted(set(data) - set(tables)):
        hint = "; did you mean [[target]]?" if key == "targets" else did_you_mean(key, tables)
        problems.append(Diagnostic("ACPG501", f"unknown key {key!r}{hint}", name, "/" + key))
    raw_targets = data.get("target", [])
    if not isinstance(raw_targets, list) or not raw_targets:
        problems.append(Diagnostic("ACPG501", "declare at least one [[target]] with schema and out", name, "/target"))
        raise AcpgenError(problems)
    for i, t in enumerate(raw_targets):
        at = f"/target/{i}"
        if not isinstance(t, dict):
            problems.append(Diagnostic("ACPG501", "a target must be a table", name, at))
            continue
        target_keys = ("name", "schema", "out", "styles", "overlays", "package", "history")
        unknown = sorted(set(t) - set(target_keys))
        if unknown:
            hint = did_you_mean(unknown[0], target_keys) if len(unknown) == 1 else ""
            problems.append(Diagnostic("ACPG501", f"unknown key(s) {', '.join(unknown)}{hint}", name, at))
        schema, out = t.get("schema"), t.get("out")
        if not isinstance(schema, str) or not isinstance(out, str):
            problems.append(Diagnostic("ACPG501", "schema and out must be strings", name, at))
            continue
        styles = t.get("styles", list(DEFAULT_STYLES))
        unknown_styles = [s for s in styles if s not in known_styles] if isinstance(styles, list) else []
        if not isinstance(styles, list) or not styles or unknown_styles:
            hint = did_you_mean(unknown_styles[0], known_styles) if len(unknown_styles) == 1 else ""
            which = f"unknown style(s) {', '.join(map(repr, unknown_styles))}; " if unknown_styles else ""
            message = f"{which}styles must be a non-empty list of {', '.join(known_styles)}{hint}"
            problems.append(Diagnostic("ACPG501", message, name, at + "/styles"))
            continue
        overlays = t.get("overlays", [])
        if not isinstance(overlays, list) or not all(isinstance(o, str) for o in overlays):
            problems.append(Diagnostic("ACPG501", "overlays must be a list of paths", name, at + "/overlays"))
            continue
        history = t.get("history", [])
        history = [history] if isinstance(history, str) else history
        if not isinstance(history, list) or not all(isinstance(h, str) for h in history):
            problems.append(Diagnostic("ACPG501", "history must be a path or a list of release specs", name, at + "/history"))
            continue
        package = t.get("package")
        if package is not None:
            why = package_problem(package, tuple(dict.fromkeys(styles)))
            if why:
                problems.append(Diagnostic("ACPG501", why, name, at + "/package"))
                continue
        remote = schema if is_remote(schema) else None
        try:
            local = Path() if remote else locate_schema(schema, root)
            located = tuple(locate_overlay(o, root) for o in overlays)
        except AcpgenError as exc:
            problems.extend(Diagnostic(d.code, d.message, name, at) for d in exc.diagnostics)
            continue
        targets.append(
            Target(
                name=str(t.get("name", schema)),
                schema=local,
                out=root / out,
                styles=tuple(dict.fromkeys(styles)),
                overlays=located,
                package=package,
                remote=remote,
                history=tuple(history),
            )
        )
    outs: dict[Path, int] = {}
    for i, t in enumerate(targets):
        first = outs.setdefault(t.root.resolve(), i)
        if first != i:
            message = f"target {i} writes to the same out as target {first}"
            problems.append(Diagnostic("ACPG501", message, name, f"/target/{i}/out"))
    from keyword import iskeyword

    naming: dict[str, Override] = {}
    raw_naming = data.get("naming", {})
    if not isinstance(raw_naming, dict):
        problems.append(Diagnostic("ACPG501", "[naming] must be a table", name, "/naming"))
        raw_naming = {}
    for key, entry in sorted(raw_naming.items()):
        ok = isinstance(entry, dict) and isinstance(entry.get("name"), str) and entry["name"].isidentifier()
        ok = ok and not iskeyword(entry["name"])  # `None`, `class`: no class or attribute can have it
        if not ok or not isinstance(entry.get("reason"), str) or not entry["reason"].strip():
            problems.append(
                Diagnostic(
                    "ACPG302",
                    "a naming override needs an identifier `name` (not a Python keyword) and a non-empty `reason`",
                    name,
                    "/naming/" + key,
                )
            )
            continue
        naming[key] = Override(entry["name"], entry["reason"])
    keywords = data.get("keywords", {})
    unimplemented = keywords.get("unimplemented", "error") if isinstance(keywords, dict) else None
    if not isinstance(keywords, dict) or set(keywords) - {"unimplemented"} or unimplemented not in ("error", "warn"):
        problems.append(Diagnostic("ACPG501", '[keywords] takes unimplemented = "error" or "warn"', name, "/keywords"))
    fetch = data.get("fetch", {})
    upstream, timeout = (fetch.get("upstream", ""), fetch.get("timeout", 30.0)) if isinstance(fetch, dict) else (None, None)
    if (
        not isinstance(fetch, dict)
        or set(fetch) - {"upstream", "timeout"}
        or not isinstance(upstream, str)
        or not isinstance(timeout, (int, float))
        or timeout <= 0
    ):
        problems.append(
            Diagnostic("ACPG501", "[fetch] takes upstream (a base URL) and timeout (seconds, > 0)", name, "/fetch")
        )
        upstream, timeout = "", 30.0
    if problems:
        raise AcpgenError(problems)
    return Config(root, tuple(targets), naming, name, str(unimplemented), Fetch(str(upstream), float(timeout)))


def single_target(schema: Path, out: Path, styles: tuple[str, ...]) -> Config:
    return Config(Path.cwd(), (Target(str(schema), schema, out, styles),))


