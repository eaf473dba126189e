// A JS client on the official SDK driving an agent it spawns (the rest of the command line).
// node client.mjs <stable|unstable> <updates.json> <agent command...>
import { spawn } from "node:child_process";
import { load, record, check, streams, done, scenario, blob, digest, sleep, ORDERED } from "./common.mjs";

const [stability, , ...command] = process.argv.slice(2);
const { sdk, zod } = await load(stability);
const ev = (...e) => record.events.push(e);
const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const ordered = [];  // "order": the chunk numbers, as handled
let streaming;  // "cancel": resolved when the agent's nested fs/read_text_file comes
const started = new Promise((resolve) => (streaming = resolve));

function onUpdate(params) {
  const text = params.update.content?.text ?? "";
  if (scenario === "large") ev("notification", "session/update", digest(text));
  else ev("notification", "session/update", params);
}

const app = sdk.client()
  .onNotification("session/update", async ({ params }) => {
    if (scenario !== "order") return onUpdate(params);
    await sleep(Math.random() * 2);  // an awaiting handler
    ordered.push(Number(params.update.content.text));
  })
  .onRequest("session/request_permission", ({ params }) => {
    ev("request", "session/request_permission", params);
    return { outcome: { outcome: "selected", optionId: params.options[0].optionId } };
  })
  .onRequest("fs/read_text_file", async ({ params, signal }) => {
    ev("request", "fs/read_text_file", params);
    if (params.path.endsWith("missing")) throw new sdk.RequestError(-32002, "Resource not found", { uri: params.path });
    if (params.path.endsWith("big")) return { content: blob("read", 1_500_000) };
    if (params.path.endsWith("hang")) {  // until the agent's $/cancel_request aborts it
      streaming();
      await new Promise((_, reject) => signal.addEventListener("abort", () => {
        ev("cancelled", "fs/read_text_file", { code: signal.reason?.code });
        reject(signal.reason);
      }, { once: true }));
    }
    return { content: "hello from " + params.path };
  })
  .onRequest("fs/write_text_file", ({ params }) => {
    ev("request", "fs/write_text_file", scenario === "large" ? digest(params.content) : params);
    return {};
  })
  .onRequest("terminal/create", ({ params }) => { ev("request", "terminal/create", params); return { terminalId: "term-1" }; })
  .onRequest("terminal/output", ({ params }) => {
    ev("request", "terminal/output", params);
    return { output: "hi\n", truncated: false, exitStatus: { exitCode: 0, signal: null } };
  })
  .onRequest("terminal/wait_for_exit", ({ params }) => { ev("request", "terminal/wait_for_exit", params); return { exitCode: 0, signal: null }; })
  .onRequest("terminal/kill", ({ params }) => { ev("request", "terminal/kill", params); return {}; })
  .onRequest("terminal/release", ({ params }) => { ev("request", "terminal/release", params); return {}; })
  .onRequest("_interop/echo", (p) => p, ({ params }) => { ev("request", "_interop/echo", scenario === "large" ? {} : params); return params; })
  .onNotification("_interop/note", (p) => p, ({ params }) => { ev("notification", "_interop/note", params); });

const text = (sessionId, text) => ({ sessionId, prompt: [{ type: "text", text }] });
const open = async (agent) => {
  await agent.request("initialize", { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } } });
  return (await agent.request("session/new", { cwd: "/w", mcpServers: [] })).sessionId;
};

const scenarios = {
  // $/cancel_request: the SDK sends it when the request's signal aborts, while the Python
  // agent's handler awaits its own request to us (fs/read_text_file); the handler is
  // cancelled, which cancels that request too ($/cancel_request to us), and the prompt is
  // answered -32800. Serving goes on.
  async cancel(agent) {
    const sessionId = await open(agent);
    const abort = new AbortController();
    const pending = agent.request("session/prompt", text(sessionId, "hang"), { cancellationSignal: abort.signal });
    await started;
    const t0 = performance.now();
    abort.abort();
    try {
      ev("result", "session/prompt", await pending);
    } catch (e) {
      ev("error", "session/prompt", { code: e.code, ms: performance.now() - t0 });
    }
    ev("result", "_interop/echo", await agent.request("_interop/echo", { value: 1 }));
  },
  // Lines over 1 MB both ways: params and results of a request each way, a notification.
  async large(agent) {
    const sessionId = await open(agent);
    const echoed = await agent.request("_interop/echo", { blob: blob("echo", 1_200_000) });
    ev("result", "_interop/echo", digest(echoed.blob));
    ev("result", "session/prompt", await agent.request("session/prompt", text(sessionId, blob("prompt", 1_100_000))));
  },
  // 1,000 updates of one turn: handled in order (the handler awaits a random 0-2 ms).
  async order(agent) {
    const sessionId = await open(agent);
    const result = await agent.request("session/prompt", text(sessionId, "order"));
    ev("result", "session/prompt", { ...result, handled: ordered.length });
    for (let i = 0; i < 500 && ordered.length < ORDERED; i++) await sleep(10);
    ev("order", "session/update", ordered);
  },
};

try {
  await app.connectWith(streams(sdk, child.stdout, child.stdin), async (agent) => {
    if (scenario !== "turn") return scenarios[scenario](agent);
    const init = check(zod, "InitializeResponse", await agent.request("initialize", {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
    }));
    ev("result", "initialize", init);
    const session = check(zod, "NewSessionResponse", await agent.request("session/new", { cwd: "/w", mcpServers: [] }));
    ev("result", "session/new", session);
    const sessionId = session.sessionId;
    ev("result", "session/prompt", check(zod, "PromptResponse",
      await agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hello" }] })));
    const pending = agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "cancel me" }] });
    await new Promise((r) => setTimeout(r, 200));
    await agent.notify("session/cancel", { sessionId });
    ev("result", "session/prompt", check(zod, "PromptResponse", await pending));
    ev("result", "_interop/echo", await agent.request("_interop/echo", { value: 7 }));
    try {
      await agent.request("session/load", { sessionId, cwd: "/w", mcpServers: [] });
      ev("no-error", "session/load");
    } catch (e) {
      ev("error", "session/load", { code: e.code, message: e.message });
    }
  });
} finally {
  child.stdin.end();
  done();
}
