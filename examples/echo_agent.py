"""An ACP agent written only on acpgen's output: it echoes every prompt back as agent
message chunks, one word at a time, and can be cancelled mid-turn.

Build the bindings of the schema your editor speaks, then run it over stdio::

    acpgen build --schema <schema/v1/schema.json> --out vendor --style pydantic
    PYTHONPATH=vendor python examples/echo_agent.py

A prompt whose text starts with ``slow`` streams one word every 0.1 s (time to cancel it).
"""

from __future__ import annotations

import asyncio
import itertools
import logging

from acp_pydantic import v1

MODES = v1.SessionModeState(
    current_mode_id="ask",
    available_modes=[
        v1.SessionMode(id="ask", name="Ask"),
        v1.SessionMode(id="code", name="Code"),
    ],
)


def config_options(model: str) -> list[v1.SessionConfigOption]:
    choices = [v1.SessionConfigSelectOption(value=v, name=v) for v in ("small", "large")]
    return [v1.SelectSessionConfigOption(id="model", name="Model", current_value=model, options=choices)]


class EchoAgent(v1.Agent):
    def __init__(self, client: v1.RemoteClient) -> None:
        self.client = client
        self.ids = itertools.count(1)
        self.models: dict[str, str] = {}
        self.turns: dict[str, asyncio.Task[object]] = {}

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        caps = v1.AgentCapabilities(load_session=True)
        return v1.InitializeResponse(protocol_version=params.protocol_version, agent_capabilities=caps)

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        session_id = f"s-{next(self.ids)}"
        self.models[session_id] = "small"
        return v1.NewSessionResponse(session_id=session_id, modes=MODES, config_options=config_options("small"))

    async def session_load(self, params: v1.LoadSessionRequest) -> v1.LoadSessionResponse:
        model = self.models.setdefault(params.session_id, "small")
        return v1.LoadSessionResponse(modes=MODES, config_options=config_options(model))

    async def session_set_mode(self, params: v1.SetSessionModeRequest) -> None:
        return None  # an empty result may be returned as None: the client receives {}

    async def session_set_config_option(
        self, params: v1.SetSessionConfigOptionRequest
    ) -> v1.SetSessionConfigOptionResponse:
        model = str(params.value)
        self.models[params.session_id] = model
        return v1.SetSessionConfigOptionResponse(config_options=config_options(model))

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        self.turns[params.session_id] = asyncio.current_task()  # type: ignore[assignment]
        try:
            for block in params.prompt:
                text = getattr(block, "text", "")
                for word in text.split(" "):
                    if text.startswith("slow"):
                        await asyncio.sleep(0.1)
                    chunk = v1.AgentMessageChunkSessionUpdate(content=v1.TextContentBlock(text=word + " "))
                    await self.client.session_update(v1.SessionNotification(session_id=params.session_id, update=chunk))
            return v1.PromptResponse(stop_reason="end_turn")
        except asyncio.CancelledError:  # session/cancel (or $/cancel_request) ended the turn
            return v1.PromptResponse(stop_reason="cancelled")
        finally:
            self.turns.pop(params.session_id, None)

    async def session_cancel(self, params: v1.CancelNotification) -> None:
        turn = self.turns.get(params.session_id)
        if turn is not None:
            turn.cancel()


async def main() -> None:
    logging.basicConfig(level=logging.WARNING)  # to stderr: stdout carries only the protocol
    conn = await v1.RPC.stdio("agent")
    await conn.serve(EchoAgent(v1.RemoteClient(conn)))  # returns when the client closes stdin


if __name__ == "__main__":
    asyncio.run(main())
