// npm run build:browser-test: the ask pane for a real browser, with `obsidian` aliased to the
// test shim. Writes test-output/pane.js, pane.html and styles.css (serve that folder).
import { copyFile, mkdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

import esbuild from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const out = path.join(root, "test-output");
await mkdir(out, { recursive: true });
await esbuild.build({
  entryPoints: [path.join(root, "tests/browser/pane-entry.ts")],
  outfile: path.join(out, "pane.js"),
  bundle: true,
  format: "iife",
  platform: "browser",
  target: "es2022",
  sourcemap: "inline",
  alias: { obsidian: path.join(root, "tests/browser/obsidian.ts") },
  logLevel: "info",
});
await copyFile(path.join(root, "tests/browser/pane.html"), path.join(out, "pane.html"));
await copyFile(path.join(root, "styles.css"), path.join(out, "styles.css"));
