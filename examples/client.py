"""An ACP client written only on acpgen's output: it starts an agent, sends one prompt,
prints what the agent streams, and cancels the turn when it takes too long.

    PYTHONPATH=vendor python examples/client.py "hello there" -- python examples/echo_agent.py

Options: ``--timeout SECONDS`` before the turn is cancelled (default 10).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from acp_pydantic import v1


class PrintingClient(v1.Client):
    """What the agent may ask of us: updates are printed, permission is granted."""

    async def session_update(self, params: v1.SessionNotification) -> None:
        text = getattr(getattr(params.update, "content", None), "text", None)
        if text is not None:
            print(text, end="", flush=True)

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        choice = v1.SelectedRequestPermissionOutcome(option_id=params.options[0].option_id)
        return v1.RequestPermissionResponse(outcome=choice)


async def run(prompt: str, command: list[str], timeout: float) -> str:
    # spawn: the agent's stdin/stdout wired to the connection, lines of any size (up to
    # max_line), the process ended when the connection closes
    async with await v1.RPC.spawn(command[0], *command[1:], max_line=64 * 1024 * 1024) as conn:
        conn.start(PrintingClient())  # reading starts now: requests can be sent
        agent = v1.RemoteAgent(conn)
        await agent.initialize(v1.InitializeRequest(protocol_version=v1.PROTOCOL_VERSION))
        session = await agent.session_new(v1.NewSessionRequest(cwd=os.getcwd(), mcp_servers=[]))
        request = v1.PromptRequest(session_id=session.session_id, prompt=[v1.TextContentBlock(text=prompt)])
        turn = asyncio.create_task(agent.session_prompt(request))
        done, _ = await asyncio.wait({turn}, timeout=timeout)
        if not done:  # ACP's way to stop a turn: the agent answers the prompt "cancelled"
            await agent.session_cancel(v1.CancelNotification(session_id=session.session_id))
        result = await turn  # returns once every update sent before it has been handled
        print()
        return str(result.stop_reason)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("prompt")
    parser.add_argument("command", nargs="+", help="the agent command, after --")
    parser.add_argument("--timeout", type=float, default=10.0)
    args = parser.parse_args()
    stop_reason = asyncio.run(run(args.prompt, args.command, args.timeout))
    print(f"stop reason: {stop_reason}", file=sys.stderr)


if __name__ == "__main__":
    main()
