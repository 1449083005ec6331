// `npm run test:e2e`: the real-browser test of the ask pane (tests/e2e/), Chromium against a
// real `vault-rag serve`. Kept out of `npm test` (see vitest.config.mts): it needs the Python
// sidecar and Chromium, and indexing the sample vault takes minutes.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    environment: "node",
    include: ["tests/e2e/**/*.e2e.test.ts"],
    // One browser and one sidecar at a time: the machine has few cores and indexing is heavy.
    fileParallelism: false,
    // The hooks and tests set their own (long) timeouts; these are the fallbacks.
    testTimeout: 5 * 60_000,
    hookTimeout: 15 * 60_000,
    teardownTimeout: 60_000,
  },
});
