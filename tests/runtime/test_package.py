"""The runtime as it reaches a generated package: the real modules of acpgen.runtime under
the header, whose input hash changes with them."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from acpgen import runtime
from acpgen.header import package_header
from acpgen.render import env


def test_every_runtime_file_is_copied_for_every_style() -> None:
    for style in ("pydantic", "dataclasses", "typeddict"):
        names = [name for name, _ in runtime.package_files(style)]
        assert names[0] == "_runtime.py" and set(runtime.SHARED) <= set(names)
        assert len(set(names)) == len(names)
    # a style's other modules, under their name without the style
    assert ("_codec.py", runtime.RUNTIME_DIR / "_codec_pydantic.py") in runtime.package_files("pydantic")
    assert ("_unions.py", runtime.RUNTIME_DIR / "_unions_pydantic.py") in runtime.package_files("pydantic")
    assert "_codec.py" not in [name for name, _ in runtime.package_files("dataclasses")]
    # a module a style's runtime imports, under its own name (only in that style)
    assert ("_dataclass_specs.py", runtime.RUNTIME_DIR / "_dataclass_specs.py") in runtime.package_files("dataclasses")
    assert "_dataclass_specs.py" not in [name for name, _ in runtime.package_files("pydantic")]
    with pytest.raises(ValueError, match="^no runtime for style 'mdx'$"):
        runtime.package_files("mdx")


def test_the_header_hash_follows_the_runtime_source(monkeypatch: pytest.MonkeyPatch) -> None:
    before = package_header("pydantic", env.templates_digest("pydantic"))
    monkeypatch.setattr(env, "runtime_digest", lambda style: "changed")
    env.templates_digest.cache_clear()
    try:
        after = package_header("pydantic", env.templates_digest("pydantic"))
    finally:
        env.templates_digest.cache_clear()
    assert before != after


def test_the_runtime_modules_are_importable_as_source() -> None:
    """Type-checked by make typecheck and imported here as acpgen's own modules."""
    for name in ("_jsonrpc", "_frames", "_router", "_connection", "_incoming", "_lines", "_channel", "_remote", "_remote_server", "_remote_client", "_websocket", "_ws_client", "_http_server", "_http_client", "_http_wire", "_curl_wire", "_transports", "_skim", "_telemetry", "_session_state", "_sessions", "_tool_calls", "_versions", "_alternatives", "_runtime_pydantic", "_codec_pydantic", "_unions_pydantic", "_runtime_dataclasses", "_dataclass_specs", "_runtime_typeddict"):
        importlib.import_module(f"acpgen.runtime.{name}")


def test_the_runtime_source_is_black_clean() -> None:
    import black

    mode = black.Mode()
    for path in sorted(Path(runtime.RUNTIME_DIR).glob("_*.py")):
        text = path.read_text()
        assert black.format_str(text, mode=mode) == text, path.name


def test_the_runtime_source_passes_pyright() -> None:
    """pyright, as users' projects run it on the vendored package, on the source itself:
    no corpus needed to see a typing slip in the runtime."""
    import shutil
    import subprocess
    import sys

    pyright = Path(sys.executable).parent / "pyright"
    if not pyright.exists() or shutil.which("node") is None:
        pytest.skip("pyright (dev dependency) needs node, which is absent")
    files = sorted(str(p) for p in Path(runtime.RUNTIME_DIR).glob("_*.py"))
    done = subprocess.run([str(pyright), "--pythonpath", sys.executable, *files], capture_output=True, text=True)
    assert "0 errors" in done.stdout, done.stdout[-3000:]
