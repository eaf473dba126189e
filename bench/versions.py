"""What negotiating the protocol version costs: 5,000 small requests (``session/new``, a
one-member request and answer) from an acpgen client to an acpgen agent over a local
socket pair, on a connection serving one handler, and on one where both sides serve a
``Versions`` (v1 and v2) and negotiated v2 on ``initialize`` first. Medians over runs.

    python bench/versions.py [--runs N] [--schema DIR] [--style pydantic]

The bindings are built into a temporary directory from ``DIR`` (a schema directory with
the trees v1 and v2; by default the test fixture ``tests/fixtures/schemas/versions``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REQUESTS = 5_000


async def _streams() -> tuple[Any, Any, Any, Any]:
    a, b = socket.socketpair()
    r1, w1 = await asyncio.open_connection(sock=a, limit=2**20)
    r2, w2 = await asyncio.open_connection(sock=b, limit=2**20)
    return r1, w1, r2, w2


class Agent:
    def __init__(self, m: Any) -> None:
        self.m = m

    async def initialize(self, params: Any) -> Any:
        return self.m.RPC.codec.load(self.m.RPC.spec("initialize").result, {"protocolVersion": 2, "info": {"name": "a", "version": "1"}})

    async def session_new(self, params: Any) -> Any:
        return self.m.RPC.codec.load(self.m.RPC.spec("session/new").result, {"sessionId": "s"})


async def run(pkg: Any, v1: Any, v2: Any, negotiate: bool) -> tuple[float, float]:
    """(seconds for the initialize round trip, seconds for the requests after it)."""
    a_r, a_w, c_r, c_w = await _streams()
    agent_conn = v2.RPC.connect("agent", a_r, a_w)
    client_conn = v2.RPC.connect("client", c_r, c_w)
    if negotiate:
        agent_conn.start(pkg.Versions().add(v1.RPC, lambda c: Agent(v1)).add(v2.RPC, lambda c: Agent(v2)))
        client_conn.start(pkg.Versions().add(v1.RPC, lambda c: object()).add(v2.RPC, lambda c: object()))
    else:
        agent_conn.start(Agent(v2))
        client_conn.start(object())
    offer = v2.RPC.codec.load(v2.RPC.spec("initialize").params, {"protocolVersion": 2, "info": {"name": "c", "version": "1"}})
    start = time.perf_counter()
    await client_conn.request("initialize", offer)
    initialize = time.perf_counter() - start
    assert client_conn.version == 2 and agent_conn.version == 2
    params = v2.RPC.codec.load(v2.RPC.spec("session/new").params, {"cwd": "/"})
    remote = v2.RemoteAgent(client_conn)
    start = time.perf_counter()
    for _ in range(REQUESTS):
        await remote.session_new(params)
    elapsed = time.perf_counter() - start
    await client_conn.close()
    await agent_conn.close()
    return initialize, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--schema", type=Path, default=ROOT / "tests" / "fixtures" / "schemas" / "versions")
    parser.add_argument("--style", default="pydantic")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from acpgen import api
    from acpgen.config import Config, Target

    out = Path(tempfile.mkdtemp(prefix="acpgen-bench-versions-"))
    api.build(Config(ROOT, (Target("bench", args.schema, out, (args.style,)),)), False)
    sys.path.insert(0, str(out))
    pkg = importlib.import_module(f"acp_{args.style}")
    v1, v2 = (importlib.import_module(f"acp_{args.style}.{name}") for name in ("v1", "v2"))
    single: list[tuple[float, float]] = []
    negotiated: list[tuple[float, float]] = []
    for i in range(args.runs):  # interleaved, in turn first: the machine's drift hits both alike
        for negotiate in (False, True) if i % 2 else (True, False):
            gc.collect()
            (negotiated if negotiate else single).append(asyncio.run(run(pkg, v1, v2, negotiate)))
    init1, init2 = (statistics.median(r[0] for r in runs) for runs in (single, negotiated))
    one, two = (statistics.median(r[1] for r in runs) for runs in (single, negotiated))
    print(f"{REQUESTS:,} small requests after initialize, {args.style}, median of {args.runs} runs:")
    print(f"  one handler:          {one * 1e3:8.1f} ms  ({REQUESTS / one:,.0f} req/s)")
    print(f"  negotiated (v1+v2):   {two * 1e3:8.1f} ms  ({REQUESTS / two:,.0f} req/s)")
    print(f"  negotiated / one:     {two / one:8.3f}x")
    print(f"initialize round trip: one handler {init1 * 1e6:,.0f} us, negotiated {init2 * 1e6:,.0f} us")


if __name__ == "__main__":
    main()
