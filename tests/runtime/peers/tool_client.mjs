// A client on the official TypeScript SDK (pinned in tests/interop) driving an agent it
// spawns (the rest of the command line) through one prompt turn, for
// tests/runtime/test_tool_calls.py: it answers the permission request with the option of
// the kind given, records every session/update and the permission request, and prints the
// record as JSON on stdout. v2 waits for the idle state_update that ends the turn.
//   node tool_client.mjs <v1|v2> <option kind> <agent command...>
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Readable, Writable } from "node:stream";

const [version, kind, ...command] = process.argv.slice(2);
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "interop", "node_modules", "@agentclientprotocol", "sdk");
const sdk = await import(pathToFileURL(join(root, version === "v2" ? "dist/v2/stable/acp.js" : "dist/v1/stable/acp.js")).href);
const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const record = { updates: [], permission: null, prompt: null };
let idle;
const idled = new Promise((resolve) => (idle = resolve));

const app = sdk.client()
  .onNotification("session/update", ({ params }) => {
    record.updates.push(params.update);
    if (params.update.sessionUpdate === "state_update" && params.update.state === "idle") idle();
  })
  .onRequest("session/request_permission", ({ params }) => {
    record.permission = params;
    const option = params.options.find((o) => o.kind === kind);
    return { outcome: option ? { outcome: "selected", optionId: option.optionId } : { outcome: "cancelled" } };
  });

try {
  await app.connectWith(sdk.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)), async (agent) => {
    const v2 = version === "v2";
    await agent.request("initialize", v2 ? { protocolVersion: 2, info: { name: "ts-client", version: "1.0.0" } } : { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await agent.request("session/new", v2 ? { cwd: "/w" } : { cwd: "/w", mcpServers: [] });
    record.prompt = await agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "read a.txt" }] });
    if (v2) await idled;
  });
} finally {
  child.stdin.end();
  process.stdout.write(JSON.stringify(record) + "\n");
}
