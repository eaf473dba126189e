// The official SDK's remote clients (`./experimental/ws-client` with `ws.WebSocket` for
// ws:// URLs, `./experimental/http-client` for http:// URLs) playing the remote scenario of
// tests/runtime/remote/peers.py against the agent at a URL, each step on a new connection.
//   node remote_client.mjs <url> <step...>
// Prints `{step: record}` as JSON on stdout (a step that failed: `{"failed": message}`).
// Steps: order, permission, cancel, cancel_request, two_sessions, large, load, idle; vanish (the
// process exits in the middle of a turn, after printing the session id).
import { createHash } from "node:crypto";
import WebSocket from "ws";
import * as sdk from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";

const [url, ...steps] = process.argv.slice(2);
const ORDERED = 1000;
const BIG = 1_000_000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const digest = (text) => ({ length: [...text].length,  // in code points, as Python counts
  sha256: createHash("sha256").update(text, "utf8").digest("hex") });

// A text of n code points: ASCII, then a few outside it (one outside the BMP), as peers.py's blob().
function blob(n) {
  const tail = "é€ж😀";
  const body = "abcdefghijklmnopqrstuvwxyz0123456789".repeat(Math.ceil(n / 36));
  return body.slice(0, n - [...tail].length) + tail;
}

function stream() {
  return url.startsWith("ws") ? createWebSocketStream(url, { WebSocket }) : createHttpStream(url);
}

// What the agent sends us, by session: the texts of its updates, the permissions asked.
function newState() {
  const state = { updates: {}, asked: [], waiters: [] };
  state.app = sdk.client()
    .onNotification("session/update", ({ params }) => {
      const list = (state.updates[params.sessionId] ??= []);
      list.push(params.update.content?.text ?? "");
      for (const w of state.waiters) w();
    })
    .onRequest("session/request_permission", ({ params }) => {
      state.asked.push({
        sessionId: params.sessionId,
        toolCallId: params.toolCall.toolCallId,
        options: params.options.map((o) => o.optionId),
      });
      return { outcome: { outcome: "selected", optionId: params.options[0].optionId } };
    });
  // until session `sid` has an update satisfying `test` (bounded)
  state.until = async (sid, test, ms = 10000) => {
    const deadline = Date.now() + ms;
    while (!(state.updates[sid] ?? []).some(test)) {
      if (Date.now() > deadline) throw new Error(`no such update for ${sid} within ${ms} ms`);
      await new Promise((resolve) => { state.waiters.push(resolve); setTimeout(resolve, 50); });
      state.waiters.length = 0;
    }
  };
  // until session `sid` has `n` updates (the SDK may answer a prompt before its last handlers ran)
  state.count = (sid, n) => state.until(sid, () => (state.updates[sid] ?? []).length >= n).catch(() => {});
  return state;
}

const text = (sessionId, text) => ({ sessionId, prompt: [{ type: "text", text }] });

async function open(agent) {
  const init = await agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  const { sessionId } = await agent.request("session/new", { cwd: "/w", mcpServers: [] });
  return { init, sessionId };
}

const scenario = {
  async order(agent, state) {
    const { init, sessionId } = await open(agent);
    const result = await agent.request("session/prompt", text(sessionId, `order ${ORDERED}`));
    await state.count(sessionId, ORDERED);
    return { protocolVersion: init.protocolVersion, sessionId, stop: result.stopReason, updates: state.updates[sessionId] };
  },
  async permission(agent, state) {
    const { sessionId } = await open(agent);
    const result = await agent.request("session/prompt", text(sessionId, "permission"));
    await state.count(sessionId, 1);
    return { sessionId, stop: result.stopReason, asked: state.asked, updates: state.updates[sessionId] };
  },
  async cancel(agent, state) {
    const { sessionId } = await open(agent);
    const pending = agent.request("session/prompt", text(sessionId, "hang"));
    await state.until(sessionId, (t) => t === "started");
    await agent.notify("session/cancel", { sessionId });
    const result = await pending;
    const after = await agent.request("session/prompt", text(sessionId, "order 3"));
    return { sessionId, stop: result.stopReason, after: after.stopReason };
  },
  async cancel_request(agent, state) {
    const { sessionId } = await open(agent);
    const abort = new AbortController();
    const pending = agent.request("session/prompt", text(sessionId, "hang"), { cancellationSignal: abort.signal });
    await state.until(sessionId, (t) => t === "started");
    abort.abort();
    let error = null;
    try {
      await pending;
    } catch (e) {
      error = e.code ?? String(e);
    }
    await state.until(sessionId, (t) => t === "aborted", 5000).catch(() => {});
    const after = await agent.request("session/prompt", text(sessionId, "order 3"));
    return { sessionId, error, updates: state.updates[sessionId], after: after.stopReason };
  },
  async two_sessions(agent, state) {
    await agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const a = (await agent.request("session/new", { cwd: "/a", mcpServers: [] })).sessionId;
    const b = (await agent.request("session/new", { cwd: "/b", mcpServers: [] })).sessionId;
    const [ra, rb] = await Promise.all([
      agent.request("session/prompt", text(a, "order 300")),
      agent.request("session/prompt", text(b, "order 200")),
    ]);
    await state.count(a, 300);
    await state.count(b, 200);
    return { sessions: [a, b], stops: [ra.stopReason, rb.stopReason], updates: state.updates };
  },
  async large(agent, state) {
    const { sessionId } = await open(agent);
    const sent = blob(BIG);
    const result = await agent.request("session/prompt", text(sessionId, sent));
    await state.count(sessionId, 1);
    const echoed = (state.updates[sessionId] ?? [""])[0];
    return { sessionId, stop: result.stopReason, sent: digest(sent), echoed: digest(echoed) };
  },
  // a turn silent for 400 ms (the server's streams carry keepalive comments meanwhile)
  async idle(agent, state) {
    const { sessionId } = await open(agent);
    const result = await agent.request("session/prompt", text(sessionId, "sleep 400"));
    await state.count(sessionId, 1);
    const after = await agent.request("session/prompt", text(sessionId, "order 3"));
    return { sessionId, stop: result.stopReason, updates: state.updates[sessionId].slice(0, 1), after: after.stopReason };
  },
  // session/load of a session made on another connection, on a new connection
  async load(agent, state) {
    const made = await connectOnce(async (first) => (await open(first)).sessionId);
    await agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    await agent.request("session/load", { sessionId: made, cwd: "/w", mcpServers: [] });
    const result = await agent.request("session/prompt", text(made, "order 5"));
    await state.count(made, 5);
    return { sessionId: made, stop: result.stopReason, updates: state.updates[made] };
  },
  // leaves in the middle of a turn: the process ends at once, its socket or streams with it
  async vanish(agent, state) {
    const { sessionId } = await open(agent);
    agent.request("session/prompt", text(sessionId, "hang")).catch(() => {});
    await state.until(sessionId, (t) => t === "started");
    process.stdout.write(JSON.stringify({ vanish: { sessionId } }) + "\n");
    process.exit(0);
  },
};

async function connectOnce(op) {
  const state = newState();
  return state.app.connectWith(stream(), (agent) => op(agent, state));
}

const out = {};
for (const step of steps) {
  try {
    out[step] = await Promise.race([
      connectOnce(scenario[step]),
      sleep(20000).then(() => { throw new Error("timed out after 20 s"); }),
    ]);
  } catch (e) {
    out[step] = { failed: String(e?.message ?? e), code: e?.code, data: e?.data };
  }
}
process.stdout.write(JSON.stringify(out) + "\n");
process.exit(0);
