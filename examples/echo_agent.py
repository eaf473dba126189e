"""An ACP agent written only on acpgen's output: it echoes every prompt back as agent
message chunks, one word at a time, and can be cancelled mid-turn.

It speaks v1 and, where the bindings have the v2 tree, v2 (``echo_agent_v2.py``): each
client gets the version it asks for (the highest both speak), negotiated on ``initialize``.
Build the bindings of the schema directory (both trees, or only ``v1``), then run it over
stdio::

    acpgen build --schema <schema directory> --out vendor --style pydantic
    PYTHONPATH=vendor python examples/echo_agent.py

A prompt whose text starts with ``slow`` streams one word every 0.1 s (time to cancel it).
Each session has a mode (``ask`` or ``code``) and a ``voice`` config option (``plain``, or
``loud``: the echo in capitals); an unknown mode or value is answered -32602. The
``_meta`` of ``session/new`` and ``session/prompt`` (a trace id, say) comes back on the
answer, and on every update of the turn.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from dataclasses import dataclass
from typing import Any

from acp_pydantic import INVALID_PARAMS, MODULES, Versions, v1

MODES = ("ask", "code")
VOICES = ("plain", "loud")


@dataclass
class Session:
    mode: str = "ask"
    voice: str = "plain"
    turn: asyncio.Task[object] | None = None

    def modes(self) -> v1.SessionModeState:
        available = [v1.SessionMode(id=m, name=m.title()) for m in MODES]
        return v1.SessionModeState(current_mode_id=self.mode, available_modes=available)

    def config_options(self) -> list[v1.SessionConfigOption]:
        choices = [v1.SessionConfigSelectOption(value=v, name=v) for v in VOICES]
        voice = v1.SelectSessionConfigOption(id="voice", name="Voice", current_value=self.voice, options=choices)
        return [voice]


def meta(params: v1.NewSessionRequest | v1.PromptRequest) -> dict[str, Any]:
    """The request's ``_meta``, to pass on (nothing when it has none)."""
    return {} if params.meta is None else {"meta": params.meta}


class EchoAgent(v1.Agent):
    def __init__(self, client: v1.RemoteClient) -> None:
        self.client = client
        self.ids = itertools.count(1)
        self.sessions: dict[str, Session] = {}

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        # params.protocol_version is the version negotiated (1), whatever the client offered
        caps = v1.AgentCapabilities(load_session=True)
        return v1.InitializeResponse(protocol_version=params.protocol_version, agent_capabilities=caps)

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        session_id = f"s-{next(self.ids)}"
        session = self.sessions[session_id] = Session()
        modes, options = session.modes(), session.config_options()
        return v1.NewSessionResponse(session_id=session_id, modes=modes, config_options=options, **meta(params))

    async def session_load(self, params: v1.LoadSessionRequest) -> v1.LoadSessionResponse:
        session = self.sessions.setdefault(params.session_id, Session())  # echo has no history to replay
        return v1.LoadSessionResponse(modes=session.modes(), config_options=session.config_options())

    async def session_set_mode(self, params: v1.SetSessionModeRequest) -> None:
        if params.mode_id not in MODES:
            raise v1.RpcError(INVALID_PARAMS, "Invalid params", {"modeId": params.mode_id, "expected": MODES})
        self.sessions.setdefault(params.session_id, Session()).mode = params.mode_id
        return None  # an empty result may be returned as None: the client receives {}

    async def session_set_config_option(
        self, params: v1.SetSessionConfigOptionRequest
    ) -> v1.SetSessionConfigOptionResponse:
        if params.config_id != "voice" or params.value not in VOICES:
            raise v1.RpcError(INVALID_PARAMS, "Invalid params", {"configId": params.config_id, "value": params.value})
        session = self.sessions.setdefault(params.session_id, Session())
        session.voice = str(params.value)
        return v1.SetSessionConfigOptionResponse(config_options=session.config_options())

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        session = self.sessions.setdefault(params.session_id, Session())
        session.turn = asyncio.current_task()
        trace = meta(params)
        try:
            for block in params.prompt:
                text = getattr(block, "text", "")
                for word in text.split(" "):
                    if text.startswith("slow"):
                        await asyncio.sleep(0.1)
                    word = word.upper() if session.voice == "loud" else word
                    chunk = v1.AgentMessageChunkSessionUpdate(content=v1.TextContentBlock(text=word + " "))
                    update = v1.SessionNotification(session_id=params.session_id, update=chunk, **trace)
                    await self.client.session_update(update)
            return v1.PromptResponse(stop_reason="end_turn", **trace)
        except asyncio.CancelledError:  # session/cancel (or $/cancel_request) ended the turn
            return v1.PromptResponse(stop_reason="cancelled", **trace)
        finally:
            session.turn = None

    async def session_cancel(self, params: v1.CancelNotification) -> None:
        session = self.sessions.get(params.session_id)
        if session is not None and session.turn is not None:
            session.turn.cancel()


def versions() -> Versions:
    """The versions this agent speaks: v1, and v2 where the bindings have it."""
    speaks = Versions().add(v1.RPC, lambda conn: EchoAgent(v1.RemoteClient(conn)))
    if "v2" not in MODULES:  # bindings of a schema with only the v1 tree
        return speaks
    from acp_pydantic import v2
    from echo_agent_v2 import EchoAgentV2

    return speaks.add(v2.RPC, lambda conn: EchoAgentV2(v2.RemoteClient(conn)))


async def main() -> None:
    logging.basicConfig(level=logging.WARNING)  # to stderr: stdout carries only the protocol
    conn = await v1.RPC.stdio("agent")
    await conn.serve(versions())  # returns when the client closes stdin


if __name__ == "__main__":
    asyncio.run(main())
