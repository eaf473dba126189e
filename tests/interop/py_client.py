"""A Python ACP client written only on acpgen's output: the module's ``Client`` interface,
its ``RemoteAgent``, ``RPC`` and the connection, driving an agent it spawns.

python py_client.py <package dir> <module> <style> <agent command...>
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from peer import Style, done, event, module

PACKAGE, NAME, STYLE = sys.argv[1:4]
COMMAND = sys.argv[4:]
m = module(PACKAGE, NAME)
s = Style(m, STYLE)


class InteropClient(m.Client):  # type: ignore[misc, name-defined]
    async def session_update(self, params: Any) -> None:
        event("notification", "session/update", s.json(params))

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
        return s.make(m.ReadTextFileResponse, content="hello from " + path)

    async def fs_write_text_file(self, params: Any) -> Any:
        event("request", "fs/write_text_file", s.json(params))
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
        event("request", method, params)
        return params

    async def extension_notification(self, method: str, params: Any) -> None:
        event("notification", method, params)


async def main() -> None:
    proc = await asyncio.create_subprocess_exec(*COMMAND, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    conn = m.RPC.connect("client", proc.stdout, proc.stdin)
    serving = asyncio.create_task(conn.serve(InteropClient()))
    agent = m.RemoteAgent(conn)
    try:
        fs = s.make(m.FileSystemCapabilities if hasattr(m, "FileSystemCapabilities") else m.FileSystemCapability, readTextFile=True, writeTextFile=True)
        caps = s.make(m.ClientCapabilities, fs=fs, terminal=True)
        init = await agent.initialize(s.make(m.InitializeRequest, protocolVersion=1, clientCapabilities=caps))
        event("result", "initialize", s.json(init))
        session = await agent.session_new(s.make(m.NewSessionRequest, cwd="/w", mcpServers=[]))
        event("result", "session/new", s.json(session))
        sid = s.get(session, "sessionId")

        def prompt(text: str) -> Any:
            block = s.make(m.TextContentBlock, text=text) if not s.td else {"type": "text", "text": text}
            return s.make(m.PromptRequest, sessionId=sid, prompt=[block])

        event("result", "session/prompt", s.json(await agent.session_prompt(prompt("hello"))))
        pending = asyncio.ensure_future(agent.session_prompt(prompt("cancel me")))
        await asyncio.sleep(0.2)
        await agent.session_cancel(s.make(m.CancelNotification, sessionId=sid))
        event("result", "session/prompt", s.json(await pending))
        event("result", "_interop/echo", await agent.extension_request("_interop/echo", {"value": 7}))
        try:
            await agent.session_load(s.make(m.LoadSessionRequest, sessionId=sid, cwd="/w", mcpServers=[]))
            event("no-error", "session/load")
        except m.RpcError as exc:
            event("error", "session/load", {"code": exc.code, "message": exc.message})
    finally:
        proc.stdin.close()
        await proc.wait()
        await serving
        done()


asyncio.run(main())
