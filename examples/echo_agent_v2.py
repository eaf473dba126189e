"""The echo agent in ACP v2 (the ``v2`` module of bindings built from a schema directory
that has the v2 tree): ``examples/echo_agent.py`` serves it to the clients that ask for v2.

A prompt is acknowledged at once (its answer carries the user message's id), then the turn
streams: the user message echoed as the protocol asks, ``running``, the words as agent
message chunks of one message, and ``idle`` with the stop reason, which ends the turn. A
prompt whose text starts with ``slow`` streams one word every 0.1 s; ``session/cancel``
ends it with ``stopReason: "cancelled"``.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field

from acp_pydantic import v2

INFO = v2.Implementation(name="acpgen-echo-agent", version="1.0.0")


@dataclass
class Session:
    turn: asyncio.Task[None] | None = None
    turns: set[asyncio.Task[None]] = field(default_factory=set)


class EchoAgentV2(v2.Agent):
    def __init__(self, client: v2.RemoteClient) -> None:
        self.client = client
        self.ids = itertools.count(1)
        self.sessions: dict[str, Session] = {}

    async def initialize(self, params: v2.InitializeRequest) -> v2.InitializeResponse:
        # params.protocol_version is the version negotiated (2), whatever the client offered
        return v2.InitializeResponse(protocol_version=params.protocol_version, info=INFO)

    async def session_new(self, params: v2.NewSessionRequest) -> v2.NewSessionResponse:
        session_id = f"s-{next(self.ids)}"
        self.sessions[session_id] = Session()
        return v2.NewSessionResponse(session_id=session_id)

    async def session_prompt(self, params: v2.PromptRequest) -> v2.PromptResponse:
        session = self.sessions.setdefault(params.session_id, Session())
        if session.turn is not None:  # one turn at a time: the previous one ends here
            session.turn.cancel()
        message_id = f"u-{next(self.ids)}"
        turn = asyncio.create_task(self.stream(params, message_id))  # the turn goes on
        session.turn = turn
        session.turns.add(turn)
        turn.add_done_callback(session.turns.discard)
        # the prompt is in the conversation; read from its wire form, which drafts of v2
        # before messageId keep as an extra member
        return v2.PromptResponse.model_validate({"messageId": message_id})

    async def stream(self, params: v2.PromptRequest, message_id: str) -> None:
        session_id = params.session_id
        stop = "end_turn"
        try:
            await self.send(session_id, v2.UserMessageSessionUpdate(message_id=message_id, content=params.prompt))
            await self.send(session_id, v2.RunningStateUpdateSessionUpdate())
            reply = f"a-{next(self.ids)}"
            for block in params.prompt:
                text = getattr(block, "text", "")
                for word in text.split(" "):
                    if text.startswith("slow"):
                        await asyncio.sleep(0.1)
                    chunk = v2.AgentMessageChunkSessionUpdate(message_id=reply, content=v2.TextContentBlock(text=word + " "))
                    await self.send(session_id, chunk)
        except asyncio.CancelledError:  # session/cancel ended the turn
            stop = "cancelled"
        finally:
            session = self.sessions.get(session_id)
            if session is not None and session.turn is asyncio.current_task():
                session.turn = None
        await self.send(session_id, v2.IdleStateUpdateSessionUpdate(stop_reason=stop))

    async def send(self, session_id: str, update: v2.SessionUpdate) -> None:
        await self.client.session_update(v2.UpdateSessionNotification(session_id=session_id, update=update))

    async def session_cancel(self, params: v2.CancelSessionNotification) -> None:
        session = self.sessions.get(params.session_id)
        if session is not None and session.turn is not None:
            session.turn.cancel()
