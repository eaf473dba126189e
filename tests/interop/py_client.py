"""A Python ACP client written only on acpgen's output: the module's ``Client`` interface,
its ``RemoteAgent``, ``RPC`` and the connection, driving an agent it spawns.

python py_client.py <package dir> <module> <style> <agent command...>
"""

from __future__ import annotations

import asyncio
import random
import sys
from typing import Any

from peer import SCENARIO, Style, blob, digest, done, event, module

PACKAGE, NAME, STYLE = sys.argv[1:4]
COMMAND = sys.argv[4:]
m = module(PACKAGE, NAME)
s = Style(m, STYLE)
ORDER: list[int] = []  # "order": the chunk numbers, as handled
STREAMING = asyncio.Event()  # "cancel": the agent's nested fs/read_text_file came


class InteropClient(m.Client):  # type: ignore[misc, name-defined]
    async def session_update(self, params: Any) -> None:
        if SCENARIO == "turn":
            event("notification", "session/update", s.json(params))
            return
        text = s.get(s.get(s.get(params, "update"), "content"), "text")
        if SCENARIO == "order":
            await asyncio.sleep(random.random() * 0.002)  # an awaiting handler
            ORDER.append(int(text))
        elif SCENARIO == "large":
            event("notification", "session/update", digest(text))

    async def session_request_permission(self, params: Any) -> Any:
        event("request", "session/request_permission", s.json(params))
        option = s.get(s.get(params, "options")[0], "optionId")
        outcome = m.RPC.codec.load(m.RequestPermissionOutcome, {"outcome": "selected", "optionId": option})
        return s.make(m.RequestPermissionResponse, outcome=outcome)

    async def fs_read_text_file(self, params: Any) -> Any:
        event("request", "fs/read_text_file", s.json(params))
        path = s.get(params, "path")
        if path.endswith("missing"):
            raise m.RpcError(-32002, "Resource not found", {"uri": path})
        if path.endswith("big"):
            return s.make(m.ReadTextFileResponse, content=blob("read", 1_500_000))
        if path.endswith("hang"):  # until the agent's $/cancel_request cancels it
            STREAMING.set()
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                event("cancelled", "fs/read_text_file")
                raise
        return s.make(m.ReadTextFileResponse, content="hello from " + path)

    async def fs_write_text_file(self, params: Any) -> Any:
        event("request", "fs/write_text_file", digest(s.get(params, "content")) if SCENARIO == "large" else s.json(params))
        return s.make(m.WriteTextFileResponse)

    async def terminal_create(self, params: Any) -> Any:
        event("request", "terminal/create", s.json(params))
        return s.make(m.CreateTerminalResponse, terminalId="term-1")

    async def terminal_output(self, params: Any) -> Any:
        event("request", "terminal/output", s.json(params))
        status = s.make(m.TerminalExitStatus, exitCode=0, signal=None)
        return s.make(m.TerminalOutputResponse, output="hi\n", truncated=False, exitStatus=status)

    async def terminal_wait_for_exit(self, params: Any) -> Any:
        event("request", "terminal/wait_for_exit", s.json(params))
        return s.make(m.WaitForTerminalExitResponse, exitCode=0, signal=None)

    async def terminal_kill(self, params: Any) -> Any:
        event("request", "terminal/kill", s.json(params))
        return s.make(m.KillTerminalResponse)

    async def terminal_release(self, params: Any) -> Any:
        event("request", "terminal/release", s.json(params))
        return s.make(m.ReleaseTerminalResponse)

    async def extension_request(self, method: str, params: Any) -> Any:
        event("request", method, {} if SCENARIO == "large" else params)
        return params

    async def extension_notification(self, method: str, params: Any) -> None:
        event("notification", method, params)


def prompt(sid: str, text: str) -> Any:
    block = s.make(m.TextContentBlock, text=text) if not s.td else {"type": "text", "text": text}
    return s.make(m.PromptRequest, sessionId=sid, prompt=[block])


async def turn(agent: Any) -> None:
    """The whole prompt turn, as the JS client drives the Python agent."""
    fs = s.make(m.FileSystemCapabilities if hasattr(m, "FileSystemCapabilities") else m.FileSystemCapability, readTextFile=True, writeTextFile=True)
    caps = s.make(m.ClientCapabilities, fs=fs, terminal=True)
    init = await agent.initialize(s.make(m.InitializeRequest, protocolVersion=1, clientCapabilities=caps))
    event("result", "initialize", s.json(init))
    session = await agent.session_new(s.make(m.NewSessionRequest, cwd="/w", mcpServers=[]))
    event("result", "session/new", s.json(session))
    sid = s.get(session, "sessionId")
    event("result", "session/prompt", s.json(await agent.session_prompt(prompt(sid, "hello"))))
    pending = asyncio.ensure_future(agent.session_prompt(prompt(sid, "cancel me")))
    await asyncio.sleep(0.2)
    await agent.session_cancel(s.make(m.CancelNotification, sessionId=sid))
    event("result", "session/prompt", s.json(await pending))
    event("result", "_interop/echo", await agent.extension_request("_interop/echo", {"value": 7}))
    try:
        await agent.session_load(s.make(m.LoadSessionRequest, sessionId=sid, cwd="/w", mcpServers=[]))
        event("no-error", "session/load")
    except m.RpcError as exc:
        event("error", "session/load", {"code": exc.code, "message": exc.message})


async def open_session(agent: Any) -> str:
    await agent.initialize(s.make(m.InitializeRequest, protocolVersion=1))
    session = await agent.session_new(s.make(m.NewSessionRequest, cwd="/w", mcpServers=[]))
    return str(s.get(session, "sessionId"))


async def cancel(agent: Any) -> None:
    """Cancelling the task that awaits a request sends $/cancel_request for its id; the JS
    agent passes the cancellation on to its own request to us (fs/read_text_file), whose
    handler is cancelled and answered -32800."""
    sid = await open_session(agent)
    pending = asyncio.ensure_future(agent.session_prompt(prompt(sid, "hang")))
    await asyncio.wait_for(STREAMING.wait(), 10)
    pending.cancel()
    try:
        event("result", "session/prompt", s.json(await pending))
    except asyncio.CancelledError:
        event("cancelled", "session/prompt")
    event("result", "_interop/echo", await agent.extension_request("_interop/echo", {"value": 2}))


async def large(agent: Any) -> None:
    """Lines over 1 MB both ways."""
    sid = await open_session(agent)
    echoed = await agent.extension_request("_interop/echo", {"blob": blob("echo", 1_200_000)})
    event("result", "_interop/echo", digest(echoed["blob"]))
    event("result", "session/prompt", s.json(await agent.session_prompt(prompt(sid, blob("prompt", 1_100_000)))))


async def order(agent: Any) -> None:
    """1,000 updates, handled one at a time in order, all before session_prompt returns."""
    sid = await open_session(agent)
    result = await agent.session_prompt(prompt(sid, "order"))
    event("result", "session/prompt", {**s.json(result), "handled": len(ORDER)})
    event("order", "session/update", ORDER)


async def main() -> None:
    try:
        # spawn: the agent's stdio wired to the connection, ended when it closes
        async with await m.RPC.spawn(COMMAND[0], *COMMAND[1:]) as conn:
            conn.start(InteropClient())  # reading starts now
            await {"turn": turn, "cancel": cancel, "large": large, "order": order}[SCENARIO](m.RemoteAgent(conn))
    finally:
        done()


asyncio.run(main())
