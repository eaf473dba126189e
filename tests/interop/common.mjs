// Shared by agent.mjs and client.mjs: the SDK entry of one schema file, its zod schemas
// (the SDK's own validators), and a record of everything that happened, printed as JSON.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Readable, Writable } from "node:stream";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "node_modules", "@agentclientprotocol", "sdk");

export async function load(stability) {
  const entry = stability === "unstable" ? "dist/v1/unstable/acp.js" : "dist/v1/stable/acp.js";
  const sdk = await import(pathToFileURL(join(root, entry)).href);
  const zod = await import(pathToFileURL(join(root, "dist/v1/schema/zod.gen.js")).href);
  return { sdk, zod };
}

export function examples(path) {
  return JSON.parse(readFileSync(path, "utf8"));
}

export const record = { events: [], invalid: [] };

// A value the peer sent that the SDK does not validate itself (a response): check it
// with the SDK's exported zod schema of its type.
export function check(zod, type, value) {
  const schema = zod["z" + type];
  if (!schema) throw new Error("the SDK exports no zod schema for " + type);
  const result = schema.safeParse(value);
  if (!result.success) record.invalid.push({ type, value, issues: result.error.issues });
  return value;
}

export function streams(sdk, input, output) {
  return sdk.ndJsonStream(Writable.toWeb(output), Readable.toWeb(input));
}

export function done() {
  process.stderr.write("INTEROP-RECORD " + JSON.stringify(record) + "\n");
}

// The scenario this run plays (INTEROP_SCENARIO): "turn" (the whole prompt turn above),
// "cancel" ($/cancel_request), "large" (lines over 1 MB) or "order" (1,000 updates).
export const scenario = process.env.INTEROP_SCENARIO || "turn";
export const ORDERED = 1000;

// A deterministic text of `n` UTF-16 units (all in the BMP, some multi-byte in UTF-8), the
// same as peer.py's blob(): over 1 MB as a JSON line.
export function blob(tag, n) {
  const unit = "abcdefghijklmnopqrstuvwxyz0123456789é€ж";
  const body = unit.repeat(Math.ceil(n / unit.length));
  return (tag + "|" + body).slice(0, n);
}

// What a large value is recorded as: its length and the sha256 of its UTF-8 bytes.
export function digest(text) {
  return { length: text.length, sha256: createHash("sha256").update(text, "utf8").digest("hex") };
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
