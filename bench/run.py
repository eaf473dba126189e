"""acpgen's benchmark: every figure side by side with its reference, in one run.

    make bench                      # or: .venv/bin/python bench/run.py [--runs 5] [--quick] [--remote]

Generation: ``acpgen build`` of upstream ``main`` v1 unstable in all five styles, cold (empty
formatter cache) and warm (nothing changed), against datamodel-code-generator writing only
Pydantic v2 for the same file with its default formatting; and the whole corpus (every
release, every schema file) once each, acpgen writing its Pydantic style.
Runtime: parse (``validate_json``) throughput of acpgen's Pydantic module against the
``agent-client-protocol`` package's ``acp.schema`` (PyPI, pinned; both honour
``x-deserialize-*``), generated from the same release (schema-v1.19.0 v1), on four message
sets both accept: the corpus messages and three sets drawn from the schema
(bench/messagesets.py: the smallest and the largest instances of every message type, and a
real-like mix), each side timed in turns with the other; on the corpus messages, dump
throughput; acpgen's dataclasses ``load`` (from parsed JSON, and with ``json.loads``
in front) and ``dump`` (to JSON values, and with ``json.dumps`` after); import time of each
generated module against ``acp.schema``; the connections end to end (bench/connection.py: a
prompt turn streaming 10,000 chunks, and the peak memory of a notification flood against a
stuck handler) against the SDK's ``AgentSideConnection``/``ClientSideConnection``.
Remote transports (bench/remote.py; ``--remote`` runs them alone, ``--quick`` leaves them
out): WebSocket, HTTP/1.1 + SSE and HTTP/2, the agent in a server process of its own, a
10,000-chunk prompt turn and 5,000 small requests, the server's memory per idle connection
and the connections held at a p99 of 100 ms, against the SDK's ``acp.http``/``acp.ws``
on the same server. Every figure is a median over ``--runs`` with its spread
(min-max), and a ratio to its reference. Results go to bench/results.json.

Nothing here is a test: no figure fails the suite.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("ACPGEN_SHARED") or ROOT.parent / "shared") / "corpus"  # as tests/corpus.py
ACP = CORPUS / "acp"
GEN_FILE = ACP / "main" / "v1" / "schema.unstable.json"
#: the release acp.schema 0.12.1 is generated from ("Schema ref: refs/tags/schema-v1.19.0")
RUNTIME_RELEASE = ACP / "schema-v1.19.0" / "v1" / "schema.json"
STYLES = ["pydantic", "dataclasses", "typeddict", "mdx", "md"]
BIN = Path(sys.executable).parent


def run(cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, env={**os.environ, **(env or {})}, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{done.stderr[-2000:]}")
    return elapsed


def stats(samples: list[float]) -> dict[str, Any]:
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples), "samples": samples}


def figure(name: str, ours: list[float], ref: list[float], unit: str, goal: str | None, higher_is_better: bool) -> dict[str, Any]:
    """One row; ``goal`` None for a figure the issue asks to measure but sets no goal for."""
    o, r = stats(ours), stats(ref)
    if r["median"] == 0:  # the reference could not do it at all (no connection held, say)
        ratio = math.inf if o["median"] > 0 else math.nan
    else:
        ratio = o["median"] / r["median"]
    met = None
    if goal is not None:
        limit = float(goal[2:].rstrip("x"))
        met = ratio >= limit if higher_is_better else ratio <= limit
    return {"name": name, "unit": unit, "acpgen": o, "reference": r, "ratio": ratio, "goal": goal, "met": met}


# ------------------------------------------------------------------------- generation


def acpgen_build(schema: Path, out: Path, cache: str, styles: list[str], extra: tuple[str, ...] = ()) -> float:
    args = [str(BIN / "python"), "-m", "acpgen", "build", "--schema", str(schema), "--out", str(out), *extra]
    for style in styles:
        args += ["--style", style]
    return run(args, env={"ACPGEN_CACHE_DIR": cache})


def dmcg(schema: Path, out: Path) -> float:
    return run(
        [
            str(BIN / "datamodel-codegen"),
            "--input", str(schema),
            "--input-file-type", "jsonschema",
            "--output-model-type", "pydantic_v2.BaseModel",
            "--output", str(out),
        ]
    )  # fmt: skip


def generation(runs: int, work: Path) -> list[dict[str, Any]]:
    cold, warm, ref = [], [], []
    for i in range(runs):
        cache = work / f"cache-{i}"
        out = work / f"gen-{i}"
        cold.append(acpgen_build(GEN_FILE, out, str(cache), STYLES))
        warm.append(acpgen_build(GEN_FILE, out, str(cache), STYLES))
        ref.append(dmcg(GEN_FILE, work / f"dmcg-{i}.py"))
    return [
        figure("generation, cold (main v1 unstable, 5 styles vs Pydantic only)", cold, ref, "s", "<=0.5x", False),
        figure("generation, warm (nothing changed)", warm, ref, "s", "<=0.05x", False),
    ]


def history_generation(runs: int, work: Path) -> dict[str, Any]:
    """The four reference pages of ``main`` (v1, v2, stable and unstable; ``md``) with
    history marks from every corpus release (and the two changes pages), against the same
    pages without a history. Each release is loaded once and each consecutive pair diffed
    once (issue #26: "within a few times a plain build")."""
    plain, marked = [], []
    for i in range(runs):
        cache = str(work / f"history-cache-{i}")
        plain.append(acpgen_build(ACP / "main", work / f"plain-{i}", cache, ["md"]))
        marked.append(acpgen_build(ACP / "main", work / f"marked-{i}", cache, ["md"], ("--history", str(ACP))))
    return figure(f"docs of main with history marks ({len(list(ACP.glob('*/v1')))} releases) vs without", marked, plain, "s", "<=5x", False)


def corpus_generation(work: Path) -> dict[str, Any]:
    files = sorted(p for p in ACP.rglob("schema*.json") if "docs" not in p.parts)
    ours, ref = [], []
    for i, schema in enumerate(files):
        ours.append(acpgen_build(schema, work / f"corpus-{i}", str(work / "corpus-cache"), ["pydantic"]))
        ref.append(dmcg(schema, work / f"corpus-dmcg-{i}.py"))
    total = {"files": len(files), "acpgen_s": sum(ours), "reference_s": sum(ref), "ratio": sum(ours) / sum(ref)}
    return {"name": "generation, whole corpus (Pydantic, cold cache)", **total, "goal": "<=0.5x", "met": total["ratio"] <= 0.5}


# ---------------------------------------------------------------------------- runtime


def load_module(path: Path, name: str) -> Any:
    """A generated module with its package (its runtime is imported relatively)."""
    import importlib

    spec = importlib.util.spec_from_file_location(name, path.parent / "__init__.py", submodule_search_locations=[str(path.parent)])
    assert spec and spec.loader
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    spec.loader.exec_module(package)
    return importlib.import_module(f"{name}.{path.stem}")


def messages(ours: Any, sdk: Any) -> list[tuple[str, bytes]]:
    from pydantic import TypeAdapter, ValidationError

    index = json.loads((CORPUS / "messages" / "MESSAGES.json").read_text())["messages"]
    out = []
    for m in index:
        name = m.get("type")
        if m["validation"]["status"] != "pass" or not name or not hasattr(ours, name) or not hasattr(sdk, name):
            continue
        raw = (CORPUS / "messages" / m["file"]).read_bytes()
        try:
            TypeAdapter(getattr(ours, name)).validate_json(raw)
            TypeAdapter(getattr(sdk, name)).validate_json(raw)
        except ValidationError:
            continue
        out.append((name, raw))
    return out


def throughput(fn: Callable[[], int], runs: int, min_time: float = 0.5) -> list[float]:
    """Messages per second, one sample per run (each run lasts at least ``min_time``)."""
    fn()  # warm-up: adapters and caches built
    samples = []
    for _ in range(runs):
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < min_time:
            count += fn()
        samples.append(count / (time.perf_counter() - start))
    return samples


def interleaved(ours: Callable[[], int], ref: Callable[[], int], runs: int, min_time: float = 0.5) -> tuple[list[float], list[float]]:
    """Messages per second of CPU time of both sides, measured in turns (ours first in one
    round, the reference first in the next), so that a busy spell of the machine falls on
    both; CPU time, not wall time: time spent waiting for a core is not counted."""
    ours(), ref()  # warm-up: adapters and caches built
    samples: tuple[list[float], list[float]] = ([], [])
    for i in range(runs):
        for side in (0, 1) if i % 2 == 0 else (1, 0):
            fn = (ours, ref)[side]
            count, start = 0, time.process_time()
            while time.process_time() - start < min_time:
                count += fn()
            samples[side].append(count / (time.process_time() - start))
    return samples


def message_sets(ours: Any, sdk: Any, corpus: list[tuple[str, bytes]]) -> dict[str, list[tuple[str, bytes]]]:
    """The corpus messages and the sets drawn from the release's schema (bench/messagesets.py)."""
    import messagesets
    from pydantic import TypeAdapter, ValidationError

    held: dict[tuple[int, str], Any] = {}

    def accepts(name: str, raw: bytes) -> bool:
        for module in (ours, sdk):
            if not hasattr(module, name):
                return False
            adapter = held.setdefault((id(module), name), TypeAdapter(getattr(module, name)))
            try:
                adapter.validate_json(raw)
            except ValidationError:
                return False
        return True

    root = json.loads(RUNTIME_RELEASE.read_text())
    sets = {"corpus": corpus}
    for name, size in zip(messagesets.SETS, (168, 168, 240)):
        sets[name] = messagesets.draw(name, root, ours, accepts, size)
    return sets


SET_NAMES = {
    "corpus": "messages",
    "small": "drawn, smallest of every type",
    "large": "drawn, largest of every type",
    "mixed": "drawn, real-like mix",
}


def parse_figures(runs: int, ours: Any, sdk: Any, cases: list[tuple[str, bytes]]) -> list[dict[str, Any]]:
    """``validate_json`` throughput on every message set, acpgen and acp.schema in turns."""
    from pydantic import TypeAdapter

    def adapters(module: Any, cases: list[tuple[str, bytes]]) -> list[tuple[Any, bytes]]:
        # one adapter per type, as an application holds them: acpgen's models build on
        # first use (defer_build), and pydantic gives every TypeAdapter of a model not yet
        # built a validator of its own, so one adapter per message would measure 132
        # copies of 23 validators competing for the CPU caches (acp.schema's adapters all
        # share their model's validator)
        held = {n: TypeAdapter(getattr(module, n)) for n in dict.fromkeys(n for n, _ in cases)}
        return [(held[n], raw) for n, raw in cases]

    def parse(adapters: list[tuple[Any, bytes]]) -> Callable[[], int]:
        def go() -> int:
            for ta, raw in adapters:
                ta.validate_json(raw)
            return len(adapters)

        return go

    figures = []
    for name, messages in message_sets(ours, sdk, cases).items():
        o, r = interleaved(parse(adapters(ours, messages)), parse(adapters(sdk, messages)), runs)
        size = sum(len(raw) for _, raw in messages) // len(messages)
        label = f"Pydantic parse, validate_json ({name}: {len(messages)} {SET_NAMES[name]}, {size:,} B each on average)"
        figures.append(figure(label, o, r, "msg/s", ">=1.8x", True))
    return figures


def runtime(runs: int, work: Path) -> list[dict[str, Any]]:
    from pydantic import TypeAdapter

    out = work / "runtime"
    acpgen_build(RUNTIME_RELEASE, out, str(work / "runtime-cache"), ["pydantic", "dataclasses", "typeddict"])
    ours = load_module(out / "acp_pydantic" / "v1.py", "bench_acpgen_pydantic")
    dc = load_module(out / "acp_dataclasses" / "v1.py", "bench_acpgen_dataclasses")
    import acp.schema as sdk

    cases = messages(ours, sdk)

    def adapters(module: Any) -> list[tuple[Any, bytes]]:
        # one adapter per type, as an application holds them: acpgen's models build on
        # first use (defer_build), and pydantic gives every TypeAdapter of a model not yet
        # built a validator of its own, so one adapter per message would measure 132
        # copies of 23 validators competing for the CPU caches (acp.schema's adapters all
        # share their model's validator)
        held = {n: TypeAdapter(getattr(module, n)) for n in dict.fromkeys(n for n, _ in cases)}
        return [(held[n], raw) for n, raw in cases]

    ours_ta, sdk_ta = adapters(ours), adapters(sdk)
    dc_cases = [(getattr(dc, n), raw) for n, raw in cases]
    dc_parsed = [(tp, json.loads(raw)) for tp, raw in dc_cases]

    def parse(adapters: list[tuple[Any, bytes]]) -> Callable[[], int]:
        def go() -> int:
            for ta, raw in adapters:
                ta.validate_json(raw)
            return len(adapters)

        return go

    def dumper(adapters: list[tuple[Any, bytes]]) -> Callable[[], int]:
        values = [(ta, ta.validate_json(raw)) for ta, raw in adapters]

        def go() -> int:
            for ta, value in values:
                ta.dump_json(value, by_alias=True, exclude_unset=True)
            return len(values)

        return go

    def dc_load() -> int:
        for tp, data in dc_parsed:
            dc.load(tp, data)
        return len(dc_parsed)

    def dc_load_json() -> int:
        for tp, raw in dc_cases:
            dc.load(tp, json.loads(raw))
        return len(dc_cases)

    dc_values = [dc.load(tp, data) for tp, data in dc_parsed]

    def dc_dump() -> int:
        for value in dc_values:
            dc.dump(value)
        return len(dc_values)

    def dc_dump_json() -> int:
        for value in dc_values:
            json.dumps(dc.dump(value))
        return len(dc_values)

    sdk_parse, sdk_dump = throughput(parse(sdk_ta), runs), throughput(dumper(sdk_ta), runs)
    figures = parse_figures(runs, ours, sdk, cases) + [
        figure("Pydantic dump, dump_json", throughput(dumper(ours_ta), runs), sdk_dump, "msg/s", None, True),
        figure("dataclasses load (parsed JSON) vs acp.schema parse", throughput(dc_load, runs), sdk_parse, "msg/s", ">=1.0x", True),
        figure("dataclasses json.loads + load vs acp.schema parse", throughput(dc_load_json, runs), sdk_parse, "msg/s", ">=1.0x", True),
        figure("dataclasses dump (to JSON values) vs acp.schema dump", throughput(dc_dump, runs), sdk_dump, "msg/s", None, True),
        figure("dataclasses dump + json.dumps vs acp.schema dump", throughput(dc_dump_json, runs), sdk_dump, "msg/s", None, True),
    ]
    import connection  # bench/connection.py: the connections end to end

    return figures + frames(runs, ours, dc, sdk, cases) + connection.figures(runs, ours, figure) + imports(runs, out)


def remote_transports(runs: int, work: Path, stdio: bool) -> list[dict[str, Any]]:
    """bench/remote.py's rows; with ``stdio``, the connection rows over a socket pair first
    (bench/connection.py: the full run has them already)."""
    import remote

    out = work / "runtime"
    acpgen_build(RUNTIME_RELEASE, out, str(work / "runtime-cache"), ["pydantic", "dataclasses", "typeddict"])
    ours = sys.modules.get("bench_acpgen_pydantic.v1") or load_module(out / "acp_pydantic" / "v1.py", "bench_acpgen_pydantic")
    rows = remote.stdio_figures(runs, ours, figure) if stdio else []
    return rows + remote.figures(runs, ours, out / "acp_pydantic", figure)


def parse_only(runs: int, work: Path) -> list[dict[str, Any]]:
    out = work / "runtime"
    acpgen_build(RUNTIME_RELEASE, out, str(work / "runtime-cache"), ["pydantic", "dataclasses", "typeddict"])
    ours = load_module(out / "acp_pydantic" / "v1.py", "bench_acpgen_pydantic")
    import acp.schema as sdk

    return parse_figures(runs, ours, sdk, messages(ours, sdk)) + imports(runs, out)


def frames(runs: int, ours: Any, dc: Any, sdk: Any, cases: list[tuple[str, bytes]]) -> list[dict[str, Any]]:
    """JSON-RPC frames against acp.schema's connection path. Decode: a line of bytes to
    typed params by method (the SDK: ``json.loads`` + the method's model
    ``model_validate``; acpgen: ``RPC.parse``). Encode: a typed ``session/update``
    notification to a line of bytes (the SDK: ``model_dump(mode="json", by_alias=True,
    exclude_none=True, exclude_defaults=True)`` + ``json.dumps`` + encode; acpgen:
    ``RPC.encode``). Frames: every corpus message that is the params of a method."""
    by_type = {spec.params.__name__: spec for spec in ours.METHODS if isinstance(spec.params, type)}
    lines = []
    for name, raw in cases:
        spec = by_type.get(name)
        if spec is None:
            continue
        rid = '"id":1,' if spec.kind == "request" else ""
        lines.append((spec.method, name, f'{{"jsonrpc":"2.0",{rid}"method":"{spec.method}","params":{raw.decode()}}}'.encode()))
    sdk_models = {method: getattr(sdk, name) for method, name, _ in lines}

    def sdk_decode() -> int:
        for _, _, line in lines:
            message = json.loads(line)
            sdk_models[message["method"]].model_validate(message["params"])
        return len(lines)

    def decoder(module: Any) -> Callable[[], int]:
        parse = module.RPC.parse

        def go() -> int:
            for _, _, line in lines:
                parse(line)
            return len(lines)

        return go

    updates = [(n, raw) for n, raw in cases if n == "SessionNotification"]
    sdk_updates = [sdk.SessionNotification.model_validate_json(raw) for _, raw in updates]
    ours_updates = [ours.RPC.parse(f'{{"jsonrpc":"2.0","method":"session/update","params":{raw.decode()}}}'.encode()) for _, raw in updates]
    dc_updates = [dc.RPC.parse(f'{{"jsonrpc":"2.0","method":"session/update","params":{raw.decode()}}}'.encode()) for _, raw in updates]

    def sdk_encode() -> int:
        for params in sdk_updates:
            payload = {"jsonrpc": "2.0", "method": "session/update", "params": params.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_defaults=True)}
            (json.dumps(payload, separators=(",", ":")) + "\n").encode("utf-8")
        return len(sdk_updates)

    def encoder(module: Any, values: list[Any]) -> Callable[[], int]:
        encode = module.RPC.encode

        def go() -> int:
            for frame in values:
                encode(frame)
            return len(values)

        return go

    sdk_dec, sdk_enc = throughput(sdk_decode, runs), throughput(sdk_encode, runs)
    return [
        figure(f"frame decode, Pydantic ({len(lines)} corpus frames, bytes -> typed params)", throughput(decoder(ours), runs), sdk_dec, "msg/s", ">=1.5x", True),
        figure(f"frame encode, Pydantic ({len(updates)} session/update notifications -> bytes)", throughput(encoder(ours, ours_updates), runs), sdk_enc, "msg/s", ">=1.5x", True),
        figure("frame decode, dataclasses", throughput(decoder(dc), runs), sdk_dec, "msg/s", ">=1.0x", True),
        figure("frame encode, dataclasses", throughput(encoder(dc, dc_updates), runs), sdk_enc, "msg/s", ">=1.0x", True),
    ]


def import_time(code: str, runs: int) -> list[float]:
    # CPU time of the interpreter: time spent waiting for a core on a shared machine is not counted
    script = f"import time; t = time.process_time(); {code}; print(time.process_time() - t)"
    samples = []
    for _ in range(runs):
        done = subprocess.run([str(BIN / "python"), "-c", script], capture_output=True, text=True, check=True)
        samples.append(float(done.stdout.strip()))
    return samples


def imports(runs: int, out: Path) -> list[dict[str, Any]]:
    # both sides from bytecode: pip compiled acp.schema when it installed it, so compile
    # the generated packages too (PYTHONDONTWRITEBYTECODE would otherwise make every
    # import of them compile the source again)
    subprocess.run([str(BIN / "python"), "-m", "compileall", "-q", str(out)], check=True)
    styles = ("pydantic", "dataclasses", "typeddict")
    samples: dict[str, list[float]] = {s: [] for s in ("sdk", *styles)}
    for i in range(runs):  # in turns, the reference first in one round, last in the next
        for side in ("sdk", *styles) if i % 2 == 0 else (*styles, "sdk"):
            code = "import acp.schema" if side == "sdk" else f"import sys; sys.path.insert(0, {str(out)!r}); import acp_{side}.v1"
            samples[side] += import_time(code, 1)
    figures = []
    for style in styles:
        goal = "<=0.30x" if style == "pydantic" else "<=0.35x"
        figures.append(figure(f"import time, {style} module vs acp.schema", samples[style], samples["sdk"], "s", goal, False))
    return figures


# ------------------------------------------------------------------------------- main


def _times(ratio: float) -> str:
    return "-" if math.isnan(ratio) else "reference: none" if math.isinf(ratio) else f"{ratio:.3f}x"


def table(figures: list[dict[str, Any]]) -> str:
    lines = ["| figure | acpgen (median, min-max) | reference (median, min-max) | ratio | goal | met |", "|---|---|---|---|---|---|"]
    for f in figures:
        if "acpgen" in f:
            a, r = f["acpgen"], f["reference"]
            digits = {"msg/s": 0, "req/s": 0, "conns": 0, "KiB": 1}.get(f["unit"], 3)
            fmt = lambda v, d=digits: f"{v:,.{d}f}"  # noqa: E731
            cells = [f"{fmt(a['median'])} {f['unit']} ({fmt(a['min'])}-{fmt(a['max'])})", f"{fmt(r['median'])} {f['unit']} ({fmt(r['min'])}-{fmt(r['max'])})"]
        else:
            cells = [f"{f['acpgen_s']:.1f} s ({f['files']} files)", f"{f['reference_s']:.1f} s"]
        met = "-" if f["met"] is None else "yes" if f["met"] else "NO"
        lines.append(f"| {f['name']} | {cells[0]} | {cells[1]} | {_times(f['ratio'])} | {f['goal'] or '-'} | {met} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="samples per figure (default 5)")
    parser.add_argument("--quick", action="store_true", help="skip the whole-corpus generation run and the remote transports")
    parser.add_argument("--remote", action="store_true", help="only the remote-transport rows, with the stdio rows beside them (bench/remote.py)")
    parser.add_argument("--parse", action="store_true", help="only the parse row of every message set and the import rows (about a minute)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results.json")
    args = parser.parse_args()
    if not (ACP / "INDEX.json").is_file():
        raise SystemExit(f"{CORPUS} is absent: the benchmark reads upstream schemas and messages in place")
    work = Path(tempfile.mkdtemp(prefix="acpgen-bench-"))
    try:
        if args.parse:
            figures = parse_only(args.runs, work)
        elif args.remote:
            figures = remote_transports(args.runs, work, stdio=True)
        else:
            figures = generation(args.runs, work) + [history_generation(args.runs, work)] + runtime(args.runs, work)
            if not args.quick:
                figures += remote_transports(args.runs, work, stdio=False)
                figures.append(corpus_generation(work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    from importlib.metadata import version

    result = {
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()},
        "versions": {p: version(p) for p in ("acpgen", "datamodel-code-generator", "agent-client-protocol", "pydantic", "black", "uvicorn", "hypercorn", "websockets", "httpx", "starlette")},
        "runs": args.runs,
        "figures": figures,
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(table(figures))
    print(f"\nwritten to {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")


if __name__ == "__main__":
    main()
