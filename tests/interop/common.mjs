// Shared by agent.mjs and client.mjs: the SDK entry of one schema file, its zod schemas
// (the SDK's own validators), and a record of everything that happened, printed as JSON.
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
