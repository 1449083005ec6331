// Bundle a benchmark entry (bench/<name>.ts) for Node with the `obsidian` shim, then run it:
//   node bench/run.mjs reconcile --vault DIR --metadata FILE --url URL --token TOKEN
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

import esbuild from "esbuild";

const here = path.dirname(fileURLToPath(import.meta.url));
const [name, ...args] = process.argv.slice(2);
const outfile = path.join(here, ".out", `${name}.mjs`);
await esbuild.build({
  entryPoints: [path.join(here, `${name}.ts`)],
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  outfile,
  alias: { obsidian: path.join(here, "..", "tests", "__mocks__", "obsidian.ts") },
  // Obsidian code calls `window.setTimeout`; under Node the window is the global object.
  banner: { js: "globalThis.window ??= globalThis;" },
  logLevel: "warning",
});
const run = spawnSync(process.execPath, [outfile, ...args], { stdio: "inherit" });
process.exit(run.status ?? 1);
