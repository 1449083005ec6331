/**
 * Helpers of the real-browser end-to-end tests (`npm run test:e2e`), one module per part, all
 * re-exported here so each test imports from one place:
 * - `environment.ts`: the repository, Python and Chromium, free ports, the page server;
 * - `sidecarProcess.ts`: `vault-rag serve` on a copy of the sample vault, the page's launcher,
 *   waiting for the index;
 * - `vaultFiles.ts`: the vault's metadata for the page, markdown files, front matter, artifacts;
 * - `pageScripts.ts`: scripts run inside the page.
 * Node only; nothing here imports the plugin.
 */
export * from "./environment";
export * from "./pageScripts";
export * from "./sidecarProcess";
export * from "./vaultFiles";
