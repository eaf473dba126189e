// The official SDK's remote server (`./experimental/server` on node:http through
// `./experimental/node`, WebSocket upgrades through `ws`) serving an agent on the SDK's
// app API, on a free loopback port, until stdin closes.
//   node remote_agent.mjs [--http2]
// Prints `{"port": N}` on stdout once it listens. With --http2 it serves HTTP/2 over
// cleartext (prior knowledge, node:http2's compatibility API) and no WebSocket.
//
// The agent plays the remote scenario of tests/runtime/remote/peers.py; a prompt's text says
// what to do:
//   "order N"     N agent_message_chunk updates "0".."N-1", each sent before the next
//   "permission"  asks session/request_permission, sends "granted <optionId>"
//   "hang"        sends "started", then waits: session/cancel ends the turn "cancelled";
//                 $/cancel_request aborts it (an "aborted" update, then the SDK's error)
//   anything else is echoed back as one update (1 MB prompts included)
import http from "node:http";
import http2 from "node:http2";
import { WebSocketServer } from "ws";
import * as sdk from "@agentclientprotocol/sdk";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } from "@agentclientprotocol/sdk/experimental/node";

let sessions = 0;

function createAgent() {
  const cancels = new Map();  // sessionId -> resolve of the turn waiting in "hang"
  return sdk.agent()
    .onRequest("initialize", ({ params }) => ({
      protocolVersion: params.protocolVersion,
      agentCapabilities: { loadSession: true },
    }))
    .onRequest("session/new", () => ({ sessionId: `ts-${++sessions}` }))
    .onRequest("session/load", () => ({}))
    .onRequest("session/prompt", async ({ params, client, signal }) => {
      const { sessionId } = params;
      const text = params.prompt[0]?.text ?? "";
      const chunk = (text) => client.notify("session/update", {
        sessionId,
        update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
      });
      if (text.startsWith("order ")) {
        const n = Number(text.slice(6));
        for (let i = 0; i < n; i++) await chunk(String(i));
        return { stopReason: "end_turn" };
      }
      if (text === "permission") {
        const answer = await client.request("session/request_permission", {
          sessionId,
          toolCall: { toolCallId: "t1", title: "Edit a.txt" },
          options: [
            { optionId: "allow", name: "Allow", kind: "allow_once" },
            { optionId: "reject", name: "Reject", kind: "reject_once" },
          ],
        });
        await chunk(`granted ${answer.outcome.optionId ?? answer.outcome.outcome}`);
        return { stopReason: "end_turn" };
      }
      if (text === "hang") {
        const cancelled = new Promise((resolve) => cancels.set(sessionId, resolve));
        await chunk("started");
        const aborted = new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        const how = await Promise.race([cancelled.then(() => "cancel"), aborted.then(() => "abort")]);
        cancels.delete(sessionId);
        if (how === "abort") {
          await chunk("aborted");
          throw signal.reason;
        }
        return { stopReason: "cancelled" };
      }
      await chunk(text);
      return { stopReason: "end_turn" };
    })
    .onNotification("session/cancel", ({ params }) => {
      cancels.get(params.sessionId)?.();
    });
}

const server = new AcpServer({ createAgent });
const handler = createNodeHttpHandler(server);
const httpServer = process.argv.includes("--http2") ? http2.createServer(handler) : http.createServer(handler);
if (!process.argv.includes("--http2")) {
  const webSockets = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 * 1024 });
  httpServer.on("upgrade", createNodeWebSocketUpgradeHandler(server, webSockets));
}
httpServer.listen(0, "127.0.0.1", () => {
  process.stdout.write(JSON.stringify({ port: httpServer.address().port }) + "\n");
});

process.stdin.resume();
process.stdin.on("end", async () => {
  await Promise.race([server.close(), new Promise((r) => setTimeout(r, 2000))]);
  httpServer.closeAllConnections?.();
  httpServer.close();
  process.exit(0);
});
