// Bundles src/main.ts into main.js (CommonJS, as Obsidian loads plugins).
//   node esbuild.config.mjs              watch mode with inline source maps (npm run dev)
//   node esbuild.config.mjs production   one minified build (npm run build)
import { builtinModules } from "node:module";
import process from "node:process";

import esbuild from "esbuild";

const production = process.argv[2] === "production";

const options = {
  banner: { js: "/* Vault RAG: bundled by esbuild from obsidian-plugin/src; edit the sources, not this file. */" },
  entryPoints: ["src/main.ts"],
  outfile: "main.js",
  bundle: true,
  // Provided by Obsidian at runtime; `obsidian` itself is a types-only package.
  external: [
    "obsidian",
    "electron",
    "@codemirror/autocomplete",
    "@codemirror/collab",
    "@codemirror/commands",
    "@codemirror/language",
    "@codemirror/lint",
    "@codemirror/search",
    "@codemirror/state",
    "@codemirror/view",
    "@lezer/common",
    "@lezer/highlight",
    "@lezer/lr",
    ...builtinModules,
    ...builtinModules.map((name) => `node:${name}`),
  ],
  format: "cjs",
  platform: "browser",
  target: "es2022",
  logLevel: "info",
  sourcemap: production ? false : "inline",
  minify: production,
  treeShaking: true,
};

if (production) {
  await esbuild.build(options);
} else {
  const context = await esbuild.context(options);
  await context.watch();
}
