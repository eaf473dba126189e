// An ACP agent on the official TypeScript SDK (@agentclientprotocol/sdk, pinned in
// tests/interop), over stdio, that plays one realistic prompt turn: what
// record_turns.py records as the fixtures of tests/runtime/test_sessions.py.
//   node turn_agent.mjs <v1|v1-unstable|v2>
// v1: thoughts, a plan, a tool call asked permission for and updated to its end, message
// chunks, commands, mode, config options, session info, usage; v1-unstable adds a
// `session_message_chunk` and a `plan_update` (variants a stable v1 build does not know); v2 streams messages by messageId,
// upserts tool calls, a plan by id, a terminal, a custom `_acme_progress` variant, and
// ends the turn with the idle state_update after acknowledging the prompt.
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Readable, Writable } from "node:stream";

const flavour = process.argv[2];
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "interop", "node_modules", "@agentclientprotocol", "sdk");
const entry = { v1: "dist/v1/stable/acp.js", "v1-unstable": "dist/v1/unstable/acp.js", v2: "dist/v2/stable/acp.js" }[flavour];
const sdk = await import(pathToFileURL(join(root, entry)).href);
const v2 = flavour === "v2";
const text = (t) => ({ type: "text", text: t });

async function v1Turn(client, sessionId) {
  const up = (update) => client.notify("session/update", { sessionId, update });
  await up({ sessionUpdate: "agent_thought_chunk", content: text("Reading ") });
  await up({ sessionUpdate: "agent_thought_chunk", content: text("the file first.") });
  const entries = [{ content: "Read a.txt", priority: "high", status: "in_progress" }, { content: "Answer", priority: "medium", status: "pending" }];
  await up({ sessionUpdate: "plan", entries });
  await up({ sessionUpdate: "tool_call", toolCallId: "call-1", title: "Read a.txt", kind: "read", status: "pending", locations: [{ path: "/w/a.txt" }], rawInput: { path: "/w/a.txt" } });
  const answer = await client.request("session/request_permission", {
    sessionId,
    toolCall: { toolCallId: "call-1", title: "Read a.txt" },
    options: [{ optionId: "allow", name: "Allow", kind: "allow_once" }, { optionId: "reject", name: "Reject", kind: "reject_once" }],
  });
  const allowed = answer.outcome.outcome === "selected" && answer.outcome.optionId === "allow";
  await up({ sessionUpdate: "tool_call_update", toolCallId: "call-1", status: "in_progress" });
  if (flavour === "v1-unstable") {  // variants of the unstable schema only
    await up({ sessionUpdate: "session_message_chunk", messageId: "x1", content: text("from a subagent") });
    await up({ sessionUpdate: "plan_update", plan: { type: "items", planId: "p9", entries: [] } });
  }
  await up({ sessionUpdate: "tool_call_update", toolCallId: "call-1", status: allowed ? "completed" : "failed", content: [{ type: "content", content: text("hello from a.txt") }], rawOutput: { bytes: 16 } });
  await up({ sessionUpdate: "plan", entries: entries.map((e) => ({ ...e, status: "completed" })) });
  for (const t of ["The file ", "says ", "hello."]) await up({ sessionUpdate: "agent_message_chunk", content: text(t) });
  await up({ sessionUpdate: "available_commands_update", availableCommands: [{ name: "web", description: "Search the web", input: { hint: "query" } }] });
  await up({ sessionUpdate: "current_mode_update", currentModeId: "code" });
  await up({ sessionUpdate: "config_option_update", configOptions: [{ type: "select", id: "model", name: "Model", currentValue: "fast", options: [{ value: "fast", name: "Fast" }, { value: "deep", name: "Deep" }] }] });
  await up({ sessionUpdate: "session_info_update", title: "Reading a.txt" });
  await up({ sessionUpdate: "usage_update", used: 1200, size: 200000, cost: { amount: 0.01, currency: "USD" } });
}

async function v2Turn(client, sessionId) {
  const up = (update) => client.notify("session/update", { sessionId, update });
  await up({ sessionUpdate: "state_update", state: "running" });
  await up({ sessionUpdate: "agent_thought_chunk", messageId: "t1", content: text("Reading the file first.") });
  await up({ sessionUpdate: "plan_update", plan: { type: "items", planId: "p1", entries: [{ content: "Read a.txt", priority: "high", status: "in_progress" }] } });
  await up({ sessionUpdate: "tool_call_update", toolCallId: "call-1", title: "Read a.txt", kind: "read", status: "pending", rawInput: { path: "/w/a.txt" } });
  const answer = await client.request("session/request_permission", {
    sessionId,
    title: "Read a.txt?",
    subject: { type: "tool_call", toolCall: { toolCallId: "call-1", title: "Read a.txt" } },
    options: [{ optionId: "allow", name: "Allow", kind: "allow_once" }, { optionId: "reject", name: "Reject", kind: "reject_once" }],
  });
  const allowed = answer.outcome.outcome === "selected" && answer.outcome.optionId === "allow";
  await up({ sessionUpdate: "tool_call_update", toolCallId: "call-1", status: "in_progress" });
  await up({ sessionUpdate: "tool_call_content_chunk", toolCallId: "call-1", content: { type: "content", content: text("hello ") } });
  await up({ sessionUpdate: "tool_call_content_chunk", toolCallId: "call-1", content: { type: "content", content: text("from a.txt") } });
  await up({ sessionUpdate: "tool_call_update", toolCallId: "call-1", status: allowed ? "completed" : "failed", rawOutput: { bytes: 16 } });
  await up({ sessionUpdate: "terminal_update", terminalId: "term-1", command: "cat a.txt", cwd: "/w" });
  await up({ sessionUpdate: "terminal_output_chunk", terminalId: "term-1", data: Buffer.from("hello\n").toString("base64") });
  await up({ sessionUpdate: "terminal_update", terminalId: "term-1", exitStatus: { exitCode: 0 } });
  await up({ sessionUpdate: "_acme_progress", percent: 50 });
  for (const t of ["The file ", "says ", "hi."]) await up({ sessionUpdate: "agent_message_chunk", messageId: "m1", content: text(t) });
  await up({ sessionUpdate: "agent_message", messageId: "m1", content: [text("The file says hello.")] });
  await up({ sessionUpdate: "plan_update", plan: { type: "items", planId: "p1", entries: [{ content: "Read a.txt", priority: "high", status: "completed" }] } });
  await up({ sessionUpdate: "available_commands_update", availableCommands: [{ name: "web", description: "Search the web" }] });
  await up({ sessionUpdate: "session_info_update", title: "Reading a.txt" });
  await up({ sessionUpdate: "usage_update", used: 1200, size: 200000 });
  await up({ sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
}

const app = sdk.agent()
  .onRequest("initialize", ({ params }) => v2
    ? { protocolVersion: params.protocolVersion, info: { name: "turn-agent", version: "1.0.0" } }
    : { protocolVersion: params.protocolVersion, agentCapabilities: {} })
  .onRequest("session/new", () => (v2 ? { sessionId: "s-1" } : { sessionId: "s-1", modes: { currentModeId: "ask", availableModes: [{ id: "ask", name: "Ask" }, { id: "code", name: "Code" }] } }))
  .onRequest("session/prompt", async ({ params, client }) => {
    if (!v2) {
      await v1Turn(client, params.sessionId);
      return { stopReason: "end_turn" };
    }
    setTimeout(() => v2Turn(client, params.sessionId).catch((e) => process.stderr.write(String(e) + "\n")), 10);
    return { messageId: "u1" };
  })
  .onNotification("session/cancel", () => {});

const conn = app.connect(sdk.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await conn.closed;
