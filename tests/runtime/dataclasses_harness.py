"""What the tests of the dataclasses runtime share: ``dataclasses_fixture.json`` (a def per
kind of spec) generated in the dataclasses style, imported twice: as shipped (each spec
compiled on first use) and with the compiler off (each spec's interpreter). ``load``,
``fails`` and ``dumps`` require the same outcome from both."""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ..conftest import generate, import_file

FIXTURE = Path(__file__).parent / "dataclasses_fixture.json"
_PAIRS: dict[Path, tuple[ModuleType, ModuleType]] = {}
_COUNT = itertools.count()


def interpreted(module: ModuleType) -> ModuleType:
    """Switch the compiler off in this module: every spec runs its interpreter."""
    runtime = sys.modules[module.__package__ + "._runtime"]
    runtime._Obj.decode = runtime._Obj.interpret
    runtime._Tagged.decode = runtime._Tagged.interpret
    runtime._Obj.encode = runtime._Obj.interpret_encode
    runtime._COMPILER.entry = lambda spec: spec.decode
    return module


def fresh(module: ModuleType) -> ModuleType:
    """``module`` run again in its package, with a new compiler: its specs built and
    compiled anew (importing the whole package again is slow)."""
    runtime = sys.modules[module.__package__ + "._runtime"]
    entry = runtime._COMPILER.__dict__.get("entry")
    runtime._COMPILER = runtime._Compiler()
    if entry is not None:
        runtime._COMPILER.entry = entry
    name = f"{module.__package__}.v1_{next(_COUNT)}"
    spec = importlib.util.spec_from_file_location(name, module.__file__)
    assert spec is not None and spec.loader is not None
    again = importlib.util.module_from_spec(spec)
    sys.modules[name] = again
    spec.loader.exec_module(again)
    return again


def pair(tmp: pytest.TempPathFactory, schema: Path = FIXTURE) -> tuple[ModuleType, ModuleType]:
    """The module of ``schema`` (by default ``dataclasses_fixture.json``), compiled and
    interpreted: generated and imported once per session, its specs built afresh each
    time (see ``fresh``)."""
    if schema not in _PAIRS:
        out = generate(schema, tmp.mktemp("dcruntime"), ("dataclasses",), formatted=False)
        path = out / "acp_dataclasses" / "v1.py"
        _PAIRS[schema] = (import_file(path), interpreted(import_file(path)))
    compiled, interpreter = _PAIRS[schema]
    return fresh(compiled), fresh(interpreter)


def view(value: Any) -> Any:
    """A loaded value as plain data: objects by class name, members, ``_extra``, ``_present``."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        members = {f.name: view(getattr(value, f.name)) for f in dataclasses.fields(value) if not f.name.startswith("_")}
        return (type(value).__name__, members, value._extra, sorted(value._present))
    if isinstance(value, list):
        return [view(v) for v in value]
    if isinstance(value, dict):
        return {k: view(v) for k, v in value.items()}
    return (type(value).__name__, value)


def tp(m: ModuleType, name: str) -> Any:
    return getattr(m, name) if isinstance(name, str) else name


def load(ms: tuple[ModuleType, ModuleType], name: Any, data: Any) -> Any:
    """The value loaded as plain data (``view``), the same from both modules."""
    compiled, interpreter = (view(m.load(tp(m, name), data)) for m in ms)
    assert compiled == interpreter
    return compiled


def dumps(ms: tuple[ModuleType, ModuleType], name: Any, data: Any) -> Any:
    """``dump(load(...))``, the same from both modules (each dumped twice: the compiled
    encoder is built on first use)."""
    out = []
    for m in ms:
        value = m.load(tp(m, name), data)
        out += [m.dump(value), m.dump(value)]
    assert all(o == out[0] for o in out)
    return out[0]


def fails(ms: tuple[ModuleType, ModuleType], name: Any, data: Any) -> str:
    """The text of the ``ValidationError``, the same from both modules."""
    texts = []
    for m in ms:
        with pytest.raises(m.ValidationError) as info:
            m.load(tp(m, name), data)
        texts.append(str(info.value))
    assert texts[0] == texts[1]
    return texts[0]
