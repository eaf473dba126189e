// A JS agent on the official SDK, served over this process's stdio.
// node agent.mjs <stable|unstable> <updates.json>
// One prompt turn sends every session/update of updates.json, then asks for a permission,
// reads and writes files, runs a terminal, calls an extension method and meets an error.
import { load, examples, record, check, streams, done, scenario, digest, ORDERED } from "./common.mjs";

const [stability, updatesPath] = process.argv.slice(2);
const { sdk, zod } = await load(stability);
const updates = examples(updatesPath);
const ev = (...e) => record.events.push(e);
let cancel = null;

async function turn(client, sessionId) {
  for (const update of updates) await client.notify("session/update", { sessionId, update });
  const perm = check(zod, "RequestPermissionResponse", await client.request("session/request_permission", {
    sessionId,
    toolCall: { toolCallId: "t1", title: "Edit a.txt" },
    options: [{ optionId: "allow", name: "Allow", kind: "allow_once" }],
  }));
  ev("result", "session/request_permission", perm);
  const read = check(zod, "ReadTextFileResponse", await client.request("fs/read_text_file", { sessionId, path: "/w/a.txt" }));
  ev("result", "fs/read_text_file", read);
  ev("result", "fs/write_text_file", check(zod, "WriteTextFileResponse",
    await client.request("fs/write_text_file", { sessionId, path: "/w/b.txt", content: read.content })));
  const term = check(zod, "CreateTerminalResponse", await client.request("terminal/create", { sessionId, command: "echo", args: ["hi"] }));
  ev("result", "terminal/create", term);
  const t = { sessionId, terminalId: term.terminalId };
  ev("result", "terminal/output", check(zod, "TerminalOutputResponse", await client.request("terminal/output", t)));
  ev("result", "terminal/wait_for_exit", check(zod, "WaitForTerminalExitResponse", await client.request("terminal/wait_for_exit", t)));
  ev("result", "terminal/kill", check(zod, "KillTerminalResponse", await client.request("terminal/kill", t)));
  ev("result", "terminal/release", check(zod, "ReleaseTerminalResponse", await client.request("terminal/release", t)));
  ev("result", "_interop/echo", await client.request("_interop/echo", { value: 42 }));
  await client.notify("_interop/note", { n: 1 });
  try {
    await client.request("fs/read_text_file", { sessionId, path: "/w/missing" });
    ev("no-error", "fs/read_text_file");
  } catch (e) {
    ev("error", "fs/read_text_file", { code: e.code, message: e.message });
  }
}

const app = sdk.agent()
  .onRequest("initialize", ({ params }) => {
    ev("request", "initialize", params);
    return { protocolVersion: params.protocolVersion, agentCapabilities: { loadSession: false } };
  })
  .onRequest("session/new", ({ params }) => {
    ev("request", "session/new", params);
    return { sessionId: "s-1" };
  })
  .onRequest("session/prompt", async ({ params, client, signal }) => {
    const { sessionId } = params;
    const text = params.prompt[0].text;
    const chunk = (text) => client.notify("session/update", {
      sessionId,
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
    });
    if (scenario === "large") {  // lines over 1 MB each way
      ev("request", "session/prompt", digest(text));
      await chunk(text);
      const read = await client.request("fs/read_text_file", { sessionId, path: "/w/big" });
      ev("result", "fs/read_text_file", digest(read.content));
      await client.request("fs/write_text_file", { sessionId, path: "/w/big", content: read.content });
      return { stopReason: "end_turn" };
    }
    ev("request", "session/prompt", params);
    if (scenario === "order") {  // 1,000 updates, each written before the next
      for (let i = 0; i < ORDERED; i++) await chunk(String(i));
      return { stopReason: "end_turn" };
    }
    if (text === "hang") {  // until the client's $/cancel_request aborts the signal
      signal.addEventListener("abort", () => ev("cancelled", "session/prompt", { code: signal.reason?.code }), { once: true });
      try {  // passed on: the SDK cancels this request too ($/cancel_request to the client)
        await client.request("fs/read_text_file", { sessionId, path: "/w/hang" }, { cancellationSignal: signal });
      } catch (e) {
        ev("error", "fs/read_text_file", { code: e.code });
        throw e;
      }
    }
    if (params.prompt[0].text === "cancel me") {
      await new Promise((resolve) => (cancel = resolve));
      return { stopReason: "cancelled" };
    }
    await turn(client, params.sessionId);
    return { stopReason: "end_turn" };
  })
  .onNotification("session/cancel", ({ params }) => {
    ev("notification", "session/cancel", params);
    if (cancel) cancel();
  })
  .onRequest("_interop/echo", (p) => p, ({ params }) => {
    ev("request", "_interop/echo", scenario === "large" ? {} : params);
    return params;
  });

const conn = app.connect(streams(sdk, process.stdin, process.stdout));
await conn.closed;
done();
