from __future__ import annotations

import importlib.util
import itertools
import json
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from pydantic import TypeAdapter, ValidationError

from acpgen import api
from acpgen.config import Config, Target

FIXTURES = Path(__file__).parent / "fixtures"
SCHEMAS = FIXTURES / "schemas"
_counter = itertools.count()


def pytest_configure(config: pytest.Config) -> None:
    """``pytest --collect-only`` runs no test, so syrupy would count every snapshot unused
    and fail the run: there, unused snapshots only warn (a test run still fails on one)."""
    if config.getoption("collectonly", False):
        config.option.warn_unused_snapshots = True


def import_file(path: Path) -> ModuleType:
    """Import one generated module, with its package (whose runtime it imports
    relatively), under a unique package name each time (no sys.path games)."""
    package = f"_acpgen_test_{next(_counter)}"
    init = path.parent / "__init__.py"
    if not init.is_file():  # a lone module (the reference generator's output)
        spec = importlib.util.spec_from_file_location(package, path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[package] = module
        spec.loader.exec_module(module)
        return module
    spec = importlib.util.spec_from_file_location(package, init, submodule_search_locations=[str(path.parent)])
    assert spec and spec.loader
    parent = importlib.util.module_from_spec(spec)
    sys.modules[package] = parent
    spec.loader.exec_module(parent)
    return importlib.import_module(f"{package}.{path.stem}")


def npm_install(folder: Path, package: str, needed_by: str) -> None:
    """Install ``folder``'s pinned npm packages (its package.json and lock file) unless
    ``package`` is there already; skip, saying why, where node or the registry is missing."""
    import shutil
    import subprocess

    npm = shutil.which("npm")
    if not shutil.which("node") or not npm:
        pytest.skip(f"node/npm are absent: {needed_by} needs them")
    if (folder / "node_modules" / package / "package.json").is_file():
        return
    done = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode:
        pytest.skip(f"npm install of {package} failed (offline?): {done.stderr.strip()[:300]}")


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (relative POSIX path -> bytes), to compare whole outputs."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def parse_as(style: str, module: ModuleType, name: str, data: Any) -> tuple[bool, Any]:
    """Validate ``data`` as ``module.<name>`` in a binding style: (accepted, the wire JSON
    given back). A documented validation error is a rejection; anything else propagates."""
    tp = getattr(module, name)
    if style == "dataclasses":
        try:
            return True, module.dump(module.load(tp, data))
        except module.ValidationError:
            return False, None
    adapter: TypeAdapter[Any] = TypeAdapter(tp)
    try:
        value = adapter.validate_json(json.dumps(data))
    except ValidationError:
        return False, None
    if style == "pydantic":
        return True, adapter.dump_python(value, mode="json", by_alias=True, exclude_unset=True)
    return True, adapter.dump_python(value, mode="json")


_FIXTURE_MODULES: dict[tuple[str, str], ModuleType] = {}


def fixture_modules(fixture: str, root: Path, styles: tuple[str, ...] = ("pydantic", "dataclasses", "typeddict")) -> dict[str, ModuleType]:
    """The ``v1`` module of fixture schema ``fixture`` in each style, generated (under
    ``root``) and imported once per session."""
    missing = [s for s in styles if (fixture, s) not in _FIXTURE_MODULES]
    if missing:
        out = generate(SCHEMAS / fixture, root / fixture.removesuffix(".json"), tuple(missing))
        for style in missing:
            _FIXTURE_MODULES[(fixture, style)] = import_file(out / f"acp_{style}" / "v1.py")
    return {s: _FIXTURE_MODULES[(fixture, s)] for s in styles}


def generate(schema: Path, out: Path, styles: tuple[str, ...] = ("pydantic",), formatted: bool = True) -> Path:
    api.build(Config(Path.cwd(), (Target(str(schema), schema, out, styles),)), formatted)
    return out


@pytest.fixture(scope="session")
def pydantic_module(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    cache: dict[str, ModuleType] = {}

    def load(fixture: str, stem: str = "v1") -> ModuleType:
        if fixture not in cache:
            out = tmp_path_factory.mktemp(fixture.replace("/", "_"))
            generate(SCHEMAS / fixture, out)
            cache[fixture] = import_file(out / "acp_pydantic" / f"{stem}.py")
        return cache[fixture]

    return load


# Hypothesis budgets: `ci` sizes the property and fuzz tests for the normal suite;
# `make fuzz` selects `fuzz` (HYPOTHESIS_PROFILE=fuzz) for a long run.
settings.register_profile(
    "ci",
    max_examples=8,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
    print_blob=True,
)
settings.register_profile(
    "fuzz",
    max_examples=300,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    print_blob=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
