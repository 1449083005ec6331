/**
 * The `obsidian` module of the browser harness (`npm run build:browser-test` aliases it): the
 * test shim, with a real CommonMark `MarkdownRenderer` (markdownRenderer.ts) instead of the
 * shim's regex one, so the page renders answers as Obsidian would.
 */
export * from "../__mocks__/obsidian";
export { MarkdownRenderer } from "./markdownRenderer";
