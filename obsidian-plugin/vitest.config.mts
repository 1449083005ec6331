import path from "node:path";
import { fileURLToPath } from "node:url";

import { defineConfig } from "vitest/config";

const here = path.dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  resolve: {
    alias: {
      // The `obsidian` package ships type definitions only; tests run against a small shim.
      obsidian: path.resolve(here, "tests/__mocks__/obsidian.ts"),
    },
  },
  test: {
    environment: "node",
    include: ["tests/**/*.test.ts"],
    setupFiles: ["tests/setup.ts"],
    // The real-browser test (Chromium + the Python sidecar) runs with `npm run test:e2e`.
    exclude: ["**/node_modules/**", "tests/e2e/**"],
  },
});
