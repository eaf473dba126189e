"""The same agent, client and driver for the TypedDict style: messages are dicts with
the wire keys. It must pass mypy --strict and pyright with no error."""

from __future__ import annotations

from acp_typeddict import v1


class EchoAgent(v1.Agent):
    def __init__(self, client: v1.RemoteClient) -> None:
        self.client = client

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return {"protocolVersion": params["protocolVersion"]}

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return {"sessionId": "s-1"}

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        for block in params["prompt"]:
            update: v1.AgentMessageChunkSessionUpdate = {"sessionUpdate": "agent_message_chunk", "content": block}
            await self.client.session_update({"sessionId": params["sessionId"], "update": update})
        return {"stopReason": "end_turn"}


class Editor(v1.Client):
    async def fs_read_text_file(self, params: v1.ReadTextFileRequest) -> v1.ReadTextFileResponse:
        return {"content": "text of " + params["path"]}


async def drive(conn: v1.Connection) -> str:
    agent = v1.RemoteAgent(conn)
    await agent.initialize({"protocolVersion": 1})
    session = await agent.session_new({"cwd": "/w", "mcpServers": []})
    text: v1.TextContentBlock = {"type": "text", "text": "hi"}
    done = await agent.session_prompt({"sessionId": session["sessionId"], "prompt": [text]})
    return done["stopReason"]
