"""Vendoring: the generated package under another import path (``--package`` / ``package =``),
written at the matching place under ``out``, imported from wherever it sits, with a
``py.typed`` marker; and a throwaway project that vendors each style, built into a wheel,
pip-installed into a fresh virtual environment, imported and type-checked from outside."""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from acpgen.cli import app
from acpgen.config import load_config
from acpgen.errors import AcpgenError
from acpgen.render import STYLES

ROOT = Path(__file__).resolve().parent.parent
RELEASE = ROOT / "schemas" / "acp" / "v0.1.3"
SAMPLES = Path(__file__).parent / "typecheck"
PACKAGE = "myagent._vendor.acp"
runner = CliRunner()


def build(out: Path, style: str, *extra: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["build", "--schema", str(RELEASE), "--out", str(out), "--style", style, "--package", PACKAGE, *extra])


@pytest.mark.parametrize("style", ["pydantic", "dataclasses", "typeddict"])
def test_vendored_package_sits_at_its_import_path(tmp_path: Path, style: str) -> None:
    src = tmp_path / "src"
    (src / "myagent").mkdir(parents=True)
    (src / "myagent" / "__init__.py").write_text("# the user's own package\n")
    (src / "myagent" / "agent.py").write_text("AGENT = 1\n")
    result = build(src, style)
    assert result.exit_code == 0, result.output
    package = src / "myagent" / "_vendor" / "acp"
    runtime = ["_alternatives", "_channel", "_connection", "_frames", "_http_client", "_http_server", "_http_wire", "_curl_wire", "_incoming", "_jsonrpc", "_lines", "_remote", "_remote_client", "_remote_server", "_router", "_runtime", "_session_state", "_sessions", "_skim", "_telemetry", "_tool_calls", "_transports", "_versions", "_websocket", "_ws_client"]
    runtime += ["_codec", "_unions"] if style == "pydantic" else []
    runtime += ["_dataclass_specs"] if style == "dataclasses" else []
    assert sorted(p.name for p in package.iterdir()) == sorted(
        ["__init__.py", *(f"{r}.py" for r in runtime), "acpgen-manifest.json", "py.typed", "v1.py"]
    )  # fmt: skip
    manifest = json.loads((package / "acpgen-manifest.json").read_text())
    assert {f["module"] for f in manifest["files"] if "module" in f} == {
        PACKAGE, *(f"{PACKAGE}.{r}" for r in runtime), f"{PACKAGE}.v1"
    }  # fmt: skip
    for module in package.glob("*.py"):  # nothing imported by absolute name from each other
        text = module.read_text()
        assert "acp_" + style not in text and "import myagent" not in text and "from myagent" not in text
    # the user's files are untouched, a second build changes nothing, check agrees
    assert (src / "myagent" / "agent.py").read_text() == "AGENT = 1\n"
    before = {p: p.read_bytes() for p in package.iterdir()}
    assert build(src, style).exit_code == 0
    assert {p: p.read_bytes() for p in package.iterdir()} == before
    checked = runner.invoke(app, ["check", "--schema", str(RELEASE), "--out", str(src), "--style", style, "--package", PACKAGE])
    assert checked.exit_code == 0, checked.output
    (package / "v1.py").write_text("# edited\n")
    assert runner.invoke(app, ["check", "--schema", str(RELEASE), "--out", str(src), "--style", style, "--package", PACKAGE]).exit_code == 1


def test_the_package_imports_at_any_depth(tmp_path: Path) -> None:
    for depth, name in ((0, "acp"), (3, "a.b.c.acp")):
        out = tmp_path / str(depth)
        assert runner.invoke(app, ["build", "--schema", str(RELEASE), "--out", str(out), "--package", name]).exit_code == 0
        code = f"import {name} as p; from {name} import v1; print(p.MODULES, v1.RPC.parse('{{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{{\"sessionId\":\"s\"}}}}').method)"
        ran = subprocess.run([sys.executable, "-c", code], cwd=out, capture_output=True, text=True)
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout.strip() == "('v1',) session/cancel"


@pytest.mark.parametrize(
    "package,styles,message",
    [
        ("my-agent._acp", ["pydantic"], "dotted Python import path"),
        ("myagent.class", ["pydantic"], "'class' is a Python keyword"),
        ("myagent._acp", ["pydantic", "md"], "a vendored package is one Python style"),
        ("myagent._acp", ["mdx"], "a vendored package is one Python style"),
    ],
)
def test_a_bad_package_is_refused(tmp_path: Path, package: str, styles: list[str], message: str) -> None:
    config = tmp_path / "acpgen.toml"
    config.write_text(f'[[target]]\nschema = "s"\nout = "o"\nstyles = {json.dumps(styles)}\npackage = "{package}"\n')
    with pytest.raises(AcpgenError) as caught:
        load_config(config, STYLES)
    (problem,) = caught.value.diagnostics
    assert problem.code == "ACPG501" and problem.pointer == "/target/0/package" and message in problem.message
    result = runner.invoke(app, ["build", "--schema", str(RELEASE), "--out", str(tmp_path / "x"), "--package", package, *[a for s in styles for a in ("--style", s)]])
    assert result.exit_code == 2 and message in result.stderr and len(result.stderr.splitlines()) == 1


# ----------------------------------------------------------------------- installed


def _sample(style: str) -> str:
    name = "sample_typeddict.py" if style == "typeddict" else "sample_objects.py"
    return (SAMPLES / name).read_text().replace("PACKAGE", PACKAGE).replace("acp_typeddict", PACKAGE)


ROUND_TRIP = """
from {package} import Request, v1

line = '{{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{{"sessionId":"s-1","prompt":[{{"type":"text","text":"hi"}}]}}}}'
frame = v1.RPC.parse(line)
assert isinstance(frame, Request) and frame.method == "session/prompt"
assert json.loads(v1.RPC.encode(frame)) == json.loads(line)
{build}
print("ok", v1.__name__)
"""

BUILD = {
    "pydantic": 'reply = v1.PromptResponse(stop_reason="end_turn")\nassert reply.model_dump(by_alias=True, exclude_none=True) == {"stopReason": "end_turn"}',
    "dataclasses": 'reply = v1.PromptResponse(stop_reason="end_turn")\nassert v1.PromptResponse.__name__ == "PromptResponse" and reply.stop_reason == "end_turn"',
    "typeddict": 'reply: v1.PromptResponse = {"stopReason": "end_turn"}\nassert reply["stopReason"] == "end_turn"',
}


@pytest.fixture(scope="module")
def fresh_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment; acpgen's own environment lends it the runtime
    dependency (pydantic) through a .pth file, so nothing is downloaded."""
    env = tmp_path_factory.mktemp("venv") / "env"
    made = subprocess.run([sys.executable, "-m", "venv", str(env)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot make a virtual environment: {made.stderr.strip()[-200:]}")
    purelib = subprocess.run(
        [str(env / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    (Path(purelib) / "acpgen_deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    return env


@pytest.mark.parametrize("style", ["pydantic", "dataclasses", "typeddict"])
def test_vendored_into_a_project_installed_with_pip(tmp_path: Path, fresh_env: Path, style: str) -> None:
    project = tmp_path / "project"
    src = project / "src"
    (src / "myagent" / "_vendor").mkdir(parents=True)
    (src / "myagent" / "__init__.py").write_text("")
    (src / "myagent" / "_vendor" / "__init__.py").write_text("")
    (project / "pyproject.toml").write_text(
        textwrap.dedent(
            f"""
            [build-system]
            requires = ["hatchling>=1.25"]
            build-backend = "hatchling.build"

            [project]
            name = "myagent-{style}"
            version = "0.1"
            dependencies = ["pydantic>=2"]

            [tool.hatch.build.targets.wheel]
            packages = ["src/myagent"]
            """
        )
    )
    assert build(src, style).exit_code == 0
    python = fresh_env / "bin" / "python"
    # pip builds the project (its build backend, hatchling, from the configured index, as
    # `make install` gets acpgen's) and installs it; pydantic comes through the .pth
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(project)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr[-2000:]
    # from elsewhere: the package comes from site-packages, not from the project
    away = tmp_path / "elsewhere"
    away.mkdir()
    script = away / "use.py"
    script.write_text("import json\n" + ROUND_TRIP.format(package=PACKAGE, build=BUILD[style]))
    ran = subprocess.run([str(python), str(script)], cwd=away, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ""})
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stdout.strip() == f"ok {PACKAGE}.v1"
    # a consumer module type-checks against the installed package (py.typed), both checkers
    consumer = away / "consumer.py"
    consumer.write_text(_sample(style))
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-executable", str(python), str(consumer)],
        cwd=away, capture_output=True, text=True,
    )  # fmt: skip
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr
    pyright = Path(sys.executable).parent / "pyright"
    if pyright.exists() and shutil.which("node"):
        (away / "pyrightconfig.json").write_text('{"pythonVersion": "3.11"}')
        checked = subprocess.run([str(pyright), "--pythonpath", str(python), str(consumer)], cwd=away, capture_output=True, text=True)
        assert "0 errors" in checked.stdout, checked.stdout[-3000:]
    # without the marker, mypy would not read the installed package at all
    site_pkg = subprocess.run([str(python), "-c", f"import {PACKAGE} as p; print(p.__file__)"], cwd=away, capture_output=True, text=True, check=True)
    assert "site-packages" in site_pkg.stdout and (Path(site_pkg.stdout.strip()).parent / "py.typed").is_file()
