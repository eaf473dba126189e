"""Observers of a connection's traffic (acpgen/runtime/_connection.py), in the three
styles: one added or removed while the connection runs, one that fails among others, and
the lines a connection serving several protocol versions reads before it chose one. What
an observer sees of every frame is in ``test_telemetry.py``."""

from __future__ import annotations

import asyncio
import importlib
import logging
from types import ModuleType
from typing import Any

import pytest

from .harness import STYLES, get, line, module, raw_peer, run
from .test_versions import INFO, _raw_agent, both, init  # noqa: F401 - both: a fixture


@pytest.fixture(params=STYLES)
def m(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> ModuleType:
    return module(request.param, tmp_path_factory.mktemp(f"rpc-{request.param}"))


class Client:
    def __init__(self, m: ModuleType) -> None:
        self.m = m
        self.updates: list[str] = []

    async def session_update(self, params: Any) -> None:
        self.updates.append(get(get(params, "update", "update"), "text", "text"))

    async def fs_read_text_file(self, params: Any) -> Any:
        return self.m.RPC.codec.load(self.m.ReadTextFileResponse, {"content": "c"})


def update(text: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": {"type": "text", "text": text}},
    }


async def handled(client: Client, count: int) -> None:
    async def wait() -> None:
        while len(client.updates) < count:
            await asyncio.sleep(0.01)

    await asyncio.wait_for(wait(), 5)


def test_an_observer_added_later_sees_the_frames_from_then_on(m: ModuleType) -> None:
    """``add_observer`` while serving: the frames read and written from then on, each
    once; ``remove_observer``: none after (removing one not there is no error)."""
    traffic = importlib.import_module(f"{m.__package__}._telemetry").Traffic

    async def scenario() -> None:
        client = Client(m)
        seen: list[Any] = []
        async with raw_peer(m, "client", client) as (conn, peer):
            await peer.send(update("before"))
            await handled(client, 1)
            conn.add_observer(seen.append)
            note = line(update("seen"))
            ask = line(
                {
                    "jsonrpc": "2.0",
                    "id": 5,
                    "method": "fs/read_text_file",
                    "params": {"sessionId": "s", "path": "/a"},
                }
            )
            await peer.send(note, ask)
            answer = await peer.recv()
            assert answer == {"jsonrpc": "2.0", "id": 5, "result": {"content": "c"}}
            await handled(client, 2)
            out = seen[-1].line
            assert seen == [
                traffic("in", note[:-1], len(note) - 1),
                traffic("in", ask[:-1], len(ask) - 1),
                traffic("out", out, len(out)),
            ]
            conn.remove_observer(seen.append)
            conn.remove_observer(seen.append)
            await peer.send(update("after"))
            await handled(client, 3)
            assert len(seen) == 3 and client.updates == ["before", "seen", "after"]

    run(scenario(), timeout=30)


def test_a_failing_observer_is_logged_by_name_and_the_others_see_on(
    m: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[Any] = []
    seen: list[Any] = []

    class Broken:
        def __call__(self, traffic: Any) -> None:
            calls.append(traffic)
            raise RuntimeError("observer bug")

        def __repr__(self) -> str:
            return "<broken observer>"

    broken = Broken()

    async def scenario() -> None:
        client = Client(m)
        async with raw_peer(m, "client", client, observers=[broken, seen.append]) as (
            conn,
            peer,
        ):
            await peer.send(update("0"), update("1"))
            await handled(client, 2)
        assert calls == seen[:1]
        assert [t.line for t in seen] == [line(update(t))[:-1] for t in "01"]

    with caplog.at_level(logging.ERROR):
        run(scenario(), timeout=30)
    failed = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert [r.getMessage() for r in failed] == [
        "observer <broken observer> failed: removed"
    ]
    assert (
        failed[0].exc_info is not None and str(failed[0].exc_info[1]) == "observer bug"
    )


def test_lines_read_before_the_version_is_chosen_are_seen_as_they_came(
    both: dict[int, ModuleType],
) -> None:
    """A notification before ``initialize`` (ignored), a request refused, and the
    ``initialize`` that chooses the version: each seen once, "in", whole, with its size.
    """
    traffic = importlib.import_module(f"{both[2].__package__}._telemetry").Traffic

    async def scenario() -> None:
        seen: list[Any] = []
        conn, peer = await _raw_agent(both, [], observers=[seen.append])
        sent = [
            line(
                {
                    "jsonrpc": "2.0",
                    "method": "session/cancel",
                    "params": {"sessionId": "s"},
                }
            ),
            line(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "session/new",
                    "params": {"cwd": "/"},
                }
            ),
            line(init(2, 2, info=INFO)),
        ]
        await peer.send(sent[0], sent[1])
        assert (await peer.recv())["error"]["code"] == -32600
        await peer.send(sent[2])
        assert (await peer.recv())["result"]["protocolVersion"] == 2
        assert [t for t in seen if t.direction != "out"] == [
            traffic("in", s[:-1], len(s) - 1) for s in sent
        ]
        await asyncio.wait_for(conn.close(), 5)

    run(scenario())
