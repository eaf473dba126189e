"""Instructions per parsed message on every message set, which do not move with a busy
machine: acpgen's Pydantic module, acp.schema, any parse to Python values
(``TypeAdapter(Any)``) and acpgen's validators building no model instance (every model's
core schema replaced by its fields' schema: each member validated as in acpgen's module,
the members left in a dict), each counted by ``valgrind --tool=callgrind`` over the parse
loop alone (``validate_json`` through one adapter per type, as in bench/run.py).

    .venv/bin/python bench/instructions.py      # a few minutes; needs valgrind
    .venv/bin/python bench/instructions.py --kinds mixed   # one set, kind by kind

``--kinds`` counts one set kind by kind (a message type; a ``session/update`` by its update
and content type), both sides, each in one callgrind run that dumps its counters after
every kind (``callgrind_control``).
"""

from __future__ import annotations

import collections
import functools
import json
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402

PASSES = 2
SIDES = ("acpgen", "acp.schema", "any", "no instances")


def child(side: str, sets_file: str, name: str, gen: str) -> None:
    """Under callgrind: the parse passes run inside ``functools.reduce``, the one function
    whose instructions are collected."""
    from pydantic import TypeAdapter

    cases = pickle.loads(Path(sets_file).read_bytes())[name]
    if side == "acpgen":
        module: Any = run.load_module(
            Path(gen) / "acp_pydantic" / "v1.py", "bench_acpgen_pydantic"
        )
        held = {
            n: TypeAdapter(getattr(module, n))
            for n in dict.fromkeys(n for n, _ in cases)
        }
    elif side == "acp.schema":
        import acp.schema as module

        held = {
            n: TypeAdapter(getattr(module, n))
            for n in dict.fromkeys(n for n, _ in cases)
        }
    elif side == "no instances":
        module = run.load_module(
            Path(gen) / "acp_pydantic" / "v1.py", "bench_acpgen_pydantic"
        )
        held = {
            n: no_instances(getattr(module, n), cases)
            for n in dict.fromkeys(n for n, _ in cases)
        }
    else:
        adapter = TypeAdapter(Any)
        held = {n: adapter for n, _ in cases}
    adapters = [(held[n], raw) for n, raw in cases]

    def parse(count: int, _: int) -> int:
        for ta, raw in adapters:
            ta.validate_json(raw)
        return count + len(adapters)

    parse(0, 0)  # warm-up, not counted
    print(functools.reduce(parse, range(PASSES), 0))


def no_instances(model: Any, cases: list[tuple[str, bytes]]) -> Any:
    """An adapter (the same Python call as the others) of ``model``'s core schema with
    every model replaced by its fields' schema: what validating costs without building a
    model instance."""
    from pydantic import TypeAdapter

    built = TypeAdapter(model)
    built.validate_json(next(raw for n, raw in cases if n == model.__name__))

    def fields(schema: Any) -> Any:
        if isinstance(schema, dict):
            if schema.get("type") == "model":
                inner = fields(schema["schema"])
                return {**inner, "ref": schema["ref"]} if "ref" in schema else inner
            return {k: fields(v) for k, v in schema.items()}
        if isinstance(schema, (list, tuple)):
            return type(schema)(fields(v) for v in schema)
        return schema

    stripped = fields(built.core_schema)

    class NoInstances:
        @classmethod
        def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
            return stripped

    return TypeAdapter(NoInstances)


def kind(name: str, raw: bytes) -> str:
    """A message's kind: its type, a ``session/update`` with its update and content type."""
    if name != "SessionNotification":
        return name
    update = json.loads(raw)["update"]
    content = update.get("content")
    tail = f"/{content.get('type')}" if isinstance(content, dict) else ""
    return f"session/update {update['sessionUpdate']}{tail}"


def kinds_child(side: str, sets_file: str, name: str, gen: str) -> None:
    """Under callgrind: each kind's passes in ``functools.reduce``, its counters zeroed
    before and dumped after (the dump named by the kind); prints each kind's messages.
    """
    from pydantic import TypeAdapter

    if side == "acpgen":
        module: Any = run.load_module(
            Path(gen) / "acp_pydantic" / "v1.py", "bench_acpgen_pydantic"
        )
    else:
        import acp.schema as module
    by: dict[str, list[tuple[str, bytes]]] = collections.defaultdict(list)
    for n, raw in pickle.loads(Path(sets_file).read_bytes())[name]:
        by[kind(n, raw)].append((n, raw))
    done = {}
    for key, cases in sorted(by.items()):
        adapters = [(TypeAdapter(getattr(module, n)), raw) for n, raw in cases]

        def parse(count: int, _: int) -> int:
            for ta, raw in adapters:
                ta.validate_json(raw)
            return count + len(adapters)

        parse(0, 0)
        control = ["callgrind_control", str(os.getpid())]
        subprocess.run(
            [*control[:1], "-z", *control[1:]], capture_output=True, check=True
        )
        done[key] = functools.reduce(parse, range(PASSES), 0)
        subprocess.run(
            [*control[:1], "-d", key.replace(" ", "_").replace("/", "_"), *control[1:]],
            capture_output=True,
            check=True,
        )
    print(json.dumps(done))


def count_kinds(
    side: str, sets_file: Path, name: str, gen: Path, work: Path
) -> dict[str, float]:
    out = work / f"kinds-{side}-{name}"
    done = subprocess.run(
        [
            "valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=functools_reduce",
            f"--callgrind-out-file={out}", sys.executable, __file__, "--kinds-child", side, str(sets_file), name, str(gen),
        ],
        env={**os.environ, "PYTHONHASHSEED": "0"}, capture_output=True, text=True, check=True,
    )  # fmt: skip
    messages = json.loads(done.stdout.split("\n")[-2])
    totals = {}
    for dump in work.glob(f"{out.name}.*"):
        head = dump.read_text().splitlines()[:40]
        trigger = next(
            line.split("dump ", 1)[1]
            for line in head
            if line.startswith("desc: Trigger: dump ")
        )
        totals[trigger] = next(
            int(line.split()[1])
            for line in head
            if line.startswith(("summary:", "totals:"))
        )
    return {
        key: totals[key.replace(" ", "_").replace("/", "_")] / n
        for key, n in messages.items()
    }


def count(side: str, sets_file: Path, name: str, gen: Path, work: Path) -> float:
    out = work / f"callgrind-{side.replace(' ', '-')}-{name}"
    done = subprocess.run(
        [
            "valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=functools_reduce",
            f"--callgrind-out-file={out}", sys.executable, __file__, "--child", side, str(sets_file), name, str(gen),
        ],
        env={**os.environ, "PYTHONHASHSEED": "0"}, capture_output=True, text=True, check=True,
    )  # fmt: skip
    messages = int(done.stdout.split()[-1])
    total = next(
        int(line.split()[1])
        for line in out.read_text().splitlines()
        if line.startswith(("summary:", "totals:"))
    )
    return total / messages


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child(*sys.argv[2:6])
        return
    if sys.argv[1:2] == ["--kinds-child"]:
        kinds_child(*sys.argv[2:6])
        return
    work = Path(tempfile.mkdtemp(prefix="acpgen-instructions-"))
    gen = work / "runtime"
    run.acpgen_build(run.RUNTIME_RELEASE, gen, str(work / "cache"), ["pydantic"])
    ours = run.load_module(gen / "acp_pydantic" / "v1.py", "bench_acpgen_pydantic")
    import acp.schema as sdk

    sets = run.message_sets(ours, sdk, run.messages(ours, sdk))
    sets_file = work / "sets.pickle"
    sets_file.write_bytes(pickle.dumps(sets))
    if sys.argv[1:2] == ["--kinds"]:
        name = sys.argv[2]
        ours_ir, sdk_ir = (
            count_kinds(side, sets_file, name, gen, work) for side in SIDES[:2]
        )
        weight = collections.Counter(kind(n, raw) for n, raw in sets[name])
        total = sum(ours_ir[k] * weight[k] for k in ours_ir)
        print(
            f"| kind ({name}) | messages | share of acpgen's instructions | acpgen | acp.schema | acp.schema / acpgen |"
        )
        print("|---|---|---|---|---|---|")
        for k in sorted(ours_ir, key=lambda k: -ours_ir[k] * weight[k]):
            print(
                f"| {k} | {weight[k]} | {ours_ir[k] * weight[k] / total:.1%} | {ours_ir[k]:,.0f} | {sdk_ir[k]:,.0f} | {sdk_ir[k] / ours_ir[k]:.2f}x |"
            )
        return
    print(
        "| set | any parse to Python values | acpgen | acp.schema | acp.schema / acpgen "
        "| acpgen building no model instance | acp.schema / that |"
    )
    print("|---|---|---|---|---|---|---|")
    for name in sets:
        ir = {side: count(side, sets_file, name, gen, work) for side in SIDES}
        bare = ir["no instances"]
        print(
            f"| {name} | {ir['any']:,.0f} | {ir['acpgen']:,.0f} | {ir['acp.schema']:,.0f} | {ir['acp.schema'] / ir['acpgen']:.2f}x "
            f"| {bare:,.0f} | {ir['acp.schema'] / bare:.2f}x |"
        )


if __name__ == "__main__":
    main()
