"""One echo turn against a remote agent: connects to URL (``ws://`` or ``wss://``:
WebSocket; ``http://`` or ``https://``: Streamable HTTP), sends TEXT as a prompt and
prints the agent's reply.

    PYTHONPATH=vendor python examples/remote_client.py ws://127.0.0.1:8000/acp "hello there"

Options: ``--token TOKEN`` sends ``Authorization: Bearer TOKEN``; ``--http2`` speaks
HTTP/2 to an ``http://`` URL; ``--timeout SECONDS`` before the turn is cancelled.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from acp_pydantic import ConnectionClosedError, v1


class Collecting(v1.Client):
    """Keeps the text the agent streams; grants permission when asked."""

    def __init__(self) -> None:
        self.reply: list[str] = []

    async def session_update(self, params: v1.SessionNotification) -> None:
        text = getattr(getattr(params.update, "content", None), "text", None)
        if text is not None:
            self.reply.append(text)

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        choice = v1.SelectedRequestPermissionOutcome(option_id=params.options[0].option_id)
        return v1.RequestPermissionResponse(outcome=choice)


async def run(url: str, text: str, token: str | None, http2: bool, timeout: float) -> str:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    client = Collecting()
    async with await v1.RPC.connect_url(url, headers=headers, http2=http2) as conn:
        conn.start(client)
        agent = v1.RemoteAgent(conn)
        await agent.initialize(v1.InitializeRequest(protocol_version=v1.PROTOCOL_VERSION))
        session = await agent.session_new(v1.NewSessionRequest(cwd=os.getcwd(), mcp_servers=[]))
        request = v1.PromptRequest(session_id=session.session_id, prompt=[v1.TextContentBlock(text=text)])
        turn = asyncio.create_task(agent.session_prompt(request))
        done, _ = await asyncio.wait({turn}, timeout=timeout)
        if not done:
            await agent.session_cancel(v1.CancelNotification(session_id=session.session_id))
        await turn  # every update of the turn has been handled when it returns
    return "".join(client.reply).strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("url")
    parser.add_argument("text")
    parser.add_argument("--token")
    parser.add_argument("--http2", action="store_true")
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args()
    try:
        print(asyncio.run(run(args.url, args.text, args.token, args.http2, args.timeout)))
    except (ConnectionClosedError, OSError) as exc:  # RefusedError: 401, 403...
        print(f"remote_client: {exc}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
