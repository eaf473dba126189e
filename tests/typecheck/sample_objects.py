"""An agent, a client and a driver written against the generated interfaces, for the
Pydantic and dataclasses styles (``PACKAGE`` is replaced by the test): it must pass
mypy --strict and pyright with no error."""

from __future__ import annotations

from PACKAGE import v1


class EchoAgent(v1.Agent):
    def __init__(self, client: v1.RemoteClient) -> None:
        self.client = client

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=params.protocol_version)

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="s-1")

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        for block in params.prompt:
            update = v1.AgentMessageChunkSessionUpdate(content=block)
            await self.client.session_update(v1.SessionNotification(session_id=params.session_id, update=update))
        return v1.PromptResponse(stop_reason="end_turn")

    async def session_cancel(self, params: v1.CancelNotification) -> None:
        return None


class Editor(v1.Client):
    async def session_update(self, params: v1.SessionNotification) -> None:
        print(params.update)

    async def fs_read_text_file(self, params: v1.ReadTextFileRequest) -> v1.ReadTextFileResponse:
        return v1.ReadTextFileResponse(content="text of " + params.path)


async def drive(conn: v1.Connection) -> str:
    agent = v1.RemoteAgent(conn)
    await agent.initialize(v1.InitializeRequest(protocol_version=1))
    session = await agent.session_new(v1.NewSessionRequest(cwd="/w", mcp_servers=[]))
    prompt: list[v1.ContentBlock] = [v1.TextContentBlock(text="hi")]
    done = await agent.session_prompt(v1.PromptRequest(session_id=session.session_id, prompt=prompt))
    await agent.session_cancel(v1.CancelNotification(session_id=session.session_id))
    return done.stop_reason
