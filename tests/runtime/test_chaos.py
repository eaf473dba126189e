"""Chaos: a peer that sends random valid and invalid frames, partial lines, cancels and
stray answers, answers our requests at random (result, error, invalid result, never),
and closes its output at a random point, while requests flow both ways.

Whatever the seed: the connection never hangs (every scenario has a hard end), every
request the peer sent is answered exactly once (those still running when it goes, -32800),
no answer names an id the peer never used, and every request of ours ends with a result
or one of the documented errors."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from types import ModuleType
from typing import Any

import pytest

from .harness import STYLES, module, package, raw_peer, run
from .test_connection import PROMPT, load

SEEDS = range(12)


@pytest.fixture(params=STYLES)
def m(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return module(request.param, tmp_path_factory.mktemp(f"rpc-{request.param}"))


class ChaosAgent:
    """Answers at random speed; a prompt sometimes asks the peer for a file first."""

    def __init__(self, m: ModuleType, rng: random.Random) -> None:
        self.m = m
        self.rng = rng
        self.remote: Any = None

    async def initialize(self, params: Any) -> Any:
        await asyncio.sleep(self.rng.choice((0, 0, 0.001, 0.01)))
        return load(self.m, "InitializeResponse", {"protocolVersion": 1})

    async def session_prompt(self, params: Any) -> Any:
        if self.rng.random() < 0.4:
            await self.remote.fs_read_text_file(load(self.m, "ReadTextFileRequest", {"sessionId": "s", "path": "/p"}))
        await asyncio.sleep(self.rng.choice((0, 0.002, 0.02)))
        if self.rng.random() < 0.2:
            raise RuntimeError("chaos")
        return load(self.m, "PromptResponse", {"stopReason": "end_turn"})

    async def session_cancel(self, params: Any) -> None:
        await asyncio.sleep(self.rng.choice((0, 0.001)))


def frames(rng: random.Random, count: int) -> list[tuple[Any, bytes]]:
    """(request id or None, line) of the peer's traffic."""
    out: list[tuple[Any, bytes]] = []
    sent: list[Any] = []
    for i in range(count):
        rid: Any = rng.choice((i, f"r{i}"))
        roll = rng.random()
        if roll < 0.25:
            frame: Any = {"jsonrpc": "2.0", "id": rid, "method": "session/prompt", "params": PROMPT}
        elif roll < 0.4:
            frame = {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": {"protocolVersion": 1}}
        elif roll < 0.5:
            frame = {"jsonrpc": "2.0", "id": rid, "method": "session/prompt", "params": {"sessionId": 5}}
        elif roll < 0.55:
            frame = {"jsonrpc": "2.0", "id": rid, "method": "no/such", "params": {}}
        elif roll < 0.65:
            out.append((None, rng.choice((b"garbage\n", b"{\n", b"[1,\n", b'"x"\n', b"\n", b"  \n"))))
            continue
        elif roll < 0.75:
            out.append((None, json.dumps({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}).encode() + b"\n"))
            continue
        elif roll < 0.85 and sent:
            target = rng.choice(sent)
            out.append((None, json.dumps({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": target}}).encode() + b"\n"))
            continue
        else:
            out.append((None, json.dumps({"jsonrpc": "2.0", "id": 10_000 + i, "result": {}}).encode() + b"\n"))
            continue
        sent.append(rid)
        out.append((rid, json.dumps(frame).encode() + b"\n"))
    return out


async def chaos(m: ModuleType, seed: int) -> None:
    rng = random.Random(seed)
    pkg = package(m)
    agent = ChaosAgent(m, rng)
    traffic = frames(rng, 60)
    answers: Counter[Any] = Counter()
    async with raw_peer(m, "agent", agent, max_in_flight=rng.choice((1, 4, 64)), max_line=rng.choice((300, 2**20))) as (conn, peer):
        agent.remote = m.RemoteClient(conn)
        writing = asyncio.Lock()  # the peer's own lines never interleave (partial ones included)
        closed_output = False

        async def read() -> None:
            nonlocal closed_output
            while True:
                raw = await peer.reader.readline()
                if not raw:
                    return
                frame = json.loads(raw)
                if "method" in frame:
                    if "id" in frame:  # our side asks: answer at random, or never
                        policy = rng.random()
                        if policy < 0.4:
                            reply: Any = {"jsonrpc": "2.0", "id": frame["id"], "result": {"content": "c"}}
                        elif policy < 0.6:
                            reply = {"jsonrpc": "2.0", "id": frame["id"], "error": {"code": -32002, "message": "no"}}
                        elif policy < 0.75:
                            reply = {"jsonrpc": "2.0", "id": frame["id"], "result": {"content": 5}}
                        else:
                            continue
                        async with writing:
                            if not closed_output:
                                peer.writer.write(json.dumps(reply).encode() + b"\n")
                    continue
                answers[frame.get("id")] += 1

        reading = asyncio.ensure_future(read())

        async def ask() -> Any:
            try:
                return await conn.request("fs/read_text_file", {"sessionId": "s", "path": "/q"})
            except (pkg.RemoteError, pkg.InvalidResultError, pkg.ConnectionClosedError) as exc:
                return exc

        ours = [asyncio.ensure_future(ask()) for _ in range(rng.randint(0, 8))]
        for rid, data in traffic:
            async with writing:
                if rng.random() < 0.2 and len(data) > 4:  # a partial line, completed later
                    cut = rng.randrange(1, len(data) - 1)
                    peer.writer.write(data[:cut])
                    await peer.writer.drain()
                    await asyncio.sleep(0.001)
                    data = data[cut:]
                peer.writer.write(data)
                await peer.writer.drain()
            if rng.random() < 0.1:
                await asyncio.sleep(rng.choice((0, 0.005)))
        await asyncio.sleep(rng.choice((0, 0.01, 0.05)))
        async with writing:
            peer.close_output()
            closed_output = True
        await asyncio.wait_for(conn.closed, 15)
        await asyncio.wait_for(reading, 15)
        outcomes = await asyncio.wait_for(asyncio.gather(*ours), 5)
    requests = [rid for rid, _ in traffic if rid is not None]
    for rid in requests:
        assert answers[rid] == 1, (seed, rid, answers[rid], [d for r, d in traffic if r == rid])
    assert set(answers) <= {*requests, None}, (seed, set(answers) - set(requests))
    for outcome in outcomes:
        assert not isinstance(outcome, BaseException) or isinstance(outcome, (pkg.RemoteError, pkg.InvalidResultError, pkg.ConnectionClosedError))


@pytest.mark.parametrize("seed", SEEDS)
def test_chaos(m: ModuleType, seed: int) -> None:
    run(chaos(m, seed), timeout=40)
