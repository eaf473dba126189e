// Version negotiation against the official SDK: its v1 entry point and `./experimental/v2`.
//   node versions.mjs agent <v1|v2|both>                    an agent on this process's stdio
//     (the SDK's agentProtocolRouter with the v1 app, the v2 app, or both)
//   node versions.mjs client <v1|v2> <text> <agent command...>   a client of the agent it spawns
// A turn: initialize, session/new, one prompt whose words come back as agent message chunks
// (v1: the prompt's answer ends the turn; v2: it acknowledges the prompt, an idle
// state_update ends the turn). The client prints its record as JSON on stdout.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Readable, Writable } from "node:stream";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "node_modules", "@agentclientprotocol", "sdk");
const v1 = await import(pathToFileURL(join(root, "dist/v1/stable/acp.js")).href);
const v2 = await import(pathToFileURL(join(root, "dist/v2/stable/acp.js")).href);
const INFO = { name: "ts-sdk-peer", version: "2.4.0" };
const [role, which, ...rest] = process.argv.slice(2);
const stream = (sdk, input, output) => sdk.ndJsonStream(Writable.toWeb(output), Readable.toWeb(input));
const words = (params) => params.prompt.map((b) => b.text ?? "").join(" ").split(" ").filter((w) => w);

function agentV1() {
  return v1.agent()
    .onRequest("initialize", () => ({ protocolVersion: 1, agentCapabilities: {} }))
    .onRequest("session/new", () => ({ sessionId: "ts-s-v1" }))
    .onRequest("session/prompt", async ({ params, client }) => {
      for (const text of words(params)) {
        await client.notify("session/update", {
          sessionId: params.sessionId,
          update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
        });
      }
      return { stopReason: "end_turn" };
    });
}

function agentV2() {
  return v2.agent()
    .onRequest("initialize", ({ params }) => ({ protocolVersion: params.protocolVersion, info: INFO }))
    .onRequest("session/new", () => ({ sessionId: "ts-s-v2" }))
    .onRequest("session/prompt", ({ params, client }) => {
      const { sessionId } = params;
      const send = (update) => client.notify("session/update", { sessionId, update });
      setTimeout(async () => {  // the turn goes on after the prompt's answer
        await send({ sessionUpdate: "user_message", messageId: "ts-u-1", content: params.prompt });
        await send({ sessionUpdate: "state_update", state: "running" });
        for (const text of words(params)) {
          await send({ sessionUpdate: "agent_message_chunk", messageId: "ts-a-1", content: { type: "text", text } });
        }
        await send({ sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
      }, 0);
      return { messageId: "ts-u-1" };
    });
}

async function runAgent() {
  let router = v2.agentProtocolRouter();
  if (which !== "v2") router = router.withV1(agentV1());
  if (which !== "v1") router = router.withV2(agentV2());
  const conn = router.connect(stream(v2, process.stdin, process.stdout));
  await conn.closed;
}

async function runClient() {
  const [text, ...command] = rest;
  const sdk = which === "v2" ? v2 : v1;
  const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  const record = { updates: [] };
  let idle;
  const ended = new Promise((resolve) => (idle = resolve));
  const app = sdk.client().onNotification("session/update", ({ params }) => {
    record.updates.push(params.update);
    if (params.update.sessionUpdate === "state_update" && params.update.state === "idle") idle();
  });
  try {
    await app.connectWith(stream(sdk, child.stdout, child.stdin), async (agent) => {
      const offer = which === "v2" ? { protocolVersion: 2, info: INFO } : { protocolVersion: 1, clientCapabilities: {} };
      record.initialize = await agent.request("initialize", offer);
      record.session = await agent.request("session/new", { cwd: "/tmp", mcpServers: [] });
      const prompt = { sessionId: record.session.sessionId, prompt: [{ type: "text", text }] };
      record.prompt = await agent.request("session/prompt", prompt);
      if (which === "v2") await Promise.race([ended, new Promise((_, no) => setTimeout(() => no(new Error("no idle state")), 10000))]);
    });
  } catch (e) {
    record.error = { code: e.code, message: e.message, data: e.data };
  } finally {
    child.stdin.end();
  }
  process.stdout.write(JSON.stringify(record) + "\n");
}

await (role === "agent" ? runAgent() : runClient());
