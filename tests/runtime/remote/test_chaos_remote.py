"""The chaos of ``tests/runtime/test_chaos.py`` over the remote transports: a raw peer
sends random valid and invalid messages, cancels and stray answers, answers the agent's
requests at random (result, error, invalid result, never), while requests flow both
ways; then it waits for its answers, cancels the requests still unanswered (a handler
waiting for an answer that never comes), waits for those answers and goes away.

Whatever the seed, over WebSocket and Streamable HTTP: nothing hangs (every scenario has
a hard end), every request the peer sent is answered exactly once, no answer names an id
the peer never used, every request of the agent's ends with a result or a documented
error, and once the peer is gone the server holds no connection.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from types import ModuleType
from typing import Any

import pytest

from ..harness import module, package, run
from ..test_chaos import ChaosAgent, frames
from .harness import served
from .peers_raw import RAW_PEERS, raw_peer

SEEDS = range(6)


@pytest.fixture(scope="module")
def m(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return module("pydantic", tmp_path_factory.mktemp("rpc-chaos-remote"))


async def chaos(m: ModuleType, transport: str, seed: int) -> None:
    rng = random.Random(seed)
    pkg = package(m)
    agents: list[ChaosAgent] = []

    def make(conn: Any) -> ChaosAgent:
        agent = ChaosAgent(m, rng)
        agent.remote = m.RemoteClient(conn)
        agents.append(agent)
        return agent

    options = {"max_in_flight": rng.choice((1, 4, 64)), "max_line": rng.choice((300, 2**20))}
    app = m.RPC.asgi_app(make, connection=options)
    server = app.state.acp
    traffic = [(rid, data.rstrip(b"\n")) for rid, data in frames(rng, 60)]
    requests = [rid for rid, _ in traffic if rid is not None]
    answers: Counter[Any] = Counter()
    async with served(app) as base:
        async with raw_peer(transport, base) as peer:
            async def read() -> None:
                async for frame in peer.frames():
                    if "method" in frame:
                        if "id" in frame:  # the agent asks: answer at random, or never
                            policy = rng.random()
                            if policy < 0.4:
                                reply: Any = {"jsonrpc": "2.0", "id": frame["id"], "result": {"content": "c"}}
                            elif policy < 0.6:
                                reply = {"jsonrpc": "2.0", "id": frame["id"], "error": {"code": -32002, "message": "no"}}
                            elif policy < 0.75:
                                reply = {"jsonrpc": "2.0", "id": frame["id"], "result": {"content": 5}}
                            else:
                                continue
                            await peer.send(json.dumps(reply).encode())
                        continue
                    answers[frame.get("id")] += 1

            reading = asyncio.ensure_future(read())
            conn = await peer.served(server)

            async def ask() -> Any:
                try:
                    return await conn.request("fs/read_text_file", {"sessionId": "s", "path": "/q"})
                except (pkg.RemoteError, pkg.InvalidResultError, pkg.ConnectionClosedError) as exc:
                    return exc

            ours = [asyncio.ensure_future(ask()) for _ in range(rng.randint(0, 8))]
            for _, data in traffic:
                await peer.send(data)
                if rng.random() < 0.1:
                    await asyncio.sleep(rng.choice((0, 0.005)))
            for wait in (100, 1500):  # every request answered (some await an answer
                for _ in range(wait):  # the peer never gives: it cancels them)
                    if all(answers[rid] for rid in requests):
                        break
                    await asyncio.sleep(0.01)
                for rid in requests:
                    if not answers[rid]:
                        cancel = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": rid}}
                        await peer.send(json.dumps(cancel).encode())
            await asyncio.sleep(0.05)  # a second answer would come now
        reading.cancel()
        outcomes = await asyncio.wait_for(asyncio.gather(*ours), 10)
        for _ in range(500):
            if not server.connections:
                break
            await asyncio.sleep(0.01)
        assert not server.connections, "the peer left, its connection stays"
    for rid in requests:
        assert answers[rid] == 1, (transport, seed, rid, answers[rid], [d for r, d in traffic if r == rid])
    assert set(answers) <= {*requests, None}, (seed, set(answers) - set(requests))
    for outcome in outcomes:
        assert not isinstance(outcome, BaseException) or isinstance(outcome, (pkg.RemoteError, pkg.InvalidResultError, pkg.ConnectionClosedError))


@pytest.mark.parametrize("transport", RAW_PEERS)
@pytest.mark.parametrize("seed", SEEDS)
def test_chaos_over_the_remote_transports(m: ModuleType, transport: str, seed: int) -> None:
    run(chaos(m, transport, seed), timeout=60)
