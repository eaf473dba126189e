"""A Python ACP agent written only on acpgen's output: the module's ``Agent`` interface,
its ``RemoteClient``, ``RPC`` and the connection, over stdio.

python py_agent.py <package dir> <module> <style> <updates.json>
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from peer import ORDERED, SCENARIO, Style, digest, done, event, module

PACKAGE, NAME, STYLE, UPDATES = sys.argv[1:5]
m = module(PACKAGE, NAME)
s = Style(m, STYLE)


class InteropAgent(m.Agent):  # type: ignore[misc, name-defined]
    def __init__(self, client: Any) -> None:
        self.client = client
        self.cancelled = asyncio.Event()

    async def initialize(self, params: Any) -> Any:
        event("request", "initialize", s.json(params))
        caps = s.make(m.AgentCapabilities, loadSession=False)
        return s.make(m.InitializeResponse, protocolVersion=s.get(params, "protocolVersion"), agentCapabilities=caps)

    async def session_new(self, params: Any) -> Any:
        event("request", "session/new", s.json(params))
        return s.make(m.NewSessionResponse, sessionId="s-1")

    async def session_cancel(self, params: Any) -> None:
        event("notification", "session/cancel", s.json(params))
        self.cancelled.set()

    async def extension_request(self, method: str, params: Any) -> Any:
        event("request", method, {} if SCENARIO == "large" else params)
        return params

    async def chunk(self, sid: str, text: str) -> None:
        wire = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
        update = m.RPC.codec.load(m.SessionUpdate, wire)
        await self.client.session_update(s.make(m.SessionNotification, sessionId=sid, update=update))

    async def session_prompt(self, params: Any) -> Any:
        sid = s.get(params, "sessionId")
        text = s.get(s.get(params, "prompt")[0], "text")
        if SCENARIO == "large":  # lines over 1 MB each way
            event("request", "session/prompt", digest(text))
            await self.chunk(sid, text)
            read = await self.client.fs_read_text_file(s.make(m.ReadTextFileRequest, sessionId=sid, path="/w/big"))
            content = s.get(read, "content")
            event("result", "fs/read_text_file", digest(content))
            await self.client.fs_write_text_file(s.make(m.WriteTextFileRequest, sessionId=sid, path="/w/big", content=content))
            return s.make(m.PromptResponse, stopReason="end_turn")
        event("request", "session/prompt", s.json(params))
        if SCENARIO == "order":  # 1,000 updates, awaited one by one
            for i in range(ORDERED):
                await self.chunk(sid, str(i))
            return s.make(m.PromptResponse, stopReason="end_turn")
        if text == "hang":  # until $/cancel_request cancels it (answered -32800)
            try:  # the client answers this one only when cancelled
                await self.client.fs_read_text_file(s.make(m.ReadTextFileRequest, sessionId=sid, path="/w/hang"))
            except asyncio.CancelledError:
                event("cancelled", "session/prompt")
                raise
        if text == "cancel me":
            await self.cancelled.wait()
            return s.make(m.PromptResponse, stopReason="cancelled")
        c = self.client
        for update in json.load(open(UPDATES)):
            typed = m.RPC.codec.load(m.SessionUpdate, update)
            await c.session_update(s.make(m.SessionNotification, sessionId=sid, update=typed))
        tool = s.make(m.ToolCallUpdate, toolCallId="t1", title="Edit a.txt")
        option = s.make(m.PermissionOption, optionId="allow", name="Allow", kind="allow_once")
        perm = await c.session_request_permission(s.make(m.RequestPermissionRequest, sessionId=sid, toolCall=tool, options=[option]))
        event("result", "session/request_permission", s.json(perm))
        read = await c.fs_read_text_file(s.make(m.ReadTextFileRequest, sessionId=sid, path="/w/a.txt"))
        event("result", "fs/read_text_file", s.json(read))
        wrote = await c.fs_write_text_file(
            s.make(m.WriteTextFileRequest, sessionId=sid, path="/w/b.txt", content=s.get(read, "content"))
        )
        event("result", "fs/write_text_file", s.json(wrote))
        term = await c.terminal_create(s.make(m.CreateTerminalRequest, sessionId=sid, command="echo", args=["hi"]))
        event("result", "terminal/create", s.json(term))
        tid = s.get(term, "terminalId")
        for name, cls, call in (
            ("terminal/output", m.TerminalOutputRequest, c.terminal_output),
            ("terminal/wait_for_exit", m.WaitForTerminalExitRequest, c.terminal_wait_for_exit),
            ("terminal/kill", m.KillTerminalRequest, c.terminal_kill),
            ("terminal/release", m.ReleaseTerminalRequest, c.terminal_release),
        ):
            event("result", name, s.json(await call(s.make(cls, sessionId=sid, terminalId=tid))))
        event("result", "_interop/echo", await c.extension_request("_interop/echo", {"value": 42}))
        await c.extension_notification("_interop/note", {"n": 1})
        try:
            await c.fs_read_text_file(s.make(m.ReadTextFileRequest, sessionId=sid, path="/w/missing"))
            event("no-error", "fs/read_text_file")
        except m.RpcError as exc:
            event("error", "fs/read_text_file", {"code": exc.code, "message": exc.message})
        return s.make(m.PromptResponse, stopReason="end_turn")


async def main() -> None:
    conn = await m.RPC.stdio("agent")
    try:
        await conn.serve(InteropAgent(m.RemoteClient(conn)))
    finally:
        done()


asyncio.run(main())
