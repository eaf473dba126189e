from __future__ import annotations

import importlib.util
import itertools
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, settings

from acpgen import api
from acpgen.config import Config, Target

FIXTURES = Path(__file__).parent / "fixtures"
SCHEMAS = FIXTURES / "schemas"
_counter = itertools.count()


def import_file(path: Path) -> ModuleType:
    """Import one generated module under a unique name (no sys.path games)."""
    name = f"_acpgen_test_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


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
