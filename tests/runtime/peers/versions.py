"""An agent and a client speaking v1, v2 or both, written on a generated package's modules
alone (any style), negotiating the version with the package's ``Versions``: used in-process
by ``tests/runtime/test_versions.py`` and as a process by ``test_versions_peers.py``.

A turn: ``initialize`` (the client offers its newest version), ``session/new``, one
``session/prompt`` whose words come back as agent message chunks; in v1 the prompt's answer
ends the turn (``stopReason``), in v2 the answer only acknowledges the prompt (its
``messageId``) and the turn ends with an idle ``state_update``.

    python versions.py agent <bindings> <style> <1,2>
    python versions.py client <bindings> <style> <1,2> <text> <agent command...>

The client prints its record (JSON) on stdout; the agent runs until its stdin closes.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from types import ModuleType
from typing import Any

AGENT_INFO = {"name": "acpgen-test-agent", "version": "1.0.0"}
CLIENT_INFO = {"name": "acpgen-test-client", "version": "1.0.0"}


def load(m: ModuleType, method: str, wire: Any, part: str = "params") -> Any:
    """A value of the params (or result) type of ``method`` in module ``m`` (the types are
    found by method: upstream names them differently from one version to the next)."""
    kind = "notification" if method in ("session/update", "session/cancel") else "request"
    spec = m.RPC.spec(method, kind)
    return m.RPC.codec.load(getattr(spec, part), wire)


def wire(m: ModuleType, value: Any) -> Any:
    return m.RPC.codec.dump(value)


class Agent:
    """One version's agent: echoes a prompt's words as agent message chunks."""

    def __init__(self, m: ModuleType, conn: Any, log: list[Any]) -> None:
        self.m = m
        self.version = m.PROTOCOL_VERSION
        self.client = m.RemoteClient(conn)
        self.log = log
        self.tasks: set[asyncio.Task[None]] = set()

    async def initialize(self, params: Any) -> Any:
        asked = wire(self.m, params)["protocolVersion"]
        self.log.append(["initialize", self.version, asked])
        answer: dict[str, Any] = {"protocolVersion": asked}
        if self.version >= 2:
            answer["info"] = AGENT_INFO
        return load(self.m, "initialize", answer, "result")

    async def session_new(self, params: Any) -> Any:
        self.log.append(["session/new", self.version])
        return load(self.m, "session/new", {"sessionId": f"s-v{self.version}"}, "result")

    async def session_prompt(self, params: Any) -> Any:
        sent = wire(self.m, params)
        session, text = sent["sessionId"], sent["prompt"][0]["text"]
        self.log.append(["session/prompt", self.version, text])
        if self.version == 1:
            for word in text.split():
                await self.update(session, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": word}})
            return load(self.m, "session/prompt", {"stopReason": "end_turn"}, "result")
        task = asyncio.create_task(self.stream(session, text))  # the turn goes on after the answer
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return load(self.m, "session/prompt", {"messageId": "u-1"}, "result")

    async def stream(self, session: str, text: str) -> None:
        await asyncio.sleep(0)
        for word in text.split():
            chunk = {"sessionUpdate": "agent_message_chunk", "messageId": "a-1", "content": {"type": "text", "text": word}}
            await self.update(session, chunk)
        await self.update(session, {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})

    async def update(self, session: str, update: dict[str, Any]) -> None:
        await self.client.session_update(load(self.m, "session/update", {"sessionId": session, "update": update}))


class Client:
    """One version's client: keeps the updates; a v2 idle state ends the turn."""

    def __init__(self, m: ModuleType) -> None:
        self.m = m
        self.updates: list[Any] = []
        self.idle = asyncio.Event()

    async def session_update(self, params: Any) -> None:
        update = wire(self.m, params)["update"]
        self.updates.append(update)
        if update.get("sessionUpdate") == "state_update" and update.get("state") == "idle":
            self.idle.set()


def package(modules: dict[int, ModuleType]) -> ModuleType:
    return sys.modules[next(iter(modules.values())).__package__]  # type: ignore[index]


def agent_versions(modules: dict[int, ModuleType], log: list[Any]) -> Any:
    """The package's ``Versions``: an :class:`Agent` for each module."""
    versions = package(modules).Versions()
    for m in modules.values():
        versions.add(m.RPC, lambda conn, m=m: Agent(m, conn, log))
    return versions


async def client_turn(conn: Any, modules: dict[int, ModuleType], text: str) -> dict[str, Any]:
    """Serve ``conn`` with a :class:`Client` per module, offer the newest version, and play
    one turn in the version the agent answers. The record: the version, the answers (wire
    form) and the updates; or the error that ended it."""
    clients: dict[int, Client] = {}
    versions = package(modules).Versions()
    for v, m in modules.items():
        versions.add(m.RPC, lambda conn, v=v, m=m: clients.setdefault(v, Client(m)))
    conn.start(versions)
    newest = modules[max(modules)]
    offer: dict[str, Any] = {"protocolVersion": newest.PROTOCOL_VERSION}
    if newest.PROTOCOL_VERSION >= 2:
        offer["info"] = CLIENT_INFO
    try:
        answer = await conn.request("initialize", load(newest, "initialize", offer))
    except package(modules).UnsupportedProtocolVersionError as exc:
        return {"error": {"code": exc.code, "data": exc.data, "str": str(exc)}, "version": conn.version}
    m = modules[conn.version]
    record: dict[str, Any] = {"version": conn.version, "initialize": wire(m, answer)}
    record["typed"] = isinstance(answer, dict) or type(answer) is m.RPC.spec("initialize").result
    agent = m.RemoteAgent(conn)
    session = wire(m, await agent.session_new(load(m, "session/new", {"cwd": "/tmp", "mcpServers": []})))
    record["session"] = session
    prompt = {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": text}]}
    record["prompt"] = wire(m, await agent.session_prompt(load(m, "session/prompt", prompt)))
    client = clients[conn.version]
    if conn.version >= 2:
        await asyncio.wait_for(client.idle.wait(), 10)
    record["updates"] = client.updates
    return record


def import_modules(bindings: str, style: str, versions: str) -> dict[int, ModuleType]:
    sys.path.insert(0, bindings)
    return {int(v): importlib.import_module(f"acp_{style}.v{v}") for v in versions.split(",")}


async def main(argv: list[str]) -> None:
    role, bindings, style, versions = argv[:4]
    modules = import_modules(bindings, style, versions)
    newest = modules[max(modules)]
    if role == "agent":
        log: list[Any] = []
        conn = await newest.RPC.stdio("agent")
        await conn.serve(agent_versions(modules, log))
        print(json.dumps(log), file=sys.stderr)
        return
    text, command = argv[4], argv[5:]
    async with await newest.RPC.spawn(command[0], *command[1:]) as conn:
        record = await client_turn(conn, modules, text)
    print(json.dumps(record))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
