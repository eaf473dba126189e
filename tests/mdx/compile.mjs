// Compile every MDX file named on the command line; print one JSON line per file:
// {"file": ..., "ok": true} or {"file": ..., "ok": false, "line": n, "column": n, "message": ...}
import { readFile } from "node:fs/promises";
import { compile } from "@mdx-js/mdx";
import remarkGfm from "remark-gfm";

let failed = 0;
for (const file of process.argv.slice(2)) {
  try {
    await compile(await readFile(file, "utf8"), { remarkPlugins: [remarkGfm] });
    console.log(JSON.stringify({ file, ok: true }));
  } catch (err) {
    failed += 1;
    const place = err.place && err.place.start ? err.place.start : err.place || {};
    console.log(JSON.stringify({ file, ok: false, line: place.line ?? null, column: place.column ?? null, message: String(err.reason || err.message) }));
  }
}
process.exitCode = failed ? 1 : 0;
