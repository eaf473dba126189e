"""An ACP agent on the Python SDK ``agent-client-protocol`` (``import acp``, pinned as a dev
dependency), served over stdio, for acpgen clients to drive in
``tests/runtime/test_peer_python_sdk.py``.

It echoes each prompt back as agent message chunks, one word per chunk; a prompt whose text
starts with ``slow`` streams one word every 0.1 s and ``session/cancel`` ends it with
``stopReason: "cancelled"``; one that starts with ``permission`` first asks the client's
permission (``session/request_permission``) and says what it got.

    python sdk_agent.py
"""

from __future__ import annotations

import asyncio
from typing import Any

import acp


class SdkEchoAgent:
    def __init__(self) -> None:
        self.client: Any = None
        self.cancelled: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> acp.InitializeResponse:
        return acp.InitializeResponse(protocol_version=protocol_version)

    async def new_session(self, cwd: str, **kwargs: Any) -> acp.NewSessionResponse:
        session_id = f"sdk-{len(self.cancelled) + 1}"
        self.cancelled[session_id] = asyncio.Event()
        return acp.NewSessionResponse(session_id=session_id)

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> acp.PromptResponse:
        cancelled = self.cancelled.setdefault(session_id, asyncio.Event())
        cancelled.clear()
        if getattr(prompt[0], "text", "").startswith("permission"):
            tool = acp.schema.ToolCallUpdate(tool_call_id="t1", title="Edit a.txt")
            allow = acp.schema.PermissionOption(option_id="allow", name="Allow", kind="allow_once")
            answer = await self.client.request_permission(session_id=session_id, tool_call=tool, options=[allow])
            granted = getattr(answer.outcome, "option_id", "nothing")
            await self.client.session_update(session_id, acp.update_agent_message_text(f"granted {granted} "))
        for block in prompt:
            text = getattr(block, "text", "")
            for word in text.split(" "):
                if text.startswith("slow"):
                    try:
                        await asyncio.wait_for(cancelled.wait(), 0.1)
                    except asyncio.TimeoutError:
                        pass
                if cancelled.is_set():
                    return acp.PromptResponse(stop_reason="cancelled")
                await self.client.session_update(session_id, acp.update_agent_message_text(word + " "))
        return acp.PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self.cancelled.setdefault(session_id, asyncio.Event()).set()


if __name__ == "__main__":
    asyncio.run(acp.run_agent(SdkEchoAgent()))  # type: ignore[arg-type]
