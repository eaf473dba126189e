// A JS client on the official SDK driving an agent it spawns (the rest of the command line).
// node client.mjs <stable|unstable> <updates.json> <agent command...>
import { spawn } from "node:child_process";
import { load, record, check, streams, done } from "./common.mjs";

const [stability, , ...command] = process.argv.slice(2);
const { sdk, zod } = await load(stability);
const ev = (...e) => record.events.push(e);
const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });

const app = sdk.client()
  .onNotification("session/update", ({ params }) => { ev("notification", "session/update", params); })
  .onRequest("session/request_permission", ({ params }) => {
    ev("request", "session/request_permission", params);
    return { outcome: { outcome: "selected", optionId: params.options[0].optionId } };
  })
  .onRequest("fs/read_text_file", ({ params }) => {
    ev("request", "fs/read_text_file", params);
    if (params.path.endsWith("missing")) throw new sdk.RequestError(-32002, "Resource not found", { uri: params.path });
    return { content: "hello from " + params.path };
  })
  .onRequest("fs/write_text_file", ({ params }) => { ev("request", "fs/write_text_file", params); return {}; })
  .onRequest("terminal/create", ({ params }) => { ev("request", "terminal/create", params); return { terminalId: "term-1" }; })
  .onRequest("terminal/output", ({ params }) => {
    ev("request", "terminal/output", params);
    return { output: "hi\n", truncated: false, exitStatus: { exitCode: 0, signal: null } };
  })
  .onRequest("terminal/wait_for_exit", ({ params }) => { ev("request", "terminal/wait_for_exit", params); return { exitCode: 0, signal: null }; })
  .onRequest("terminal/kill", ({ params }) => { ev("request", "terminal/kill", params); return {}; })
  .onRequest("terminal/release", ({ params }) => { ev("request", "terminal/release", params); return {}; })
  .onRequest("_interop/echo", (p) => p, ({ params }) => { ev("request", "_interop/echo", params); return params; })
  .onNotification("_interop/note", (p) => p, ({ params }) => { ev("notification", "_interop/note", params); });

try {
  await app.connectWith(streams(sdk, child.stdout, child.stdin), async (agent) => {
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
