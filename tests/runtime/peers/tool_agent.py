"""An ACP agent on acpgen's bindings that reports one tool call with the session helpers
(``ToolCalls``: ``start``, ``request_permission``, ``update``), served over stdio, for
the SDK clients of ``tests/runtime/test_tool_calls.py``.

    PYTHONPATH=<bindings> python tool_agent.py <style> <v1|v2>

Each prompt: a tool call "Read a.txt" started (pending), the user's permission asked with
the usual four options, the call updated (in progress, then completed with content and
raw output when allowed, failed otherwise; its kind cleared), and the outcome said as an
agent message chunk ("allowed always", "rejected once"...). v1 answers the prompt with its
stop reason; v2 acknowledges it and ends the turn with the idle ``state_update``.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from typing import Any

style, version = sys.argv[1], sys.argv[2]
package = importlib.import_module(f"acp_{style}")
m = importlib.import_module(f"acp_{style}.{version}")
codec = m.RPC.codec


def load(method: str, wire: Any, part: str = "result", kind: str = "request") -> Any:
    spec = m.RPC.spec(method, kind)
    return codec.load(spec.result if part == "result" else spec.params, wire)


class ToolAgent:
    def __init__(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, params: Any) -> Any:
        wire = codec.dump(params)
        out: dict[str, Any] = {"protocolVersion": wire["protocolVersion"]}
        if version == "v2":
            out["info"] = {"name": "acpgen-tool-agent", "version": "1.0.0"}
        return load("initialize", out)

    async def session_new(self, params: Any) -> Any:
        return load("session/new", {"sessionId": "s-1"})

    async def session_prompt(self, params: Any) -> Any:
        session = codec.dump(params)["sessionId"]
        if version == "v1":
            await self.turn(session)
            return load("session/prompt", {"stopReason": "end_turn"})
        asyncio.get_running_loop().call_later(0.01, lambda: asyncio.ensure_future(self.turn(session)))
        return load("session/prompt", {"messageId": "u1"})

    async def turn(self, session: str) -> None:
        calls = package.ToolCalls(self.conn, session)
        update = lambda u: self.conn.notify("session/update", load("session/update", {"sessionId": session, "update": u}, "params", "notification"))  # noqa: E731
        if version == "v2":
            await update({"sessionUpdate": "state_update", "state": "running"})
        tid = await calls.start("Read a.txt", kind="read", status="pending", raw_input={"path": "/w/a.txt"})
        outcome = await calls.request_permission(tid)
        await calls.update(tid, status="in_progress", kind=None)
        if outcome.allowed:
            text = {"type": "content", "content": {"type": "text", "text": "hello"}}
            await calls.update(tid, status="completed", content=[text], raw_output={"bytes": 5})
        else:
            await calls.update(tid, status="failed")
        said = ("allowed" if outcome.allowed else "rejected" if outcome.outcome == "selected" else outcome.outcome)
        said += " always" if outcome.always else " once" if outcome.outcome == "selected" else ""
        chunk: dict[str, Any] = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": said}}
        if version == "v2":
            chunk["messageId"] = "m1"
        await update(chunk)
        if version == "v2":
            await update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})


async def main() -> None:
    conn = await m.RPC.stdio("agent")
    await conn.serve(ToolAgent(conn))


if __name__ == "__main__":
    asyncio.run(main())
